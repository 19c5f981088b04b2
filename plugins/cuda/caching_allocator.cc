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
  if (nbytes == 0 || nbytes > std::numeric_limits<size_t>::max() / 2) return 0;
  return (nbytes + kMinBlock - 1) / kMinBlock * kMinBlock;
}

size_t CachingAllocator::SegmentSize(size_t size) {
  if (size <= kSmallSize) return kSmallSegment;
  if (size < kMediumSize) return kLargeSegment;
  if (size > std::numeric_limits<size_t>::max() / 2) return 0;
  return (size + kSegmentRound - 1) / kSegmentRound * kSegmentRound;
}

bool CachingAllocator::FitOrder::operator()(const Block* a, const Block* b) const {
  const auto sa = reinterpret_cast<uintptr_t>(a->stream),
             sb = reinterpret_cast<uintptr_t>(b->stream);
  if (sa != sb) return sa < sb;
  if (a->size != b->size) return a->size < b->size;
  return reinterpret_cast<uintptr_t>(a->ptr) < reinterpret_cast<uintptr_t>(b->ptr);
}

void* CachingAllocator::Allocate(size_t nbytes, void* stream, bool* oom, std::string* error) {
  *oom = false;
  if (nbytes == 0) return nullptr;
  const size_t size = mode_ == Mode::kDirect ? nbytes : RoundSize(nbytes);
  const size_t segment = mode_ == Mode::kDirect ? nbytes : SegmentSize(size);
  if (size == 0 || segment == 0) {
    *oom = true;
    *error = "cannot allocate " + std::to_string(nbytes) + " bytes: larger than any device";
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(mu_);
  Block* block = nullptr;
  if (mode_ == Mode::kCaching) {
    ProcessPendingLocked();
    block = TakeFreeBlockLocked(size, stream);
    if (block != nullptr) ++stats_.cache_hits;
  }
  if (block == nullptr) {
    std::string device_error;
    block = NewSegmentLocked(segment, stream, oom, &device_error);
    if (block == nullptr) {
      AccountLocked();
      *error = "allocating " + std::to_string(nbytes) + " bytes (a segment of " +
               std::to_string(segment) + "): " + device_error +
               " (this device: " + std::to_string(stats_.allocated_bytes) + " bytes allocated, " +
               std::to_string(stats_.reserved_bytes - stats_.allocated_bytes) +
               " cached in segments partly in use or waiting on streams)";
      return nullptr;
    }
    block->small = mode_ == Mode::kCaching && size <= kSmallSize;
  }
  if (mode_ == Mode::kCaching) SplitLocked(block, size);
  block->state = Block::State::kLive;
  ++stats_.allocations;
  allocated_ += block->size;
  AccountLocked();
  return block->ptr;
}

// The smallest free block of the request's pool and stream that holds `size`, out of its pool.
CachingAllocator::Block* CachingAllocator::TakeFreeBlockLocked(size_t size, void* stream) {
  Pool& pool = PoolOf(size <= kSmallSize);
  Block key;
  key.stream = stream;
  key.size = size;
  auto it = pool.lower_bound(&key);  // key.ptr is null: the first block of at least `size`
  if (it == pool.end() || (*it)->stream != stream) return nullptr;
  Block* block = *it;
  pool.erase(it);
  return block;
}

// A new segment of `size` bytes from the device, one live-to-be block, after the ladder of
// Note [GPU caching allocator] when the device is out of memory.
CachingAllocator::Block* CachingAllocator::NewSegmentLocked(size_t size, void* stream, bool* oom,
                                                            std::string* device_error) {
  void* ptr = backing_->Malloc(size, oom, device_error);
  if (ptr == nullptr && *oom && mode_ == Mode::kCaching) {
    ReleaseFreeSegmentsLocked();
    ptr = backing_->Malloc(size, oom, device_error);
  }
  if (ptr == nullptr && *oom && !pending_.empty()) {
    for (const Block* p : pending_) {
      for (void* s : p->streams) backing_->SynchronizeStream(s);
    }
    ProcessPendingLocked();
    ReleaseFreeSegmentsLocked();
    ptr = backing_->Malloc(size, oom, device_error);
  }
  if (ptr == nullptr) return nullptr;
  ++stats_.device_allocations;
  reserved_ += size;
  auto block = std::make_unique<Block>();
  block->ptr = static_cast<char*>(ptr);
  block->size = size;
  block->stream = stream;
  Block* raw = block.get();
  blocks_.emplace(ptr, std::move(block));
  return raw;
}

// Cuts `block` down to `size`, its rest a free block after it, where the rest is worth keeping
// apart (Note [GPU caching allocator]).
void CachingAllocator::SplitLocked(Block* block, size_t size) {
  const size_t rest = block->size - size;
  if (block->small ? rest < kMinBlock : rest <= kSmallSize) return;
  auto tail = std::make_unique<Block>();
  tail->ptr = block->ptr + size;
  tail->size = rest;
  tail->stream = block->stream;
  tail->small = block->small;
  tail->prev = block;
  tail->next = block->next;
  if (block->next != nullptr) block->next->prev = tail.get();
  block->next = tail.get();
  block->size = size;
  PoolOf(tail->small).insert(tail.get());
  blocks_.emplace(tail->ptr, std::move(tail));
}

bool CachingAllocator::Free(void* ptr) {
  if (ptr == nullptr) return true;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = blocks_.find(ptr);
  if (it == blocks_.end() || it->second->state != Block::State::kLive) return false;
  Block* block = it->second.get();
  allocated_ -= block->size;
  if (mode_ == Mode::kDirect) {
    for (void* s : block->streams) backing_->SynchronizeStream(s);
    ReleaseSegmentLocked(block);
  } else if (block->streams.empty()) {
    FreeBlockLocked(block);
  } else {
    block->state = Block::State::kPending;
    for (void* s : block->streams) {
      void* event = backing_->RecordEvent(s);
      if (event != nullptr) {
        block->events.push_back(event);
      } else {
        backing_->SynchronizeStream(s);  // no event: wait for the stream here instead
      }
    }
    pending_.push_back(block);
  }
  AccountLocked();
  return true;
}

// Marks `block` free, merges it with its free neighbours and pools the result.
void CachingAllocator::FreeBlockLocked(Block* block) {
  block->state = Block::State::kFree;
  block->streams.clear();
  Pool& pool = PoolOf(block->small);
  if (Block* prev = block->prev; prev != nullptr && prev->state == Block::State::kFree) {
    pool.erase(prev);  // before its size changes: the pool is ordered by size
    prev->size += block->size;
    prev->next = block->next;
    if (block->next != nullptr) block->next->prev = prev;
    const void* gone = block->ptr;  // a copy: erasing destroys the block
    blocks_.erase(gone);
    block = prev;
  }
  if (Block* next = block->next; next != nullptr && next->state == Block::State::kFree) {
    pool.erase(next);
    block->size += next->size;
    block->next = next->next;
    if (next->next != nullptr) next->next->prev = block;
    const void* gone = next->ptr;
    blocks_.erase(gone);
  }
  pool.insert(block);
}

bool CachingAllocator::RecordStream(void* ptr, void* stream) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = blocks_.find(ptr);
  if (it == blocks_.end() || it->second->state != Block::State::kLive) return false;
  Block& block = *it->second;
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
  ReleaseFreeSegmentsLocked();
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
    Block* block = pending_[i];
    bool done = true;
    for (void* event : block->events) done = done && backing_->EventDone(event);
    if (!done) {
      ++i;
      continue;
    }
    for (void* event : block->events) backing_->DestroyEvent(event);
    block->events.clear();
    pending_[i] = pending_.back();
    pending_.pop_back();
    FreeBlockLocked(block);
  }
}

// Gives back every segment that is one free block (merging makes a wholly free segment one).
void CachingAllocator::ReleaseFreeSegmentsLocked() {
  for (Pool* pool : {&small_pool_, &large_pool_}) {
    for (auto it = pool->begin(); it != pool->end();) {
      Block* block = *it;
      if (block->prev != nullptr || block->next != nullptr) {
        ++it;
        continue;
      }
      it = pool->erase(it);
      ReleaseSegmentLocked(block);
    }
  }
}

// Gives a whole segment, one block, back to the device.
void CachingAllocator::ReleaseSegmentLocked(Block* block) {
  const void* ptr = block->ptr;  // a copy: erasing destroys the block
  backing_->Free(block->ptr);
  reserved_ -= block->size;
  ++stats_.device_frees;
  blocks_.erase(ptr);
}

void CachingAllocator::AccountLocked() {
  stats_.allocated_bytes = allocated_;
  stats_.reserved_bytes = reserved_;
  if (allocated_ > stats_.peak_allocated_bytes) stats_.peak_allocated_bytes = allocated_;
  if (stats_.reserved_bytes > stats_.peak_reserved_bytes) {
    stats_.peak_reserved_bytes = stats_.reserved_bytes;
  }
}

}  // namespace gpu
}  // namespace tessera
