#include "ir/internal/attach_comments.h"

#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/function.h"
#include "ir/stmt.h"

namespace accelmem {
namespace ir {
namespace internal {

void AttachComments(const Program& program, absl::Span<const RawComment> comments, Comments* out) {
  std::vector<std::pair<int, const void*>> nodes;  // in text order
  std::function<void(const StmtPtr&)> add = [&](const StmtPtr& s) {
    if (s == nullptr) return;
    if (const SeqStmts* seq = AsSeq(s.get())) {
      for (const StmtPtr& c : seq->stmts) add(c);
      return;
    }
    nodes.emplace_back(s->loc.line, s.get());
    if (const ForStmt* f = AsFor(s.get())) add(f->body);
    if (const IfStmt* i = AsIf(s.get())) {
      add(i->then_body);
      add(i->else_body);
    }
  };
  for (const FunctionPtr& f : program.functions) {
    nodes.emplace_back(f->loc.line, f.get());
    add(f->body);
  }
  for (const RawComment& c : comments) {
    if (!c.own_line) {
      auto it = std::lower_bound(nodes.begin(), nodes.end(), c.line,
                                 [](const auto& n, int line) { return n.first < line; });
      if (it != nodes.end() && it->first == c.line) {
        std::string& t = out->trailing[it->second];
        t = t.empty() ? std::string(c.text) : absl::StrCat(t, " ", c.text);
        continue;
      }
    }
    auto it = std::upper_bound(nodes.begin(), nodes.end(), c.line,
                               [](int line, const auto& n) { return line < n.first; });
    if (it == nodes.end()) {
      out->end.emplace_back(c.text);
    } else {
      out->leading[it->second].emplace_back(c.text);
    }
  }
}

}  // namespace internal
}  // namespace ir
}  // namespace accelmem
