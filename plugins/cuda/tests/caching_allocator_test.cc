// The GPU caching allocator's bookkeeping (Note [GPU caching allocator]) over a fake device:
// size classes, per-stream pools, record_stream's events, out-of-memory retries, statistics,
// empty_cache and the direct mode.
#include "caching_allocator.h"

#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace gpu {
namespace {

using ::testing::HasSubstr;

// A fake device: memory from the host heap, a capacity, events that complete when told.
class FakeDevice final : public BackingAllocator {
 public:
  size_t capacity = size_t{1} << 30;
  size_t used = 0;
  int mallocs = 0, frees = 0;
  std::map<void*, size_t> blocks;
  std::map<void*, bool> events;     // event -> done
  std::vector<void*> synchronized;  // streams SynchronizeStream waited for

  // The allocator keeps its blocks for the process (as on a GPU); the fake device owns them.
  ~FakeDevice() override {
    for (const auto& [block, size] : blocks) std::free(block);
    for (const auto& [event, done] : events) delete static_cast<char*>(event);
  }

  void* Malloc(size_t nbytes, bool* oom, std::string* error) override {
    if (used + nbytes > capacity) {
      *oom = true;
      *error = "fakeErrorMemoryAllocation: out of memory";
      return nullptr;
    }
    void* p = std::malloc(nbytes);
    blocks[p] = nbytes;
    used += nbytes;
    ++mallocs;
    return p;
  }
  void Free(void* ptr) override {
    used -= blocks.at(ptr);
    blocks.erase(ptr);
    std::free(ptr);
    ++frees;
  }
  void* RecordEvent(void* stream) override {
    void* e = new char;
    events[e] = false;
    recorded_on[e] = stream;
    return e;
  }
  bool EventDone(void* event) override { return events.at(event); }
  void DestroyEvent(void* event) override {
    events.erase(event);
    recorded_on.erase(event);
    delete static_cast<char*>(event);
  }
  // A synchronized stream has run its work: its events are done.
  void SynchronizeStream(void* stream) override {
    synchronized.push_back(stream);
    Finish(stream);
  }

  // Complete every event recorded on `stream`.
  void Finish(void* stream) {
    for (auto& [event, done] : events) {
      if (recorded_on[event] == stream) done = true;
    }
  }
  std::map<void*, void*> recorded_on;
};

void* const kStreamA = reinterpret_cast<void*>(0x1000);
void* const kStreamB = reinterpret_cast<void*>(0x2000);

void* Alloc(CachingAllocator& a, size_t n, void* stream) {
  bool oom = false;
  std::string error;
  void* p = a.Allocate(n, stream, &oom, &error);
  EXPECT_NE(p, nullptr) << error;
  return p;
}

TEST(CachingAllocator, RoundsUpToFourSizeClassesPerPowerOfTwo) {
  EXPECT_EQ(CachingAllocator::RoundSize(0), 0u);
  EXPECT_EQ(CachingAllocator::RoundSize(1), 512u);
  EXPECT_EQ(CachingAllocator::RoundSize(512), 512u);
  EXPECT_EQ(CachingAllocator::RoundSize(513), 1024u);
  EXPECT_EQ(CachingAllocator::RoundSize(1025), 1536u);
  EXPECT_EQ(CachingAllocator::RoundSize(4097), 5120u);
  EXPECT_EQ(CachingAllocator::RoundSize(size_t{1} << 20), size_t{1} << 20);
  EXPECT_EQ(CachingAllocator::RoundSize((size_t{1} << 20) + 1), (size_t{5} << 18));
  EXPECT_EQ(CachingAllocator::RoundSize(size_t{3} << 30), size_t{3} << 30);
  EXPECT_EQ(CachingAllocator::RoundSize(SIZE_MAX), 0u);  // no device has that
  // Every request fits its class, and the class wastes at most a fifth of itself.
  for (size_t n = 1; n < (size_t{1} << 22); n = n * 3 / 2 + 7) {
    const size_t r = CachingAllocator::RoundSize(n);
    ASSERT_GE(r, n);
    if (n > 2048) {
      ASSERT_LE(r - n, r / 5) << n;
    }
    ASSERT_EQ(CachingAllocator::RoundSize(r), r) << n;  // a class is its own class
  }
}

TEST(CachingAllocator, ReusesAFreedBlockOnItsStreamWithoutAskingTheDevice) {
  FakeDevice device;
  CachingAllocator a(&device, CachingAllocator::Mode::kCaching);
  void* p = Alloc(a, 1000, kStreamA);
  EXPECT_TRUE(a.Free(p));
  EXPECT_EQ(Alloc(a, 900, kStreamA), p);  // the same class, the same stream
  EXPECT_EQ(device.mallocs, 1);
  void* q = Alloc(a, 1000, kStreamB);  // another stream's pool is empty
  EXPECT_NE(q, p);
  EXPECT_EQ(device.mallocs, 2);
  void* big = Alloc(a, 5000, kStreamA);  // another class
  EXPECT_EQ(device.mallocs, 3);
  a.Free(big);
  const tsr_memory_stats s = a.Stats();
  EXPECT_EQ(s.allocations, 4u);
  EXPECT_EQ(s.cache_hits, 1u);
  EXPECT_EQ(s.device_allocations, 3u);
  EXPECT_EQ(s.allocated_bytes, 2 * 1024u);
  EXPECT_EQ(s.reserved_bytes, 2 * 1024u + 5120u);
  EXPECT_EQ(s.peak_allocated_bytes, 2 * 1024u + 5120u);
  EXPECT_EQ(s.struct_size, sizeof(tsr_memory_stats));
}

TEST(CachingAllocator, ZeroBytesAndUnknownPointers) {
  FakeDevice device;
  CachingAllocator a(&device, CachingAllocator::Mode::kCaching);
  bool oom = true;
  std::string error;
  EXPECT_EQ(a.Allocate(0, kStreamA, &oom, &error), nullptr);
  EXPECT_FALSE(oom);
  EXPECT_TRUE(error.empty());
  EXPECT_TRUE(a.Free(nullptr));
  int not_ours;
  EXPECT_FALSE(a.Free(&not_ours));
  EXPECT_FALSE(a.RecordStream(&not_ours, kStreamB));
  EXPECT_EQ(device.mallocs, 0);
  EXPECT_EQ(a.Allocate(SIZE_MAX, kStreamA, &oom, &error), nullptr);
  EXPECT_TRUE(oom);
  EXPECT_THAT(error, HasSubstr("larger than any device"));
}

TEST(CachingAllocator, ARecordedBlockWaitsForItsStreamsBeforeReuse) {
  FakeDevice device;
  CachingAllocator a(&device, CachingAllocator::Mode::kCaching);
  void* p = Alloc(a, 2048, kStreamA);
  EXPECT_TRUE(a.RecordStream(p, kStreamB));
  EXPECT_TRUE(a.RecordStream(p, kStreamB));  // once is enough
  EXPECT_TRUE(a.RecordStream(p, kStreamA));  // its own stream: nothing to wait for
  a.Free(p);
  EXPECT_EQ(device.events.size(), 1u);  // one event, on stream B
  void* q = Alloc(a, 2048, kStreamA);
  EXPECT_NE(q, p);  // B may still be using p
  EXPECT_EQ(a.Stats().reserved_bytes, 2 * 2048u);
  device.Finish(kStreamB);
  a.Free(q);
  void* r = Alloc(a, 2048, kStreamA);  // the events are checked: p is back in A's pool
  EXPECT_TRUE(r == p || r == q);
  void* s = Alloc(a, 2048, kStreamA);
  EXPECT_TRUE((s == p || s == q) && s != r);
  EXPECT_TRUE(device.events.empty());  // destroyed once done
  EXPECT_EQ(device.mallocs, 2);
}

TEST(CachingAllocator, OutOfMemoryGivesTheCacheBackAndRetriesOnce) {
  FakeDevice device;
  device.capacity = 3000;
  CachingAllocator a(&device, CachingAllocator::Mode::kCaching);
  void* p = Alloc(a, 2048, kStreamA);
  a.Free(p);                           // cached: the device has 952 bytes left
  void* q = Alloc(a, 2048, kStreamB);  // another stream: needs the cached block's memory
  EXPECT_NE(q, nullptr);
  EXPECT_EQ(device.frees, 1);
  bool oom = false;
  std::string error;
  EXPECT_EQ(a.Allocate(2048, kStreamB, &oom, &error), nullptr);
  EXPECT_TRUE(oom);
  EXPECT_THAT(error, HasSubstr("allocating 2048 bytes (a block of 2048): "
                               "fakeErrorMemoryAllocation: out of memory"));
  EXPECT_THAT(error, HasSubstr("2048 bytes allocated"));
  EXPECT_EQ(a.Stats().device_frees, 1u);
}

// The ladder's second step: a block freed while recorded on a busy stream waits on its event;
// when the device is out of memory, the allocator waits for that stream and gives the block
// back rather than fail.
TEST(CachingAllocator, OutOfMemoryWaitsForTheStreamsOfFreedRecordedBlocks) {
  FakeDevice device;
  device.capacity = 3000;
  CachingAllocator a(&device, CachingAllocator::Mode::kCaching);
  void* p = Alloc(a, 2048, kStreamA);
  a.RecordStream(p, kStreamB);
  a.Free(p);  // waits for stream B's event, which is not done
  void* q = Alloc(a, 2048, kStreamB);
  EXPECT_NE(q, nullptr);
  EXPECT_EQ(device.synchronized, std::vector<void*>{kStreamB});
  EXPECT_EQ(device.frees, 1);
  EXPECT_TRUE(device.events.empty());
  EXPECT_EQ(a.Stats().reserved_bytes, 2048u);
  a.Free(q);
}

TEST(CachingAllocator, EmptyCacheGivesBackWhatNoStreamStillUses) {
  FakeDevice device;
  CachingAllocator a(&device, CachingAllocator::Mode::kCaching);
  void* p = Alloc(a, 1000, kStreamA);
  void* q = Alloc(a, 1000, kStreamA);
  void* live = Alloc(a, 1000, kStreamA);
  a.RecordStream(q, kStreamB);
  a.Free(p);
  a.Free(q);
  a.EmptyCache();
  EXPECT_EQ(device.frees, 1);  // p; q waits for stream B
  EXPECT_EQ(a.Stats().reserved_bytes, 2 * 1024u);
  device.Finish(kStreamB);
  a.EmptyCache();
  EXPECT_EQ(device.frees, 2);
  EXPECT_EQ(a.Stats().reserved_bytes, a.Stats().allocated_bytes);
  EXPECT_EQ(a.Stats().device_frees, 2u);
  a.Free(live);
}

TEST(CachingAllocator, DirectModeAsksTheDeviceEveryTimeAndWaitsForRecordedStreams) {
  FakeDevice device;
  CachingAllocator a(&device, CachingAllocator::Mode::kDirect);
  void* p = Alloc(a, 1000, kStreamA);
  EXPECT_EQ(device.blocks.at(p), 1000u);  // no size class
  a.RecordStream(p, kStreamB);
  a.Free(p);
  EXPECT_EQ(device.frees, 1);
  EXPECT_EQ(device.synchronized, std::vector<void*>{kStreamB});
  Alloc(a, 1000, kStreamA);
  EXPECT_EQ(device.mallocs, 2);
  EXPECT_EQ(a.Stats().cache_hits, 0u);
}

TEST(CachingAllocator, ReadsItsModeFromTheEnvironment) {
  CachingAllocator::Mode mode;
  std::string error;
  unsetenv("TESSERA_GPU_ALLOCATOR");
  ASSERT_TRUE(CachingAllocator::ModeFromEnvironment(&mode, &error));
  EXPECT_EQ(mode, CachingAllocator::Mode::kCaching);
  setenv("TESSERA_GPU_ALLOCATOR", "direct", 1);
  ASSERT_TRUE(CachingAllocator::ModeFromEnvironment(&mode, &error));
  EXPECT_EQ(mode, CachingAllocator::Mode::kDirect);
  setenv("TESSERA_GPU_ALLOCATOR", "caching", 1);
  ASSERT_TRUE(CachingAllocator::ModeFromEnvironment(&mode, &error));
  EXPECT_EQ(mode, CachingAllocator::Mode::kCaching);
  setenv("TESSERA_GPU_ALLOCATOR", "bump", 1);
  EXPECT_FALSE(CachingAllocator::ModeFromEnvironment(&mode, &error));
  EXPECT_EQ(error, "TESSERA_GPU_ALLOCATOR is 'bump'; expected 'caching' (the default) or 'direct'");
  unsetenv("TESSERA_GPU_ALLOCATOR");
}

}  // namespace
}  // namespace gpu
}  // namespace tessera
