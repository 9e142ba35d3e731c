#include "ir/internal/lexer.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace accelmem {
namespace ir {
namespace internal {
namespace {

// Internal error carrier; never escapes Lex().
struct LexFailure {
  int line;
  int col;
  std::string message;
};

[[noreturn]] void Fail(int line, int col, std::string message) {
  throw LexFailure{line, col, std::move(message)};
}

bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsIdentChar(char c) { return IsIdentStart(c) || (c >= '0' && c <= '9') || c == '.'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string Printable(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string("'") + c + "'";
  char buf[16];
  std::snprintf(buf, sizeof(buf), "byte 0x%02x", u);
  return buf;
}

class Lexer {
 public:
  Lexer(absl::string_view text, std::vector<RawComment>* comments)
      : text_(text), comments_(comments) {}

  std::vector<Token> Run() {
    if (text_.size() > 0x7fffffffu) Fail(1, 1, "input too large");
    std::vector<Token> toks;
    toks.reserve(text_.size() / 2 + 16);
    std::vector<int> indents = {0};
    bool line_has_tokens = false;
    int depth = 0;  // brackets
    bool at_line_start = true;
    while (true) {
      if (at_line_start && depth == 0) {
        // Measure indentation; skip blank and comment-only lines.
        int width = 0;
        size_t p = pos_;
        while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\t')) {
          if (text_[p] == '\t')
            Fail(line_, static_cast<int>(p - line_start_) + 1,
                 "tab in indentation; indent with 4 spaces per level");
          ++width;
          ++p;
        }
        if (p >= text_.size()) {
          pos_ = p;
          break;
        }
        char c = text_[p];
        if (c == '\n' || c == '#' || c == '\r') {
          pos_ = p;
          if (c == '#') RecordComment(true);
          SkipToLineEnd();
          continue;
        }
        pos_ = p;
        at_line_start = false;
        int col = width + 1;
        if (width % 4 != 0) {
          Fail(line_, col,
               absl::StrCat("indentation of ", width, " spaces is not a multiple of 4"));
        }
        if (width > indents.back()) {
          indents.push_back(width);
          Token t = Make(Tok::kIndent, pos_, 0);
          t.length = static_cast<uint32_t>(width);
          toks.push_back(t);
        } else {
          while (width < indents.back()) {
            indents.pop_back();
            toks.push_back(Make(Tok::kDedent, pos_, 0));
          }
          if (width != indents.back()) {
            Fail(line_, col, "unindent does not match any outer indentation level");
          }
        }
      }
      if (pos_ >= text_.size()) break;
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
        continue;
      }
      if (c == '#') {
        RecordComment(!line_has_tokens);
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
        continue;
      }
      if (c == '\n') {
        if (depth == 0) {
          toks.push_back(Make(Tok::kNewline, pos_, 0));
          at_line_start = true;
          line_has_tokens = false;
        }
        NewLine();
        continue;
      }
      line_has_tokens = true;
      size_t start = pos_;
      if (IsIdentStart(c)) {
        while (pos_ < text_.size() && IsIdentChar(text_[pos_])) ++pos_;
        toks.push_back(Make(Tok::kIdent, start, pos_ - start));
        continue;
      }
      if (IsDigit(c) || (c == '-' && pos_ + 1 < text_.size() && IsDigit(text_[pos_ + 1]))) {
        toks.push_back(Number());
        continue;
      }
      if (c == '-' && text_.substr(pos_, 4) == "-inf" &&
          (pos_ + 4 >= text_.size() || !IsIdentChar(text_[pos_ + 4]))) {
        Token t = Make(Tok::kFloat, start, 4);
        pos_ += 4;
        toks.push_back(t);
        continue;
      }
      if (c == '"') {
        toks.push_back(String());
        continue;
      }
      Tok kind;
      size_t len = 1;
      switch (c) {
        case '(':
          kind = Tok::kLParen;
          ++depth;
          break;
        case ')':
          kind = Tok::kRParen;
          depth = depth > 0 ? depth - 1 : 0;
          break;
        case '[':
          kind = Tok::kLBracket;
          ++depth;
          break;
        case ']':
          kind = Tok::kRBracket;
          depth = depth > 0 ? depth - 1 : 0;
          break;
        case ',':
          kind = Tok::kComma;
          break;
        case ':':
          kind = Tok::kColon;
          break;
        case '=':
          kind = Tok::kEq;
          break;
        case '@':
          kind = Tok::kAt;
          break;
        case '+':
          kind = Tok::kPlus;
          break;
        case '-':
          if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '>') {
            kind = Tok::kArrow;
            len = 2;
            break;
          }
          [[fallthrough]];
        default:
          Fail(line_, Col(pos_), absl::StrCat("unexpected character ", Printable(c)));
      }
      toks.push_back(Make(kind, pos_, len));
      pos_ += len;
    }
    if (line_has_tokens ||
        (!toks.empty() && toks.back().kind != Tok::kNewline && toks.back().kind != Tok::kDedent)) {
      toks.push_back(Make(Tok::kNewline, pos_, 0));
    }
    while (indents.size() > 1) {
      indents.pop_back();
      toks.push_back(Make(Tok::kDedent, pos_, 0));
    }
    toks.push_back(Make(Tok::kEof, pos_, 0));
    return toks;
  }

 private:
  int Col(size_t p) const { return static_cast<int>(p - line_start_) + 1; }
  Token Make(Tok kind, size_t start, size_t len) const {
    Token t;
    t.kind = kind;
    t.line = line_;
    t.col = Col(start);
    t.offset = static_cast<uint32_t>(start);
    t.length = static_cast<uint32_t>(len);
    return t;
  }
  void NewLine() {
    ++pos_;
    ++line_;
    line_start_ = pos_;
  }
  void RecordComment(bool own_line) {
    if (comments_ == nullptr) return;
    size_t end = pos_;
    while (end < text_.size() && text_[end] != '\n') ++end;
    absl::string_view body = text_.substr(pos_, end - pos_);
    while (!body.empty() && (body.back() == ' ' || body.back() == '\t' || body.back() == '\r')) {
      body.remove_suffix(1);
    }
    comments_->push_back(RawComment{line_, own_line, body});
  }
  void SkipToLineEnd() {
    while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    if (pos_ < text_.size()) NewLine();
  }

  Token Number() {
    size_t start = pos_;
    if (text_[pos_] == '-') ++pos_;
    while (pos_ < text_.size() && IsDigit(text_[pos_])) ++pos_;
    bool is_float = false;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      is_float = true;
      ++pos_;
      while (pos_ < text_.size() && IsDigit(text_[pos_])) ++pos_;
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      size_t p = pos_ + 1;
      if (p < text_.size() && (text_[p] == '+' || text_[p] == '-')) ++p;
      if (p < text_.size() && IsDigit(text_[p])) {
        is_float = true;
        pos_ = p;
        while (pos_ < text_.size() && IsDigit(text_[pos_])) ++pos_;
      }
    }
    if (pos_ < text_.size() && IsIdentStart(text_[pos_])) {
      Fail(line_, Col(pos_),
           absl::StrCat("unexpected character ", Printable(text_[pos_]), " after a number"));
    }
    Token t = Make(is_float ? Tok::kFloat : Tok::kInt, start, pos_ - start);
    std::string digits(text_.substr(start, pos_ - start));
    errno = 0;
    char* end = nullptr;
    if (is_float) {
      const double v = std::strtod(digits.c_str(), &end);
      if (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL)) {
        Fail(t.line, t.col, absl::StrCat("float literal '", digits, "' is out of range"));
      }
    } else {
      (void)std::strtoll(digits.c_str(), &end, 10);
      if (errno == ERANGE) {
        Fail(t.line, t.col, absl::StrCat("integer literal '", digits, "' is out of range"));
      }
    }
    return t;
  }

  Token String() {
    size_t start = pos_;
    ++pos_;
    while (true) {
      if (pos_ >= text_.size() || text_[pos_] == '\n') {
        Fail(line_, Col(start), "unterminated string");
      }
      char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        break;
      }
      if (c == '\\') {
        if (pos_ + 1 >= text_.size()) Fail(line_, Col(start), "unterminated string");
        char e = text_[pos_ + 1];
        if (e == 'x') {
          auto hex = [](char h) {
            return (h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F');
          };
          if (pos_ + 3 >= text_.size() || !hex(text_[pos_ + 2]) || !hex(text_[pos_ + 3])) {
            Fail(line_, Col(pos_), "invalid \\x escape: expected two hex digits");
          }
          pos_ += 4;
          continue;
        }
        if (e != '"' && e != '\\' && e != 'n' && e != 't' && e != 'r') {
          Fail(line_, Col(pos_),
               absl::StrCat("unknown escape sequence '\\", std::string(1, e), "'"));
        }
        pos_ += 2;
        continue;
      }
      ++pos_;
    }
    return Make(Tok::kString, start, pos_ - start);
  }

  absl::string_view text_;
  std::vector<RawComment>* comments_;
  size_t pos_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;
};

}  // namespace

const char* TokName(Tok kind) {
  switch (kind) {
    case Tok::kIdent:
      return "Ident";
    case Tok::kInt:
      return "Int";
    case Tok::kFloat:
      return "Float";
    case Tok::kString:
      return "String";
    case Tok::kLParen:
      return "LParen";
    case Tok::kRParen:
      return "RParen";
    case Tok::kLBracket:
      return "LBracket";
    case Tok::kRBracket:
      return "RBracket";
    case Tok::kComma:
      return "Comma";
    case Tok::kColon:
      return "Colon";
    case Tok::kEq:
      return "Eq";
    case Tok::kArrow:
      return "Arrow";
    case Tok::kAt:
      return "At";
    case Tok::kPlus:
      return "Plus";
    case Tok::kNewline:
      return "Newline";
    case Tok::kIndent:
      return "Indent";
    case Tok::kDedent:
      return "Dedent";
    case Tok::kEof:
      return "Eof";
  }
  return "?";
}

LexResult Lex(absl::string_view text, std::vector<RawComment>* comments) {
  LexResult result;
  try {
    result.tokens = Lexer(text, comments).Run();
  } catch (LexFailure& f) {
    result.error = LexError{f.line, f.col, std::move(f.message)};
  }
  return result;
}

std::string Unquote(absl::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 1; i + 1 < s.size(); ++i) {
    char c = s[i];
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    char e = s[++i];
    switch (e) {
      case 'n':
        out.push_back('\n');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 'x': {
        auto v = [](char h) {
          return h <= '9' ? h - '0' : (h <= 'F' ? h - 'A' + 10 : h - 'a' + 10);
        };
        out.push_back(static_cast<char>(v(s[i + 1]) * 16 + v(s[i + 2])));
        i += 2;
        break;
      }
      default:
        out.push_back(e);
    }
  }
  return out;
}

int64_t IntValue(absl::string_view token_text) {
  char buf[32];
  const size_t n = std::min<size_t>(token_text.size(), sizeof(buf) - 1);
  std::memcpy(buf, token_text.data(), n);
  buf[n] = 0;
  return std::strtoll(buf, nullptr, 10);
}

double FloatValue(absl::string_view token_text) {
  std::string digits(token_text);
  if (digits == "-inf") return -HUGE_VAL;
  return std::strtod(digits.c_str(), nullptr);
}

}  // namespace internal
}  // namespace ir
}  // namespace accelmem
