// The lexer of the tile IR text: the whole text to a vector of tokens, with Python-style
// INDENT/DEDENT tokens and implicit line joining inside brackets. Used by //ir:parser only.
//
// Indentation is measured at the start of every line outside brackets; it must be a multiple of
// 4 spaces (tabs are an error) and a dedent must return to an enclosing level. Blank and
// comment-only lines produce no tokens. A line that holds tokens ends with kNewline (one is added
// at the end of the text if missing), open blocks are closed with kDedent at the end, and the
// vector always ends with kEof. Integer and float literals are checked (range, no letter
// directly after the digits) and string escapes validated (\" \\ \n \t \r \xHH), so the parser
// can decode them without further checks.
#ifndef ACCELMEM_IR_INTERNAL_LEXER_H_
#define ACCELMEM_IR_INTERNAL_LEXER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace accelmem {
namespace ir {
namespace internal {

enum class Tok : uint8_t {
  kIdent,   // [A-Za-z_][A-Za-z0-9_.]*
  kInt,     // -?[0-9]+
  kFloat,   // -?[0-9]+ with a fraction and/or exponent, or -inf
  kString,  // "..." (quotes included in the token's text)
  kLParen,
  kRParen,
  kLBracket,
  kRBracket,
  kComma,
  kColon,
  kEq,
  kArrow,  // ->
  kAt,
  kPlus,
  kNewline,
  kIndent,
  kDedent,
  kEof,
};

// Spelling of a token kind for messages and tests, e.g. "Ident", "LParen".
const char* TokName(Tok kind);

// 20 bytes: big inputs have ~25 tokens per statement. Literal values are read again from the
// text when the parser consumes them.
struct Token {
  uint32_t offset;  // into the text
  uint32_t length;  // kIndent: the indentation width; kNewline, kDedent, kEof: 0
  int32_t line;     // 1-based
  int32_t col;      // 1-based, in bytes
  Tok kind;
};

// A `#` comment, without trailing blanks.
struct RawComment {
  int line;
  bool own_line;  // nothing but the comment on its line
  absl::string_view text;
};

// Where and why lexing stopped.
struct LexError {
  int line;
  int col;
  std::string message;
};

struct LexResult {
  std::vector<Token> tokens;      // empty on error
  std::optional<LexError> error;  // the first error; it ends lexing
};

// Tokenizes `text`. If `comments` is not null, every comment is appended to it (in text order;
// on error, those before the error). Texts of 2 GiB and more are an error.
LexResult Lex(absl::string_view text, std::vector<RawComment>* comments = nullptr);

// Decodes the text of a kString token (quotes included, escapes validated by Lex).
std::string Unquote(absl::string_view token_text);
// The value of a kInt token's text (range checked by Lex).
int64_t IntValue(absl::string_view token_text);
// The value of a kFloat token's text ("-inf" included; range checked by Lex).
double FloatValue(absl::string_view token_text);

}  // namespace internal
}  // namespace ir
}  // namespace accelmem

#endif  // ACCELMEM_IR_INTERNAL_LEXER_H_
