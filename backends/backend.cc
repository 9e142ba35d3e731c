#include "backends/backend.h"

#include <map>
#include <mutex>  // NOLINT
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/checked_math.h"
#include "policy/default_memory_allocator_policy.h"

namespace accelmem {
namespace backends {
namespace {

std::mutex& ConfigMutex() {
  static std::mutex* mu = new std::mutex();
  return *mu;
}

BackendPtr& ConfiguredBackend() {
  static BackendPtr* backend = new BackendPtr();
  return *backend;
}

}  // namespace

Backend::Backend() : sizer_(this) {}

policy::MemoryAllocatorPolicyPtr Backend::CreateMemoryAllocatorPolicy() const {
  return std::make_unique<policy::DefaultMemoryAllocatorPolicy>();
}

int64_t Backend::GetMemSize(ir::MemorySpace) const { return 0; }

std::optional<int64_t> Backend::TileBytes(const ir::TileType& tile) const {
  return ir::StaticTileBytes(tile.shape, tile.dtype);
}

bool Backend::SeparatesLayouts(ir::MemorySpace) const { return false; }

void BackendConfig::Set(BackendPtr backend) {
  std::lock_guard<std::mutex> lock(ConfigMutex());
  ConfiguredBackend() = std::move(backend);
}

absl::Status BackendConfig::SetByName(absl::string_view name) {
  if (name.empty() || name == "none") {
    Reset();
    return absl::OkStatus();
  }
  absl::StatusOr<BackendPtr> backend = BackendRegistry::Global().Create(name);
  if (!backend.ok()) return backend.status();
  Set(*std::move(backend));
  return absl::OkStatus();
}

void BackendConfig::Reset() { Set(nullptr); }

bool BackendConfig::IsConfigured() { return Get() != nullptr; }

BackendPtr BackendConfig::Get() {
  std::lock_guard<std::mutex> lock(ConfigMutex());
  return ConfiguredBackend();
}

ScopedBackend::ScopedBackend(BackendPtr backend) : previous_(BackendConfig::Get()) {
  BackendConfig::Set(std::move(backend));
}

ScopedBackend::~ScopedBackend() { BackendConfig::Set(std::move(previous_)); }

policy::MemoryAllocatorPolicyPtr CreatePolicy(const Backend* backend) {
  policy::MemoryAllocatorPolicyPtr p;
  if (backend != nullptr) p = backend->CreateMemoryAllocatorPolicy();
  if (p == nullptr) p = std::make_unique<policy::DefaultMemoryAllocatorPolicy>();
  return p;
}

std::optional<int64_t> TileBytes(const Backend* backend, const ir::TileType& tile) {
  if (backend != nullptr) return backend->TileBytes(tile);
  return ir::StaticTileBytes(tile.shape, tile.dtype);
}

int64_t MemSize(const Backend* backend, ir::MemorySpace space) {
  return backend != nullptr ? backend->GetMemSize(space) : 0;
}

policy::MemoryAllocatorPolicyPtr CreateActivePolicy() {
  return CreatePolicy(BackendConfig::Get().get());
}

std::optional<int64_t> ActiveTileBytes(const ir::TileType& tile) {
  return TileBytes(BackendConfig::Get().get(), tile);
}

int64_t ActiveMemSize(ir::MemorySpace space) { return MemSize(BackendConfig::Get().get(), space); }

struct BackendRegistry::Impl {
  mutable std::mutex mu;
  std::map<std::string, Factory> factories;
};

BackendRegistry::BackendRegistry() : impl_(std::make_unique<Impl>()) {}

BackendRegistry& BackendRegistry::Global() {
  static BackendRegistry* registry = new BackendRegistry();
  return *registry;
}

absl::Status BackendRegistry::Register(const std::string& name, Factory factory) {
  if (name.empty() || !factory) {
    return absl::InvalidArgumentError("a backend needs a name and a factory");
  }
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (!impl_->factories.emplace(name, std::move(factory)).second) {
    return absl::AlreadyExistsError(absl::StrCat("backend '", name, "' is already registered"));
  }
  return absl::OkStatus();
}

absl::StatusOr<BackendPtr> BackendRegistry::Create(absl::string_view name) const {
  Factory factory;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto it = impl_->factories.find(std::string(name));
    if (it != impl_->factories.end()) factory = it->second;
  }
  if (!factory) {
    return absl::NotFoundError(
        absl::StrCat("unknown backend '", name, "' (known: ", absl::StrJoin(Names(), ", "), ")"));
  }
  return factory();
}

std::vector<std::string> BackendRegistry::Names() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::vector<std::string> names;
  for (const auto& kv : impl_->factories) names.push_back(kv.first);
  return names;
}

BackendRegistrar::BackendRegistrar(const std::string& name, BackendRegistry::Factory factory) {
  absl::Status s = BackendRegistry::Global().Register(name, std::move(factory));
  (void)s;  // a second registration of the same name (linked twice) keeps the first
}

std::optional<ir::TileLayout> SeparatedLayout(const Backend* backend, const ir::TileType& tile) {
  if (backend == nullptr || !backend->SeparatesLayouts(tile.space)) return std::nullopt;
  return tile.layout.value_or(ir::TileLayout::kND);
}

bool ActiveSeparatesLayouts(ir::MemorySpace space) {
  BackendPtr backend = BackendConfig::Get();
  return backend != nullptr && backend->SeparatesLayouts(space);
}

}  // namespace backends
}  // namespace accelmem
