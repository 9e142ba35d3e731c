// The orders in which the lifetime planner's greedy mode places buffers (policy/lifetime_planner.h
// includes this header).
#ifndef ACCELMEM_POLICY_GREEDY_ORDER_H_
#define ACCELMEM_POLICY_GREEDY_ORDER_H_

namespace accelmem {
namespace policy {

// Orders in which greedy places buffers. Every order except kSizeFirstFit uses best fit (the
// smallest free gap that holds the buffer over its whole lifetime, the lowest such gap on ties,
// else the top of the buffers it overlaps); kSizeFirstFit takes the lowest gap that holds it.
// Ties break by the keys listed, then by input index, so every order is deterministic. The
// orders are the textbook rules of production compilers, with their exact tie-breaks, so that
// greedy mode is never worse than any of them (policy/testing:reference_placers checks this).
enum class GreedyOrder {
  kSize,      // Larger size, then longer lifetime (XLA's GlobalDecreasingSizeBestFit, kSpatial).
  kArea,      // Larger size * lifetime, then larger size.
  kLifetime,  // Longer lifetime, then larger size (XLA's kTemporal).
  kStart,     // Earlier start, then larger size, then longer lifetime (an allocator's order).
  kWholeThenSize,  // TFLite's arena planner: buffers live over the whole trace first (by index),
                   // then larger size, then earlier start.
  kSizeFirstFit,   // Larger size, first fit (TFLite Micro's GreedyMemoryPlanner).
};

const char* GreedyOrderName(GreedyOrder order);

}  // namespace policy
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_GREEDY_ORDER_H_
