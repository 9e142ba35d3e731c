// tile_fmt: the formatter users run on .tile files (like clang-format).
//
//   tile_fmt FILE...          print the canonical text of each file to stdout ('-' = stdin)
//   tile_fmt -i FILE...       rewrite each file in place with its canonical text
//   tile_fmt --check FILE...  exit 1 if any file is not canonical (names it on stderr)
//   --no-verify               parse only (skip the IR verifier)
//
// Parse and verifier errors go to stderr as `file:line:col: error: ...`, exit status 1; bad
// flags print the usage and exit 2. Comments are kept: a full-line comment stays before the
// statement (or function) that follows it, a comment after code stays at the end of that
// statement's line; blank lines and spacing become canonical.
#ifndef ACCELMEM_TOOLS_TILE_FMT_LIB_H_
#define ACCELMEM_TOOLS_TILE_FMT_LIB_H_

#include <iosfwd>
#include <string>
#include <vector>

namespace accelmem {
namespace tools {

// Runs tile_fmt with `args` (without the program name); returns the exit status.
int TileFmtMain(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                std::ostream& err);

}  // namespace tools
}  // namespace accelmem

#endif  // ACCELMEM_TOOLS_TILE_FMT_LIB_H_
