// Backend: what the memory pipeline needs to know about a target SoC, the process-wide
// BackendConfig that selects one, and a registry of backends by name.
//
// A Backend gives (1) the allocator policy (CreateMemoryAllocatorPolicy(), the default policy
// unless a backend overrides it with its own policy), (2) the capacity of each memory space
// (GetMemSize(), 0 = unknown, so the capacity check is skipped) and (3) the byte size of a tile
// (TileBytes(): ceil(prod(shape) * bits / 8) unless the backend pads, as backends/ascend pads
// the row count of Acc tiles) and (4) the spaces where tiles of different storage layouts must
// never share bytes (SeparatesLayouts(); none unless a backend says so: the Ascend 950 keeps ND
// and NZ apart in Vec). Target-specific choices (address alignment tables, padding) live in the
// target's own folder.
//
// BackendConfig is a process-global selection (like upstream's) for tools: the passes take their
// backend as a constructor option (null: the default policy, default sizes, no capacity check)
// and never read it; the pipeline builder (passes/memory_pipeline.h) fills that option from
// BackendConfig when asked to, and checkers such as verify_memory_plan default to it. Tests set
// and reset it (ScopedBackend). It is guarded by a mutex.
#ifndef ACCELMEM_BACKENDS_BACKEND_H_
#define ACCELMEM_BACKENDS_BACKEND_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/dtype.h"
#include "ir/memory_space.h"
#include "ir/types.h"
#include "policy/memory_allocator_policy.h"

namespace accelmem {
namespace backends {

class Backend {
 public:
  Backend();
  virtual ~Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  // Stable lower-case name, e.g. "ascend910b".
  virtual std::string Name() const = 0;
  // The allocator policy for this SoC; the base returns DefaultMemoryAllocatorPolicy.
  virtual policy::MemoryAllocatorPolicyPtr CreateMemoryAllocatorPolicy() const;
  // Capacity of `space` in bytes; 0 when unknown (the base knows none).
  virtual int64_t GetMemSize(ir::MemorySpace space) const;
  // Bytes a tile occupies; nullopt for a non-static shape. The base uses ir::StaticTileBytes.
  virtual std::optional<int64_t> TileBytes(const ir::TileType& tile) const;
  // Whether tiles of different storage layouts (ND, NZ) must never share an address in `space`,
  // whatever their lifetimes: the hardware reads the same bytes in another order, so a buffer
  // left by an ND tile is not a valid place for an NZ one (upstream PyPTO's StorageLayout
  // separation, pypto #2100 / #2509 / #2517). The base separates nothing.
  virtual bool SeparatesLayouts(ir::MemorySpace space) const;

  // TileBytes() as an ir::TileByteSizer (for code that takes a sizer).
  const ir::TileByteSizer& tile_byte_sizer() const { return sizer_; }

 private:
  class Sizer final : public ir::TileByteSizer {
   public:
    explicit Sizer(const Backend* backend) : backend_(backend) {}
    std::optional<int64_t> Bytes(const ir::TileType& tile) const override {
      return backend_->TileBytes(tile);
    }

   private:
    const Backend* backend_;
  };
  Sizer sizer_;
};

using BackendPtr = std::shared_ptr<const Backend>;

// The process-wide backend selection.
class BackendConfig {
 public:
  static void Set(BackendPtr backend);
  // Looks `name` up in BackendRegistry::Global(); "none" (or "") resets. NotFound names the
  // registered backends.
  static absl::Status SetByName(absl::string_view name);
  static void Reset();
  static bool IsConfigured();
  // The configured backend, or null.
  static BackendPtr Get();
};

// Sets a backend for the lifetime of the object and restores the previous one (tests).
class ScopedBackend {
 public:
  explicit ScopedBackend(BackendPtr backend);
  ~ScopedBackend();
  ScopedBackend(const ScopedBackend&) = delete;
  ScopedBackend& operator=(const ScopedBackend&) = delete;

 private:
  BackendPtr previous_;
};

// What a pass given `backend` (may be null: none) uses: its policy, else the default policy;
// its tile sizes, else ir::StaticTileBytes; its capacities, else 0 (unchecked). The passes take
// the backend as an option and call these; they never read BackendConfig.
policy::MemoryAllocatorPolicyPtr CreatePolicy(const Backend* backend);
std::optional<int64_t> TileBytes(const Backend* backend, const ir::TileType& tile);
int64_t MemSize(const Backend* backend, ir::MemorySpace space);

// The layout class `tile` counts in where `backend` separates layouts in the tile's space: its
// stated layout, or ND when it states none (the vector unit's row-major order, upstream's
// default TileView). nullopt where the space does not separate layouts (and without a backend):
// there any tile may share with any other.
std::optional<ir::TileLayout> SeparatedLayout(const Backend* backend, const ir::TileType& tile);

// The same for the configured backend (BackendConfig), for tools and checkers that follow the
// process-wide selection.
policy::MemoryAllocatorPolicyPtr CreateActivePolicy();
// Byte size of a tile under the configured backend (ir::StaticTileBytes when none).
std::optional<int64_t> ActiveTileBytes(const ir::TileType& tile);
// Capacity of `space` under the configured backend; 0 (unchecked) when none.
int64_t ActiveMemSize(ir::MemorySpace space);
// SeparatesLayouts of the configured backend; false when none.
bool ActiveSeparatesLayouts(ir::MemorySpace space);

// Backends by name. The Ascend targets register themselves when linked (alwayslink).
class BackendRegistry {
 public:
  using Factory = std::function<BackendPtr()>;
  static BackendRegistry& Global();

  // AlreadyExists if the name is taken; InvalidArgument for an empty name or factory.
  absl::Status Register(const std::string& name, Factory factory);
  // A new instance of backend `name`; NotFound "unknown backend 'x' (known: a, b)".
  absl::StatusOr<BackendPtr> Create(absl::string_view name) const;
  std::vector<std::string> Names() const;  // sorted

 private:
  struct Impl;
  BackendRegistry();
  std::unique_ptr<Impl> impl_;
};

// Registers a backend at static-initialisation time: `static BackendRegistrar r("x", f);`.
class BackendRegistrar {
 public:
  BackendRegistrar(const std::string& name, BackendRegistry::Factory factory);
};

}  // namespace backends
}  // namespace accelmem

#endif  // ACCELMEM_BACKENDS_BACKEND_H_
