// Renders a memory plan (passes/verify_memory_plan.h's report) as an SVG picture: one panel per
// memory space, x = statement index (labelled), y = address scaled to the space's high-water mark
// (quarter ticks in bytes), one labelled rectangle per buffer over its lifetime with a hover title,
// the peak as a labelled line with its five largest buffers in orange, a legend, and the capacity
// as a dashed line when it is close above the high-water mark or a break mark and a note when it
// is off that scale (a kernel using 256 bytes of 188,416 still shows its tiles); the slots of a
// pipelined loop's slotted MemRef are one block over the loop, its stages split by dashed lines
// (class "slot"). Used by
// `tile_opt --emit=memory-map`.
#ifndef ACCELMEM_TOOLS_MEMORY_MAP_SVG_H_
#define ACCELMEM_TOOLS_MEMORY_MAP_SVG_H_

#include <string>

#include "passes/verify_memory_plan.h"

namespace accelmem {
namespace tools {

std::string RenderMemoryMapSvg(const passes::MemoryPlanReport& report);

}  // namespace tools
}  // namespace accelmem

#endif  // ACCELMEM_TOOLS_MEMORY_MAP_SVG_H_
