#include "ir/parser.h"

#include <cmath>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/internal/attach_comments.h"
#include "ir/internal/lexer.h"
#include "ir/verifier.h"

namespace accelmem {
namespace ir {
namespace {

using internal::RawComment;
using internal::Tok;
using internal::Token;
using internal::Unquote;

// Internal error carrier; never escapes ParseProgram.
struct ParseFailure {
  int line;
  int col;
  std::string message;
};

[[noreturn]] void Fail(int line, int col, std::string message) {
  throw ParseFailure{line, col, std::move(message)};
}

std::string Count(size_t n, absl::string_view noun) {
  return absl::StrCat(n, " ", noun, n == 1 ? "" : "s");
}

// ---------------------------------------------------------------------------------------------
// Parser.

// FNV-1a with a final avalanche: value names are short, and absl's string hash is an
// out-of-line call in the system library.
struct NameHash {
  size_t operator()(absl::string_view s) const {
    uint64_t h = 1469598103934665603ULL;
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return static_cast<size_t>(h);
  }
};

const absl::flat_hash_set<absl::string_view>& ReservedWords() {
  static const auto* words = new absl::flat_hash_set<absl::string_view>{
      "def",   "for",   "in",   "if",     "else",   "yield", "return",     "pass",
      "range", "init",  "Tile", "Tensor", "Scalar", "Index", "MemRefType", "memref",
      "inf",   "nan",   "FP32", "FP16",   "BF16",   "INT8",  "UINT8",      "INT16",
      "INT32", "INT64", "INT4", "FP4",    "BOOL",   "DDR",   "Vec",        "Mat",
      "Left",  "Right", "Acc",  "Bias",   "True",   "False", "None",
  };
  return *words;
}

class Parser {
 public:
  Parser(absl::string_view text, const ParseOptions& options)
      : text_(text),
        options_(options),
        registry_(options.registry != nullptr ? options.registry : &OpRegistry::Global()) {}

  ProgramPtr Run() {
    internal::LexResult lexed =
        internal::Lex(text_, options_.comments != nullptr ? &raw_comments_ : nullptr);
    if (lexed.error) Fail(lexed.error->line, lexed.error->col, std::move(lexed.error->message));
    toks_ = std::move(lexed.tokens);
    std::vector<FunctionPtr> functions;
    absl::flat_hash_map<std::string, SourceLoc> names;
    while (Peek().kind != Tok::kEof) {
      if (Peek().kind == Tok::kNewline) {
        ++pos_;
        continue;
      }
      if (Peek().kind == Tok::kIndent) FailAt(Peek(), "unexpected indentation");
      FunctionPtr f = ParseFunction();
      auto [it, inserted] = names.emplace(f->name, f->loc);
      if (!inserted) {
        Fail(f->loc.line, f->loc.col + 4,
             absl::StrCat("redefinition of function '", f->name, "' (first defined at ",
                          it->second.line, ":", it->second.col, ")"));
      }
      functions.push_back(std::move(f));
    }
    if (functions.empty()) FailAt(Peek(), "expected a function definition ('def')");
    ProgramPtr program = std::make_shared<Program>(std::move(functions));
    if (options_.comments != nullptr) {
      internal::AttachComments(*program, raw_comments_, options_.comments);
    }
    return program;
  }

 private:
  // --- token helpers ---
  const Token& Peek(size_t ahead = 0) const {
    size_t i = pos_ + ahead;
    return i < toks_.size() ? toks_[i] : toks_.back();
  }
  const Token& Next() {
    const Token& t = Peek();
    if (pos_ < toks_.size() - 1) ++pos_;
    return t;
  }
  absl::string_view Text(const Token& t) const { return text_.substr(t.offset, t.length); }
  int64_t IntOf(const Token& t) const { return internal::IntValue(Text(t)); }
  double FloatOf(const Token& t) const { return internal::FloatValue(Text(t)); }
  static SourceLoc Loc(const Token& t) { return SourceLoc{t.line, t.col}; }

  std::string Describe(const Token& t) const {
    switch (t.kind) {
      case Tok::kNewline:
        return "end of line";
      case Tok::kIndent:
        return "indentation";
      case Tok::kDedent:
        return "end of block";
      case Tok::kEof:
        return "end of input";
      default:
        return absl::StrCat("'", Text(t), "'");
    }
  }
  [[noreturn]] void FailAt(const Token& t, std::string message) const {
    Fail(t.line, t.col, std::move(message));
  }
  [[noreturn]] void Expected(absl::string_view what) const {
    FailAt(Peek(), absl::StrCat("expected ", what, ", found ", Describe(Peek())));
  }
  const Token& Expect(Tok kind, absl::string_view what) {
    if (Peek().kind != kind) Expected(what);
    return Next();
  }
  bool Accept(Tok kind) {
    if (Peek().kind != kind) return false;
    Next();
    return true;
  }
  bool IsWord(const Token& t, absl::string_view w) const {
    return t.kind == Tok::kIdent && Text(t) == w;
  }
  const Token& ExpectWord(absl::string_view w) {
    if (!IsWord(Peek(), w)) Expected(absl::StrCat("'", w, "'"));
    return Next();
  }
  void ExpectEndOfLine() {
    if (Peek().kind == Tok::kEof) return;
    if (Peek().kind != Tok::kNewline) Expected("end of line");
    Next();
    if (Peek().kind == Tok::kIndent) FailAt(Peek(), "unexpected indentation");
  }

  // Depth guard for recursion (blocks and brackets).
  struct DepthGuard {
    DepthGuard(Parser* p, const Token& t) : p(p) {
      if (++p->depth_ > p->options_.max_nesting) {
        p->FailAt(t, absl::StrCat("nesting deeper than ", p->options_.max_nesting, " levels"));
      }
    }
    ~DepthGuard() { --p->depth_; }
    Parser* p;
  };

  // --- names ---
  std::string ValueName(const Token& t) { return std::string(ValueNameView(t)); }
  absl::string_view ValueNameView(const Token& t) {
    if (t.kind != Tok::kIdent)
      FailAt(t, absl::StrCat("expected a value name, found ", Describe(t)));
    absl::string_view name = Text(t);
    if (name.find('.') != absl::string_view::npos) {
      FailAt(t, absl::StrCat("invalid value name '", name, "': names cannot contain '.'"));
    }
    if (ReservedWords().contains(name)) {
      FailAt(t, absl::StrCat("'", name, "' is a reserved word and cannot name a value"));
    }
    return name;
  }

  // One table per function: every name defined so far (names are unique per function), and
  // whether its scope is still open. Keys view the input text, which outlives the parse.
  struct NameEntry {
    VarPtr var;
    bool visible;
  };

  VarPtr Define(const Token& name_tok, TypePtr type) {
    absl::string_view name = ValueNameView(name_tok);
    auto [it, inserted] = names_.try_emplace(name);
    if (!inserted) {
      const SourceLoc first = it->second.var->loc;
      FailAt(name_tok, absl::StrCat("redefinition of value '", name, "' (first defined at ",
                                    first.line, ":", first.col, ")"));
    }
    VarPtr v = MakeVar(std::string(name), std::move(type), Loc(name_tok));
    it->second = NameEntry{v, true};
    if (!scope_names_.empty()) scope_names_.back().push_back(name);
    return v;
  }

  void PushScope() { scope_names_.emplace_back(); }
  void PopScope() {
    for (absl::string_view name : scope_names_.back()) names_.find(name)->second.visible = false;
    scope_names_.pop_back();
  }

  VarPtr Lookup(absl::string_view name) const {
    auto it = names_.find(name);
    return it != names_.end() && it->second.visible ? it->second.var : nullptr;
  }

  [[noreturn]] void Undefined(const Token& t) const {
    absl::string_view name = Text(t);
    auto it = names_.find(name);
    if (it != names_.end()) {
      const SourceLoc first = it->second.var->loc;
      FailAt(t, absl::StrCat("value '", name, "' is not visible here (defined at ", first.line, ":",
                             first.col, " in an inner scope)"));
    }
    FailAt(t, absl::StrCat("use of undefined value '", name, "'"));
  }

  // --- types ---
  DType ParseDType() {
    const Token& t = Peek();
    if (t.kind != Tok::kIdent) Expected("a dtype");
    auto d = DTypeFromName(Text(t));
    if (!d.ok()) FailAt(t, std::string(d.status().message()));
    Next();
    return *d;
  }

  MemorySpace ParseSpaceWord() {
    const Token& t = Peek();
    if (t.kind != Tok::kIdent) Expected("a memory space");
    auto s = MemorySpaceFromName(Text(t));
    if (!s.ok()) FailAt(t, std::string(s.status().message()));
    Next();
    return *s;
  }

  Shape ParseShape() {
    DepthGuard guard(this, Peek());
    Expect(Tok::kLBracket, "'[' starting a shape");
    Shape shape;
    while (Peek().kind != Tok::kRBracket) {
      const Token& t = Peek();
      if (t.kind == Tok::kInt) {
        const int64_t v = IntOf(t);
        if (v < 0) FailAt(t, absl::StrCat("negative dimension ", v));
        shape.push_back(Dim::Static(v));
        Next();
      } else if (t.kind == Tok::kIdent) {
        shape.push_back(Dim::Symbol(ValueName(t)));
        Next();
      } else {
        Expected("a dimension (integer or name)");
      }
      if (!Accept(Tok::kComma)) break;
    }
    Expect(Tok::kRBracket, "']' or ','");
    return shape;
  }

  // Types with the same text in one function are the same type (MemRef names resolve the same
  // way throughout a function), so they are parsed once and shared.
  TypePtr ParseType() {
    const size_t start = pos_;
    TypePtr t = ParseTypeUncached();
    const Token& first = toks_[start];
    const Token& last = toks_[pos_ - 1];
    absl::string_view key = text_.substr(first.offset, last.offset + last.length - first.offset);
    auto [it, inserted] = types_.try_emplace(key, t);
    return it->second;
  }

  TypePtr ParseTypeUncached() {
    const Token& t = Peek();
    if (t.kind != Tok::kIdent) Expected("a type");
    absl::string_view w = Text(t);
    if (w == "Index") {
      Next();
      return MakeIndex();
    }
    if (w == "MemRefType") {
      Next();
      return MakeMemRefType(nullptr);
    }
    if (w == "Scalar") {
      Next();
      Expect(Tok::kLBracket, "'['");
      DType d = ParseDType();
      Expect(Tok::kRBracket, "']'");
      return MakeScalar(d);
    }
    if (w == "Tensor") {
      Next();
      Expect(Tok::kLBracket, "'['");
      Shape shape = ParseShape();
      Expect(Tok::kComma, "','");
      DType d = ParseDType();
      if (Peek().kind == Tok::kComma && Peek(1).kind == Tok::kIdent) {
        FailAt(Peek(1), "a Tensor lives in DDR and takes no memory space or memref");
      }
      Expect(Tok::kRBracket, "']'");
      return MakeTensor(std::move(shape), d);
    }
    if (w == "Tile") {
      Next();
      Expect(Tok::kLBracket, "'['");
      Shape shape = ParseShape();
      Expect(Tok::kComma, "','");
      DType d = ParseDType();
      Expect(Tok::kComma, "','");
      bool has_space = false;
      MemorySpace space = MemorySpace::kVec;
      const Token* space_tok = nullptr;
      MemRefPtr memref;
      const Token* memref_tok = nullptr;
      std::optional<TileLayout> layout;
      // A space and/or a memref, then an optional `layout=`, which comes last.
      for (int part = 0; part < 3; ++part) {
        if (part > 0 && !Accept(Tok::kComma)) break;
        if (IsWord(Peek(), "layout") && Peek(1).kind == Tok::kEq) {
          if (part == 0) FailAt(Peek(), "a Tile states its memory space or memref before layout=");
          Next();
          Next();
          const Token& lt = Peek();
          if (lt.kind != Tok::kIdent) Expected("a layout (ND or NZ)");
          layout = TileLayoutFromName(Text(lt));
          if (!layout) {
            FailAt(lt, absl::StrCat("unknown layout '", Text(lt), "' (known: ND, NZ)"));
          }
          Next();
          if (Peek().kind == Tok::kComma) {
            FailAt(Peek(), "layout= must be the last part of a Tile type");
          }
          break;
        }
        if (part == 2) break;  // Expect(']') below reports the extra part
        if (IsWord(Peek(), "memref") && Peek(1).kind == Tok::kEq) {
          if (memref_tok != nullptr) FailAt(Peek(), "memref given twice");
          Next();
          Next();
          memref_tok = &Peek();
          memref = ParseMemRefRef(shape, d);
        } else {
          if (has_space) FailAt(Peek(), "memory space given twice");
          space_tok = &Peek();
          space = ParseSpaceWord();
          has_space = true;
        }
      }
      Expect(Tok::kRBracket, "']'");
      if (memref != nullptr) {
        if (has_space && space != memref->space()) {
          FailAt(*space_tok,
                 absl::StrCat("memory space ", MemorySpaceName(space), " disagrees with memref '",
                              memref->name(), "' in ", MemorySpaceName(memref->space())));
        }
        space = memref->space();
      }
      (void)memref_tok;
      return MakeTile(std::move(shape), d, space, std::move(memref), layout);
    }
    FailAt(t, absl::StrCat("unknown type '", w, "'"));
  }

  // NAME, NAME+OFFSET, NAME[SLOT] or NAME[SLOT]+OFFSET after `memref=`.
  MemRefPtr ParseMemRefRef(const Shape& shape, DType dtype) {
    const Token& name_tok = Peek();
    if (name_tok.kind != Tok::kIdent) Expected("a memref name");
    Next();
    auto it = memrefs_.find(Text(name_tok));
    if (it == memrefs_.end()) {
      FailAt(name_tok, absl::StrCat("memref '", Text(name_tok),
                                    "' names no tile.alloc in function '", function_name_, "'"));
    }
    int64_t slot = -1;
    if (Peek().kind == Tok::kLBracket) {
      const Token& open = Next();
      const Token& slot_tok = Peek();
      if (slot_tok.kind != Tok::kInt) Expected("a slot number after '['");
      slot = IntOf(slot_tok);
      Next();
      Expect(Tok::kRBracket, "']' closing the slot");
      if (!it->second->is_slotted()) {
        FailAt(open, absl::StrCat("memref '", Text(name_tok), "' has no slots (its tile.alloc ",
                                  "states no slots=)"));
      }
      if (slot < 0 || slot >= it->second->slots()) {
        FailAt(slot_tok, absl::StrCat("slot ", slot, " of memref '", Text(name_tok), "' with ",
                                      it->second->slots(), " slots"));
      }
    }
    if (!Accept(Tok::kPlus)) {
      if (slot < 0) return it->second;
      return View(it->second, slot, 0, StaticTileBytes(shape, dtype).value_or(0));
    }
    const Token& off = Peek();
    if (off.kind != Tok::kInt) Expected("a byte offset after '+'");
    const int64_t offset = IntOf(off);
    if (offset < 0) FailAt(off, "memref offset must be non-negative");
    Next();
    return View(it->second, slot, offset, StaticTileBytes(shape, dtype).value_or(0));
  }

  // The view of `root` at `offset` (inside slot `slot` when >= 0), one object per distinct view.
  MemRefPtr View(const MemRefPtr& root, int64_t slot, int64_t offset, int64_t size) {
    auto key = std::make_tuple(root.get(), slot, offset, size);
    auto found = views_.find(key);
    if (found != views_.end()) return found->second;
    MemRefPtr view = slot >= 0 ? MemRef::MakeSlot(root, slot, offset, size)
                               : MemRef::MakeView(root, offset, size);
    views_.emplace(key, view);
    return view;
  }

  // --- expressions ---
  ExprPtr ParseArg() {
    const Token& t = Peek();
    switch (t.kind) {
      case Tok::kInt:
        Next();
        return MakeInt(IntOf(t));
      case Tok::kFloat:
        Next();
        return MakeFloat(FloatOf(t));
      case Tok::kString:
        Next();
        return MakeString(Unquote(Text(t)));
      case Tok::kLBracket: {
        DepthGuard guard(this, t);
        Next();
        std::vector<ExprPtr> items;
        while (Peek().kind != Tok::kRBracket) {
          items.push_back(ParseArg());
          if (!Accept(Tok::kComma)) break;
        }
        Expect(Tok::kRBracket, "']' or ','");
        return MakeList(std::move(items));
      }
      case Tok::kIdent: {
        absl::string_view w = Text(t);
        if (Peek(1).kind == Tok::kLParen) {
          FailAt(t, absl::StrCat("nested call of '", w,
                                 "': op arguments must be values, assign the call first"));
        }
        if (VarPtr v = Lookup(w)) {
          Next();
          return v;
        }
        if (auto d = DTypeFromName(w); d.ok()) {
          Next();
          return MakeDType(*d);
        }
        if (auto s = MemorySpaceFromName(w); s.ok()) {
          Next();
          return MakeSpace(*s);
        }
        if (w == "inf" || w == "nan") {
          Next();
          return MakeFloat(w == "inf" ? HUGE_VAL : std::nan(""));
        }
        Undefined(t);
      }
      default:
        Expected("an argument");
    }
  }

  CallPtr ParseCall() {
    const Token& op_tok = Peek();
    if (op_tok.kind != Tok::kIdent) Expected("an op call");
    absl::string_view op = Text(op_tok);
    const OpDef* def = registry_->Find(op);
    if (def == nullptr) FailAt(op_tok, absl::StrCat("unknown op '", op, "'"));
    Next();
    DepthGuard guard(this, Peek());
    Expect(Tok::kLParen, absl::StrCat("'(' after op '", op, "'"));
    std::vector<ExprPtr> args;
    Kwargs kwargs;
    while (Peek().kind != Tok::kRParen) {
      if (Peek().kind == Tok::kIdent && Peek(1).kind == Tok::kEq) {
        const Token& key_tok = Next();
        Next();
        std::string key(Text(key_tok));
        if (!def->AllowsKwarg(key)) {
          FailAt(key_tok, absl::StrCat(op, " has no keyword argument '", key, "'"));
        }
        for (const auto& kv : kwargs) {
          if (kv.first == key) FailAt(key_tok, absl::StrCat("keyword '", key, "' given twice"));
        }
        kwargs.emplace_back(std::move(key), ParseArg());
      } else {
        if (!kwargs.empty()) FailAt(Peek(), "positional argument after keyword argument");
        args.push_back(ParseArg());
      }
      if (!Accept(Tok::kComma)) break;
    }
    Expect(Tok::kRParen, "')' or ','");
    CallPtr call = MakeCall(std::string(op), std::move(args), std::move(kwargs), Loc(op_tok));
    absl::Status s = CheckCallSignature(*def, *call);
    if (!s.ok()) FailAt(op_tok, std::string(s.message()));
    return call;
  }

  // --- statements ---
  // A block after ':' NEWLINE: INDENT stmts DEDENT, indented 4 more than `indent`.
  StmtPtr ParseBlock(int indent) {
    const Token& colon_line_end = Peek();
    if (colon_line_end.kind != Tok::kNewline) Expected("end of line after ':'");
    Next();
    const Token& ind = Peek();
    if (ind.kind != Tok::kIndent) FailAt(ind, "expected an indented block");
    if (static_cast<int>(ind.length) != indent + 4) {
      FailAt(ind,
             absl::StrCat("expected indentation of ", indent + 4, " spaces, found ", ind.length));
    }
    DepthGuard guard(this, ind);
    Next();
    std::vector<StmtPtr> stmts;
    SourceLoc loc = Loc(Peek());
    while (Peek().kind != Tok::kDedent && Peek().kind != Tok::kEof) {
      if (StmtPtr s = ParseStmt(indent + 4)) stmts.push_back(std::move(s));
    }
    Accept(Tok::kDedent);
    return std::make_shared<SeqStmts>(std::move(stmts), loc);
  }

  StmtPtr ParseStmt(int indent) {
    const Token& t = Peek();
    if (t.kind == Tok::kIndent) FailAt(t, "unexpected indentation");
    if (t.kind != Tok::kIdent) Expected("a statement");
    absl::string_view w = Text(t);
    if (w == "for") return ParseFor(indent);
    if (w == "if") return ParseIf(indent);
    if (w == "else") FailAt(t, "'else' without a matching 'if'");
    if (w == "pass") {
      Next();
      ExpectEndOfLine();
      return nullptr;
    }
    if (w == "yield") {
      Next();
      std::vector<ExprPtr> values = ParseValueTuple();
      ExpectEndOfLine();
      return std::make_shared<YieldStmt>(std::move(values), Loc(t));
    }
    if (w == "return") {
      Next();
      std::vector<ExprPtr> values;
      if (Peek().kind != Tok::kNewline && Peek().kind != Tok::kEof) values = ParseValueTuple();
      ExpectEndOfLine();
      return std::make_shared<ReturnStmt>(std::move(values), Loc(t));
    }
    if (Peek(1).kind == Tok::kColon) {
      size_t stmt_index = pos_;
      const Token& name_tok = Next();
      Next();  // ':'
      TypePtr type = ParseType();
      if (type->kind == TypeKind::kMemRef) {
        auto it = prescanned_.find(stmt_index);
        if (it != prescanned_.end()) type = MakeMemRefType(it->second);
      }
      Expect(Tok::kEq, "'='");
      CallPtr call = ParseCall();
      VarPtr var = Define(name_tok, std::move(type));
      ExpectEndOfLine();
      return std::make_shared<AssignStmt>(std::move(var), std::move(call), Loc(t));
    }
    if (Peek(1).kind == Tok::kEq) {
      FailAt(Peek(1), absl::StrCat("missing type annotation: write '", w, ": Type = op(...)'"));
    }
    if (Peek(1).kind == Tok::kLParen) {
      CallPtr call = ParseCall();
      ExpectEndOfLine();
      return std::make_shared<EvalStmt>(std::move(call), Loc(t));
    }
    if (Peek(1).kind == Tok::kNewline || Peek(1).kind == Tok::kEof) {
      FailAt(t, absl::StrCat("expected a statement, found bare name '", w, "'"));
    }
    FailAt(Peek(1), absl::StrCat("expected ':' or '(' after '", w, "', found ", Describe(Peek(1))));
  }

  // `(a, b)`, `(a,)`, `a`, or `a, b` of value arguments.
  std::vector<ExprPtr> ParseValueTuple() {
    std::vector<ExprPtr> values;
    if (Peek().kind == Tok::kLParen) {
      DepthGuard guard(this, Peek());
      Next();
      while (Peek().kind != Tok::kRParen) {
        values.push_back(ParseArg());
        if (!Accept(Tok::kComma)) break;
      }
      Expect(Tok::kRParen, "')' or ','");
      return values;
    }
    values.push_back(ParseArg());
    while (Accept(Tok::kComma)) values.push_back(ParseArg());
    return values;
  }

  // `(name: Type, ...)` after '->'.
  std::vector<std::pair<const Token*, TypePtr>> ParseTypedNames() {
    DepthGuard guard(this, Peek());
    Expect(Tok::kLParen, "'(' starting typed results");
    std::vector<std::pair<const Token*, TypePtr>> out;
    while (Peek().kind != Tok::kRParen) {
      const Token& name = Peek();
      ValueName(name);
      Next();
      Expect(Tok::kColon, "':' and a type");
      out.emplace_back(&name, ParseType());
      if (!Accept(Tok::kComma)) break;
    }
    Expect(Tok::kRParen, "')' or ','");
    if (out.empty()) FailAt(Peek(), "'->' needs at least one result");
    return out;
  }

  ExprPtr ParseBound() {
    const Token& t = Peek();
    ExprPtr e = ParseArg();
    if (e->kind != ExprKind::kInt && e->kind != ExprKind::kVar) {
      FailAt(t, "loop bounds must be integers or values");
    }
    return e;
  }

  StmtPtr ParseFor(int indent) {
    const Token& for_tok = Next();
    const Token& var_tok = Peek();
    ValueName(var_tok);
    Next();
    std::vector<const Token*> carry_toks;
    if (Accept(Tok::kComma)) {
      DepthGuard guard(this, Peek());
      Expect(Tok::kLParen, "'(' starting carried values");
      while (Peek().kind != Tok::kRParen) {
        const Token& c = Peek();
        ValueName(c);
        Next();
        carry_toks.push_back(&c);
        if (!Accept(Tok::kComma)) break;
      }
      Expect(Tok::kRParen, "')' or ','");
      if (carry_toks.empty()) FailAt(Peek(), "empty carried-value list");
    }
    ExpectWord("in");
    ExpectWord("range");
    const Token& lparen = Expect(Tok::kLParen, "'('");
    DepthGuard guard(this, lparen);
    std::vector<ExprPtr> bounds;
    std::vector<ExprPtr> inits;
    const Token* init_tok = nullptr;
    int64_t pipeline = 0;
    const Token* pipeline_tok = nullptr;
    while (Peek().kind != Tok::kRParen) {
      if (IsWord(Peek(), "init") && Peek(1).kind == Tok::kEq) {
        if (init_tok != nullptr) FailAt(Peek(), "init= given twice");
        init_tok = &Next();
        Next();
        if (Peek().kind != Tok::kLParen) Expected("'(' starting init values");
        const Token& first = Peek(1);
        inits = ParseValueTuple();
        for (const ExprPtr& e : inits) {
          if (e->kind != ExprKind::kVar) FailAt(first, "init values must be named values");
        }
        if (!Accept(Tok::kComma)) break;
        continue;
      }
      if (IsWord(Peek(), "pipeline") && Peek(1).kind == Tok::kEq) {
        if (pipeline_tok != nullptr) FailAt(Peek(), "pipeline= given twice");
        pipeline_tok = &Next();
        Next();
        pipeline = ParsePipelineDepth();
        if (!Accept(Tok::kComma)) break;
        continue;
      }
      if (init_tok != nullptr || pipeline_tok != nullptr) {
        FailAt(Peek(), "range bounds come before init= and pipeline=");
      }
      if (bounds.size() == 3) FailAt(Peek(), "range takes at most 3 bounds");
      bounds.push_back(ParseBound());
      if (!Accept(Tok::kComma)) break;
    }
    Expect(Tok::kRParen, "')'");
    if (bounds.empty()) FailAt(lparen, "range needs at least a stop bound");
    ExprPtr start = bounds.size() >= 2 ? bounds[0] : MakeInt(0);
    ExprPtr stop = bounds.size() >= 2 ? bounds[1] : bounds[0];
    ExprPtr step = bounds.size() == 3 ? bounds[2] : MakeInt(1);
    if (inits.size() != carry_toks.size()) {
      const Token& at = init_tok != nullptr ? *init_tok : for_tok;
      FailAt(at, absl::StrCat("loop carries ", Count(carry_toks.size(), "value"),
                              " but init= gives ", inits.size()));
    }
    std::vector<std::pair<const Token*, TypePtr>> results;
    if (Peek().kind == Tok::kArrow) {
      const Token& arrow = Next();
      results = ParseTypedNames();
      if (results.size() != carry_toks.size()) {
        FailAt(arrow, absl::StrCat("loop carries ", Count(carry_toks.size(), "value"),
                                   " but declares ", Count(results.size(), "result")));
      }
    } else if (!carry_toks.empty()) {
      FailAt(Peek(), "a loop with carried values needs '-> (name: Type, ...)' results");
    }
    Expect(Tok::kColon, "':'");
    PushScope();
    VarPtr loop_var = Define(var_tok, MakeIndex());
    std::vector<VarPtr> iter_args;
    for (size_t i = 0; i < carry_toks.size(); ++i) {
      iter_args.push_back(Define(*carry_toks[i], static_cast<const Var&>(*inits[i]).type));
    }
    StmtPtr body = ParseBlock(indent);
    PopScope();
    std::vector<VarPtr> return_vars;
    for (auto& r : results) return_vars.push_back(Define(*r.first, r.second));
    return std::make_shared<ForStmt>(std::move(loop_var), std::move(start), std::move(stop),
                                     std::move(step), std::move(iter_args), std::move(inits),
                                     std::move(body), std::move(return_vars), Loc(for_tok),
                                     pipeline);
  }

  // The INT after `pipeline=`: a depth of 2..16 slots (upstream's alloc_multi_tile range).
  int64_t ParsePipelineDepth() {
    const Token& t = Peek();
    if (t.kind != Tok::kInt) Expected("an integer pipeline depth after 'pipeline='");
    const int64_t depth = IntOf(t);
    if (depth < kMinPipelineDepth || depth > kMaxPipelineDepth) {
      FailAt(t, absl::StrCat("pipeline depth must be between ", kMinPipelineDepth, " and ",
                             kMaxPipelineDepth, ", not ", depth));
    }
    Next();
    return depth;
  }

  StmtPtr ParseIf(int indent) {
    const Token& if_tok = Next();
    const Token& cond_tok = Peek();
    ExprPtr cond = ParseArg();
    if (cond->kind != ExprKind::kVar && cond->kind != ExprKind::kInt) {
      FailAt(cond_tok, "an if condition must be a value or an integer");
    }
    std::vector<std::pair<const Token*, TypePtr>> results;
    if (Accept(Tok::kArrow)) results = ParseTypedNames();
    Expect(Tok::kColon, "':'");
    PushScope();
    StmtPtr then_body = ParseBlock(indent);
    PopScope();
    StmtPtr else_body;
    if (IsWord(Peek(), "else")) {
      Next();
      Expect(Tok::kColon, "':' after 'else'");
      PushScope();
      else_body = ParseBlock(indent);
      PopScope();
    } else if (!results.empty()) {
      FailAt(Peek(), "an if with results needs an 'else' branch");
    }
    std::vector<VarPtr> return_vars;
    for (auto& r : results) return_vars.push_back(Define(*r.first, r.second));
    return std::make_shared<IfStmt>(std::move(cond), std::move(then_body), std::move(else_body),
                                    std::move(return_vars), Loc(if_tok));
  }

  // --- functions ---
  // Finds `NAME: MemRefType = tile.alloc(Space, addr, size, id)` statements of the function that
  // starts at pos_ and creates their MemRefs, so that types may name them before the alloc.
  void PrescanAllocs() {
    for (size_t i = pos_ + 1; i + 13 < toks_.size(); ++i) {
      const Token& t = toks_[i];
      if (t.col == 1 && (t.kind == Tok::kAt || IsWord(t, "def"))) break;
      if (t.kind != Tok::kIdent || toks_[i + 1].kind != Tok::kColon ||
          !IsWord(toks_[i + 2], "MemRefType") || toks_[i + 3].kind != Tok::kEq ||
          !IsWord(toks_[i + 4], "tile.alloc") || toks_[i + 5].kind != Tok::kLParen ||
          toks_[i + 6].kind != Tok::kIdent || toks_[i + 7].kind != Tok::kComma ||
          toks_[i + 8].kind != Tok::kInt || toks_[i + 9].kind != Tok::kComma ||
          toks_[i + 10].kind != Tok::kInt || toks_[i + 11].kind != Tok::kComma ||
          toks_[i + 12].kind != Tok::kInt) {
        continue;
      }
      // `)` or `, )`, optionally after `, slots=INT` and `, declared=INT` (either order): the
      // same call the main parse accepts (its op rule checks the values).
      size_t end = i + 13;
      int64_t slots = 0;
      bool declared = false;
      while (toks_[end].kind == Tok::kComma && end + 3 < toks_.size() &&
             toks_[end + 2].kind == Tok::kEq && toks_[end + 3].kind == Tok::kInt &&
             (IsWord(toks_[end + 1], "slots") || IsWord(toks_[end + 1], "declared"))) {
        if (IsWord(toks_[end + 1], "slots")) {
          slots = IntOf(toks_[end + 3]);
        } else {
          declared = IntOf(toks_[end + 3]) == 1;
        }
        end += 4;
      }
      const bool closes = toks_[end].kind == Tok::kRParen ||
                          (toks_[end].kind == Tok::kComma && end + 1 < toks_.size() &&
                           toks_[end + 1].kind == Tok::kRParen);
      if (!closes) continue;
      if (slots != 0 && (slots < kMinPipelineDepth || slots > kMaxPipelineDepth)) {
        FailAt(toks_[end - 1], absl::StrCat("a slotted tile.alloc has ", kMinPipelineDepth, " to ",
                                            kMaxPipelineDepth, " slots, not ", slots));
      }
      const int64_t size = IntOf(toks_[i + 10]);
      if (slots != 0 && (size <= 0 || size % slots != 0)) {
        FailAt(toks_[i + 10],
               absl::StrCat("the size of a tile.alloc with ", slots,
                            " slots must be a positive multiple of ", slots, ", not ", size));
      }
      auto space = MemorySpaceFromName(Text(toks_[i + 6]));
      if (!space.ok()) continue;
      std::string name(Text(t));
      if (memrefs_.contains(name)) continue;  // a redefinition, reported by the main parse
      MemRefPtr m = MemRef::MakeRoot(name, *space, IntOf(toks_[i + 8]), size, IntOf(toks_[i + 12]),
                                     slots, declared);
      memrefs_.emplace(name, m);
      prescanned_.emplace(i, std::move(m));
    }
  }

  FunctionPtr ParseFunction() {
    FunctionType ftype = FunctionType::kOpaque;
    if (Peek().kind == Tok::kAt) {
      Next();
      ExpectWord("function");
      if (Accept(Tok::kLParen)) {
        if (Peek().kind != Tok::kRParen) {
          ExpectWord("type");
          Expect(Tok::kEq, "'='");
          const Token& tt = Peek();
          if (tt.kind != Tok::kIdent) Expected("a function type");
          auto ft = FunctionTypeFromName(Text(tt));
          if (!ft.ok()) FailAt(tt, std::string(ft.status().message()));
          ftype = *ft;
          Next();
        }
        Expect(Tok::kRParen, "')'");
      }
      Expect(Tok::kNewline, "end of line after the decorator");
    }
    const Token& def_tok = Peek();
    if (!IsWord(def_tok, "def")) Expected("'def'");
    if (def_tok.col != 1) FailAt(def_tok, "a function definition must start at column 1");
    Next();
    const Token& name_tok = Peek();
    std::string fname = ValueName(name_tok);
    Next();
    // Fresh per-function state.
    function_name_ = fname;
    names_.clear();
    scope_names_.clear();
    types_.clear();
    memrefs_.clear();
    views_.clear();
    prescanned_.clear();
    PrescanAllocs();

    Expect(Tok::kLParen, "'('");
    std::vector<std::pair<const Token*, TypePtr>> params;
    while (Peek().kind != Tok::kRParen) {
      const Token& p = Peek();
      ValueName(p);
      Next();
      Expect(Tok::kColon, "':' and a type");
      params.emplace_back(&p, ParseType());
      if (!Accept(Tok::kComma)) break;
    }
    Expect(Tok::kRParen, "')' or ','");
    std::vector<TypePtr> return_types;
    if (Accept(Tok::kArrow)) {
      if (Accept(Tok::kLParen)) {
        while (Peek().kind != Tok::kRParen) {
          return_types.push_back(ParseType());
          if (!Accept(Tok::kComma)) break;
        }
        Expect(Tok::kRParen, "')' or ','");
      } else {
        return_types.push_back(ParseType());
      }
    }
    Expect(Tok::kColon, "':'");
    std::vector<VarPtr> param_vars;
    for (auto& p : params) param_vars.push_back(Define(*p.first, p.second));
    StmtPtr body = ParseBlock(0);
    return std::make_shared<Function>(std::move(fname), ftype, std::move(param_vars),
                                      std::move(return_types), std::move(body), Loc(def_tok));
  }

  absl::string_view text_;
  std::vector<RawComment> raw_comments_;
  const ParseOptions& options_;
  const OpRegistry* registry_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::string function_name_;
  absl::flat_hash_map<absl::string_view, NameEntry, NameHash> names_;
  std::vector<std::vector<absl::string_view>> scope_names_;          // names defined per open scope
  absl::flat_hash_map<absl::string_view, TypePtr, NameHash> types_;  // by text, per function
  absl::flat_hash_map<std::string, MemRefPtr> memrefs_;
  absl::flat_hash_map<std::tuple<const MemRef*, int64_t, int64_t, int64_t>, MemRefPtr> views_;
  absl::flat_hash_map<size_t, MemRefPtr> prescanned_;  // token index of the alloc's name
};

}  // namespace

absl::StatusOr<ProgramPtr> ParseProgram(absl::string_view text, absl::string_view filename,
                                        const ParseOptions& options) {
  try {
    return Parser(text, options).Run();
  } catch (const ParseFailure& f) {
    return absl::InvalidArgumentError(
        absl::StrCat(filename, ":", f.line, ":", f.col, ": error: ", f.message));
  }
}

absl::StatusOr<ProgramPtr> ParseAndVerifyProgram(absl::string_view text, absl::string_view filename,
                                                 const ParseOptions& options) {
  absl::StatusOr<ProgramPtr> program = ParseProgram(text, filename, options);
  if (!program.ok()) return program;
  VerifyOptions vopts;
  vopts.filename = std::string(filename);
  vopts.registry = options.registry;
  absl::Status s = VerifyProgram(**program, vopts);
  if (!s.ok()) return s;
  return program;
}

}  // namespace ir
}  // namespace accelmem
