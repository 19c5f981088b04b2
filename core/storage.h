// StorageImpl: one reference-counted block of device memory that tensors view.
#pragma once

#include <cstddef>
#include <memory>

#include "core/allocator.h"
#include "core/ref_counted.h"

namespace tessera {

// Note [Small storages inline]
// Most op outputs on the CPU are a few elements (scalars, 0-dim results, shapes), and each one
// used to take a block of the host allocator besides its StorageImpl: an allocation and a free
// through the per-thread cache, two thread-local lookups and the statistics. A CPU storage of
// at most kInlineBytes keeps its memory inside the StorageImpl instead (InlineTag): the same
// 64-byte alignment as the host allocator's blocks (the class is 64-byte aligned and so are
// its pool's blocks), no deleter, and the host allocator as its `allocator`, so resizing an
// output reallocates as before. Only the host allocator's own storages are made inline
// (AllocateStorage in tensor.cc): another CPU allocator installed with SetAllocator still sees
// every allocation. The host allocator's statistics do not count inline storages.
class alignas(64) StorageImpl final : public RefCounted {
 public:
  static constexpr size_t kInlineBytes = 64;
  struct InlineTag {};

  // `allocator` is the one that made `data` (NULL for memory wrapped from elsewhere and for
  // meta storages); resizing an output reallocates through it.
  StorageImpl(DataPtr data, size_t nbytes, Allocator* allocator = nullptr)
      : data_(std::move(data)), nbytes_(nbytes), allocator_(allocator) {}
  // A CPU storage of `nbytes` (at most kInlineBytes) in its own memory, on behalf of
  // `allocator` (Note [Small storages inline]).
  StorageImpl(InlineTag, size_t nbytes, Allocator* allocator)
      : nbytes_(nbytes), allocator_(allocator) {
    data_.data = inline_;
    data_.device = Device(DeviceType::kCPU, 0);
  }

  // Allocated from a per-thread pool (core/internal/block_pool.h): one per op output.
  static void* operator new(size_t size);
  static void operator delete(void* block, size_t size);

  // data is NULL for meta storages and for empty allocations that returned NULL.
  void* data() const { return data_.data; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return data_.device; }
  // owner is whoever provided the memory (a plugin, an embedder's buffer); may be empty.
  const std::shared_ptr<const void>& owner() const { return data_.owner; }
  Allocator* allocator() const { return allocator_; }

 private:
  ~StorageImpl() override {
    // The owner member is destroyed after this body: the provider outlives its deleter call.
    if (data_.deleter) data_.deleter(data_.data, data_.deleter_context);
  }

  DataPtr data_;
  size_t nbytes_;
  Allocator* allocator_;
  alignas(64) unsigned char inline_[kInlineBytes];  // the memory of an inline storage
};

}  // namespace tessera
