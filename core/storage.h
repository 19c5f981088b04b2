// StorageImpl: one reference-counted block of device memory that tensors view.
#pragma once

#include <cstddef>
#include <memory>

#include "core/allocator.h"
#include "core/ref_counted.h"

namespace tessera {

class StorageImpl final : public RefCounted {
 public:
  // `allocator` is the one that made `data` (NULL for memory wrapped from elsewhere and for
  // meta storages); resizing an output reallocates through it.
  StorageImpl(DataPtr data, size_t nbytes, Allocator* allocator = nullptr)
      : data_(std::move(data)), nbytes_(nbytes), allocator_(allocator) {}

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
};

}  // namespace tessera
