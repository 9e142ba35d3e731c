// Proves the system protobuf and protoc are wired: a generated message serializes and parses.
#include <string>

#include "gtest/gtest.h"
#include "tools/deps_check/sample.pb.h"

namespace {

// A message survives SerializeToString / ParseFromString unchanged.
TEST(ProtobufRoundTripTest, SerializeThenParse) {
  accelmem::deps_check::Sample sample;
  sample.set_name("tile");
  sample.add_values(-1);
  sample.add_values(1LL << 40);
  std::string wire;
  ASSERT_TRUE(sample.SerializeToString(&wire));
  accelmem::deps_check::Sample parsed;
  ASSERT_TRUE(parsed.ParseFromString(wire));
  EXPECT_EQ(parsed.name(), "tile");
  ASSERT_EQ(parsed.values_size(), 2);
  EXPECT_EQ(parsed.values(1), 1LL << 40);
  EXPECT_FALSE(parsed.ParseFromString("\xff\xff\xff"));
}

}  // namespace
