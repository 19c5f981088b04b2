#include "core/host_allocator.h"

#include <array>
#include <atomic>
#include <cstdlib>
#include <vector>

#include "absl/numeric/bits.h"
#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace tessera {
namespace {

constexpr int kNumClasses = 15;  // 64 B .. 1 MiB
static_assert((HostAllocator::kMinBlock << (kNumClasses - 1)) == HostAllocator::kMaxCachedBlock);

std::atomic<int64_t> g_allocations{0};
std::atomic<int64_t> g_cache_hits{0};
std::atomic<int64_t> g_live_bytes{0};

int SizeClass(size_t block) {
  return absl::countr_zero(block) - absl::countr_zero(HostAllocator::kMinBlock);
}

// Set once this thread's cache is destroyed: frees during thread exit then bypass it.
thread_local bool tls_cache_destroyed = false;

struct ThreadCache {
  std::array<std::vector<void*>, kNumClasses> free_lists;
  ~ThreadCache() {
    tls_cache_destroyed = true;
    for (auto& list : free_lists) {
      for (void* p : list) std::free(p);
    }
  }
};

ThreadCache& LocalCache() {
  thread_local ThreadCache cache;
  return cache;
}

}  // namespace

HostAllocator& HostAllocator::Global() {
  static HostAllocator* allocator = new HostAllocator();  // never destroyed: used during exit
  return *allocator;
}

absl::StatusOr<DataPtr> HostAllocator::Allocate(Device device, size_t nbytes) {
  if (device.type != DeviceType::kCPU || device.index != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "host allocator: expected device cpu, got %s", DeviceToString(device)));
  }
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  size_t block = nbytes <= kMinBlock ? kMinBlock : absl::bit_ceil(nbytes);
  if (nbytes > kMaxCachedBlock) {
    // Round up to the alignment, as aligned_alloc requires; watch for overflow near SIZE_MAX.
    if (nbytes > SIZE_MAX - kAlignment) {
      return absl::ResourceExhaustedError(
          absl::StrFormat("host allocator: cannot allocate %u bytes", nbytes));
    }
    block = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  }
  void* data = nullptr;
  if (block <= kMaxCachedBlock && !tls_cache_destroyed) {
    std::vector<void*>& list = LocalCache().free_lists[SizeClass(block)];
    if (!list.empty()) {
      data = list.back();
      list.pop_back();
      g_cache_hits.fetch_add(1, std::memory_order_relaxed);
    }
  }
  if (data == nullptr) data = std::aligned_alloc(kAlignment, block);
  if (data == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("host allocator: out of memory allocating %u bytes", nbytes));
  }
  g_live_bytes.fetch_add(static_cast<int64_t>(block), std::memory_order_relaxed);
  DataPtr out;
  out.data = data;
  out.deleter = &HostAllocator::Free;
  out.deleter_context = reinterpret_cast<void*>(block);
  out.device = Device(DeviceType::kCPU, 0);
  return out;
}

void HostAllocator::Free(void* data, void* context) {
  const size_t block = reinterpret_cast<size_t>(context);
  g_live_bytes.fetch_sub(static_cast<int64_t>(block), std::memory_order_relaxed);
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
  Stats s;
  s.allocations = g_allocations.load(std::memory_order_relaxed);
  s.cache_hits = g_cache_hits.load(std::memory_order_relaxed);
  s.live_bytes = g_live_bytes.load(std::memory_order_relaxed);
  return s;
}

}  // namespace tessera
