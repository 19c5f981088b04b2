#include "core/host_allocator.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

#include "absl/base/optimization.h"
#include "absl/numeric/bits.h"
#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"

namespace tessera {
namespace {

constexpr int kNumClasses = 15;  // 64 B .. 1 MiB
static_assert((HostAllocator::kMinBlock << (kNumClasses - 1)) == HostAllocator::kMaxCachedBlock);

int SizeClass(size_t block) {
  return absl::countr_zero(block) - absl::countr_zero(HostAllocator::kMinBlock);
}

// Statistics are counted per thread without locked instructions (only the owning thread
// writes its counters; GetStats sums them) and folded into `retired` when a thread exits.
struct Counters {
  std::atomic<int64_t> allocations;
  std::atomic<int64_t> cache_hits;
  std::atomic<int64_t> live_bytes;

  static void Bump(std::atomic<int64_t>& c, int64_t delta) {
    c.store(c.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
  }
};

struct CounterRegistry {
  absl::Mutex mu;
  std::vector<Counters*> live ABSL_GUARDED_BY(mu);
  Counters retired = {};  // totals of exited threads, updated under mu
};

CounterRegistry& Registry() {
  static CounterRegistry* registry = new CounterRegistry();  // never destroyed
  return *registry;
}

// Note [Per-thread state in a shared library]
// Inside libtessera.so every thread_local access costs a call to __tls_get_addr, and one
// with a non-trivial destructor also goes through a TLS wrapper. So all of a thread's state is
// one trivially destructible, zero-initialized thread_local, reached once per Allocate/Free;
// a separate thread_local with a destructor, touched only when the state is first used, frees
// the cached blocks at thread exit and marks the state destroyed, after which the thread
// allocates and frees directly.
struct ThreadState {
  bool initialized;
  bool destroyed;
  int counts[kNumClasses];
  void* blocks[kNumClasses][HostAllocator::kMaxCachedPerClass];
  Counters counters;
};
thread_local ThreadState tls_state;

struct ThreadCleanup {
  ~ThreadCleanup() {
    ThreadState& s = tls_state;
    for (int c = 0; c < kNumClasses; ++c) {
      while (s.counts[c] > 0) std::free(s.blocks[c][--s.counts[c]]);
    }
    CounterRegistry& r = Registry();
    absl::MutexLock lock(&r.mu);
    r.live.erase(std::find(r.live.begin(), r.live.end(), &s.counters));
    Counters::Bump(r.retired.allocations, s.counters.allocations.load());
    Counters::Bump(r.retired.cache_hits, s.counters.cache_hits.load());
    Counters::Bump(r.retired.live_bytes, s.counters.live_bytes.load());
    s.initialized = false;
    s.destroyed = true;
  }
};

// Note [Large blocks]
// A block past kMaxCachedBlock comes from aligned_alloc, which glibc serves with a fresh mmap or
// from a heap it trims back to the kernel; either way each page is faulted in, and zeroed, on
// its first write. A model's run frees and allocates the same large intermediates every run:
// ResNet-18's batch norms took 8.5 ms of page faults per run where, with the blocks kept, they
// took 0.4 ms. So freed large blocks are kept, shared by every thread under one lock (a large
// allocation is rare next to the work it feeds), in size classes of an eighth of a power of two
// (a block is at most 12.5 % larger than asked), up to a bound in bytes: TESSERA_HOST_CACHE_MB
// (default kDefaultLargeCacheBytes; 0 keeps none). Past the bound a freed block goes back to
// the system. Under AddressSanitizer nothing is kept, so that a use after free of a large
// block is still caught.
#if defined(__SANITIZE_ADDRESS__)
#define TESSERA_KEEP_LARGE_BLOCKS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSERA_KEEP_LARGE_BLOCKS 0
#endif
#endif
#ifndef TESSERA_KEEP_LARGE_BLOCKS
#define TESSERA_KEEP_LARGE_BLOCKS 1
#endif

// The kept large blocks, last freed first out per size class (its pages are the likeliest to
// be in cache). Its lock is taken alone, never with another.
class LargeBlocks {
 public:
  void* Take(size_t block) {
    absl::MutexLock lock(&mu_);
    auto it = free_.find(block);
    if (it == free_.end() || it->second.empty()) return nullptr;
    void* data = it->second.back();
    it->second.pop_back();
    bytes_ -= block;
    return data;
  }
  bool Keep(size_t block, void* data);  // false: past the bound, not kept
  size_t Bytes() {
    absl::MutexLock lock(&mu_);
    return bytes_;
  }

 private:
  absl::Mutex mu_;
  std::map<size_t, std::vector<void*>> free_ ABSL_GUARDED_BY(mu_);  // by block size
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

LargeBlocks& Large() {
  static LargeBlocks* large = new LargeBlocks();  // never destroyed: used during exit
  return *large;
}

size_t LargeBound() {
  static const size_t bound = [] {
    if (!TESSERA_KEEP_LARGE_BLOCKS) return size_t{0};
    const char* env = std::getenv("TESSERA_HOST_CACHE_MB");
    if (env == nullptr || *env == '\0') return HostAllocator::kDefaultLargeCacheBytes;
    char* end = nullptr;
    const long long mb = std::strtoll(env, &end, 10);
    if (*end != '\0' || mb < 0 || mb > (1ll << 40)) {
      std::fprintf(stderr,
                   "[tessera WARNING] TESSERA_HOST_CACHE_MB: expected a number of MiB >= 0, "
                   "got '%s'; using %zu\n",
                   env, HostAllocator::kDefaultLargeCacheBytes >> 20);
      return HostAllocator::kDefaultLargeCacheBytes;
    }
    return static_cast<size_t>(mb) << 20;
  }();
  return bound;
}

bool LargeBlocks::Keep(size_t block, void* data) {
  absl::MutexLock lock(&mu_);
  if (bytes_ + block > LargeBound()) return false;
  free_[block].push_back(data);
  bytes_ += block;
  return true;
}

// LargeClass: nbytes (> kMaxCachedBlock) rounded up to its size class, a multiple of an
// eighth of the power of two below it (and so of kAlignment); SIZE_MAX past what fits. Only
// where blocks are kept: otherwise (and so under AddressSanitizer) a block is nbytes rounded
// to kAlignment alone, so that a write past the tensor is still caught as an overflow.
size_t LargeClass(size_t nbytes) {
  const size_t step = LargeBound() > 0 ? (size_t{1} << (absl::bit_width(nbytes) - 1)) / 8
                                       : HostAllocator::kAlignment;
  if (nbytes > SIZE_MAX - step) return SIZE_MAX;
  return (nbytes + step - 1) / step * step;
}

// State: this thread's state, or NULL once the thread is exiting.
ThreadState* State() {
  ThreadState* s = &tls_state;
  if (ABSL_PREDICT_TRUE(s->initialized)) return s;
  if (s->destroyed) return nullptr;
  {
    absl::MutexLock lock(&Registry().mu);
    Registry().live.push_back(&s->counters);
  }
  static thread_local ThreadCleanup cleanup;
  (void)cleanup;
  s->initialized = true;
  return s;
}

// Count adds to this thread's counter, or to the shared ones once the thread is exiting.
void Count(ThreadState* s, std::atomic<int64_t> Counters::*field, int64_t delta) {
  if (ABSL_PREDICT_TRUE(s != nullptr)) {
    Counters::Bump(s->counters.*field, delta);
    return;
  }
  absl::MutexLock lock(&Registry().mu);
  Counters::Bump(Registry().retired.*field, delta);
}

}  // namespace

bool HostAllocator::KeepsLargeBlocks() { return LargeBound() > 0; }

HostAllocator& HostAllocator::Global() {
  static HostAllocator* allocator = new HostAllocator();  // never destroyed: used during exit
  return *allocator;
}

absl::StatusOr<DataPtr> HostAllocator::Allocate(Device device, size_t nbytes) {
  if (device.type != DeviceType::kCPU || device.index != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("host allocator: expected device cpu, got %s", DeviceToString(device)));
  }
  ThreadState* s = State();
  Count(s, &Counters::allocations, 1);
  size_t block;
  if (nbytes <= kMaxCachedBlock) {
    block = nbytes <= kMinBlock ? kMinBlock : absl::bit_ceil(nbytes);
  } else if (nbytes > SIZE_MAX - kAlignment) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("host allocator: cannot allocate %u bytes", nbytes));
  } else {
    block = LargeClass(nbytes);  // a multiple of kAlignment, as aligned_alloc requires
    if (block == SIZE_MAX) {
      return absl::ResourceExhaustedError(
          absl::StrFormat("host allocator: cannot allocate %u bytes", nbytes));
    }
  }
  void* data = nullptr;
  if (block <= kMaxCachedBlock && s != nullptr) {
    const int c = SizeClass(block);
    if (s->counts[c] > 0) {
      data = s->blocks[c][--s->counts[c]];
      Count(s, &Counters::cache_hits, 1);
    }
  } else if (block > kMaxCachedBlock && LargeBound() > 0) {
    data = Large().Take(block);
    if (data != nullptr) Count(s, &Counters::cache_hits, 1);  // outside the lock
  }
  if (data == nullptr) data = std::aligned_alloc(kAlignment, block);
  if (data == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("host allocator: out of memory allocating %u bytes", nbytes));
  }
  Count(s, &Counters::live_bytes, static_cast<int64_t>(block));
  DataPtr out;
  out.data = data;
  out.deleter = &HostAllocator::Free;
  out.deleter_context = reinterpret_cast<void*>(block);
  out.device = Device(DeviceType::kCPU, 0);
  return out;
}

void HostAllocator::Free(void* data, void* context) {
  const size_t block = reinterpret_cast<size_t>(context);
  ThreadState* s = State();
  Count(s, &Counters::live_bytes, -static_cast<int64_t>(block));
  if (block <= kMaxCachedBlock && s != nullptr) {
    const int c = SizeClass(block);
    if (s->counts[c] < kMaxCachedPerClass) {
      s->blocks[c][s->counts[c]++] = data;
      return;
    }
  } else if (block > kMaxCachedBlock && Large().Keep(block, data)) {
    return;
  }
  std::free(data);
}

HostAllocator::Stats HostAllocator::GetStats() const {
  Stats s;
  s.large_cached_bytes = static_cast<int64_t>(Large().Bytes());  // one lock at a time
  CounterRegistry& r = Registry();
  absl::MutexLock lock(&r.mu);
  auto add = [&s](const Counters& c) {
    s.allocations += c.allocations.load(std::memory_order_relaxed);
    s.cache_hits += c.cache_hits.load(std::memory_order_relaxed);
    s.live_bytes += c.live_bytes.load(std::memory_order_relaxed);
  };
  add(r.retired);
  for (const Counters* c : r.live) add(*c);
  return s;
}

}  // namespace tessera
