// Gives the comments the lexer collected to the nodes of the parsed program (the parser's
// ParseOptions::comments). Used by //ir:parser only.
#ifndef ACCELMEM_IR_INTERNAL_ATTACH_COMMENTS_H_
#define ACCELMEM_IR_INTERNAL_ATTACH_COMMENTS_H_

#include "absl/types/span.h"
#include "ir/internal/lexer.h"
#include "ir/program.h"

namespace accelmem {
namespace ir {
namespace internal {

// Own-line comments go to the next function or statement in the text (`out->leading`), or to
// `out->end` after the last one; a comment after code goes to the statement starting on its
// line (`out->trailing`, joined by a space), else it is treated as an own-line comment.
// `comments` are in text order; statements are found by their source line.
void AttachComments(const Program& program, absl::Span<const RawComment> comments, Comments* out);

}  // namespace internal
}  // namespace ir
}  // namespace accelmem

#endif  // ACCELMEM_IR_INTERNAL_ATTACH_COMMENTS_H_
