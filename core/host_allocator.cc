#include "core/host_allocator.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <vector>

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
  std::atomic<int64_t> allocations{0};
  std::atomic<int64_t> cache_hits{0};
  std::atomic<int64_t> live_bytes{0};

  static void Bump(std::atomic<int64_t>& c, int64_t delta) {
    c.store(c.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
  }
};

struct CounterRegistry {
  absl::Mutex mu;
  std::vector<Counters*> live ABSL_GUARDED_BY(mu);
  Counters retired;  // totals of exited threads, updated under mu
};

CounterRegistry& Registry() {
  static CounterRegistry* registry = new CounterRegistry();  // never destroyed
  return *registry;
}

// Set once this thread's cache is destroyed: frees during thread exit then bypass it.
thread_local bool tls_cache_destroyed = false;

struct ThreadCache {
  std::array<std::vector<void*>, kNumClasses> free_lists;
  Counters counters;

  ThreadCache() {
    absl::MutexLock lock(&Registry().mu);
    Registry().live.push_back(&counters);
  }
  ~ThreadCache() {
    tls_cache_destroyed = true;
    for (auto& list : free_lists) {
      for (void* p : list) std::free(p);
    }
    CounterRegistry& r = Registry();
    absl::MutexLock lock(&r.mu);
    r.live.erase(std::find(r.live.begin(), r.live.end(), &counters));
    Counters::Bump(r.retired.allocations, counters.allocations.load());
    Counters::Bump(r.retired.cache_hits, counters.cache_hits.load());
    Counters::Bump(r.retired.live_bytes, counters.live_bytes.load());
  }
};

ThreadCache& LocalCache() {
  thread_local ThreadCache cache;
  return cache;
}

// Counters of this thread, or the shared ones (under the lock) once its cache is gone.
void Count(std::atomic<int64_t> Counters::*field, int64_t delta) {
  if (!tls_cache_destroyed) {
    Counters::Bump(LocalCache().counters.*field, delta);
    return;
  }
  absl::MutexLock lock(&Registry().mu);
  Counters::Bump(Registry().retired.*field, delta);
}

}  // namespace

HostAllocator& HostAllocator::Global() {
  static HostAllocator* allocator = new HostAllocator();  // never destroyed: used during exit
  return *allocator;
}

absl::StatusOr<DataPtr> HostAllocator::Allocate(Device device, size_t nbytes) {
  if (device.type != DeviceType::kCPU || device.index != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("host allocator: expected device cpu, got %s", DeviceToString(device)));
  }
  Count(&Counters::allocations, 1);
  size_t block;
  if (nbytes <= kMaxCachedBlock) {
    block = nbytes <= kMinBlock ? kMinBlock : absl::bit_ceil(nbytes);
  } else if (nbytes > SIZE_MAX - kAlignment) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("host allocator: cannot allocate %u bytes", nbytes));
  } else {
    block = (nbytes + kAlignment - 1) / kAlignment * kAlignment;  // aligned_alloc requires it
  }
  void* data = nullptr;
  if (block <= kMaxCachedBlock && !tls_cache_destroyed) {
    std::vector<void*>& list = LocalCache().free_lists[SizeClass(block)];
    if (!list.empty()) {
      data = list.back();
      list.pop_back();
      Count(&Counters::cache_hits, 1);
    }
  }
  if (data == nullptr) data = std::aligned_alloc(kAlignment, block);
  if (data == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("host allocator: out of memory allocating %u bytes", nbytes));
  }
  Count(&Counters::live_bytes, static_cast<int64_t>(block));
  DataPtr out;
  out.data = data;
  out.deleter = &HostAllocator::Free;
  out.deleter_context = reinterpret_cast<void*>(block);
  out.device = Device(DeviceType::kCPU, 0);
  return out;
}

void HostAllocator::Free(void* data, void* context) {
  const size_t block = reinterpret_cast<size_t>(context);
  Count(&Counters::live_bytes, -static_cast<int64_t>(block));
  if (block <= kMaxCachedBlock && !tls_cache_destroyed) {
    std::vector<void*>& list = LocalCache().free_lists[SizeClass(block)];
    if (list.size() < static_cast<size_t>(kMaxCachedPerClass)) {
      if (list.capacity() == 0) list.reserve(kMaxCachedPerClass);
      list.push_back(data);
      return;
    }
  }
  std::free(data);
}

HostAllocator::Stats HostAllocator::GetStats() const {
  CounterRegistry& r = Registry();
  absl::MutexLock lock(&r.mu);
  Stats s;
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
