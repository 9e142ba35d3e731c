#include "policy/testing/trace_generators.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace accelmem {
namespace policy_testing {
namespace {

using policy::PlacementBuffer;

// Deterministic helpers over the raw generator (no <random> distributions).
class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed * 0x9E3779B97F4A7C15ULL + 1) {}

  // Uniform in [0, n) for n >= 1.
  int64_t Below(int64_t n) { return static_cast<int64_t>(engine_() % static_cast<uint64_t>(n)); }
  // Uniform in [lo, hi].
  int64_t Between(int64_t lo, int64_t hi) { return lo + Below(hi - lo + 1); }
  // Uniform in [0, 1).
  double Unit() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  bool Chance(double p) { return Unit() < p; }
  // exp(N(mu, sigma)) by Box-Muller.
  double LogNormal(double mu, double sigma) {
    const double u1 = 1.0 - Unit();
    const double u2 = Unit();
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    return std::exp(mu + sigma * z);
  }
  // Pareto with minimum `lo` and tail index `alpha`, capped at `cap`.
  int64_t Pareto(double lo, double alpha, double cap) {
    const double v = lo / std::pow(1.0 - Unit(), 1.0 / alpha);
    return static_cast<int64_t>(std::min(v, cap));
  }

 private:
  std::mt19937_64 engine_;
};

class Builder {
 public:
  void Add(int64_t start, int64_t end, int64_t size) {
    buffers_.push_back(PlacementBuffer{std::to_string(buffers_.size()), start,
                                       std::max(start + 1, end), std::max<int64_t>(size, 1)});
  }
  size_t count() const { return buffers_.size(); }
  std::vector<PlacementBuffer> Take() { return std::move(buffers_); }

 private:
  std::vector<PlacementBuffer> buffers_;
};

int64_t Align(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

std::vector<PlacementBuffer> Uniform(uint64_t seed, int n) {
  Rng rng(seed);
  Builder out;
  const int64_t horizon = std::max(4, n / 2);
  for (int i = 0; i < n; ++i) {
    const int64_t start = rng.Below(horizon);
    out.Add(start, start + 1 + rng.Below(std::max<int64_t>(2, horizon / 4)), rng.Between(1, 1024));
  }
  return out.Take();
}

std::vector<PlacementBuffer> Chain(uint64_t seed, int n) {
  Rng rng(seed);
  Builder out;
  for (int i = 0; i < n; ++i) {
    out.Add(i, i + 2 + (rng.Chance(0.2) ? 1 : 0), 64 * rng.Between(1, 64));
  }
  return out.Take();
}

std::vector<PlacementBuffer> Ladder(uint64_t seed, int n) {
  Rng rng(seed);
  Builder out;
  const int64_t left = 64 * rng.Between(4, 32);
  const int64_t right = 64 * rng.Between(4, 32);
  for (int64_t step = 0; static_cast<int>(out.count()) < n; step += 2) {
    // Each branch's output feeds both branches of the next rung; rungs alternate sides.
    out.Add(step, step + 3, left + 64 * rng.Below(4));
    if (static_cast<int>(out.count()) < n) out.Add(step + 1, step + 4, right + 64 * rng.Below(4));
  }
  return out.Take();
}

std::vector<PlacementBuffer> EqualSizes(uint64_t seed, int n) {
  Rng rng(seed);
  Builder out;
  const int64_t a = 4096 * rng.Between(1, 8);
  const int64_t b = rng.Chance(0.5) ? a : 4096 * rng.Between(1, 8);
  const int64_t horizon = std::max(4, n / 3);
  for (int i = 0; i < n; ++i) {
    const int64_t start = rng.Below(horizon);
    out.Add(start, start + rng.Between(1, 6), rng.Chance(0.7) ? a : b);
  }
  return out.Take();
}

std::vector<PlacementBuffer> FewHuge(uint64_t seed, int n) {
  Rng rng(seed);
  Builder out;
  const int64_t horizon = std::max(8, n / 2);
  const int huge = 1 + static_cast<int>(rng.Below(4));
  for (int h = 0; h < huge && h < n; ++h) {
    const int64_t start = rng.Below(horizon / 2);
    out.Add(start, start + rng.Between(horizon / 8 + 1, horizon / 2 + 1),
            64 * rng.Between(256, 1024) * std::max(1, n / 64));
  }
  while (static_cast<int>(out.count()) < n) {
    const int64_t start = rng.Below(horizon);
    out.Add(start, start + rng.Between(1, 8), 64 * rng.Between(1, 64));
  }
  return out.Take();
}

std::vector<PlacementBuffer> SkipConnections(uint64_t seed, int n) {
  Rng rng(seed);
  Builder out;
  int64_t t = 0;
  while (static_cast<int>(out.count()) < n) {
    // One U-Net block of `depth` levels: encoder k at step t + k, decoder k at t + 2 * depth - k.
    const int depth = static_cast<int>(rng.Between(2, 6));
    const int64_t base = 4096 * rng.Between(4, 16);
    for (int k = 0; k < depth && static_cast<int>(out.count()) < n; ++k) {
      const int64_t size = base >> k;               // Resolution halves at each level.
      out.Add(t + k, t + 2 * depth - k + 1, size);  // Skip activation.
      if (rng.Chance(0.7)) out.Add(t + k, t + k + 1, size / 2 + 64);  // Temporary.
    }
    for (int k = depth - 1; k >= 0 && static_cast<int>(out.count()) < n; --k) {
      out.Add(t + 2 * depth - k, t + 2 * depth - k + 2, base >> k);  // Decoder output.
    }
    t += 2 * depth + 1;
  }
  std::vector<PlacementBuffer> buffers = out.Take();
  buffers.resize(std::min<size_t>(buffers.size(), static_cast<size_t>(std::max(n, 1))));
  return buffers;
}

std::vector<PlacementBuffer> Training(uint64_t seed, int n) {
  Rng rng(seed);
  Builder out;
  // Per layer: weight, weight-gradient accumulator, activation, gradient, 0-2 temporaries.
  const int layers = std::max(1, (n + 3) / 4);
  const int64_t end = 2 * layers + 2;
  for (int k = 0; k < layers && static_cast<int>(out.count()) < n; ++k) {
    const int64_t act = 1024 * rng.Between(4, 64);
    const int64_t weight = 1024 * rng.Between(1, 32);
    const int64_t back = 2 * layers - k;  // Backward step of layer k.
    out.Add(0, end, weight);              // Weights live throughout.
    out.Add(k + 1, back + 1, act);        // Activation kept for the backward pass.
    out.Add(back, back + 2, act);         // Gradient of the activation.
    out.Add(back, end, weight);           // Weight gradient until the optimizer step.
    if (rng.Chance(0.5)) out.Add(k + 1, k + 2, act / 2);  // Forward temporary.
  }
  std::vector<PlacementBuffer> buffers = out.Take();
  buffers.resize(std::min<size_t>(buffers.size(), static_cast<size_t>(std::max(n, 1))));
  return buffers;
}

std::vector<PlacementBuffer> WeightsAndTemps(uint64_t seed, int n) {
  Rng rng(seed);
  Builder out;
  const int64_t horizon = std::max(4, n / 2);
  const int weights = std::max(1, n / 10);
  for (int w = 0; w < weights; ++w) out.Add(0, horizon + 3, 256 * rng.Between(1, 64));
  while (static_cast<int>(out.count()) < n) {
    const int64_t start = rng.Below(horizon);
    out.Add(start, start + rng.Between(1, 3), 256 * rng.Between(1, 128));
  }
  return out.Take();
}

std::vector<PlacementBuffer> PowerLaw(uint64_t seed, int n) {
  Rng rng(seed);
  Builder out;
  const int64_t horizon = std::max(4, n / 2);
  for (int i = 0; i < n; ++i) {
    const int64_t start = rng.Below(horizon);
    out.Add(start, start + 1 + rng.Pareto(1.0, 1.5, static_cast<double>(horizon)),
            rng.Pareto(64.0, 1.1, 1e9));
  }
  return out.Take();
}

std::vector<PlacementBuffer> Somas(uint64_t seed, int n) {
  Rng rng(seed);
  Builder out;
  // A training step as SOMAS sees it: forward operators at steps 0..L-1, backward operators at
  // steps L..2L-1 in reverse. Each forward output feeds the next operator and, for most
  // operators, the matching backward operator (saved activation); each backward operator emits
  // a gradient read by the next backward operator; workspaces live one step; the graph inputs and
  // parameters live throughout. Sizes come from tensor shapes (batch 32, fp16/fp32, channels
  // 64-2048, spatial 4x4 to 112x112) and are 512-aligned as SOMAS aligns them.
  const int layers = std::max(1, n / 3);
  const int64_t end = 2 * int64_t{layers} + 1;
  const int inputs = std::max(1, n / 400);
  for (int i = 0; i < inputs; ++i) out.Add(0, end, Align(4 * 1024 * rng.Between(16, 600), 512));
  const std::vector<int64_t> channels = {64, 128, 256, 512, 1024, 2048};
  auto shape_bytes = [&rng, &channels]() {
    const int64_t c = channels[static_cast<size_t>(rng.Below(6))];
    const int64_t side = int64_t{4} << rng.Below(5);  // 4 .. 64
    return Align(32 * c * side * side * rng.Between(1, 2) / 8, 512);
  };
  for (int k = 0; k < layers && static_cast<int>(out.count()) < n; ++k) {
    const int64_t back = 2 * int64_t{layers} - 1 - k;
    const int64_t bytes = shape_bytes();
    const int64_t last_use = rng.Chance(0.7) ? back : k + 1 + rng.Below(3);
    out.Add(k, last_use + 1, bytes);  // Forward output.
    if (rng.Chance(0.5)) out.Add(k, k + 1, Align(rng.Between(1, 256) * 1024, 512));  // Workspace.
    out.Add(back, back + 2, rng.Chance(0.8) ? bytes : shape_bytes());                // Gradient.
    if (rng.Chance(0.5)) out.Add(back, back + 1, Align(rng.Between(1, 256) * 1024, 512));
  }
  while (static_cast<int>(out.count()) < n) {  // More workspaces, up to n buffers.
    const int64_t step = rng.Below(end - 1);
    out.Add(step, step + 1, Align(rng.Between(1, 256) * 1024, 512));
  }
  std::vector<PlacementBuffer> buffers = out.Take();
  buffers.resize(std::min<size_t>(buffers.size(), static_cast<size_t>(std::max(n, 1))));
  return buffers;
}

std::vector<PlacementBuffer> Iopddl(uint64_t seed, int n) {
  Rng rng(seed);
  Builder out;
  // A flat schedule with several moderate hot spots (no single dominating peak, so many windows
  // come close to LOAD), heavy-tailed lifetimes and sizes spanning six orders of magnitude.
  const int64_t horizon = std::max(8, n / 4);
  const int spots = 4 + static_cast<int>(rng.Below(6));
  std::vector<int64_t> spot_at;
  for (int p = 0; p < spots; ++p) spot_at.push_back(rng.Below(horizon));
  for (int i = 0; i < n; ++i) {
    int64_t start = rng.Below(horizon);
    if (rng.Chance(0.2)) {
      const int64_t p = spot_at[static_cast<size_t>(rng.Below(spots))];
      start = std::min(horizon - 1, p + rng.Below(std::max<int64_t>(2, horizon / 16)));
    }
    const int64_t length = 1 + static_cast<int64_t>(rng.LogNormal(1.5, 1.3));
    const int64_t size = Align(static_cast<int64_t>(rng.LogNormal(12.0, 1.8)) + 1, 8);
    out.Add(start, start + std::min(length, horizon), std::min<int64_t>(size, int64_t{1} << 32));
  }
  return out.Take();
}

}  // namespace

const std::vector<TraceFamily>& TraceFamilies() {
  static const auto* families = new std::vector<TraceFamily>{
      {"uniform", Uniform},    {"chain", Chain},
      {"ladder", Ladder},      {"equal_sizes", EqualSizes},
      {"few_huge", FewHuge},   {"skip_connections", SkipConnections},
      {"training", Training},  {"weights_and_temps", WeightsAndTemps},
      {"power_law", PowerLaw}, {"somas", Somas},
      {"iopddl", Iopddl},
  };
  return *families;
}

const TraceFamily& FindTraceFamily(const std::string& name) {
  for (const TraceFamily& family : TraceFamilies()) {
    if (family.name == name) return family;
  }
  std::fprintf(stderr, "FindTraceFamily: no trace family '%s'\n", name.c_str());
  std::abort();
}

}  // namespace policy_testing
}  // namespace accelmem
