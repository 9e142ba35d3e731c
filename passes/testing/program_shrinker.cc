#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "ir/parser.h"
#include "passes/testing/program_generator.h"

// The shrinker of ShrinkProgram (declared in program_generator.h): edits on the program text.

namespace accelmem {
namespace passes_testing {

bool IsValidProgramText(const std::string& text) {
  return ir::ParseAndVerifyProgram(text, "<shrink>").ok();
}

namespace {

// ---- The shrinker: edits on the text, line by line (4-space indentation). ----

int Indent(const std::string& line) {
  size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  return static_cast<int>(i / 4);
}

absl::string_view Code(const std::string& line) {
  absl::string_view v(line);
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  return v;
}

bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Replaces identifier `from` (whole words only) by `to`.
std::string ReplaceWord(const std::string& s, const std::string& from, const std::string& to) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    if (s.compare(i, from.size(), from) == 0 && (i == 0 || !IsIdentChar(s[i - 1])) &&
        (i + from.size() >= s.size() || !IsIdentChar(s[i + from.size()]))) {
      out += to;
      i += from.size();
    } else {
      out += s[i++];
    }
  }
  return out;
}

// Splits at commas outside brackets.
std::vector<std::string> SplitTop(absl::string_view s) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '[' || c == '(') ++depth;
    if (c == ']' || c == ')') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(std::string(absl::StripAsciiWhitespace(cur)));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!absl::StripAsciiWhitespace(cur).empty()) {
    out.push_back(std::string(absl::StripAsciiWhitespace(cur)));
  }
  return out;
}

// The index one past the block that starts at line i (an `if` block includes its `else:`).
size_t BlockEnd(const std::vector<std::string>& lines, size_t i) {
  const int ind = Indent(lines[i]);
  size_t j = i + 1;
  while (j < lines.size() && !lines[j].empty() && Indent(lines[j]) > ind) ++j;
  if (absl::StartsWith(Code(lines[i]), "if ") && j < lines.size() && Indent(lines[j]) == ind &&
      Code(lines[j]) == "else:") {
    ++j;
    while (j < lines.size() && !lines[j].empty() && Indent(lines[j]) > ind) ++j;
  }
  return j;
}

// The end of the function that contains line i (the next top-level line or the end).
size_t FunctionEnd(const std::vector<std::string>& lines, size_t i) {
  size_t j = i + 1;
  while (j < lines.size() && (lines[j].empty() || Indent(lines[j]) > 0)) ++j;
  return j;
}

// Gives every header without a body a `pass`, and joins the lines.
std::string Join(std::vector<std::string> lines) {
  std::vector<std::string> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    out.push_back(lines[i]);
    const absl::string_view code = Code(lines[i]);
    if (!code.empty() && code.back() == ':' && !absl::StartsWith(code, "#")) {
      const int ind = Indent(lines[i]);
      if (i + 1 >= lines.size() || lines[i + 1].empty() || Indent(lines[i + 1]) <= ind) {
        out.push_back(std::string(4 * (ind + 1), ' ') + "pass");
      }
    }
  }
  // Drop a `pass` that is no longer alone in its body.
  std::vector<std::string> clean;
  for (size_t i = 0; i < out.size(); ++i) {
    if (Code(out[i]) == "pass") {
      const int ind = Indent(out[i]);
      const bool prev_header = i > 0 && Indent(out[i - 1]) == ind - 1;
      const bool next_sibling =
          i + 1 < out.size() && !out[i + 1].empty() && Indent(out[i + 1]) == ind;
      if (!prev_header || next_sibling) continue;
    }
    clean.push_back(out[i]);
  }
  return absl::StrJoin(clean, "\n") + "\n";
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  // Comments are not IR: drop them.
  std::vector<std::string> out;
  for (std::string& l : lines) {
    if (!absl::StartsWith(Code(l), "#")) out.push_back(std::move(l));
  }
  return out;
}

using Candidates = std::vector<std::string>;

// Removes a whole function.
Candidates RemoveFunctions(const std::vector<std::string>& lines) {
  Candidates out;
  std::vector<size_t> starts;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!lines[i].empty() && Indent(lines[i]) == 0 && absl::StartsWith(lines[i], "def ") &&
        !(i > 0 && absl::StartsWith(lines[i - 1], "@"))) {
      starts.push_back(i);
    }
    if (absl::StartsWith(lines[i], "@")) starts.push_back(i);
  }
  if (starts.size() < 2) return out;
  for (size_t s : starts) {
    size_t e = FunctionEnd(lines, s + (absl::StartsWith(lines[s], "@") ? 1 : 0));
    std::vector<std::string> copy(lines.begin(), lines.begin() + s);
    copy.insert(copy.end(), lines.begin() + e, lines.end());
    out.push_back(Join(copy));
  }
  return out;
}

// Removes one statement (a loop or an if with its whole body), last ones first.
Candidates RemoveStatements(const std::vector<std::string>& lines) {
  Candidates out;
  for (size_t i = lines.size(); i-- > 0;) {
    if (lines[i].empty() || Indent(lines[i]) == 0) continue;
    const absl::string_view code = Code(lines[i]);
    if (absl::StartsWith(code, "return") || absl::StartsWith(code, "yield") || code == "else:" ||
        code == "pass") {
      continue;
    }
    std::vector<std::string> copy(lines.begin(), lines.begin() + i);
    copy.insert(copy.end(), lines.begin() + BlockEnd(lines, i), lines.end());
    out.push_back(Join(copy));
  }
  return out;
}

// `v: Tile[[..], DT, Space] = op(...)` -> `v: ... = tile.create([..], DT, Space)`; a stated
// layout (`, layout=NZ`) stays in the type (a created tile may state any).
Candidates ReplaceByCreate(const std::vector<std::string>& lines) {
  Candidates out;
  for (size_t i = lines.size(); i-- > 0;) {
    const std::string& l = lines[i];
    const size_t colon = l.find(": Tile[[");
    const size_t eq = l.find("] = ");
    if (colon == std::string::npos || eq == std::string::npos || eq < colon) continue;
    if (l.find("memref=") != std::string::npos) continue;
    if (l.compare(eq + 4, 12, "tile.create(") == 0) continue;
    const std::string inner = l.substr(colon + 7, eq - colon - 7);  // "[..], DT, Space"
    std::vector<std::string> parts = SplitTop(inner);
    if (parts.size() == 4 && absl::StartsWith(absl::StripAsciiWhitespace(parts[3]), "layout=")) {
      parts.pop_back();
    }
    if (parts.size() != 3) continue;
    std::vector<std::string> copy = lines;
    copy[i] = absl::StrCat(l.substr(0, eq + 4), "tile.create(", parts[0], ", ", parts[1], ", ",
                           parts[2], ")");
    out.push_back(Join(copy));
  }
  return out;
}

// Drops carry k of a loop: its uses in the body read the init, its result's uses after the loop
// read the init too.
Candidates RemoveCarries(const std::vector<std::string>& lines) {
  Candidates out;
  for (size_t i = 0; i < lines.size(); ++i) {
    const absl::string_view code = Code(lines[i]);
    if (!absl::StartsWith(code, "for ")) continue;
    std::string c(code);
    // A pipelined loop's `, pipeline=N` (after the inits) is kept as it is.
    std::string pipeline;
    if (const size_t p = c.find(", pipeline="), a = c.find(") -> (");
        p != std::string::npos && a != std::string::npos && p < a) {
      pipeline = c.substr(p, a - p);
      c.erase(p, a - p);
    }
    const size_t open = c.find(", (");
    const size_t in = c.find(") in range(");
    const size_t init = c.find(", init=(");
    const size_t arrow = c.find(") -> (");
    if (open == std::string::npos || in == std::string::npos || init == std::string::npos ||
        arrow == std::string::npos || !(open < in && in < init && init < arrow)) {
      continue;
    }
    const std::string loop_var = c.substr(4, open - 4);
    std::vector<std::string> iters = SplitTop(c.substr(open + 3, in - open - 3));
    const std::string range = c.substr(in + 5, init - in - 5);  // "range(a, b, c"
    std::vector<std::string> inits = SplitTop(c.substr(init + 8, arrow - init - 9));
    std::vector<std::string> rets = SplitTop(c.substr(arrow + 6, c.size() - arrow - 6 - 2));
    if (iters.size() != inits.size() || iters.size() != rets.size()) continue;
    const size_t end = BlockEnd(lines, i);
    size_t yield = end;
    for (size_t j = end; j-- > i + 1;) {
      if (Indent(lines[j]) == Indent(lines[i]) + 1) {
        if (absl::StartsWith(Code(lines[j]), "yield ")) yield = j;
        break;
      }
    }
    if (yield == end) continue;
    const std::string ycode(Code(lines[yield]));
    std::vector<std::string> ys = SplitTop(ycode.substr(7, ycode.size() - 8));
    if (ys.size() != iters.size()) continue;
    const size_t fend = FunctionEnd(lines, i);
    for (size_t k = 0; k < iters.size(); ++k) {
      std::vector<std::string> copy = lines;
      const std::string ret_name = rets[k].substr(0, rets[k].find(':'));
      for (size_t j = i + 1; j < end; ++j) copy[j] = ReplaceWord(copy[j], iters[k], inits[k]);
      for (size_t j = end; j < fend; ++j) copy[j] = ReplaceWord(copy[j], ret_name, inits[k]);
      auto drop = [k](std::vector<std::string> v) {
        v.erase(v.begin() + static_cast<long>(k));
        return v;
      };
      const std::string pad(4 * Indent(lines[i]), ' ');
      if (iters.size() == 1) {
        copy[i] = absl::StrCat(pad, "for ", loop_var, " in ", range, pipeline, "):");
        copy.erase(copy.begin() + static_cast<long>(yield));
      } else {
        copy[i] = absl::StrCat(pad, "for ", loop_var, ", ", TupleText(drop(iters)), " in ", range,
                               ", init=", TupleText(drop(inits)), pipeline, ") -> ",
                               TupleText(drop(rets)), ":");
        std::vector<std::string> ny = drop(ys);
        for (std::string& y : ny) y = ReplaceWord(y, iters[k], inits[k]);
        copy[yield] =
            absl::StrCat(std::string(4 * Indent(lines[yield]), ' '), "yield ", TupleText(ny));
      }
      out.push_back(Join(copy));
    }
  }
  return out;
}

// Drops result k of an if (valid only when nothing reads it after the if).
Candidates RemoveIfResults(const std::vector<std::string>& lines) {
  Candidates out;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string c(Code(lines[i]));
    if (!absl::StartsWith(c, "if ")) continue;
    const size_t arrow = c.find(" -> (");
    if (arrow == std::string::npos) continue;
    const std::string cond = c.substr(3, arrow - 3);
    std::vector<std::string> rets = SplitTop(c.substr(arrow + 5, c.size() - arrow - 5 - 2));
    const size_t end = BlockEnd(lines, i);
    const int ind = Indent(lines[i]);
    std::vector<size_t> yields;
    for (size_t j = i + 1; j < end; ++j) {
      if (Indent(lines[j]) == ind + 1 && absl::StartsWith(Code(lines[j]), "yield ")) {
        yields.push_back(j);
      }
    }
    if (yields.size() != 2) continue;
    for (size_t k = 0; k < rets.size(); ++k) {
      std::vector<std::string> copy = lines;
      const std::string pad(4 * ind, ' ');
      std::vector<std::string> nr = rets;
      nr.erase(nr.begin() + static_cast<long>(k));
      copy[i] = nr.empty() ? absl::StrCat(pad, "if ", cond, ":")
                           : absl::StrCat(pad, "if ", cond, " -> ", TupleText(nr), ":");
      for (size_t y : yields) {
        const std::string yc(Code(lines[y]));
        std::vector<std::string> ys = SplitTop(yc.substr(7, yc.size() - 8));
        if (ys.size() != rets.size()) continue;
        ys.erase(ys.begin() + static_cast<long>(k));
        copy[y] = ys.empty()
                      ? std::string()
                      : absl::StrCat(std::string(4 * (ind + 1), ' '), "yield ", TupleText(ys));
      }
      copy.erase(
          std::remove_if(copy.begin() + static_cast<long>(i), copy.begin() + static_cast<long>(end),
                         [](const std::string& s) { return s.empty(); }),
          copy.begin() + static_cast<long>(end));
      out.push_back(Join(copy));
    }
  }
  return out;
}

// Fewer loop iterations: range(a, b, c) with more than 2 (or 1) trips -> range(0, 2, 1) and
// range(0, 1, 1); never more iterations, so the steps cannot cycle.
Candidates ShrinkTripCounts(const std::vector<std::string>& lines) {
  Candidates out;
  for (size_t i = 0; i < lines.size(); ++i) {
    const size_t r = lines[i].find(" in range(");
    if (r == std::string::npos) continue;
    long long a = 0, b = 0, c = 0;
    int used = 0;
    if (std::sscanf(lines[i].c_str() + r, " in range(%lld, %lld, %lld%n", &a, &b, &c, &used) != 3 ||
        used == 0 || c <= 0) {
      continue;
    }
    const long long trips = b > a ? (b - a + c - 1) / c : 0;
    for (long long t : {2LL, 1LL}) {
      if (t >= trips) continue;
      std::vector<std::string> copy = lines;
      copy[i] = absl::StrCat(lines[i].substr(0, r), " in range(0, ", t, ", 1",
                             lines[i].substr(r + static_cast<size_t>(used)));
      out.push_back(Join(copy));
    }
  }
  return out;
}

// A pipelined loop made an ordinary one (its `, pipeline=N` dropped).
Candidates RemovePipelines(const std::vector<std::string>& lines) {
  Candidates out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!absl::StartsWith(Code(lines[i]), "for ")) continue;
    const size_t p = lines[i].find(", pipeline=");
    if (p == std::string::npos) continue;
    size_t e = p + 11;
    while (e < lines[i].size() && lines[i][e] >= '0' && lines[i][e] <= '9') ++e;
    std::vector<std::string> copy = lines;
    copy[i] = lines[i].substr(0, p) + lines[i].substr(e);
    out.push_back(Join(copy));
  }
  return out;
}

// Replaces a loop without carries by its body, an if by one of its branches (its results by
// that branch's yielded values).
Candidates UnwrapBlocks(const std::vector<std::string>& lines) {
  Candidates out;
  auto dedent = [](const std::string& l) { return l.size() >= 4 ? l.substr(4) : l; };
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string c(Code(lines[i]));
    const int ind = Indent(lines[i]);
    const size_t end = BlockEnd(lines, i);
    const size_t fend = FunctionEnd(lines, i);
    if (absl::StartsWith(c, "for ") && c.find("init=(") == std::string::npos) {
      std::vector<std::string> copy(lines.begin(), lines.begin() + static_cast<long>(i));
      for (size_t j = i + 1; j < end; ++j) {
        if (Code(lines[j]) != "pass") copy.push_back(dedent(lines[j]));
      }
      copy.insert(copy.end(), lines.begin() + static_cast<long>(end), lines.end());
      out.push_back(Join(copy));
      continue;
    }
    if (!absl::StartsWith(c, "if ")) continue;
    std::vector<std::string> rets;
    const size_t arrow = c.find(" -> (");
    if (arrow != std::string::npos) {
      for (const std::string& d : SplitTop(c.substr(arrow + 5, c.size() - arrow - 5 - 2))) {
        rets.push_back(d.substr(0, d.find(':')));
      }
    }
    size_t else_at = end;
    for (size_t j = i + 1; j < end; ++j) {
      if (Indent(lines[j]) == ind && Code(lines[j]) == "else:") else_at = j;
    }
    for (int branch = 0; branch < 2; ++branch) {
      const size_t from = branch == 0 ? i + 1 : else_at + 1;
      const size_t to = branch == 0 ? else_at : end;
      if (from > to) continue;
      std::vector<std::string> copy(lines.begin(), lines.begin() + static_cast<long>(i));
      std::vector<std::string> ys;
      for (size_t j = from; j < to; ++j) {
        const absl::string_view code = Code(lines[j]);
        if (Indent(lines[j]) == ind + 1 && absl::StartsWith(code, "yield ")) {
          ys = SplitTop(code.substr(7, code.size() - 8));
          continue;
        }
        if (code != "pass") copy.push_back(dedent(lines[j]));
      }
      if (ys.size() != rets.size()) continue;
      for (size_t j = end; j < lines.size(); ++j) {
        std::string l = lines[j];
        if (j < fend) {
          for (size_t k = 0; k < rets.size(); ++k) l = ReplaceWord(l, rets[k], ys[k]);
        }
        copy.push_back(l);
      }
      out.push_back(Join(copy));
    }
  }
  return out;
}

// Halves one dimension of every occurrence of one two-dimensional literal `[a, b]`.
Candidates ShrinkShapes(const std::vector<std::string>& lines) {
  Candidates out;
  const std::string text = absl::StrJoin(lines, "\n");
  std::set<std::pair<int64_t, int64_t>> seen;
  for (size_t p = text.find('['); p != std::string::npos; p = text.find('[', p + 1)) {
    long long a = 0, b = 0;
    int used = 0;
    if (std::sscanf(text.c_str() + p, "[%lld, %lld]%n", &a, &b, &used) != 2 || used == 0) {
      continue;
    }
    if (!seen.insert({a, b}).second) continue;
    const std::string from = absl::StrCat("[", a, ", ", b, "]");
    for (const std::pair<long long, long long>& to :
         std::vector<std::pair<long long, long long>>{{a / 2, b}, {a, b / 2}}) {
      if (to.first < 1 || to.second < 1 || (to.first == a && to.second == b)) continue;
      const std::string repl = absl::StrCat("[", to.first, ", ", to.second, "]");
      std::vector<std::string> copy = lines;
      for (std::string& l : copy) {
        for (size_t q = l.find(from); q != std::string::npos; q = l.find(from, q + repl.size())) {
          l.replace(q, from.size(), repl);
        }
      }
      out.push_back(Join(copy));
    }
  }
  return out;
}

}  // namespace

std::string ShrinkProgram(const std::string& text,
                          const std::function<bool(const std::string&)>& still_fails,
                          const ShrinkOptions& options) {
  std::string best = text;
  int calls = 0;
  using Step = Candidates (*)(const std::vector<std::string>&);
  const Step steps[] = {RemoveFunctions,  RemoveStatements, UnwrapBlocks,    RemovePipelines,
                        RemoveCarries,    RemoveIfResults,  ReplaceByCreate, RemoveStatements,
                        ShrinkTripCounts, ShrinkShapes};
  bool changed = true;
  while (changed && calls < options.max_predicate_calls) {
    changed = false;
    for (Step step : steps) {
      size_t index = 0;
      while (calls < options.max_predicate_calls) {
        Candidates cands = step(Lines(best));
        if (index >= cands.size()) break;
        const std::string& cand = cands[index];
        if (cand != best && IsValidProgramText(cand)) {
          ++calls;
          if (still_fails(cand)) {
            best = cand;
            changed = true;
            continue;  // the list shifted: try the same index on the new text
          }
        }
        ++index;
      }
    }
  }
  return best;
}

}  // namespace passes_testing
}  // namespace accelmem
