#include "caching_allocator.h"

#include <cstdlib>
#include <cstring>
#include <limits>

namespace tessera {
namespace gpu {

CachingAllocator::~CachingAllocator() = default;

bool CachingAllocator::ModeFromEnvironment(Mode* mode, std::string* error) {
  const char* env = std::getenv("TESSERA_GPU_ALLOCATOR");
  if (env == nullptr || env[0] == '\0' || std::strcmp(env, "caching") == 0) {
    *mode = Mode::kCaching;
    return true;
  }
  if (std::strcmp(env, "direct") == 0) {
    *mode = Mode::kDirect;
    return true;
  }
  *error = std::string("TESSERA_GPU_ALLOCATOR is '") + env +
           "'; expected 'caching' (the default) or 'direct'";
  return false;
}

size_t CachingAllocator::RoundSize(size_t nbytes) {
  constexpr size_t kMinBlock = 512;
  if (nbytes == 0) return 0;
  if (nbytes <= kMinBlock) return kMinBlock;
  if (nbytes > std::numeric_limits<size_t>::max() / 2) return 0;
  size_t base = 1;
  while (base * 2 < nbytes) base *= 2;  // base < nbytes <= 2 * base
  const size_t step = base / 4 > kMinBlock ? base / 4 : kMinBlock;
  return (nbytes + step - 1) / step * step;
}

void* CachingAllocator::Allocate(size_t nbytes, void* stream, bool* oom, std::string* error) {
  *oom = false;
  if (nbytes == 0) return nullptr;
  const size_t size = mode_ == Mode::kDirect ? nbytes : RoundSize(nbytes);
  if (size == 0) {
    *oom = true;
    *error = "cannot allocate " + std::to_string(nbytes) + " bytes: larger than any device";
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(mu_);
  void* ptr = nullptr;
  if (mode_ == Mode::kCaching) {
    ProcessPendingLocked();
    auto pool = pools_.find(PoolKey(stream, size));
    if (pool != pools_.end() && !pool->second.empty()) {
      ptr = pool->second.back();
      pool->second.pop_back();
      pooled_sizes_.erase(ptr);
      cached_ -= size;
      ++stats_.cache_hits;
    }
  }
  if (ptr == nullptr) {
    std::string device_error;
    ptr = backing_->Malloc(size, oom, &device_error);
    // Out of memory: a ladder, cheapest first. Give the pooled blocks back and try again; then
    // wait for the streams that blocks freed while in use on other streams are waiting on,
    // give those back too, and try a last time.
    if (ptr == nullptr && *oom && !pooled_sizes_.empty()) {
      ReleasePoolsLocked();
      ptr = backing_->Malloc(size, oom, &device_error);
    }
    if (ptr == nullptr && *oom && !pending_.empty()) {
      for (const Pending& p : pending_) {
        for (void* s : p.block.streams) backing_->SynchronizeStream(s);
      }
      ProcessPendingLocked();
      ReleasePoolsLocked();
      ptr = backing_->Malloc(size, oom, &device_error);
    }
    if (ptr == nullptr) {
      AccountLocked();
      *error = "allocating " + std::to_string(nbytes) + " bytes (a block of " +
               std::to_string(size) + "): " + device_error +
               " (this device: " + std::to_string(stats_.allocated_bytes) + " bytes allocated, " +
               std::to_string(stats_.reserved_bytes - stats_.allocated_bytes) +
               " cached and waiting on streams)";
      return nullptr;
    }
    ++stats_.device_allocations;
  }
  ++stats_.allocations;
  allocated_ += size;
  live_[ptr] = Block{size, stream, {}};
  AccountLocked();
  return ptr;
}

bool CachingAllocator::Free(void* ptr) {
  if (ptr == nullptr) return true;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(ptr);
  if (it == live_.end()) return false;
  Block block = std::move(it->second);
  live_.erase(it);
  allocated_ -= block.size;
  if (mode_ == Mode::kDirect) {
    for (void* s : block.streams) backing_->SynchronizeStream(s);
    backing_->Free(ptr);
    ++stats_.device_frees;
  } else if (block.streams.empty()) {
    cached_ += block.size;
    pools_[PoolKey(block.stream, block.size)].push_back(ptr);
    pooled_sizes_[ptr] = block.size;
  } else {
    cached_ += block.size;
    Pending pending{ptr, std::move(block), {}};
    for (void* s : pending.block.streams) {
      void* event = backing_->RecordEvent(s);
      if (event != nullptr) {
        pending.events.push_back(event);
      } else {
        backing_->SynchronizeStream(s);  // no event: wait for the stream here instead
      }
    }
    pending_.push_back(std::move(pending));
  }
  AccountLocked();
  return true;
}

bool CachingAllocator::RecordStream(void* ptr, void* stream) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(ptr);
  if (it == live_.end()) return false;
  Block& block = it->second;
  if (stream == block.stream) return true;  // its own stream: ordered already
  for (void* s : block.streams) {
    if (s == stream) return true;
  }
  block.streams.push_back(stream);
  return true;
}

void CachingAllocator::EmptyCache() {
  std::lock_guard<std::mutex> lock(mu_);
  ProcessPendingLocked();
  ReleasePoolsLocked();
  AccountLocked();
}

tsr_memory_stats CachingAllocator::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  tsr_memory_stats out = stats_;
  out.struct_size = sizeof out;
  return out;
}

void CachingAllocator::ProcessPendingLocked() {
  for (size_t i = 0; i < pending_.size();) {
    Pending& p = pending_[i];
    bool done = true;
    for (void* event : p.events) done = done && backing_->EventDone(event);
    if (!done) {
      ++i;
      continue;
    }
    for (void* event : p.events) backing_->DestroyEvent(event);
    pools_[PoolKey(p.block.stream, p.block.size)].push_back(p.ptr);
    pooled_sizes_[p.ptr] = p.block.size;
    pending_[i] = std::move(pending_.back());
    pending_.pop_back();
  }
}

void CachingAllocator::ReleasePoolsLocked() {
  for (const auto& [ptr, size] : pooled_sizes_) {
    backing_->Free(ptr);
    cached_ -= size;
    ++stats_.device_frees;
  }
  pooled_sizes_.clear();
  pools_.clear();
}

void CachingAllocator::AccountLocked() {
  stats_.allocated_bytes = allocated_;
  stats_.reserved_bytes = allocated_ + cached_;
  if (allocated_ > stats_.peak_allocated_bytes) stats_.peak_allocated_bytes = allocated_;
  if (stats_.reserved_bytes > stats_.peak_reserved_bytes) {
    stats_.peak_reserved_bytes = stats_.reserved_bytes;
  }
}

}  // namespace gpu
}  // namespace tessera
