#include "core/host_allocator.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace tessera {
namespace {

void Free(const DataPtr& p) { p.deleter(p.data, p.deleter_context); }

TEST(HostAllocator, Returns64ByteAlignedWritableMemory) {
  HostAllocator& alloc = HostAllocator::Global();
  for (size_t n : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{1} << 20,
                   (size_t{1} << 20) + 1, size_t{10} << 20}) {
    absl::StatusOr<DataPtr> p = alloc.Allocate(Device(DeviceType::kCPU), n);
    ASSERT_TRUE(p.ok()) << n;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p->data) % 64, 0u) << n;
    std::memset(p->data, 0xab, n);
    Free(*p);
  }
}

TEST(HostAllocator, ReusesSmallBlocksAndTracksLiveBytes) {
  HostAllocator& alloc = HostAllocator::Global();
  const int64_t live_before = alloc.GetStats().live_bytes;
  DataPtr a = *alloc.Allocate(Device(DeviceType::kCPU), 100);
  EXPECT_EQ(alloc.GetStats().live_bytes, live_before + 128);
  void* first = a.data;
  Free(a);
  EXPECT_EQ(alloc.GetStats().live_bytes, live_before);
  const int64_t hits_before = alloc.GetStats().cache_hits;
  DataPtr b = *alloc.Allocate(Device(DeviceType::kCPU), 120);  // same 128-byte class
  EXPECT_EQ(b.data, first);
  EXPECT_EQ(alloc.GetStats().cache_hits, hits_before + 1);
  Free(b);
}

// Note [Large blocks]: a freed large block is kept and handed out again for a size of its class
// (an eighth of a power of two), from any thread; TESSERA_HOST_CACHE_MB=0 (tessera_core_test_
// no_large_cache) keeps none; under AddressSanitizer nothing is kept.
TEST(HostAllocator, KeepsLargeBlocksForReuse) {
  HostAllocator& alloc = HostAllocator::Global();
  const size_t four_mb = size_t{4} << 20;
  DataPtr a = *alloc.Allocate(Device(DeviceType::kCPU), four_mb);
  void* first = a.data;
  const int64_t kept_before = alloc.GetStats().large_cached_bytes;
  Free(a);
  const int64_t hits_before = alloc.GetStats().cache_hits;
  // Another size of the same class (4 MiB - 1000 rounds up to 4 MiB: classes step by 256 KiB
  // from 2 MiB), taken on another thread.
  DataPtr b;
  std::thread([&] { b = *alloc.Allocate(Device(DeviceType::kCPU), four_mb - 1000); }).join();
  if (HostAllocator::KeepsLargeBlocks()) {
    EXPECT_EQ(alloc.GetStats().large_cached_bytes, kept_before);
    EXPECT_EQ(b.data, first) << "the freed block, reused";
    EXPECT_EQ(alloc.GetStats().cache_hits, hits_before + 1);
  } else {
    EXPECT_EQ(alloc.GetStats().large_cached_bytes, 0);
    EXPECT_EQ(alloc.GetStats().cache_hits, hits_before);
  }
  std::memset(b.data, 0xcd, four_mb - 1000);
  Free(b);
  // A size of another class (4.5 MiB + 1 rounds up to 5 MiB) is not served by it.
  DataPtr c = *alloc.Allocate(Device(DeviceType::kCPU), four_mb + (size_t{1} << 19) + 1);
  EXPECT_NE(c.data, first);
  Free(c);
}

TEST(HostAllocator, KeepsNoMoreLargeBlocksThanItsBound) {
  HostAllocator& alloc = HostAllocator::Global();
  std::vector<DataPtr> blocks;
  for (int i = 0; i < 40; ++i) {  // 40 x 16 MiB: past the 256 MiB default
    blocks.push_back(*alloc.Allocate(Device(DeviceType::kCPU), size_t{16} << 20));
  }
  for (const DataPtr& p : blocks) Free(p);
  EXPECT_LE(alloc.GetStats().large_cached_bytes,
            static_cast<int64_t>(HostAllocator::kDefaultLargeCacheBytes));
  if (HostAllocator::KeepsLargeBlocks()) {
    EXPECT_GT(alloc.GetStats().large_cached_bytes, 0);
  }
}

TEST(HostAllocator, RejectsOtherDevicesAndImpossibleSizes) {
  HostAllocator& alloc = HostAllocator::Global();
  absl::StatusOr<DataPtr> p = alloc.Allocate(Device(DeviceType::kCUDA), 16);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  p = alloc.Allocate(Device(DeviceType::kCPU), size_t{1} << 62);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kResourceExhausted);
  p = alloc.Allocate(Device(DeviceType::kCPU), SIZE_MAX);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(HostAllocator, BlocksMayBeFreedOnAnotherThread) {
  HostAllocator& alloc = HostAllocator::Global();
  const int64_t live_before = alloc.GetStats().live_bytes;
  std::vector<DataPtr> blocks;
  for (int i = 0; i < 200; ++i)
    blocks.push_back(*alloc.Allocate(Device(DeviceType::kCPU), 64 * (i % 7 + 1)));
  std::thread([&] {
    for (const DataPtr& p : blocks) Free(p);
  }).join();  // the thread's cache is released when it exits
  EXPECT_EQ(alloc.GetStats().live_bytes, live_before);
}

}  // namespace
}  // namespace tessera
