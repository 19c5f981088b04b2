#include "core/host_allocator.h"

#include <cstdint>
#include <cstring>
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
