#include "policy/dsa_problem.h"

#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policy/testing/corpus_files.h"

namespace accelmem {
namespace policy {
namespace {

using ::testing::HasSubstr;

constexpr char kCorpus[] = "third_party/dsa_solver_corpus/";

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The corpus files are stored canonically, so reading and writing one gives back its bytes: the
// fingerprint of a problem read here is the one its producer computed.
TEST(DsaProblemTest, EveryCorpusFileRoundTripsByteForByte) {
  std::vector<std::string> files =
      policy_testing::ListJsonFiles(std::string(kCorpus) + "pypto-lib");
  for (const std::string& f :
       policy_testing::ListJsonFiles(std::string(kCorpus) + "minimalloc-dsa-rp")) {
    files.push_back(f);
  }
  ASSERT_EQ(files.size(), 587u + 11u);
  int valid = 0;
  for (const std::string& path : files) {
    const std::string text = ReadText(path);
    absl::StatusOr<DsaProblemDocument> document = ParseDsaProblemJson(text, path);
    ASSERT_TRUE(document.ok()) << document.status();
    EXPECT_EQ(WriteDsaProblemJson(*document), text) << path;
    if (ValidateDsaProblem(document->problem).empty()) ++valid;
  }
  EXPECT_EQ(valid, static_cast<int>(files.size()));
}

TEST(DsaProblemTest, FingerprintIsFnv1aOfTheCanonicalText) {
  DsaProblemDocument document;
  document.instance = "k";
  document.problem.pools.push_back({0, "Vec", 1024, {}, std::nullopt});
  document.problem.buffers.push_back({0, "a", 32, 32, {{0, 2}}, {0}});
  document.problem.objective.terms = {DsaObjectiveTerm::kTotalPeak};
  const std::string text = WriteDsaProblemJson(document);
  uint64_t hash = 14695981039346656037ULL;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ULL;
  char expected[17];
  snprintf(expected, sizeof(expected), "%016llx", static_cast<unsigned long long>(hash));
  EXPECT_EQ(DsaProblemFingerprint(document), expected);
  // Any change to the problem changes it.
  DsaProblemDocument other = document;
  other.problem.buffers[0].size = 64;
  EXPECT_NE(DsaProblemFingerprint(other), DsaProblemFingerprint(document));
}

TEST(DsaProblemTest, SolutionRoundTripsSortedByBuffer) {
  DsaSolutionDocument solution;
  solution.profile = "dsa_rp_v1";
  solution.instance = "k";
  solution.problem_fingerprint = "0123456789abcdef";
  solution.metadata["status"] = "optimal";
  solution.placements = {{2, 0, 64}, {1, 0, 0}};
  const std::string text = WriteDsaSolutionJson(solution);
  absl::StatusOr<DsaSolutionDocument> parsed = ParseDsaSolutionJson(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->placements.size(), 2u);
  EXPECT_EQ(parsed->placements[0].buffer, 1u);
  EXPECT_EQ(parsed->placements[1].offset, 64u);
  EXPECT_EQ(parsed->metadata.at("status"), "optimal");
  EXPECT_EQ(WriteDsaSolutionJson(*parsed), text);
}

TEST(DsaProblemTest, ShapeErrorsNameTheJsonPath) {
  const std::string base =
      R"({"schema_version":1,"profile":"dsa_rp_v1","instance":"k","problem":{"pools":[{"id":0,)"
      R"("name":"p","capacity":null,"reserved_ranges":[]}],"buffers":[{"id":0,"name":"a",)"
      R"("size":SIZE,"alignment":1,"live_intervals":[{"lower":0,"upper":1}],)"
      R"("allowed_pools":[0]}],"constraints":{"colocations":[],"separations":[],)"
      R"("temporal_exclusions":[],"pinned_allocations":[]},"objective":{)"
      R"("aggregation":"lexicographic","terms":["TERM"]}}})";
  auto with = [&](const std::string& size, const std::string& term) {
    std::string text = base;
    text.replace(text.find("SIZE"), 4, size);
    text.replace(text.find("TERM"), 4, term);
    return ParseDsaProblemJson(text, "k.json");
  };
  EXPECT_TRUE(with("32", "reuse_cost").ok());
  absl::Status negative = with("-1", "reuse_cost").status();
  EXPECT_THAT(negative.message(), HasSubstr("k.json: problem.buffers[0].size"));
  EXPECT_THAT(with("\"x\"", "reuse_cost").status().message(),
              HasSubstr("problem.buffers[0].size: expected an unsigned integer"));
  EXPECT_THAT(with("32", "peak").status().message(),
              HasSubstr("problem.objective.terms[0]: unknown value 'peak'"));
  EXPECT_THAT(ParseDsaProblemJson("{\"schema_version\":1,", "k.json").status().message(),
              HasSubstr("k.json: byte"));
  std::string unknown = base;
  unknown.replace(unknown.find("SIZE"), 4, "32, \"colour\": 1");
  unknown.replace(unknown.find("TERM"), 4, "reuse_cost");
  EXPECT_THAT(ParseDsaProblemJson(unknown, "k.json").status().message(),
              HasSubstr("problem.buffers[0]: unknown field 'colour'"));
  // A number beyond 64 bits is an error, not an exception (found by tools:dsa_json_fuzzer).
  EXPECT_THAT(ParseDsaProblemJson("{\"schema_version\": 6e897}", "k.json").status().message(),
              HasSubstr("k.json: invalid JSON"));
  EXPECT_THAT(ReadDsaProblemFile("/nonexistent/p.json").status().message(),
              HasSubstr("/nonexistent/p.json: cannot open"));
}

// problem.extensions: the known key is parsed and written back canonically; an unknown key is
// skipped with a warning but kept, so the text and the fingerprint do not depend on the reader.
TEST(DsaProblemTest, ExtensionsRoundTripAndUnknownOnesWarn) {
  const std::string text =
      R"({"schema_version":1,"profile":"dsa_rp_v1","instance":"k","problem":{"pools":[{"id":0,)"
      R"("name":"p","capacity":64,"reserved_ranges":[]}],"buffers":[{"id":0,"name":"a",)"
      R"("size":32,"alignment":1,"live_intervals":[{"lower":0,"upper":1}],"allowed_pools":[0]},)"
      R"({"id":1,"name":"b","size":16,"alignment":1,"live_intervals":[{"lower":1,"upper":2}],)"
      R"("allowed_pools":[0]}],"constraints":{"colocations":[],"separations":[],)"
      R"("temporal_exclusions":[],"pinned_allocations":[]},"objective":{)"
      R"("aggregation":"lexicographic","terms":["reuse_cost"]},"extensions":{)"
      R"("exact_or_disjoint":[{"first":1,"second":0}],"z_future":{"b":[1,2],"a":null}}}})";
  absl::StatusOr<DsaProblemDocument> document = ParseDsaProblemJson(text, "k.json");
  ASSERT_TRUE(document.ok()) << document.status();
  ASSERT_EQ(document->problem.extensions.exact_or_disjoint.size(), 1u);
  EXPECT_EQ(document->problem.extensions.exact_or_disjoint[0].first, 1u);
  EXPECT_EQ(document->problem.extensions.exact_or_disjoint[0].second, 0u);
  ASSERT_EQ(document->warnings.size(), 1u);
  EXPECT_THAT(document->warnings[0], HasSubstr("problem.extensions.z_future: unknown extension"));
  EXPECT_TRUE(ValidateDsaProblem(document->problem).empty());
  const std::string canonical = WriteDsaProblemJson(*document);
  EXPECT_THAT(canonical, HasSubstr("\"exact_or_disjoint\": [\n"));
  EXPECT_THAT(canonical, HasSubstr("\"z_future\": {\n"));
  absl::StatusOr<DsaProblemDocument> again = ParseDsaProblemJson(canonical, "k2.json");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(WriteDsaProblemJson(*again), canonical);
  EXPECT_EQ(DsaProblemFingerprint(*again), DsaProblemFingerprint(*document));
  // The pairs are part of the problem: dropping them changes the fingerprint; an empty
  // extensions object is written as none at all (the schema-v1 form).
  DsaProblemDocument without = *document;
  without.problem.extensions.exact_or_disjoint.clear();
  EXPECT_NE(DsaProblemFingerprint(without), DsaProblemFingerprint(*document));
  without.problem.extensions.unknown.clear();
  EXPECT_EQ(WriteDsaProblemJson(without).find("extensions"), std::string::npos);
  // Shape errors of the known key name its path.
  std::string bad = text;
  bad.replace(bad.find(R"("second":0)"), 10, R"("second":-4)");
  EXPECT_THAT(ParseDsaProblemJson(bad, "k.json").status().message(),
              HasSubstr("problem.extensions.exact_or_disjoint[0].second"));
  bad = text;
  bad.replace(bad.find(R"([{"first":1,"second":0}])"), 24, "7");
  EXPECT_THAT(ParseDsaProblemJson(bad, "k.json").status().message(),
              HasSubstr("problem.extensions.exact_or_disjoint: expected an array"));
}

TEST(DsaProblemTest, ExactOrDisjointPairsAreValidated) {
  DsaProblem problem;
  problem.pools = {{0, "Vec", 256, {}, std::nullopt}, {1, "Mat", 256, {}, std::nullopt}};
  problem.buffers = {{0, "a", 32, 32, {{0, 1}}, {0}},
                     {1, "b", 32, 32, {{1, 2}}, {0, 1}},
                     {2, "c", 32, 32, {{1, 2}}, {1}}};
  problem.objective.terms = {DsaObjectiveTerm::kReuseCost};
  problem.extensions.exact_or_disjoint = {{0, 1}, {1, 2}};
  EXPECT_TRUE(ValidateDsaProblem(problem).empty());
  problem.extensions.exact_or_disjoint = {{0, 9}, {1, 1}, {0, 2}, {1, 0}, {0, 1}};
  const std::vector<std::string> errors = ValidateDsaProblem(problem);
  EXPECT_THAT(errors,
              ::testing::ElementsAre(
                  "problem.extensions.exact_or_disjoint[0]: unknown buffer 9",
                  "problem.extensions.exact_or_disjoint[1]: buffer 1 paired with itself",
                  "problem.extensions.exact_or_disjoint[2]: buffers 0 and 2 have no allowed pool "
                  "in common",
                  "problem.extensions.exact_or_disjoint[4]: buffers 0 and 1 paired twice"));
}

TEST(DsaProblemTest, SemanticErrorsNameTheEntry) {
  DsaProblem problem;
  problem.pools.push_back({0, "Vec", 256, {{200, 300}}, std::nullopt});
  problem.buffers.push_back({0, "a", 0, 24, {{3, 3}}, {1}});
  problem.buffers.push_back({0, "b", 32, 32, {{0, 1}}, {0}});
  problem.constraints.colocations.push_back({0, 9});
  problem.constraints.pinned_allocations.push_back({0, 0, 16, false});
  const std::vector<std::string> errors = ValidateDsaProblem(problem);
  auto has = [&](const std::string& text) {
    for (const std::string& error : errors) {
      if (error.find(text) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(has("reserved range [200, 300) exceeds capacity 256"));
  EXPECT_TRUE(has("problem.buffers[0] (id 0): size 0"));
  EXPECT_TRUE(has("alignment 24 is not a power of two"));
  EXPECT_TRUE(has("live interval [3, 3) is empty"));
  EXPECT_TRUE(has("allowed pool 1 does not exist"));
  EXPECT_TRUE(has("problem.buffers[1] (id 0): duplicate buffer id"));
  EXPECT_TRUE(has("colocations[0]: unknown buffer 9"));
  EXPECT_TRUE(has("objective.terms: empty"));
}

// Two pools: buffers 10 and 12 in pool 1 (12 also allowed in 2), 11 in pool 2; a constraint of
// every kind between 10 and 12, and one across the pools that the pool view must drop.
DsaProblem TwoPools() {
  DsaProblem p;
  p.pools = {{1, "Vec", 4096, {{0, 64}}, std::nullopt}, {2, "Mat", std::nullopt, {}, std::nullopt}};
  p.buffers = {{10, "a", 128, 32, {{0, 4}}, {1}},
               {11, "b", 256, 32, {{0, 4}}, {2}},
               {12, "c", 64, 32, {{4, 8}}, {1, 2}}};
  p.constraints.separations = {{10, 12, {}}, {10, 11, {}}};
  p.constraints.temporal_exclusions = {{10, 12}};
  p.constraints.pinned_allocations = {{12, 1, 512, false}, {11, 2, 0, false}};
  p.cost_model.emplace();
  p.cost_model->reuse_penalties = {{10, 12, 3, DsaPenaltyReason::kCrossPipe},
                                   {11, 12, 5, DsaPenaltyReason::kCrossPipe}};
  p.objective.terms = {DsaObjectiveTerm::kReuseCost};
  p.extensions.exact_or_disjoint = {{12, 10}, {11, 12}};
  return p;
}

TEST(DsaProblemTest, PoolViewKeepsThePoolsBuffersAndTheirConstraints) {
  std::vector<uint32_t> ids;
  const DsaProblem sub = RestrictDsaProblemToPool(TwoPools(), 1, &ids);
  EXPECT_EQ(ids, (std::vector<uint32_t>{10, 12}));
  ASSERT_EQ(sub.pools.size(), 1u);
  EXPECT_EQ(sub.pools[0].capacity, std::optional<uint64_t>(4096));
  ASSERT_EQ(sub.buffers.size(), 2u);
  EXPECT_EQ(sub.buffers[1].id, 1u);
  EXPECT_EQ(sub.buffers[1].allowed_pools, (std::vector<uint32_t>{1}));
  ASSERT_EQ(sub.constraints.separations.size(), 1u);
  EXPECT_EQ(sub.constraints.separations[0].first, 0u);
  EXPECT_EQ(sub.constraints.separations[0].second, 1u);
  EXPECT_EQ(sub.constraints.temporal_exclusions.size(), 1u);
  ASSERT_EQ(sub.constraints.pinned_allocations.size(), 1u);
  EXPECT_EQ(sub.constraints.pinned_allocations[0].buffer, 1u);
  ASSERT_TRUE(sub.cost_model.has_value());
  ASSERT_EQ(sub.cost_model->reuse_penalties.size(), 1u);
  EXPECT_EQ(sub.cost_model->reuse_penalties[0].cost, 3u);
  ASSERT_EQ(sub.extensions.exact_or_disjoint.size(), 1u);  // 11 is in pool 2: 11-12 dropped.
  EXPECT_EQ(sub.extensions.exact_or_disjoint[0].first, 1u);
  EXPECT_EQ(sub.extensions.exact_or_disjoint[0].second, 0u);
  EXPECT_TRUE(ValidateDsaProblem(sub).empty());
}

// Costs and peaks count only the pool's buffers; a penalty is paid only where bytes overlap.
TEST(DsaProblemTest, PoolCostAndPeakCountOnlyThePool) {
  const DsaProblem p = TwoPools();
  // a at 64, b at 0 (pool 2), c at 128: a [64, 192) overlaps c [128, 192).
  EXPECT_EQ(DsaPoolReuseCost(p, 1, {64, 0, 128}), 3u);
  EXPECT_EQ(DsaPoolReuseCost(p, 1, {64, 0, 192}), 0u);  // adjacent, not overlapping
  EXPECT_EQ(DsaPoolReuseCost(p, 2, {0, 0, 0}), 0u);     // c is in pool 1
  EXPECT_EQ(DsaPoolPeak(p, 1, {64, 0, 192}), 256u);
  EXPECT_EQ(DsaPoolPeak(p, 1, {0, 0, 0}), 128u);  // above the reserved [0, 64)
  EXPECT_EQ(DsaPoolPeak(p, 2, {0, 1000, 0}), 1256u);
}

}  // namespace
}  // namespace policy
}  // namespace accelmem
