// File: benchmarks/baselines/paired_timing.h
//
// How the runtime benchmarks put an upstream baseline row and accelmem's row side by side in one
// binary run. Each pair is two rows registered one after the other, the baseline first (google
// benchmark runs rows in registration order). Both rows time only the operation under test in
// this thread's CPU time (robust to the shared machine descheduling us) and report it as manual
// time (UseManualTime); the untimed set-up of an iteration (re-activating cells, a GC between
// rounds) sits outside the timed section. The baseline row stores its seconds per item under a
// key (the operation and its arguments); the accelmem row after it reads them and reports the
// counter `vs_upstream` = baseline seconds per item / accelmem seconds per item (> 1: accelmem
// is faster). If the baseline row was filtered out, the counter is missing.
#ifndef ACCELMEM_BENCHMARKS_BASELINES_PAIRED_TIMING_H_
#define ACCELMEM_BENCHMARKS_BASELINES_PAIRED_TIMING_H_

#include <ctime>
#include <map>
#include <string>

#include "benchmark/benchmark.h"

namespace accelmem {
namespace baselines {

inline double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Runs fn() and returns the CPU seconds it took on this thread.
template <typename Fn>
double CpuSeconds(Fn&& fn) {
  const double start = ThreadCpuSeconds();
  fn();
  return ThreadCpuSeconds() - start;
}

// Seconds per item of the baseline rows that ran so far, by key.
inline std::map<std::string, double>& BaselineSecondsPerItem() {
  static std::map<std::string, double> times;
  return times;
}

// Accumulates a row's timed seconds and reports them as the iteration's manual time.
class PairedRow {
 public:
  explicit PairedRow(benchmark::State& state) : state_(state) {}
  // Times fn() (CPU) as the current iteration.
  template <typename Fn>
  void Time(Fn&& fn) {
    AddIteration(CpuSeconds(fn));
  }
  // Adds an iteration timed by the caller.
  void AddIteration(double seconds) {
    state_.SetIterationTime(seconds);
    seconds_ += seconds;
  }
  double seconds() const { return seconds_; }

  // For the baseline row: remembers its seconds per item under `key`.
  void RecordBaseline(const std::string& key, double items_per_iteration) {
    if (state_.iterations() == 0 || seconds_ <= 0) return;
    BaselineSecondsPerItem()[key] = PerItem(items_per_iteration);
  }
  // For accelmem's row: sets `counter` to the baseline's seconds per item / this row's.
  void ReportAgainst(const std::string& key, double items_per_iteration,
                     const char* counter = "vs_upstream") {
    auto it = BaselineSecondsPerItem().find(key);
    if (it == BaselineSecondsPerItem().end() || state_.iterations() == 0 || seconds_ <= 0) return;
    state_.counters[counter] = it->second / PerItem(items_per_iteration);
  }

 private:
  double PerItem(double items_per_iteration) const {
    return seconds_ / (static_cast<double>(state_.iterations()) * items_per_iteration);
  }
  benchmark::State& state_;
  double seconds_ = 0;
};

}  // namespace baselines
}  // namespace accelmem

#endif  // ACCELMEM_BENCHMARKS_BASELINES_PAIRED_TIMING_H_
