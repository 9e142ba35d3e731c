// Renders a memory plan (passes/verify_memory_plan.h's report) as an SVG picture: one panel per
// memory space, x = statement index, y = address, one labelled rectangle per buffer over its
// lifetime, and the space's capacity drawn as a dashed line when it is known. Used by
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
