#include "runtime/bulk_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/internal/snode_kinds.h"
#include "runtime/thread_pool.h"

namespace accelmem {
namespace runtime {
namespace {

using sparse_runtime::DataType;
using sparse_runtime::SNode;
using sparse_runtime::SNodeType;

// Calls fn(T{}) with T the C++ type of `t`.
template <typename Fn>
void WithType(DataType t, const Fn& fn) {
  switch (t) {
    case DataType::kI8:
      return fn(int8_t{});
    case DataType::kI16:
      return fn(int16_t{});
    case DataType::kI32:
      return fn(int32_t{});
    case DataType::kI64:
      return fn(int64_t{});
    case DataType::kU8:
      return fn(uint8_t{});
    case DataType::kU16:
      return fn(uint16_t{});
    case DataType::kU32:
      return fn(uint32_t{});
    case DataType::kU64:
      return fn(uint64_t{});
    case DataType::kF32:
      return fn(float{});
    case DataType::kF64:
      return fn(double{});
  }
}

bool IsFloat(DataType t) { return t == DataType::kF32 || t == DataType::kF64; }

// x as a T. Integers saturate (NaN gives 0): converting an out-of-range double to an integer
// type is undefined behaviour.
template <typename T>
T FromDouble(double x) {
  if constexpr (std::is_floating_point<T>::value) {
    return static_cast<T>(x);
  } else {
    constexpr double kLo = static_cast<double>(std::numeric_limits<T>::min());
    constexpr double kHi = static_cast<double>(std::numeric_limits<T>::max());
    if (std::isnan(x)) return T{0};
    if (x <= kLo) return std::numeric_limits<T>::min();
    if (x >= kHi) return std::numeric_limits<T>::max();
    return static_cast<T>(x);
  }
}

// a + b; integers wrap (as NumPy's do) instead of overflowing, which is undefined for signed ones.
template <typename T>
T Add(T a, T b) {
  if constexpr (std::is_floating_point<T>::value) {
    return a + b;
  } else {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  }
}

// The loops over a run take their parameters by value: locals that stay in registers, where a
// lambda's captures would be loaded again after every store through a char or same-typed pointer.
template <typename T>
void CopyRun(char* first, int32_t count, uint64_t stride, int64_t delta) {
  for (int32_t k = 0; k < count; ++k) {
    char* cell = first + static_cast<uint64_t>(k) * stride;
    std::memcpy(cell + delta, cell, sizeof(T));
  }
}

template <typename T>
void TransformRun(char* first, int32_t count, uint64_t stride, T a, T b, T c, T d) {
  auto f = [=](T x) { return (a * x + b) / (c * x + d); };
  if (stride == sizeof(T)) {
    // A place alone in its cell: contiguous values, in blocks of a fixed size, which gcc
    // vectorizes at -O2 (its cheap cost model skips loops that need a remainder loop).
    T* v = reinterpret_cast<T*>(first);
    int32_t k = 0;
    for (; k + 8 <= count; k += 8) {
      for (int j = 0; j < 8; ++j) v[k + j] = f(v[k + j]);
    }
    for (; k < count; ++k) v[k] = f(v[k]);
    return;
  }
  for (int32_t k = 0; k < count; ++k) {
    T* v = reinterpret_cast<T*>(first + static_cast<uint64_t>(k) * stride);
    *v = f(*v);
  }
}

// An integer place (c == 0): in double, converted back.
template <typename T>
void TransformIntRun(char* first, int32_t count, uint64_t stride, double a, double b, double d) {
  for (int32_t k = 0; k < count; ++k) {
    T* v = reinterpret_cast<T*>(first + static_cast<uint64_t>(k) * stride);
    *v = FromDouble<T>((a * static_cast<double>(*v) + b) / d);
  }
}

// Runs visit(first_index, first, count, stride_bytes) over the runs of `place`'s active cells on
// the runtime's threads.
template <typename Fn>
absl::Status ForEachRun(SparseRuntime& rt, const SNode& place, const Fn& visit) {
  return rt.ParallelStructForRuns(
      place, [&](absl::Span<const int32_t> first_index, void* first, int32_t count, uint64_t stride,
                 int) { visit(first_index, static_cast<char*>(first), count, stride); });
}

absl::Status CheckPlace(const SparseRuntime& rt, const SNode& s, const char* what) {
  if (&s != &rt.tree().snode(s.id())) {
    return absl::InvalidArgumentError("SNode does not belong to this runtime's tree");
  }
  if (s.type() != SNodeType::kPlace) {
    return absl::InvalidArgumentError(absl::StrCat(what, " needs a place, got ", s.DebugPath()));
  }
  return absl::OkStatus();
}

// Runs fn(worker, workers) -> Status for every worker in [0, workers) on the runtime's pool; the
// lowest worker's error wins.
template <typename Fn>
absl::Status RunWorkers(SparseRuntime& rt, int workers, const Fn& fn) {
  const int t = std::max(1, workers);
  std::vector<absl::Status> statuses(t);
  rt.thread_pool().ParallelFor(t,
                               [&](int64_t w, int) { statuses[w] = fn(static_cast<int>(w), t); });
  for (const absl::Status& s : statuses) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// How index coordinate `pos` advances along a run. A dense run visits its container's cells in
// row-major order of the leaf's axes, so the coordinate holds for `inner` cells (those of the
// leaf's faster axes), then steps by one, wrapping after `shape` steps; the coordinate of an
// axis the leaf does not split is constant along a run (inner: "never").
struct RunAxis {
  int pos = 0;
  int64_t shape = 1;
  int64_t inner = std::numeric_limits<int64_t>::max();
  std::vector<std::pair<int, int64_t>> faster;  // (index position, leaf shape) per faster axis
};

RunAxis MakeRunAxis(const SNode& place, int pos) {
  RunAxis ra;
  ra.pos = pos;
  const SNode& leaf = *place.parent();
  const std::vector<int>& index_axes = place.index_axes();
  const std::vector<int>& axes = leaf.axes();
  auto it = std::find(axes.begin(), axes.end(), index_axes[pos]);
  if (it == axes.end()) return ra;
  ra.shape = leaf.shape(*it);
  ra.inner = 1;
  for (++it; it != axes.end(); ++it) {
    ra.inner *= leaf.shape(*it);
    const int p =
        static_cast<int>(std::find(index_axes.begin(), index_axes.end(), *it) - index_axes.begin());
    ra.faster.emplace_back(p, leaf.shape(*it));
  }
  return ra;
}

template <typename T>
void FillRun(const RunAxis& ra, absl::Span<const int32_t> first_index, char* first, int32_t count,
             uint64_t stride, double scale, double offset) {
  const int64_t shape = ra.shape, inner = ra.inner;
  int64_t digit = first_index[ra.pos] % shape;
  const int64_t base = first_index[ra.pos] - digit;
  int64_t within = 0;  // the first cell's position in its block of `inner` cells
  for (const auto& f : ra.faster) within = within * f.second + first_index[f.first] % f.second;
  int64_t k = 0;
  while (k < count) {
    char* cell = first + static_cast<uint64_t>(k) * stride;
    if (inner == 1) {  // the coordinate steps every cell
      const int64_t n = std::min<int64_t>(count - k, shape - digit);
      const int64_t c0 = base + digit;
      for (int64_t j = 0; j < n; ++j, cell += stride) {
        const T v = FromDouble<T>(static_cast<double>(c0 + j) * scale + offset);
        std::memcpy(cell, &v, sizeof(T));
      }
      digit += n;
      if (digit == shape) digit = 0;
      k += n;
    } else {
      const int64_t n = std::min<int64_t>(count - k, inner - within);
      const T v = FromDouble<T>(static_cast<double>(base + digit) * scale + offset);
      for (int64_t j = 0; j < n; ++j, cell += stride) std::memcpy(cell, &v, sizeof(T));
      within += n;
      if (within == inner) {
        within = 0;
        if (++digit == shape) digit = 0;
      }
      k += n;
    }
  }
}

// Splits a coordinate by a leaf's shape on one axis: a shift and a mask for powers of two (the
// usual shapes), else a division.
struct ShapeSplit {
  explicit ShapeSplit(int64_t s) : shape(static_cast<uint32_t>(s)), pow2((s & (s - 1)) == 0) {
    while ((int64_t{1} << shift) < s) ++shift;
  }
  uint32_t Quot(uint32_t c) const { return pow2 ? c >> shift : c / shape; }
  uint32_t Rem(uint32_t c) const { return pow2 ? c & (shape - 1) : c % shape; }
  uint32_t shape;
  bool pow2;
  int shift = 0;
};

// Where the rows of scatter_add go when the place's parent is dense: a row's container (the cell
// of the leaf's parent holding it) as a key, row-major over the parent's index space, and the
// row's cell in that container: the sum over index positions of the coordinate's digit in the
// leaf times the position's weight, which MakeLeafLayout takes from the runtime's own cell
// arithmetic (internal::CellIndices), so the scatter finds the cell the host API finds.
struct LeafLayout {
  int ndim = 0;
  std::vector<ShapeSplit> split;  // per index position: the leaf's shape (1 if it does not split)
  std::vector<int64_t> outer;     // per index position: the extent above the leaf
  std::vector<int64_t> weight;    // per index position: the cells one digit step moves
  int64_t num_keys = 1;           // 0 when the key space overflows int64

  void Locate(const int32_t* coord, int64_t* key, int64_t* cell) const {
    int64_t k = 0, c = 0;
    for (int d = 0; d < ndim; ++d) {
      const uint32_t v = static_cast<uint32_t>(coord[d]);  // range-checked: non-negative
      k = k * outer[d] + split[d].Quot(v);
      c += split[d].Rem(v) * weight[d];
    }
    *key = k;
    *cell = c;
  }
};

LeafLayout MakeLeafLayout(const SNode& place) {
  const SNode& leaf = *place.parent();
  LeafLayout l;
  l.ndim = place.num_indices();
  for (int a : place.index_axes()) {
    l.split.emplace_back(leaf.shape(a));
    l.outer.push_back(place.extent(a) / leaf.shape(a));
    if (l.num_keys > 0 && __builtin_mul_overflow(l.num_keys, l.outer.back(), &l.num_keys)) {
      l.num_keys = 0;
    }
  }
  // A position's weight: the leaf's cell index (the last level of the place's path above it) of
  // the index whose only nonzero coordinate is a 1 there (the cell index is linear in the digits).
  std::vector<int32_t> cells(place.path().size());
  std::vector<int32_t> unit(static_cast<size_t>(l.ndim), 0);
  for (int d = 0; d < l.ndim; ++d) {
    if (l.split[d].shape == 1) {
      l.weight.push_back(0);
      continue;
    }
    unit[d] = 1;
    internal::CellIndices(place, unit.data(), unit.size(), cells.data());
    l.weight.push_back(cells[place.path().size() - 2]);
    unit[d] = 0;
  }
  return l;
}

// Each container's cell 0 (its base) by key. A table over the whole key space when that is not
// much bigger than the batch: one run pass fills it for every active container, so a batch whose
// containers are active (a simulation's steady state) takes no pass over its rows to find them
// and activates nothing. For bigger key spaces, the sorted keys the rows touch, all activated
// first.
class ContainerBases {
 public:
  ContainerBases(const LeafLayout& layout, const IndexRows& c) {
    // (At most as many bytes as the coordinates, or 8 MiB.)
    direct_ = layout.num_keys <= std::max<int64_t>(c.n * c.ndim / 2, int64_t{1} << 20);
    if (direct_) {
      table_.assign(static_cast<size_t>(layout.num_keys), nullptr);
      return;
    }
    keys_.resize(static_cast<size_t>(c.n));
    int64_t cell;
    for (int64_t i = 0; i < c.n; ++i) layout.Locate(c.data + i * c.ndim, &keys_[i], &cell);
    std::sort(keys_.begin(), keys_.end());
    keys_.erase(std::unique(keys_.begin(), keys_.end()), keys_.end());
    base_.assign(keys_.size(), nullptr);
  }
  bool direct() const { return direct_; }
  // The keys of the batch (not direct).
  const std::vector<int64_t>& keys() const { return keys_; }
  // The base of `key`, or null (an inactive container, or not a key of the batch).
  char* Base(int64_t key) const {
    if (direct_) return table_[key];
    auto it = std::lower_bound(keys_.begin(), keys_.end(), key);
    return it != keys_.end() && *it == key ? base_[it - keys_.begin()] : nullptr;
  }
  // Records a base found by a run pass (concurrent calls record distinct keys).
  void Record(int64_t key, char* first) {
    if (direct_) {
      table_[key] = first;
      return;
    }
    auto it = std::lower_bound(keys_.begin(), keys_.end(), key);
    if (it != keys_.end() && *it == key) base_[it - keys_.begin()] = first;
  }

 private:
  bool direct_ = true;
  std::vector<char*> table_;
  std::vector<int64_t> keys_;
  std::vector<char*> base_;
};

// scatter_add's rows are split between workers by cell (by the cell's address page on the dense
// path), so no two threads add to one cell and each cell sees its rows in batch order: no
// atomics, which would serialize the cache misses of random adds, and the same sums as one thread.
uint64_t RowHash(const int32_t* coord, int ndim) {
  uint64_t h = 1469598103934665603ull;
  for (int d = 0; d < ndim; ++d) h = (h ^ static_cast<uint32_t>(coord[d])) * 1099511628211ull;
  return h ^ (h >> 29);
}

// The worker that owns the cell at `v` (cells are split by 4 KiB page: no false sharing).
int OwnerOf(const void* v, int workers) {
  const uint64_t h = (reinterpret_cast<uintptr_t>(v) >> 12) * 0x9E3779B97F4A7C15ull;
  return static_cast<int>(((h >> 32) * static_cast<uint64_t>(workers)) >> 32);
}

// Any layout: a read and a write through the host API per row.
template <typename T>
absl::Status ScatterAddPerRow(SparseRuntime& rt, const SNode& place, const IndexRows& c,
                              const T* in, int64_t step, int threads) {
  return RunWorkers(rt, threads, [&](int worker, int workers) {
    for (int64_t i = 0; i < c.n; ++i) {
      const absl::Span<const int32_t> index = c.row(i);
      if (workers > 1 && RowHash(index.data(), c.ndim) % workers != static_cast<uint64_t>(worker)) {
        continue;
      }
      T v{};
      absl::Status status = rt.ReadRaw(place, place.dtype(), index, &v);
      if (!status.ok()) return status;
      v = Add(v, in[i * step]);
      status = rt.WriteRaw(place, place.dtype(), index, &v);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  });
}

// A place whose parent is a dense leaf (usually under a pointer or bitmasked level: a particle
// grid): each row's value is found as a compiled kernel finds it, from its container's base,
// instead of by a walk down the tree per row; the containers are activated through the host API
// once each.
struct DenseCells {
  LeafLayout layout;
  std::unique_ptr<ContainerBases> bases;
  uint64_t stride = 0;  // bytes from one cell to the next

  // Row i's value, or null while its container is inactive.
  char* Address(const IndexRows& c, int64_t i) const {
    int64_t key, cell;
    layout.Locate(c.data + i * c.ndim, &key, &cell);
    char* base = bases->Base(key);
    return base == nullptr ? nullptr : base + static_cast<uint64_t>(cell) * stride;
  }
};

// One worker's adds of the dense path, over rows [0, count) (or the rows listed in `subset`):
// first the addresses of the rows of its cells (by the cell's 4 KiB page, OwnerOf) into its own
// buffer, then the adds alone, a loop short enough that the processor keeps many of their cache
// misses in flight. Every worker computes every row's address: cheaper, on a machine with
// separate core caches, than moving addresses that one core wrote to the other. In the first
// round rows whose container is inactive are skipped (and listed in `missing`, by one worker);
// in the second, after their activation, they are an error.
template <typename T>
absl::Status AddOwnRows(const DenseCells& dc, const IndexRows& c, const int64_t* subset,
                        int64_t count, const T* in, bool values, bool first_round, int worker,
                        int workers, ScatterScratch::Worker* buf, std::vector<int64_t>* missing) {
  char** addr = buf->addr.data();
  uint32_t* row = values ? buf->row.data() : nullptr;
  int64_t k = 0;
  for (int64_t j = 0; j < count; ++j) {
    const int64_t i = subset == nullptr ? j : subset[j];
    char* a = dc.Address(c, i);
    if (a == nullptr) {
      if (!first_round) {
        return absl::AbortedError(
            "scatter_add: a container was deactivated by another thread while it ran");
      }
      if (missing != nullptr) missing->push_back(i);
      continue;
    }
    // Written for every row, kept (k advances) for the worker's own: no branch per row.
    addr[k] = a;
    if (values) row[k] = static_cast<uint32_t>(i);
    k += workers == 1 || OwnerOf(a, workers) == worker;
  }
  if (!values) {
    const T v = in[0];
    for (int64_t j = 0; j < k; ++j) {
      T* p = reinterpret_cast<T*>(addr[j]);
      *p = Add(*p, v);
    }
  } else {
    for (int64_t j = 0; j < k; ++j) {
      T* p = reinterpret_cast<T*>(addr[j]);
      *p = Add(*p, in[row[j]]);
    }
  }
  return absl::OkStatus();
}

// Activates the containers of `keys` (their cell 0, coordinates from the key) through the host API.
absl::Status ActivateContainers(SparseRuntime& rt, const SNode& leaf, const LeafLayout& layout,
                                const std::vector<int64_t>& keys, int threads) {
  return RunRows(rt, static_cast<int64_t>(keys.size()), threads, [&](int64_t b, int64_t e) {
    int32_t coord[sparse_runtime::kMaxAxes];
    for (int64_t k = b; k < e; ++k) {
      int64_t key = keys[k];
      for (int d = layout.ndim - 1; d >= 0; --d) {
        coord[d] = static_cast<int32_t>(key % layout.outer[d] * layout.split[d].shape);
        key /= layout.outer[d];
      }
      absl::Status status =
          rt.Activate(leaf, absl::Span<const int32_t>(coord, static_cast<size_t>(layout.ndim)));
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  });
}

// Records the base of every active container of `place` (one run pass: runs cover every active
// cell once, so exactly one run of each container starts at its cell 0).
absl::Status RecordBases(SparseRuntime& rt, const SNode& place, const LeafLayout& layout,
                         ContainerBases* bases) {
  return ForEachRun(rt, place,
                    [&](absl::Span<const int32_t> first_index, char* first, int32_t, uint64_t) {
                      int64_t key, cell;
                      layout.Locate(first_index.data(), &key, &cell);
                      if (cell == 0) bases->Record(key, first);
                    });
}

// Finds the bases of the active containers (for a big key space, after activating the batch's).
absl::Status PrepareDense(SparseRuntime& rt, const SNode& place, const IndexRows& c, int threads,
                          DenseCells* dc) {
  dc->layout = MakeLeafLayout(place);
  dc->bases = std::make_unique<ContainerBases>(dc->layout, c);
  dc->stride = place.parent()->cell_size();
  if (!dc->bases->direct()) {
    absl::Status status =
        ActivateContainers(rt, *place.parent(), dc->layout, dc->bases->keys(), threads);
    if (!status.ok()) return status;
  }
  return RecordBases(rt, place, dc->layout, dc->bases.get());
}

// Activates the containers of rows `missing` and records their bases.
absl::Status ActivateMissing(SparseRuntime& rt, const SNode& place, const IndexRows& c,
                             const std::vector<int64_t>& missing, int threads, DenseCells* dc) {
  // Their distinct keys (a table marks them when the key space is small: a batch into an empty
  // grid misses on every row).
  std::vector<int64_t> keys;
  std::vector<bool> marked(dc->bases->direct() ? static_cast<size_t>(dc->layout.num_keys) : 0);
  for (int64_t i : missing) {
    int64_t key, cell;
    dc->layout.Locate(c.data + i * c.ndim, &key, &cell);
    if (!dc->bases->direct()) {
      keys.push_back(key);
    } else if (!marked[key]) {
      marked[key] = true;
      keys.push_back(key);
    }
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  absl::Status status = ActivateContainers(rt, *place.parent(), dc->layout, keys, threads);
  if (!status.ok()) return status;
  return RecordBases(rt, place, dc->layout, dc->bases.get());
}

template <typename T>
absl::Status ScatterAddDense(SparseRuntime& rt, const SNode& place, const IndexRows& c, const T* in,
                             bool values, int threads, ScatterScratch* scratch) {
  DenseCells dc;
  absl::Status status = PrepareDense(rt, place, c, threads, &dc);
  if (!status.ok()) return status;
  const int workers = c.n < 2 * std::max(1, threads) ? 1 : std::max(1, threads);
  std::unique_lock<std::mutex> lock;
  if (scratch != nullptr) lock = std::unique_lock<std::mutex>(scratch->mu, std::try_to_lock);
  std::vector<ScatterScratch::Worker> own;
  std::vector<ScatterScratch::Worker>& bufs = lock.owns_lock() ? scratch->workers : own;
  if (static_cast<int>(bufs.size()) < workers) bufs.resize(workers);
  for (int w = 0; w < workers; ++w) {
    if (static_cast<int64_t>(bufs[w].addr.size()) < c.n) bufs[w].addr.resize(c.n);
    if (values && static_cast<int64_t>(bufs[w].row.size()) < c.n) bufs[w].row.resize(c.n);
  }
  std::vector<int64_t> missing;
  status = RunWorkers(rt, workers, [&](int worker, int n) {
    return AddOwnRows<T>(dc, c, nullptr, c.n, in, values, /*first_round=*/true, worker, n,
                         &bufs[worker], worker == 0 ? &missing : nullptr);
  });
  if (!status.ok() || missing.empty()) return status;
  // All rows of a container are in one round, so each cell still adds its rows in row order.
  status = ActivateMissing(rt, place, c, missing, threads, &dc);
  if (!status.ok()) return status;
  return RunWorkers(rt, workers, [&](int worker, int n) {
    return AddOwnRows<T>(dc, c, missing.data(), static_cast<int64_t>(missing.size()), in, values,
                         /*first_round=*/false, worker, n, &bufs[worker], nullptr);
  });
}

// OutOfRange unless every row is an index of `place`: a fast scan, then the first bad coordinate.
absl::Status CheckRows(const SNode& place, const IndexRows& c) {
  if (c.ndim != place.num_indices()) {
    return absl::InvalidArgumentError(absl::StrCat(
        place.DebugPath(), " takes ", place.num_indices(), " indices, rows have ", c.ndim));
  }
  uint32_t extents[sparse_runtime::kMaxAxes];
  for (int d = 0; d < c.ndim; ++d) {
    extents[d] = static_cast<uint32_t>(place.extent(place.index_axes()[d]));
  }
  bool bad = false;
  for (int64_t k = 0; k < c.n * c.ndim; ++k) {
    bad |= static_cast<uint32_t>(c.data[k]) >= extents[k % c.ndim];
  }
  if (!bad) return absl::OkStatus();
  for (int64_t k = 0; k < c.n * c.ndim; ++k) {
    if (static_cast<uint32_t>(c.data[k]) >= extents[k % c.ndim]) {
      return absl::OutOfRangeError(absl::StrCat("row ", k / c.ndim, ": coordinate ", c.data[k],
                                                " is outside the index space of ",
                                                place.DebugPath()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Copy(SparseRuntime& rt, const SNode& src, const SNode& dst) {
  absl::Status status = CheckPlace(rt, src, "copy");
  if (status.ok()) status = CheckPlace(rt, dst, "copy");
  if (!status.ok()) return status;
  if (src.parent() != dst.parent() || src.dtype() != dst.dtype()) {
    return absl::InvalidArgumentError(
        absl::StrCat("copy needs two places of the same parent and dtype, got ", src.DebugPath(),
                     " and ", dst.DebugPath()));
  }
  // Both values are in the same cell, so dst's is a fixed number of bytes from src's.
  const int64_t delta = static_cast<int64_t>(dst.offset_in_parent_cell()) -
                        static_cast<int64_t>(src.offset_in_parent_cell());
  auto copy = [&](auto bits) {
    using T = decltype(bits);
    return ForEachRun(
        rt, src, [delta](absl::Span<const int32_t>, char* first, int32_t count, uint64_t stride) {
          CopyRun<T>(first, count, stride, delta);
        });
  };
  // A bit copy: one loop per value size.
  switch (sparse_runtime::DataTypeSize(src.dtype())) {
    case 1:
      return copy(uint8_t{});
    case 2:
      return copy(uint16_t{});
    case 4:
      return copy(uint32_t{});
    default:
      return copy(uint64_t{});
  }
}

absl::Status FillIndex(SparseRuntime& rt, const SNode& place, int axis, double scale,
                       double offset) {
  absl::Status status = CheckPlace(rt, place, "fill_index");
  if (!status.ok()) return status;
  if (axis < 0 || axis >= place.num_indices()) {
    return absl::InvalidArgumentError(absl::StrCat("axis ", axis, " is outside [0, ",
                                                   place.num_indices(), ") (the index of ",
                                                   place.DebugPath(), ")"));
  }
  const RunAxis ra = MakeRunAxis(place, axis);
  WithType(place.dtype(), [&](auto tag) {
    using T = decltype(tag);
    status = ForEachRun(
        rt, place,
        [&](absl::Span<const int32_t> first_index, char* first, int32_t count, uint64_t stride) {
          FillRun<T>(ra, first_index, first, count, stride, scale, offset);
        });
  });
  return status;
}

absl::Status Transform(SparseRuntime& rt, const SNode& place, double a, double b, double c,
                       double d) {
  absl::Status status = CheckPlace(rt, place, "transform");
  if (!status.ok()) return status;
  if (!IsFloat(place.dtype()) && c != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "transform of an integer place needs c == 0 (a division by the value), got c = ", c,
        " for ", place.DebugPath()));
  }
  WithType(place.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point<T>::value) {
      // In the place's precision, as a kernel over it would compute.
      const T ta = static_cast<T>(a), tb = static_cast<T>(b), tc = static_cast<T>(c),
              td = static_cast<T>(d);
      status = ForEachRun(
          rt, place, [=](absl::Span<const int32_t>, char* first, int32_t count, uint64_t stride) {
            TransformRun<T>(first, count, stride, ta, tb, tc, td);
          });
    } else {
      status = ForEachRun(
          rt, place, [=](absl::Span<const int32_t>, char* first, int32_t count, uint64_t stride) {
            TransformIntRun<T>(first, count, stride, a, b, d);
          });
    }
  });
  return status;
}

absl::Status ScatterAdd(SparseRuntime& rt, const SNode& place, const IndexRows& rows,
                        const void* values, bool scalar, int threads, ScatterScratch* scratch) {
  absl::Status status = CheckPlace(rt, place, "scatter_add");
  if (status.ok()) status = CheckRows(place, rows);
  if (!status.ok() || rows.n == 0) return status;
  const int64_t step = scalar ? 0 : 1;
  threads = std::max(1, std::min(threads, rt.thread_pool().num_threads()));
  // The address path needs container keys that fit int64 and row numbers that fit uint32.
  const bool dense = place.parent()->type() == SNodeType::kDense &&
                     MakeLeafLayout(place).num_keys > 0 && rows.n < INT32_MAX;
  WithType(place.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = static_cast<const T*>(values);
    status = dense ? ScatterAddDense<T>(rt, place, rows, in, !scalar, threads, scratch)
                   : ScatterAddPerRow<T>(rt, place, rows, in, step, threads);
  });
  return status;
}

absl::Status RunRows(SparseRuntime& rt, int64_t n, int threads,
                     absl::FunctionRef<absl::Status(int64_t begin, int64_t end)> fn) {
  const int t = n < 2 * std::max(1, threads) ? 1 : threads;
  return RunWorkers(rt, t,
                    [&](int w, int workers) { return fn(n * w / workers, n * (w + 1) / workers); });
}

}  // namespace runtime
}  // namespace accelmem
