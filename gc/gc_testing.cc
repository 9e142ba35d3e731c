#include "gc/gc_testing.h"

#include <algorithm>
#include <cstring>
#include <set>

namespace accelmem {
namespace gc {
namespace testing {

TestHeap::TestHeap(uint64_t node_size, int32_t chunk_num_elements) {
  pool.Attach(&memory);
  EXPECT_TRUE(nm.init(&memory, node_size, 8, chunk_num_elements));
}

uint8_t PatternByte(int32_t index, uint32_t generation, uint64_t k) {
  return static_cast<uint8_t>((static_cast<uint64_t>(index) * 131 + generation * 17 + k) % 251 + 1);
}

void FillCell(NodeManager* nm, int32_t index, uint32_t generation) {
  uint8_t* p = nm->get_cell(index);
  for (uint64_t k = 0; k < nm->element_size; ++k) p[k] = PatternByte(index, generation, k);
}

std::vector<int32_t> FreeList(const NodeManager& nm) {
  std::vector<int32_t> out;
  for (int32_t i = 0; i < nm.free_list.size(); ++i) out.push_back(nm.free_list.get<int32_t>(i));
  return out;
}

std::vector<int32_t> UnusedFree(const NodeManager& nm) {
  std::vector<int32_t> out;
  for (int32_t i = std::max(nm.free_list_used, 0); i < nm.free_list.size(); ++i) {
    out.push_back(nm.free_list.get<int32_t>(i));
  }
  return out;
}

std::vector<int32_t> Recycled(const NodeManager& nm) {
  std::vector<int32_t> out;
  for (int32_t i = 0; i < nm.recycled_list.size(); ++i) {
    out.push_back(nm.recycled_list.get<int32_t>(i));
  }
  return out;
}

void RandomRound(TestHeap* heap, std::mt19937_64* rng, int allocs, double recycle_fraction,
                 bool lifo) {
  for (int k = 0; k < allocs; ++k) {
    int32_t index = heap->nm.allocate_index();
    ASSERT_GE(index, 0);
    const uint8_t* cell = heap->nm.get_cell(index);
    ASSERT_TRUE(std::all_of(cell, cell + heap->nm.element_size, [](uint8_t b) { return b == 0; }))
        << "allocate handed out a dirty cell " << index;
    FillCell(&heap->nm, index, heap->generation++);
    heap->live.push_back(index);
  }
  const size_t n = static_cast<size_t>(heap->live.size() * recycle_fraction);
  if (!lifo) std::shuffle(heap->live.begin(), heap->live.end(), *rng);
  for (size_t k = 0; k < n; ++k) {
    heap->nm.recycle_index(heap->live.back());
    heap->live.pop_back();
  }
}

std::vector<std::vector<uint8_t>> AllCells(const NodeManager& nm) {
  std::vector<std::vector<uint8_t>> cells;
  for (int32_t i = 0; i < nm.data_list.size(); ++i) {
    const uint8_t* p = nm.get_cell(i);
    cells.emplace_back(p, p + nm.element_size);
  }
  return cells;
}

Snapshot TakeSnapshot(const TestHeap& heap) {
  Snapshot s;
  std::set<int32_t> distinct;
  for (int32_t r : Recycled(heap.nm)) distinct.insert(r);
  s.recycled.assign(distinct.begin(), distinct.end());
  s.expected_free = UnusedFree(heap.nm);
  s.expected_free.insert(s.expected_free.end(), s.recycled.begin(), s.recycled.end());
  std::sort(s.expected_free.begin(), s.expected_free.end());
  s.cells = AllCells(heap.nm);
  s.data_size = heap.nm.data_list.size();
  s.gc_epoch = heap.nm.gc_epoch;
  return s;
}

bool CheckCollected(const TestHeap& heap, const Snapshot& before) {
  const NodeManager& nm = heap.nm;
  bool ok = true;
  auto expect = [&](bool condition, const char* what) {
    EXPECT_TRUE(condition) << what;
    ok = ok && condition;
  };
  expect(nm.free_list_used == 0, "free_list_used reset");
  expect(nm.gc_epoch == before.gc_epoch + 1, "the collection counted in gc_epoch");
  expect(nm.recycled_list.size() == 0, "recycled list cleared");
  expect(nm.data_list.size() == before.data_size, "data_list size unchanged");
  std::vector<int32_t> free_list = FreeList(nm);
  std::sort(free_list.begin(), free_list.end());
  expect(free_list == before.expected_free, "free list = unused free + recycled (multiset)");
  std::vector<bool> recycled(before.cells.size(), false);
  for (int32_t r : before.recycled) recycled[r] = true;
  const auto after = AllCells(nm);
  for (size_t i = 0; i < after.size(); ++i) {
    if (recycled[i]) {
      const bool zero =
          std::all_of(after[i].begin(), after[i].end(), [](uint8_t b) { return b == 0; });
      if (!zero) ADD_FAILURE() << "recycled cell " << i << " not zeroed";
      ok = ok && zero;
    } else if (after[i] != before.cells[i]) {
      ADD_FAILURE() << "cell " << i << " changed although not recycled";
      ok = false;
    }
  }
  const int64_t words = heap.scratch.bitmap == nullptr ? 0 : heap.scratch.bitmap_words;
  for (int64_t w = 0; w < words; ++w) {
    if (heap.scratch.bitmap[w] != 0) {
      ADD_FAILURE() << "bitmap word " << w << " not cleared";
      ok = false;
      break;
    }
  }
  return ok;
}

}  // namespace testing
}  // namespace gc
}  // namespace accelmem
