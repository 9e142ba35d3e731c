#include "ir/printer.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace accelmem {
namespace ir {
namespace {

void AppendExpr(const Expr& e, std::string* out);

void AppendList(const std::vector<ExprPtr>& items, std::string* out) {
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out->append(", ");
    AppendExpr(*items[i], out);
  }
}

// `(a,)` for one element, `(a, b)` otherwise.
void AppendTuple(const std::vector<ExprPtr>& items, std::string* out) {
  out->push_back('(');
  AppendList(items, out);
  if (items.size() == 1) out->push_back(',');
  out->push_back(')');
}

void AppendExpr(const Expr& e, std::string* out) {
  switch (e.kind) {
    case ExprKind::kVar:
      out->append(static_cast<const Var&>(e).name);
      return;
    case ExprKind::kInt:
      absl::StrAppend(out, static_cast<const IntImm&>(e).value);
      return;
    case ExprKind::kFloat:
      out->append(FormatFloat(static_cast<const FloatImm&>(e).value));
      return;
    case ExprKind::kString:
      out->append(QuoteString(static_cast<const StringImm&>(e).value));
      return;
    case ExprKind::kList:
      out->push_back('[');
      AppendList(static_cast<const ListExpr&>(e).items, out);
      out->push_back(']');
      return;
    case ExprKind::kSpace:
      out->append(std::string(MemorySpaceName(static_cast<const SpaceImm&>(e).space)));
      return;
    case ExprKind::kDType:
      out->append(std::string(DTypeName(static_cast<const DTypeImm&>(e).dtype)));
      return;
    case ExprKind::kCall: {
      const auto& c = static_cast<const Call&>(e);
      out->append(c.op);
      out->push_back('(');
      AppendList(c.args, out);
      for (size_t i = 0; i < c.kwargs.size(); ++i) {
        if (i > 0 || !c.args.empty()) out->append(", ");
        out->append(c.kwargs[i].first);
        out->push_back('=');
        AppendExpr(*c.kwargs[i].second, out);
      }
      out->push_back(')');
      return;
    }
  }
}

void AppendIndent(int indent, std::string* out) { out->append(4 * indent, ' '); }

void AppendTypedVars(const std::vector<VarPtr>& vars, std::string* out) {
  out->push_back('(');
  for (size_t i = 0; i < vars.size(); ++i) {
    if (i > 0) out->append(", ");
    absl::StrAppend(out, vars[i]->name, ": ", TypeToString(*vars[i]->type));
  }
  if (vars.size() == 1) out->push_back(',');
  out->push_back(')');
}

void AppendStmt(const Stmt& s, int indent, const Comments* cm, std::string* out);

void AppendLeading(const void* node, int indent, const Comments* cm, std::string* out) {
  if (cm == nullptr) return;
  auto it = cm->leading.find(node);
  if (it == cm->leading.end()) return;
  for (const std::string& c : it->second) {
    AppendIndent(indent, out);
    absl::StrAppend(out, c, "\n");
  }
}

// Ends the node's first line, with its trailing comment if any.
void EndLine(const void* node, const Comments* cm, std::string* out) {
  if (cm != nullptr) {
    auto it = cm->trailing.find(node);
    if (it != cm->trailing.end()) absl::StrAppend(out, "  ", it->second);
  }
  out->push_back('\n');
}

void AppendBody(const StmtPtr& body, int indent, const Comments* cm, std::string* out) {
  const SeqStmts* seq = AsSeq(body.get());
  if (body == nullptr || (seq != nullptr && seq->stmts.empty())) {
    AppendIndent(indent, out);
    out->append("pass\n");
    return;
  }
  AppendStmt(*body, indent, cm, out);
}

void AppendStmt(const Stmt& s, int indent, const Comments* cm, std::string* out) {
  if (s.kind != StmtKind::kSeq) AppendLeading(&s, indent, cm, out);
  switch (s.kind) {
    case StmtKind::kSeq:
      for (const StmtPtr& child : static_cast<const SeqStmts&>(s).stmts) {
        AppendStmt(*child, indent, cm, out);
      }
      return;
    case StmtKind::kAssign: {
      const auto& a = static_cast<const AssignStmt&>(s);
      AppendIndent(indent, out);
      absl::StrAppend(out, a.var->name, ": ", TypeToString(*a.var->type), " = ");
      AppendExpr(*a.value, out);
      EndLine(&s, cm, out);
      return;
    }
    case StmtKind::kEval:
      AppendIndent(indent, out);
      AppendExpr(*static_cast<const EvalStmt&>(s).expr, out);
      EndLine(&s, cm, out);
      return;
    case StmtKind::kFor: {
      const auto& f = static_cast<const ForStmt&>(s);
      AppendIndent(indent, out);
      absl::StrAppend(out, "for ", f.loop_var->name);
      if (!f.iter_args.empty()) {
        out->append(", (");
        for (size_t i = 0; i < f.iter_args.size(); ++i) {
          if (i > 0) out->append(", ");
          out->append(f.iter_args[i]->name);
        }
        if (f.iter_args.size() == 1) out->push_back(',');
        out->push_back(')');
      }
      out->append(" in range(");
      AppendExpr(*f.start, out);
      out->append(", ");
      AppendExpr(*f.stop, out);
      out->append(", ");
      AppendExpr(*f.step, out);
      if (!f.inits.empty()) {
        out->append(", init=");
        AppendTuple(f.inits, out);
      }
      if (f.pipeline > 0) absl::StrAppend(out, ", pipeline=", f.pipeline);
      out->push_back(')');
      if (!f.return_vars.empty()) {
        out->append(" -> ");
        AppendTypedVars(f.return_vars, out);
      }
      out->push_back(':');
      EndLine(&s, cm, out);
      AppendBody(f.body, indent + 1, cm, out);
      return;
    }
    case StmtKind::kIf: {
      const auto& i = static_cast<const IfStmt&>(s);
      AppendIndent(indent, out);
      out->append("if ");
      AppendExpr(*i.cond, out);
      if (!i.return_vars.empty()) {
        out->append(" -> ");
        AppendTypedVars(i.return_vars, out);
      }
      out->push_back(':');
      EndLine(&s, cm, out);
      AppendBody(i.then_body, indent + 1, cm, out);
      if (i.else_body != nullptr) {
        AppendIndent(indent, out);
        out->append("else:\n");
        AppendBody(i.else_body, indent + 1, cm, out);
      }
      return;
    }
    case StmtKind::kYield:
      AppendIndent(indent, out);
      out->append("yield ");
      AppendTuple(static_cast<const YieldStmt&>(s).values, out);
      EndLine(&s, cm, out);
      return;
    case StmtKind::kReturn: {
      const auto& r = static_cast<const ReturnStmt&>(s);
      AppendIndent(indent, out);
      out->append("return");
      if (!r.values.empty()) {
        out->push_back(' ');
        AppendList(r.values, out);
      }
      EndLine(&s, cm, out);
      return;
    }
  }
}

void AppendFunction(const Function& f, const Comments* cm, std::string* out) {
  AppendLeading(&f, 0, cm, out);
  if (f.type != FunctionType::kOpaque) {
    absl::StrAppend(out, "@function(type=", FunctionTypeName(f.type), ")\n");
  }
  absl::StrAppend(out, "def ", f.name, "(");
  for (size_t i = 0; i < f.params.size(); ++i) {
    if (i > 0) out->append(", ");
    absl::StrAppend(out, f.params[i]->name, ": ", TypeToString(*f.params[i]->type));
  }
  out->push_back(')');
  if (f.return_types.size() == 1) {
    absl::StrAppend(out, " -> ", TypeToString(*f.return_types[0]));
  } else if (f.return_types.size() > 1) {
    out->append(" -> (");
    for (size_t i = 0; i < f.return_types.size(); ++i) {
      if (i > 0) out->append(", ");
      out->append(TypeToString(*f.return_types[i]));
    }
    out->push_back(')');
  }
  out->push_back(':');
  EndLine(&f, cm, out);
  AppendBody(f.body, 1, cm, out);
}

}  // namespace

std::string FormatFloat(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s(buf);
  if (s.find_first_of(".e") == std::string::npos) s.append(".0");
  return s;
}

std::string QuoteString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out.append("\\\"");
        break;
      case '\\':
        out.append("\\\\");
        break;
      case '\n':
        out.append("\\n");
        break;
      case '\t':
        out.append("\\t");
        break;
      case '\r':
        out.append("\\r");
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\x%02x", c);
          out.append(buf);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
  return out;
}

std::string PrintExpr(const Expr& expr) {
  std::string out;
  AppendExpr(expr, &out);
  return out;
}

std::string PrintStmt(const Stmt& stmt, int indent) {
  std::string out;
  AppendStmt(stmt, indent, nullptr, &out);
  return out;
}

std::string PrintFunction(const Function& function) {
  std::string out;
  AppendFunction(function, nullptr, &out);
  return out;
}

std::string PrintProgram(const Program& program, const Comments* comments) {
  std::string out;
  for (size_t i = 0; i < program.functions.size(); ++i) {
    if (i > 0) out.push_back('\n');
    AppendFunction(*program.functions[i], comments, &out);
  }
  if (comments != nullptr) {
    for (const std::string& c : comments->end) absl::StrAppend(&out, c, "\n");
  }
  return out;
}

}  // namespace ir
}  // namespace accelmem
