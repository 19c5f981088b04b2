// The GPU caching allocator's bookkeeping (Note [GPU caching allocator]) over a fake device:
// segments, splitting, merging, best fit, per-stream pools, record_stream's events,
// out-of-memory retries, statistics, empty_cache and the direct mode.
#include "caching_allocator.h"

#include <cstdlib>
#include <iterator>
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

constexpr size_t kMiB = size_t{1} << 20;

TEST(CachingAllocator, RoundsToMultiplesOf512AndPicksSegmentsByPool) {
  EXPECT_EQ(CachingAllocator::RoundSize(0), 0u);
  EXPECT_EQ(CachingAllocator::RoundSize(1), 512u);
  EXPECT_EQ(CachingAllocator::RoundSize(512), 512u);
  EXPECT_EQ(CachingAllocator::RoundSize(513), 1024u);
  EXPECT_EQ(CachingAllocator::RoundSize(4097), 4608u);
  EXPECT_EQ(CachingAllocator::RoundSize(SIZE_MAX), 0u);     // no device has that
  EXPECT_EQ(CachingAllocator::SegmentSize(512), 2 * kMiB);  // the small pool
  EXPECT_EQ(CachingAllocator::SegmentSize(kMiB), 2 * kMiB);
  EXPECT_EQ(CachingAllocator::SegmentSize(kMiB + 512), 20 * kMiB);  // the large pool
  EXPECT_EQ(CachingAllocator::SegmentSize(10 * kMiB - 512), 20 * kMiB);
  EXPECT_EQ(CachingAllocator::SegmentSize(10 * kMiB), 10 * kMiB);  // its own segment
  EXPECT_EQ(CachingAllocator::SegmentSize(11 * kMiB + 512), 12 * kMiB);
  EXPECT_EQ(CachingAllocator::SegmentSize(SIZE_MAX / 2 + 1), 0u);
}

TEST(CachingAllocator, SmallRequestsAreCutFromOneSegment) {
  FakeDevice device;
  CachingAllocator a(&device, CachingAllocator::Mode::kCaching);
  char* p = static_cast<char*>(Alloc(a, 1000, kStreamA));
  char* q = static_cast<char*>(Alloc(a, 3000, kStreamA));
  char* r = static_cast<char*>(Alloc(a, 100, kStreamA));
  ASSERT_EQ(device.mallocs, 1);
  EXPECT_EQ(device.blocks.begin()->second, 2 * kMiB);
  // Consecutive pieces of the one segment, each a multiple of 512 bytes from its start.
  EXPECT_EQ(p, device.blocks.begin()->first);
  EXPECT_EQ(q, p + 1024);
  EXPECT_EQ(r, q + 3072);
  const tsr_memory_stats s = a.Stats();
  EXPECT_EQ(s.allocations, 3u);
  EXPECT_EQ(s.cache_hits, 2u);  // q and r: cut from the segment p's request brought
  EXPECT_EQ(s.device_allocations, 1u);
  EXPECT_EQ(s.allocated_bytes, 1024u + 3072u + 512u);
  EXPECT_EQ(s.reserved_bytes, 2 * kMiB);
  EXPECT_EQ(s.struct_size, sizeof(tsr_memory_stats));
  a.Free(p);
  a.Free(q);
  a.Free(r);
}

TEST(CachingAllocator, ReusesAFreedBlockOnItsStreamWithoutAskingTheDevice) {
  FakeDevice device;
  CachingAllocator a(&device, CachingAllocator::Mode::kCaching);
  void* p = Alloc(a, 1000, kStreamA);
  void* keep = Alloc(a, 1000, kStreamA);  // after p: p's block cannot merge forward
  EXPECT_TRUE(a.Free(p));
  EXPECT_EQ(Alloc(a, 900, kStreamA), p);  // the smallest free block that fits: p's
  EXPECT_EQ(device.mallocs, 1);
  void* q = Alloc(a, 1000, kStreamB);  // another stream's pool is empty
  EXPECT_EQ(device.mallocs, 2);
  EXPECT_EQ(device.blocks.count(q), 1u);  // the start of a segment of its own
  a.Free(q);
  a.Free(keep);
  EXPECT_EQ(a.Stats().peak_allocated_bytes, 3 * 1024u);
}

TEST(CachingAllocator, FreedNeighboursMergeAndServeALargerRequest) {
  FakeDevice device;
  CachingAllocator a(&device, CachingAllocator::Mode::kCaching);
  char* p = static_cast<char*>(Alloc(a, 1024, kStreamA));
  char* q = static_cast<char*>(Alloc(a, 4096, kStreamA));
  char* r = static_cast<char*>(Alloc(a, 2048, kStreamA));
  char* s = static_cast<char*>(Alloc(a, 1024, kStreamA));  // holds the segment's tail apart
  a.Free(q);
  a.Free(p);  // merges with q's block after it
  a.Free(r);  // and with the merged block before it: 7 KiB at p
  EXPECT_EQ(Alloc(a, 7 * 1024, kStreamA), p);
  EXPECT_EQ(device.mallocs, 1);
  a.Free(p);
  a.Free(s);  // the whole segment is one free block again
  a.EmptyCache();
  EXPECT_EQ(device.frees, 1);
  EXPECT_EQ(a.Stats().reserved_bytes, 0u);
  EXPECT_EQ(device.used, 0u);
}

TEST(CachingAllocator, TakesTheSmallestFreeBlockThatFits) {
  FakeDevice device;
  CachingAllocator a(&device, CachingAllocator::Mode::kCaching);
  std::vector<void*> blocks;
  for (size_t n : {8192, 512, 2048, 512, 4096, 512}) blocks.push_back(Alloc(a, n, kStreamA));
  a.Free(blocks[0]);  // free: 8 KiB, 2 KiB and 4 KiB, each between live blocks
  a.Free(blocks[2]);
  a.Free(blocks[4]);
  EXPECT_EQ(Alloc(a, 1500, kStreamA), blocks[2]);            // 1.5 KiB cut, 512 bytes left free
  EXPECT_EQ(Alloc(a, 3000, kStreamA), blocks[4]);            // 3 KiB cut, 1 KiB left free
  char* cut = static_cast<char*>(Alloc(a, 5000, kStreamA));  // only the 8 KiB block holds it
  EXPECT_EQ(cut, blocks[0]);
  EXPECT_EQ(Alloc(a, 3072, kStreamA), cut + 5120);  // the rest of it, not the segment's tail
  EXPECT_EQ(device.mallocs, 1);
}

TEST(CachingAllocator, LargeRequestsShareLargeSegmentsAndKeepSmallRestsWhole) {
  FakeDevice device;
  CachingAllocator a(&device, CachingAllocator::Mode::kCaching);
  char* p = static_cast<char*>(Alloc(a, 5 * kMiB, kStreamA));
  char* q = static_cast<char*>(Alloc(a, 5 * kMiB, kStreamA));
  EXPECT_EQ(q, p + 5 * kMiB);  // the same 20 MiB segment
  EXPECT_EQ(device.mallocs, 1);
  void* small = Alloc(a, 4096, kStreamA);  // never cut from a large segment
  EXPECT_EQ(device.mallocs, 2);
  EXPECT_EQ(device.blocks.at(small), 2 * kMiB);
  // 9.5 MiB of the 10 MiB left: a rest of 0.5 MiB is no large block, so it is not split off.
  char* r = static_cast<char*>(Alloc(a, 9 * kMiB + kMiB / 2, kStreamA));
  EXPECT_EQ(r, q + 5 * kMiB);
  EXPECT_EQ(a.Stats().allocated_bytes, 20 * kMiB + 4096);
  void* big = Alloc(a, 33 * kMiB, kStreamA);  // a segment of its own, rounded to 2 MiB
  EXPECT_EQ(device.blocks.at(big), 34 * kMiB);
  for (void* b :
       {static_cast<void*>(p), static_cast<void*>(q), static_cast<void*>(r), small, big}) {
    a.Free(b);
  }
  a.EmptyCache();
  EXPECT_EQ(device.used, 0u);
}

// A model replayed at varying shapes: the first (largest) run's segments serve every later
// run, whose tensors are cut at other sizes and boundaries, without a device allocation.
TEST(CachingAllocator, VaryingShapesReuseTheFirstRunsSegments) {
  FakeDevice device;
  CachingAllocator a(&device, CachingAllocator::Mode::kCaching);
  int mallocs_after_first = -1;
  for (size_t sequence : {128, 96, 17, 128, 64, 100, 3}) {
    std::vector<void*> live;
    for (size_t layer = 0; layer < 6; ++layer) {
      live.push_back(Alloc(a, sequence * 768 * 4, kStreamA));            // activations
      live.push_back(Alloc(a, sequence * 3072 * 4, kStreamA));           // the feed-forward's
      live.push_back(Alloc(a, 12 * sequence * sequence * 4, kStreamA));  // attention scores
      a.Free(live[live.size() - 2]);
    }
    for (void* p : live) a.Free(p);
    if (mallocs_after_first < 0) mallocs_after_first = device.mallocs;
  }
  EXPECT_EQ(device.mallocs, mallocs_after_first);
  EXPECT_EQ(a.Stats().allocated_bytes, 0u);
  a.EmptyCache();
  EXPECT_EQ(device.used, 0u);
}

// Random allocations and frees on two streams: live blocks never overlap and stay inside the
// device's segments, the statistics add up, and once everything is freed every segment merges
// back into one block and is given back.
TEST(CachingAllocator, RandomTrafficKeepsBlocksApartAndMergesBackWhole) {
  FakeDevice device;
  CachingAllocator a(&device, CachingAllocator::Mode::kCaching);
  std::map<char*, size_t> live;  // pointer -> requested bytes
  uint64_t state = 12345;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  for (int step = 0; step < 4000; ++step) {
    if (live.empty() || (live.size() < 64 && next() % 2 == 0)) {
      const size_t n = next() % 4 == 0 ? 1 + next() % (24 * kMiB) : 1 + next() % 70000;
      void* stream = next() % 2 ? kStreamA : kStreamB;
      char* p = static_cast<char*>(Alloc(a, n, stream));
      ASSERT_NE(p, nullptr);
      auto after = live.lower_bound(p);
      if (after != live.end()) {
        ASSERT_LE(p + n, after->first) << step;
      }
      if (after != live.begin()) {
        auto before = std::prev(after);
        ASSERT_LE(before->first + before->second, p) << step;
      }
      auto seg = device.blocks.upper_bound(p);
      ASSERT_NE(seg, device.blocks.begin());
      --seg;
      ASSERT_LE(p + n, static_cast<char*>(seg->first) + seg->second) << step;
      live[p] = n;
    } else {
      auto it = live.begin();
      std::advance(it, next() % live.size());
      ASSERT_TRUE(a.Free(it->first));
      live.erase(it);
    }
    uint64_t requested = 0;
    for (const auto& [p, n] : live) requested += n;
    ASSERT_GE(a.Stats().allocated_bytes, requested);
    ASSERT_EQ(a.Stats().reserved_bytes, device.used);
  }
  for (const auto& [p, n] : live) a.Free(p);
  EXPECT_EQ(a.Stats().allocated_bytes, 0u);
  a.EmptyCache();
  EXPECT_EQ(device.used, 0u);
  EXPECT_EQ(device.frees, device.mallocs);
}

TEST(CachingAllocator, ZeroBytesUnknownAndFreedPointers) {
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
  char* p = static_cast<char*>(Alloc(a, 4096, kStreamA));
  EXPECT_FALSE(a.Free(p + 512));  // inside a block: not a block's start
  EXPECT_TRUE(a.Free(p));
  EXPECT_FALSE(a.Free(p));  // freed twice
  EXPECT_FALSE(a.RecordStream(p, kStreamB));
  EXPECT_EQ(a.Stats().allocated_bytes, 0u);
}

TEST(CachingAllocator, ARecordedBlockWaitsForItsStreamsBeforeReuse) {
  FakeDevice device;
  CachingAllocator a(&device, CachingAllocator::Mode::kCaching);
  char* p = static_cast<char*>(Alloc(a, 2048, kStreamA));
  char* q = static_cast<char*>(Alloc(a, 2048, kStreamA));
  EXPECT_TRUE(a.RecordStream(p, kStreamB));
  EXPECT_TRUE(a.RecordStream(p, kStreamB));  // once is enough
  EXPECT_TRUE(a.RecordStream(p, kStreamA));  // its own stream: nothing to wait for
  a.Free(p);
  EXPECT_EQ(device.events.size(), 1u);  // one event, on stream B
  EXPECT_FALSE(a.Free(p));              // waiting is not live
  a.Free(q);                            // free, but p's block (before it) is not yet
  char* r = static_cast<char*>(Alloc(a, 4096, kStreamA));
  EXPECT_NE(r, p);  // B may still be using p: no merge over it
  EXPECT_EQ(device.mallocs, 1);
  device.Finish(kStreamB);
  a.Free(r);
  EXPECT_EQ(Alloc(a, 4096, kStreamA), p);  // the events are checked: p and q merge
  EXPECT_TRUE(device.events.empty());      // destroyed once done
  EXPECT_EQ(device.mallocs, 1);
}

TEST(CachingAllocator, OutOfMemoryGivesFreeSegmentsBackAndRetries) {
  FakeDevice device;
  device.capacity = 30 * kMiB;
  CachingAllocator a(&device, CachingAllocator::Mode::kCaching);
  void* p = Alloc(a, 5 * kMiB, kStreamA);
  a.Free(p);                               // a free 20 MiB segment on stream A
  void* q = Alloc(a, 5 * kMiB, kStreamB);  // another stream: needs the cached segment's memory
  EXPECT_NE(q, nullptr);
  EXPECT_EQ(device.frees, 1);
  void* r = Alloc(a, 4096, kStreamA);  // 2 MiB: fits beside B's segment
  // 16 MiB more: B's segment has 15 MiB free but is partly in use, and cannot be given back.
  bool oom = false;
  std::string error;
  EXPECT_EQ(a.Allocate(16 * kMiB, kStreamB, &oom, &error), nullptr);
  EXPECT_TRUE(oom);
  EXPECT_THAT(error, HasSubstr("allocating 16777216 bytes (a segment of 16777216): "
                               "fakeErrorMemoryAllocation: out of memory"));
  EXPECT_THAT(error, HasSubstr(std::to_string(5 * kMiB + 4096) + " bytes allocated"));
  EXPECT_EQ(a.Stats().device_frees, 1u);
  a.Free(q);
  a.Free(r);
  // 24 MiB: more than B's segment, now wholly free; both free segments go back for it.
  EXPECT_NE(Alloc(a, 24 * kMiB, kStreamB), nullptr);
  EXPECT_EQ(a.Stats().device_frees, 3u);
}

// The ladder's second step: a block freed while recorded on a busy stream waits on its event;
// when the device is out of memory, the allocator waits for that stream and gives the block's
// segment back rather than fail.
TEST(CachingAllocator, OutOfMemoryWaitsForTheStreamsOfFreedRecordedBlocks) {
  FakeDevice device;
  device.capacity = 30 * kMiB;
  CachingAllocator a(&device, CachingAllocator::Mode::kCaching);
  void* p = Alloc(a, 5 * kMiB, kStreamA);
  a.RecordStream(p, kStreamB);
  a.Free(p);  // waits for stream B's event, which is not done
  void* q = Alloc(a, 5 * kMiB, kStreamB);
  EXPECT_NE(q, nullptr);
  EXPECT_EQ(device.synchronized, std::vector<void*>{kStreamB});
  EXPECT_EQ(device.frees, 1);
  EXPECT_TRUE(device.events.empty());
  EXPECT_EQ(a.Stats().reserved_bytes, 20 * kMiB);
  a.Free(q);
}

TEST(CachingAllocator, EmptyCacheGivesBackWhatNoBlockStillUses) {
  FakeDevice device;
  CachingAllocator a(&device, CachingAllocator::Mode::kCaching);
  void* p = Alloc(a, 1000, kStreamA);
  void* q = Alloc(a, 1000, kStreamB);
  void* live = Alloc(a, 2 * kMiB, kStreamA);
  a.RecordStream(q, kStreamA);
  a.Free(p);
  a.Free(q);
  a.EmptyCache();
  EXPECT_EQ(device.frees, 1);  // p's segment; q's waits for stream A
  EXPECT_EQ(a.Stats().reserved_bytes, 2 * kMiB + 20 * kMiB);
  device.Finish(kStreamA);
  a.EmptyCache();
  EXPECT_EQ(device.frees, 2);
  EXPECT_EQ(a.Stats().reserved_bytes, 20 * kMiB);  // live's segment: partly in use
  EXPECT_EQ(a.Stats().device_frees, 2u);
  a.Free(live);
  a.EmptyCache();
  EXPECT_EQ(device.used, 0u);
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
