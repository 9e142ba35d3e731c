// File: benchmarks/baselines/paired_timing.h
//
// How the runtime benchmarks put an upstream baseline and accelmem side by side in one binary
// run. Two forms:
//
// * Interleaved rows (RunInterleaved, snode_bench): one benchmark row holds every contender of an
//   operation -- upstream out of line, upstream inlined, accelmem's X_* function, its inline
//   form, a floor -- and each benchmark iteration runs every contender's round once, the order
//   rotated by one each iteration. Each round is timed in this thread's CPU time; untimed set-up
//   (re-activating cells, a GC) runs before it. The row reports, per contender, `<name>_ns` =
//   the median CPU ns per item over its rounds, and per comparison a ratio counter = the median
//   over iterations of (baseline round time / contender round time) (> 1: the contender is
//   faster). Why: on a shared VM the speed of the machine drifts markedly over seconds; rows
//   timed one after the other (the pair form below) put that drift into the ratio (identical
//   code read well below and well above 1), while rounds of the same iteration run within
//   milliseconds of each other and see the same machine. A round finds the caches as its
//   predecessor (and then its own untimed set-up) left them. The rotation keeps each
//   contender's predecessor in all rounds but those at an iteration's start: with n contenders
//   listed c0, c1, ..., the round of c(k) follows c(k-1) in n-1 of every n iterations, and
//   c(k-2) in the other (itself, for n = 2).
//   So list the contenders on one structure together, so that two forms compared by a ratio
//   both start warm (after a contender on their own structure) or both cold (see
//   BM_Pointer_Lookup in snode_bench). Where a predecessor can change a contender's time
//   (gc_bench), `per_predecessor` adds `<name>_after_<other>_ns`: the median over the rounds
//   of `name` that ran right after a round of `other`.
// * Paired rows (PairedRow, node_manager_bench and gc_bench): two rows registered one after the
//   other, the baseline first. Both rows time only the operation under test in this thread's CPU
//   time and report it as manual time (UseManualTime); the baseline row stores its seconds per
//   item under a key (the operation and its arguments); the accelmem row after it reads them and
//   reports the counter `vs_upstream` = baseline seconds per item / accelmem seconds per item
//   (> 1: accelmem is faster). If the baseline row was filtered out, the counter is missing.
#ifndef ACCELMEM_BENCHMARKS_BASELINES_PAIRED_TIMING_H_
#define ACCELMEM_BENCHMARKS_BASELINES_PAIRED_TIMING_H_

#include <algorithm>
#include <ctime>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

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

// One contender of an interleaved row.
struct Contender {
  std::string name;                    // counter `<name>_ns`
  std::function<void()> round;         // the timed operation over all items
  std::function<void()> prepare = {};  // untimed, before each of its rounds (may be empty)
  // If set, used instead of `round`: a round that times itself and returns its seconds (e.g. the
  // wall time of a round split over several threads).
  std::function<double()> self_timed = {};
};

// A ratio counter of an interleaved row: `counter` = median over iterations of
// (`baseline`'s round time / `contender`'s round time). `baseline` may name several contenders
// separated by '|': the fastest of them in each iteration (e.g. the best of several mallocs).
struct Comparison {
  std::string counter;
  std::string baseline;
  std::string contender;
};

inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// Runs one untimed round of each contender (its set-up, then its round) before RunInterleaved,
// for rows whose first round pays costs the later ones do not (lazily allocated lists and
// scratch, page faults): a round long enough to meet the row's minimum time alone would otherwise
// make that cold round the whole row.
inline void WarmUp(const std::vector<Contender>& contenders) {
  for (const Contender& c : contenders) {
    if (c.prepare) c.prepare();
    if (c.self_timed) {
      c.self_timed();
    } else {
      c.round();
    }
  }
}

// Runs the interleaved row described above: `items` per round; the iteration's manual time (the
// row's Time column, and what --benchmark_min_time counts) is the round time of the contender
// named `timed`. Sets items_processed from `timed`'s rounds.
inline void RunInterleaved(benchmark::State& state, double items,
                           const std::vector<Contender>& contenders, const std::string& timed,
                           const std::vector<Comparison>& comparisons,
                           bool per_predecessor = false) {
  const std::size_t n = contenders.size();
  // The index of the contender called `name`, or n.
  auto index_of = [&](const std::string& name) {
    for (std::size_t c = 0; c < n; ++c) {
      if (contenders[c].name == name) return c;
    }
    return n;
  };
  // seconds[c][k]: contender c's round in iteration k (every contender runs in every iteration).
  std::vector<std::vector<double>> seconds(n);
  const std::size_t timed_index = index_of(timed);
  if (timed_index == n) {
    state.SkipWithError("no contender named as the timed one");
    return;
  }
  // after[c][p]: contender c's rounds that ran right after one of contender p (the row's first
  // round, after the warm-up, is in none).
  std::vector<std::vector<std::vector<double>>> after(n, std::vector<std::vector<double>>(n));
  std::size_t previous = n;
  std::size_t first = 0;
  for (auto _ : state) {
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t index = (first + k) % n;
      const Contender& c = contenders[index];
      if (c.prepare) c.prepare();
      seconds[index].push_back(c.self_timed ? c.self_timed() : CpuSeconds(c.round));
      if (previous < n) after[index][previous].push_back(seconds[index].back());
      previous = index;
    }
    first = (first + 1) % n;
    state.SetIterationTime(seconds[timed_index].back());
  }
  for (std::size_t c = 0; c < n; ++c) {
    if (!seconds[c].empty()) {
      state.counters[contenders[c].name + "_ns"] = 1e9 * Median(seconds[c]) / items;
    }
  }
  for (std::size_t c = 0; per_predecessor && c < n; ++c) {
    for (std::size_t p = 0; p < n; ++p) {
      if (p != c && !after[c][p].empty()) {
        state.counters[contenders[c].name + "_after_" + contenders[p].name + "_ns"] =
            1e9 * Median(after[c][p]) / items;
      }
    }
  }
  for (const Comparison& comparison : comparisons) {
    std::vector<std::size_t> baselines;
    for (std::size_t begin = 0; begin <= comparison.baseline.size();) {
      std::size_t end = comparison.baseline.find('|', begin);
      if (end == std::string::npos) end = comparison.baseline.size();
      baselines.push_back(index_of(comparison.baseline.substr(begin, end - begin)));
      begin = end + 1;
    }
    const std::size_t o = index_of(comparison.contender);
    if (o == n || std::find(baselines.begin(), baselines.end(), n) != baselines.end()) continue;
    std::vector<double> ratios;
    for (std::size_t k = 0; k < seconds[o].size(); ++k) {
      double fastest = seconds[baselines[0]][k];
      for (std::size_t b : baselines) fastest = std::min(fastest, seconds[b][k]);
      if (fastest > 0 && seconds[o][k] > 0) ratios.push_back(fastest / seconds[o][k]);
    }
    if (!ratios.empty()) state.counters[comparison.counter] = Median(ratios);
  }
  state.SetItemsProcessed(static_cast<int64_t>(static_cast<double>(state.iterations()) * items));
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
