#include "sparse_runtime/device/runtime_memory.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace accelmem {
namespace sparse_runtime {
namespace {

// The preallocated bump pool honours alignment and counts requested bytes.
TEST(RuntimeMemoryTest, PreallocatedAllocationsAreAligned) {
  alignas(64) static u8 buffer[4096];
  RuntimeMemory memory;
  runtime_memory_init_preallocated(&memory, buffer, sizeof(buffer));
  Ptr a = allocate_aligned(&memory, 3, 1, true);
  Ptr b = allocate_aligned(&memory, 100, 256, true);
  Ptr c = allocate_aligned(&memory, 8, 8, false);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 256, 0u);
  EXPECT_GE(b, a + 3);
  EXPECT_GE(c, b + 100);
  EXPECT_EQ(memory.total_requested_memory, 103u);
  EXPECT_EQ(runtime_error_code(&memory), kRuntimeOk);
}

// Exhausting the pool returns null and records an out-of-memory error, without crashing.
TEST(RuntimeMemoryTest, ExhaustionIsAnError) {
  alignas(64) static u8 buffer[256];
  RuntimeMemory memory;
  runtime_memory_init_preallocated(&memory, buffer, sizeof(buffer));
  EXPECT_NE(allocate_aligned(&memory, 200, 8, true), nullptr);
  EXPECT_EQ(allocate_aligned(&memory, 100, 8, true), nullptr);
  EXPECT_EQ(runtime_error_code(&memory), kErrorOutOfMemory);
  EXPECT_NE(std::string(memory.error_message).find("out of runtime memory"), std::string::npos);
  EXPECT_NE(std::string(memory.error_message).find("100"), std::string::npos);
}

// The first error wins; reset clears it.
TEST(RuntimeMemoryTest, FirstErrorWinsUntilReset) {
  RuntimeMemory memory;
  runtime_memory_init_host(&memory, nullptr, nullptr);
  report_error(&memory, kErrorOutOfChunks, "first", 7);
  report_error(&memory, kErrorPtrNotFound, "second");
  EXPECT_EQ(runtime_error_code(&memory), kErrorOutOfChunks);
  EXPECT_STREQ(memory.error_message, "first: 7");
  runtime_reset_error(&memory);
  EXPECT_EQ(runtime_error_code(&memory), kRuntimeOk);
  report_error(&memory, kErrorPtrNotFound, "second");
  EXPECT_STREQ(memory.error_message, "second");
}

// Long messages are truncated to the buffer, still NUL-terminated.
TEST(RuntimeMemoryTest, LongMessagesAreTruncated) {
  RuntimeMemory memory;
  runtime_memory_init_host(&memory, nullptr, nullptr);
  std::string long_message(1000, 'x');
  report_error(&memory, kErrorInvalidArgument, long_message.c_str(), 12345);
  EXPECT_EQ(std::strlen(memory.error_message), static_cast<size_t>(kErrorMessageCapacity - 1));
}

// Host mode forwards to the callback with size and alignment; a non-power-of-two alignment is
// rejected.
TEST(RuntimeMemoryTest, HostCallbackReceivesRequest) {
  struct Recorder {
    std::vector<std::pair<u64, u64>> calls;
    alignas(4096) u8 storage[8192];
  };
  static Recorder recorder;
  RuntimeMemory memory;
  runtime_memory_init_host(
      &memory,
      [](void* pool, u64 size, u64 alignment) -> void* {
        auto* r = static_cast<Recorder*>(pool);
        r->calls.emplace_back(size, alignment);
        return r->storage;
      },
      &recorder);
  EXPECT_EQ(allocate_aligned(&memory, 64, 4096, true), recorder.storage);
  ASSERT_EQ(recorder.calls.size(), 1u);
  EXPECT_EQ(recorder.calls[0], std::make_pair(u64{64}, u64{4096}));
  EXPECT_EQ(allocate_aligned(&memory, 64, 12, true), nullptr);
  EXPECT_EQ(runtime_error_code(&memory), kErrorInvalidArgument);
}

// The routing callback's record, per thread (null: the shared slot).
thread_local RuntimeErrorRecord* tls_test_record = nullptr;
RuntimeErrorRecord* TestRoute(const RuntimeMemory*) { return tls_test_record; }

// With a routing callback, errors go to the record it returns for the calling thread (first one
// wins there) and the shared slot stays clear; without a record they go to the shared slot.
TEST(RuntimeMemoryTest, ErrorsGoToTheRoutedRecord) {
  alignas(64) static u8 buffer[256];
  RuntimeMemory memory;
  runtime_memory_init_preallocated(&memory, buffer, sizeof(buffer));
  memory.error_record = &TestRoute;
  RuntimeErrorRecord mine = {};
  tls_test_record = &mine;
  EXPECT_EQ(allocate_aligned(&memory, 1000, 8, true), nullptr);
  report_error(&memory, kErrorDynamicOverflow, "second");
  EXPECT_EQ(error_record_code(&mine), kErrorOutOfMemory);
  EXPECT_NE(std::string(mine.message).find("out of runtime memory"), std::string::npos);
  EXPECT_EQ(runtime_error_code(&memory), kRuntimeOk);
  tls_test_record = nullptr;
  report_error(&memory, kErrorDynamicOverflow, "shared", 3);
  EXPECT_EQ(runtime_error_code(&memory), kErrorDynamicOverflow);
  EXPECT_EQ(std::string(memory.error_message), "shared: 3");
  EXPECT_EQ(error_record_code(&mine), kErrorOutOfMemory);
  error_record_reset(&mine);
  EXPECT_EQ(error_record_code(&mine), kRuntimeOk);
  EXPECT_EQ(mine.message[0], '\0');
}

}  // namespace
}  // namespace sparse_runtime
}  // namespace accelmem
