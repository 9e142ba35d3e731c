#include "benchmarks/baselines/paired_timing.h"

#include <map>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "gtest/gtest.h"

namespace accelmem {
namespace baselines {
namespace {

// Captures each run's counters by benchmark name.
class CounterCapture : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      std::map<std::string, double>& counters = counters_[run.benchmark_name()];
      for (const auto& [name, counter] : run.counters) counters[name] = counter.value;
      if (run.error_occurred) skipped_.push_back(run.benchmark_name());
    }
  }
  std::map<std::string, std::map<std::string, double>> counters_;
  std::vector<std::string> skipped_;
};

// Runs the benchmark `name` (registered by the test) alone, for exactly `iterations` iterations.
std::map<std::string, double> RunAlone(const std::string& name, CounterCapture* capture) {
  benchmark::RunSpecifiedBenchmarks(capture, "^" + name + "(/|$)");
  for (const auto& [run_name, counters] : capture->counters_) {
    if (run_name.rfind(name, 0) == 0) return counters;
  }
  return {};
}

// Contenders that time themselves with fixed seconds (no clock involved): the counters must be
// the medians and the median ratios exactly, and every contender must run once per iteration
// in an order rotated by one each iteration.
// WarmUp runs each contender once, in order, its set-up right before its round (the self-timed
// form where there is one).
TEST(WarmUpTest, RunsEachContenderOnceAfterItsSetUp) {
  std::string log;
  const std::vector<Contender> contenders = {{"a", [&] { log += "A"; }, [&] { log += "a"; }},
                                             {"b", [&] { log += "B"; }},
                                             {"c", [&] { log += "C"; }, [&] { log += "c"; },
                                              [&] {
                                                log += "S";
                                                return 1.0;
                                              }}};
  WarmUp(contenders);
  EXPECT_EQ(log, "aABcS");
}

TEST(RunInterleavedTest, ReportsMediansAndMedianRatiosAndRotatesTheOrder) {
  std::vector<std::string> calls;
  // Per-iteration seconds: a = 2, 2, 8 (median 2); b = 1, 1, 1; c = 3, 1, 3 (median 3).
  const std::vector<double> a = {2, 2, 8}, b = {1, 1, 1}, c = {3, 1, 3};
  int ia = 0, ib = 0, ic = 0;
  benchmark::RegisterBenchmark(
      "BM_InterleavedFixed",
      [&](benchmark::State& state) {
        RunInterleaved(
            state, /*items=*/1e9,
            {{"a",
              {},
              {},
              [&] {
                calls.push_back("a");
                return a[ia++];
              }},
             {"b",
              {},
              [&] { calls.push_back("prepare b"); },
              [&] {
                calls.push_back("b");
                return b[ib++];
              }},
             {"c",
              {},
              {},
              [&] {
                calls.push_back("c");
                return c[ic++];
              }}},
            "b",
            {{"a_over_b", "a", "b"}, {"fastest_of_a_c_over_b", "a|c", "b"}, {"x", "nope", "b"}});
      })
      ->Iterations(3)
      ->UseManualTime();
  CounterCapture capture;
  const std::map<std::string, double> counters = RunAlone("BM_InterleavedFixed", &capture);
  ASSERT_FALSE(counters.empty());
  // 1e9 items per round: seconds per round = ns per item.
  EXPECT_DOUBLE_EQ(counters.at("a_ns"), 2);
  EXPECT_DOUBLE_EQ(counters.at("b_ns"), 1);
  EXPECT_DOUBLE_EQ(counters.at("c_ns"), 3);
  EXPECT_DOUBLE_EQ(counters.at("a_over_b"), 2);               // median of 2, 2, 8
  EXPECT_DOUBLE_EQ(counters.at("fastest_of_a_c_over_b"), 2);  // median of min: 2, 1, 3
  EXPECT_EQ(counters.count("x"), 0u) << "a comparison naming no contender is left out";
  EXPECT_EQ(counters.count("a_after_c_ns"), 0u) << "per-predecessor counters only when asked";
  const std::vector<std::string> expected = {"a",         "prepare b", "b",         "c",   // 1
                                             "prepare b", "b",         "c",         "a",   // 2
                                             "c",         "a",         "prepare b", "b"};  // 3
  EXPECT_EQ(calls, expected);
}

// Per-predecessor counters: each round takes 10 x (its predecessor's number: a 1, b 2, c 3; 0
// for the row's first round) + its own number, so each counter names the predecessor it was
// measured after. Over six iterations each contender follows the one listed before it (a: c,
// cyclically) in all but the iterations it starts; then it follows the one two places back.
TEST(RunInterleavedTest, PerPredecessorCountersSplitRoundsByTheRoundBefore) {
  int last = 0;  // number of the contender whose round ran last
  auto round = [&last](int self) {
    return [&last, self] {
      const double seconds = 10 * last + self;
      last = self;
      return seconds;
    };
  };
  benchmark::RegisterBenchmark(
      "BM_InterleavedPredecessors",
      [&](benchmark::State& state) {
        RunInterleaved(state, /*items=*/1e9,
                       {{"a", {}, {}, round(1)}, {"b", {}, {}, round(2)}, {"c", {}, {}, round(3)}},
                       "a", {}, /*per_predecessor=*/true);
      })
      ->Iterations(6)
      ->UseManualTime();
  CounterCapture capture;
  const std::map<std::string, double> counters = RunAlone("BM_InterleavedPredecessors", &capture);
  ASSERT_FALSE(counters.empty());
  EXPECT_DOUBLE_EQ(counters.at("a_after_c_ns"), 31);  // 4 rounds
  EXPECT_DOUBLE_EQ(counters.at("a_after_b_ns"), 21);  // 1 round (and the row's first, after none)
  EXPECT_DOUBLE_EQ(counters.at("b_after_a_ns"), 12);
  EXPECT_DOUBLE_EQ(counters.at("b_after_c_ns"), 32);
  EXPECT_DOUBLE_EQ(counters.at("c_after_b_ns"), 23);
  EXPECT_DOUBLE_EQ(counters.at("c_after_a_ns"), 13);
  EXPECT_EQ(counters.count("a_after_a_ns"), 0u);
  // The median of a's six rounds (1, 31, 31, 21, 31, 31) is unchanged by the split.
  EXPECT_DOUBLE_EQ(counters.at("a_ns"), 31);
}

// A timed contender that does not exist is an error of the row, not a crash.
TEST(RunInterleavedTest, UnknownTimedContenderSkipsTheRow) {
  benchmark::RegisterBenchmark("BM_InterleavedUnknown", [](benchmark::State& state) {
    RunInterleaved(state, 1, {{"a", [] {}}}, "missing", {});
  })->Iterations(1);
  CounterCapture capture;
  RunAlone("BM_InterleavedUnknown", &capture);
  ASSERT_EQ(capture.skipped_.size(), 1u);
  EXPECT_EQ(capture.skipped_[0], "BM_InterleavedUnknown/iterations:1");
}

}  // namespace
}  // namespace baselines
}  // namespace accelmem
