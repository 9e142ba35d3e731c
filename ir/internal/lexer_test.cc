#include "ir/internal/lexer.h"

#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace accelmem {
namespace ir {
namespace internal {
namespace {

// "Kind" or "Kind:text" per token, for compact expectations.
std::vector<std::string> Kinds(absl::string_view text, const std::vector<Token>& tokens) {
  std::vector<std::string> out;
  for (const Token& t : tokens) {
    std::string s = TokName(t.kind);
    if (t.length > 0 && t.kind != Tok::kIndent) {
      s += ":" + std::string(text.substr(t.offset, t.length));
    }
    out.push_back(s);
  }
  return out;
}

std::vector<Token> LexOk(absl::string_view text, std::vector<RawComment>* comments = nullptr) {
  LexResult r = Lex(text, comments);
  EXPECT_FALSE(r.error.has_value())
      << r.error->line << ":" << r.error->col << ": " << r.error->message;
  return r.tokens;
}

// "line:col: message" of the error, or "ok".
std::string LexErrorOf(absl::string_view text) {
  LexResult r = Lex(text);
  if (!r.error) return "ok";
  EXPECT_TRUE(r.tokens.empty());
  return std::to_string(r.error->line) + ":" + std::to_string(r.error->col) + ": " +
         r.error->message;
}

// Every kind of token, with the punctuation spelled as in the text.
TEST(LexerTest, TokenKinds) {
  const std::string text = "@f(a, b=[1, -2.5e3]) -> x: \"s\" + y -inf\n";
  EXPECT_EQ(Kinds(text, LexOk(text)),
            (std::vector<std::string>{
                "At:@",     "Ident:f",    "LParen:(", "Ident:a", "Comma:,",      "Ident:b",
                "Eq:=",     "LBracket:[", "Int:1",    "Comma:,", "Float:-2.5e3", "RBracket:]",
                "RParen:)", "Arrow:->",   "Ident:x",  "Colon::", "String:\"s\"", "Plus:+",
                "Ident:y",  "Float:-inf", "Newline",  "Eof"}));
}

// Identifiers may contain dots and digits after the first character (op names like tile.add).
TEST(LexerTest, DottedIdentifiers) {
  const std::string text = "tile.add_2 _x\n";
  EXPECT_EQ(Kinds(text, LexOk(text)),
            (std::vector<std::string>{"Ident:tile.add_2", "Ident:_x", "Newline", "Eof"}));
}

// Tokens carry 1-based line and column, and their byte offset into the text.
TEST(LexerTest, Positions) {
  const std::string text = "def f():\n    x = 1\n";
  std::vector<Token> t = LexOk(text);
  ASSERT_GE(t.size(), 10u);
  EXPECT_EQ(t[0].line, 1);
  EXPECT_EQ(t[0].col, 1);
  EXPECT_EQ(t[1].col, 5);  // f
  EXPECT_EQ(t[5].kind, Tok::kNewline);
  EXPECT_EQ(t[5].col, 9);
  EXPECT_EQ(t[6].kind, Tok::kIndent);
  EXPECT_EQ(t[6].length, 4u);
  EXPECT_EQ(t[6].line, 2);
  EXPECT_EQ(t[6].col, 5);
  EXPECT_EQ(t[7].kind, Tok::kIdent);
  EXPECT_EQ(t[7].line, 2);
  EXPECT_EQ(t[7].col, 5);
  EXPECT_EQ(t[7].offset, 13u);
  EXPECT_EQ(t[9].col, 9);  // 1
}

// Deeper lines open a block with Indent, shallower ones close blocks with one Dedent each, and
// blocks still open at the end are closed before Eof.
TEST(LexerTest, IndentAndDedent) {
  const std::string text = "a\n    b\n        c\n    d\ne\n    f";
  EXPECT_EQ(Kinds(text, LexOk(text)),
            (std::vector<std::string>{"Ident:a", "Newline", "Indent", "Ident:b", "Newline",
                                      "Indent", "Ident:c", "Newline", "Dedent", "Ident:d",
                                      "Newline", "Dedent", "Ident:e", "Newline", "Indent",
                                      "Ident:f", "Newline", "Dedent", "Eof"}));
}

// Inside brackets newlines and indentation are ignored (implicit line joining); blank lines,
// comment-only lines and CRLF line ends produce no tokens.
TEST(LexerTest, LineJoiningBlankLinesAndCrlf) {
  const std::string text = "f(a,\n  b)\r\n\n   \n# note\nc\n";
  EXPECT_EQ(Kinds(text, LexOk(text)),
            (std::vector<std::string>{"Ident:f", "LParen:(", "Ident:a", "Comma:,", "Ident:b",
                                      "RParen:)", "Newline", "Ident:c", "Newline", "Eof"}));
  std::vector<Token> t = LexOk(text);
  EXPECT_EQ(t[4].line, 2);
  EXPECT_EQ(t[4].col, 3);
  EXPECT_EQ(t[7].line, 6);
}

// Empty input is just Eof.
TEST(LexerTest, EmptyInput) {
  EXPECT_EQ(Kinds("", LexOk("")), (std::vector<std::string>{"Eof"}));
  EXPECT_EQ(Kinds("\n\n", LexOk("\n\n")), (std::vector<std::string>{"Eof"}));
}

// Comments are collected with their line, whether they stand alone on it, and without
// trailing blanks.
TEST(LexerTest, CollectsComments) {
  std::vector<RawComment> c;
  LexOk("# head  \nx = 1  # tail\t\n    # inner\n", &c);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].line, 1);
  EXPECT_TRUE(c[0].own_line);
  EXPECT_EQ(c[0].text, "# head");
  EXPECT_EQ(c[1].line, 2);
  EXPECT_FALSE(c[1].own_line);
  EXPECT_EQ(c[1].text, "# tail");
  EXPECT_EQ(c[2].line, 3);
  EXPECT_TRUE(c[2].own_line);
  EXPECT_EQ(c[2].text, "# inner");
}

// Indentation errors point at the offending column.
TEST(LexerTest, IndentationErrors) {
  EXPECT_EQ(LexErrorOf("a\n\tb\n"), "2:1: tab in indentation; indent with 4 spaces per level");
  EXPECT_EQ(LexErrorOf("a\n   b\n"), "2:4: indentation of 3 spaces is not a multiple of 4");
  EXPECT_EQ(LexErrorOf("a\n    b\n  "), "ok");  // blanks at the end are not a line
  EXPECT_EQ(LexErrorOf("a\n        b\n    c\n"),
            "3:5: unindent does not match any outer indentation level");
}

// Characters outside the token set, and letters right after a number, are errors.
TEST(LexerTest, CharacterErrors) {
  EXPECT_EQ(LexErrorOf("a $"), "1:3: unexpected character '$'");
  EXPECT_EQ(LexErrorOf("a\n  - b"), "2:3: indentation of 2 spaces is not a multiple of 4");
  EXPECT_EQ(LexErrorOf("x - y"), "1:3: unexpected character '-'");
  EXPECT_EQ(LexErrorOf(std::string("a \x01", 3)), "1:3: unexpected character byte 0x01");
  EXPECT_EQ(LexErrorOf("12ab"), "1:3: unexpected character 'a' after a number");
}

// Literals out of range are errors at the literal.
TEST(LexerTest, LiteralRangeErrors) {
  EXPECT_EQ(LexErrorOf("x 9223372036854775807"), "ok");
  EXPECT_EQ(LexErrorOf("x 9223372036854775808"),
            "1:3: integer literal '9223372036854775808' is out of range");
  EXPECT_EQ(LexErrorOf("x 1e999"), "1:3: float literal '1e999' is out of range");
}

// String errors: unterminated (at the opening quote), bad \x and unknown escapes (at the
// backslash).
TEST(LexerTest, StringErrors) {
  EXPECT_EQ(LexErrorOf("x \"abc\n\""), "1:3: unterminated string");
  EXPECT_EQ(LexErrorOf("x \"ab\\"), "1:3: unterminated string");
  EXPECT_EQ(LexErrorOf("x \"a\\xZ1\""), "1:5: invalid \\x escape: expected two hex digits");
  EXPECT_EQ(LexErrorOf("x \"a\\q\""), "1:5: unknown escape sequence '\\q'");
}

// String tokens decode their escapes; number tokens give their values.
TEST(LexerTest, DecodesLiterals) {
  EXPECT_EQ(Unquote("\"a\\n\\t\\r\\\"\\\\\\x41\""), "a\n\t\r\"\\A");
  EXPECT_EQ(IntValue("-42"), -42);
  EXPECT_EQ(IntValue("9223372036854775807"), 9223372036854775807LL);
  EXPECT_EQ(FloatValue("2.5e3"), 2500.0);
  EXPECT_EQ(FloatValue("-inf"), -HUGE_VAL);
}

}  // namespace
}  // namespace internal
}  // namespace ir
}  // namespace accelmem
