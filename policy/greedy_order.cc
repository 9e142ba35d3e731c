#include "policy/greedy_order.h"

namespace accelmem {
namespace policy {

const char* GreedyOrderName(GreedyOrder order) {
  switch (order) {
    case GreedyOrder::kSize:
      return "size";
    case GreedyOrder::kArea:
      return "area";
    case GreedyOrder::kLifetime:
      return "lifetime";
    case GreedyOrder::kStart:
      return "start";
    case GreedyOrder::kWholeThenSize:
      return "whole-then-size";
    case GreedyOrder::kSizeFirstFit:
      return "size-first-fit";
  }
  return "unknown";
}

}  // namespace policy
}  // namespace accelmem
