#include "policy/place_csv.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace accelmem {
namespace policy {
namespace {

using ::testing::HasSubstr;

std::string ErrorOf(absl::string_view text) {
  auto parsed = ParseInstanceCsv(text, "in.csv");
  return parsed.ok() ? "ok" : std::string(parsed.status().message());
}

// A well-formed instance parses in file order, ids kept as text.
TEST(ParseInstanceCsvTest, ParsesBuffers) {
  auto parsed = ParseInstanceCsv("id,lower,upper,size\nb1,0,3,4\n7,3,9,16\n", "in.csv");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_EQ((*parsed)[0].id, "b1");
  EXPECT_EQ((*parsed)[1].id, "7");
  EXPECT_EQ((*parsed)[1].start, 3);
  EXPECT_EQ((*parsed)[1].end, 9);
  EXPECT_EQ((*parsed)[1].size, 16);
}

// Columns may come in any order, extra columns are ignored, CRLF and blank lines are fine.
TEST(ParseInstanceCsvTest, AcceptsReorderedAndExtraColumns) {
  auto parsed = ParseInstanceCsv("size, upper,lower,id,alignment\r\n\r\n8,5,1,x,4\r\n", "in.csv");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->size(), 1u);
  EXPECT_EQ((*parsed)[0].id, "x");
  EXPECT_EQ((*parsed)[0].start, 1);
  EXPECT_EQ((*parsed)[0].end, 5);
  EXPECT_EQ((*parsed)[0].size, 8);
}

// Every malformed input gets a file:line: error: message saying what is wrong.
TEST(ParseInstanceCsvTest, ReportsFileLineErrors) {
  EXPECT_THAT(ErrorOf(""), HasSubstr("in.csv:1: error: empty file"));
  EXPECT_THAT(ErrorOf("id,lower,size\n"),
              HasSubstr("in.csv:1: error: header has no column 'upper'"));
  EXPECT_THAT(ErrorOf("id,lower,upper,size\na,0,1\n"),
              HasSubstr("in.csv:2: error: expected 4 fields, got 3"));
  EXPECT_THAT(ErrorOf("id,lower,upper,size\na,0,1,4\n\nb,0,x,4\n"),
              HasSubstr("in.csv:4: error: upper 'x' is not an integer"));
  EXPECT_THAT(ErrorOf("id,lower,upper,size\na,0,1,99999999999999999999\n"),
              HasSubstr("in.csv:2: error: size '99999999999999999999' is not an integer"));
  EXPECT_THAT(ErrorOf("id,lower,upper,size\na,5,1,4\n"),
              HasSubstr("in.csv:2: error: buffer 'a': lower 5 is greater than upper 1"));
  EXPECT_THAT(ErrorOf("id,lower,upper,size\na,0,1,-4\n"),
              HasSubstr("in.csv:2: error: buffer 'a': negative size -4"));
  EXPECT_THAT(ErrorOf("id,lower,upper,size\na,0,1,4\na,1,2,4\n"),
              HasSubstr("in.csv:3: error: duplicate id 'a' (first on line 2)"));
  EXPECT_THAT(ErrorOf("id,lower,upper,size\n,0,1,4\n"), HasSubstr("in.csv:2: error: empty id"));
  EXPECT_THAT(ErrorOf("id,id,lower,upper,size\n"), HasSubstr("column 'id' appears twice"));
}

// A placement maps ids back to instance order; the formatter writes the same format.
TEST(PlacementCsvTest, RoundTrips) {
  auto instance = ParseInstanceCsv("id,lower,upper,size\na,0,3,4\nb,0,3,4\n", "in.csv");
  ASSERT_TRUE(instance.ok());
  const std::string text = FormatPlacementCsv(*instance, {4, 0});
  EXPECT_EQ(text, "id,offset\na,4\nb,0\n");
  auto offsets = ParsePlacementCsv("offset,id\n0,b\n4,a\n", "p.csv", *instance);
  ASSERT_TRUE(offsets.ok()) << offsets.status();
  EXPECT_EQ(*offsets, (std::vector<int64_t>{4, 0}));
}

// Unknown, duplicate and missing ids and bad offsets are placement errors with a line.
TEST(PlacementCsvTest, ReportsFileLineErrors) {
  auto instance = ParseInstanceCsv("id,lower,upper,size\na,0,3,4\nb,0,3,4\n", "in.csv");
  ASSERT_TRUE(instance.ok());
  auto error = [&](absl::string_view text) {
    auto parsed = ParsePlacementCsv(text, "p.csv", *instance);
    return parsed.ok() ? std::string("ok") : std::string(parsed.status().message());
  };
  EXPECT_THAT(error("id,offset\na,0\nc,4\n"), HasSubstr("p.csv:3: error: id 'c' is not in"));
  EXPECT_THAT(error("id,offset\na,0\na,4\n"), HasSubstr("p.csv:3: error: duplicate id 'a'"));
  EXPECT_THAT(error("id,offset\na,0\n"), HasSubstr("p.csv:2: error: no offset for buffer 'b'"));
  EXPECT_THAT(error("id,offset\na,zero\nb,4\n"), HasSubstr("p.csv:2: error: offset 'zero'"));
  EXPECT_THAT(error("id,where\n"), HasSubstr("p.csv:1: error: header has no column 'offset'"));
}

// A missing file is reported by path.
TEST(ReadTextFileTest, MissingFile) {
  auto text = ReadTextFile("/nonexistent/instance.csv");
  ASSERT_FALSE(text.ok());
  EXPECT_THAT(text.status().message(), HasSubstr("/nonexistent/instance.csv: error:"));
}

}  // namespace
}  // namespace policy
}  // namespace accelmem
