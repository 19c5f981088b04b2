// TensorImpl and Tensor: a strided view of a storage.
//
// A TensorImpl is immutable after construction except through the explicit setters used by
// in-place metadata ops (ResizeOutput for out= outputs, SetShapeAndStorage for resize_). Views
// share the storage and differ in sizes, strides and offset. Tensor is the value-semantic handle
// (one reference).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/ref_counted.h"
#include "core/shape.h"
#include "core/storage.h"

namespace tessera {

class Tensor;
// ImmutableAlias: a new tensor of `t`'s storage, shape and strides with an immutable_id of its
// own (Note [Immutable tensors] in tensor.cc). Its maker promises that nothing writes those
// elements while the alias lives: a compiled model gives one to each constant that no node
// writes and no output shows.
absl::StatusOr<Tensor> ImmutableAlias(const Tensor& t);
// InheritImmutability gives `view`, a view of `base`'s elements that a view op just made, base's
// immutable id, if it has one (Note [Immutable tensors]). For core/views.cc's MakeView only,
// which every view op goes through: nothing else makes a tensor immutable but ImmutableAlias.
void InheritImmutability(const Tensor& base, Tensor* view);

class TensorImpl final : public RefCounted {
 public:
  // Use the factories (Empty, EmptyStrided, MakeView); they validate the arguments.
  // The shape is copied once, into the impl's own vectors (no temporaries to move from).
  // `is_contiguous`: IsContiguousLayout(sizes, strides), which the factories compute or know.
  TensorImpl(Ref<StorageImpl> storage, ScalarType dtype, Device device, IntArrayRef sizes,
             IntArrayRef strides, int64_t storage_offset, int64_t numel, bool is_contiguous);

  // Allocated from a per-thread pool (core/internal/block_pool.h): one per op output.
  static void* operator new(size_t size);
  static void operator delete(void* block, size_t size);

  const Ref<StorageImpl>& storage() const { return storage_; }
  ScalarType dtype() const { return dtype_; }
  Device device() const { return device_; }
  IntArrayRef sizes() const { return sizes_; }
  IntArrayRef strides() const { return strides_; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t numel() const { return numel_; }
  int64_t storage_offset() const { return storage_offset_; }
  bool is_contiguous() const { return is_contiguous_; }
  size_t itemsize() const { return ElementSize(dtype_); }
  // nbytes of the elements viewed (numel * itemsize), not of the storage.
  size_t nbytes() const { return static_cast<size_t>(numel_) * itemsize(); }
  // data_ptr: address of element 0 (storage data + offset); NULL for meta tensors. On a
  // non-host device this is a device address the runtime never dereferences. Inline: every
  // kernel call reads it for each tensor argument's view.
  void* data_ptr() const {
    char* base = static_cast<char*>(storage_->data());
    if (base == nullptr) return nullptr;
    return base + storage_offset_ * static_cast<int64_t>(itemsize());
  }

  // ResizeOutput gives an op's output (out=) the shape `sizes`, contiguous; an output that has
  // that shape already is left as it is, strides included (ATen's resize_output). Storage that
  // is too small is replaced by a new allocation on the same device (old contents are not
  // kept: outputs are overwritten); otherwise the storage and offset stay. On error the tensor is
  // unchanged and the message starts with `op`. Not thread-safe with concurrent readers of
  // this tensor, as in PyTorch.
  absl::Status ResizeOutput(std::string_view op, IntArrayRef sizes);

  // SetShapeAndStorage gives this tensor `sizes` and `strides` (non-negative) on `storage`:
  // its own, or a new storage on the same device that replaces it (resize_ growing a tensor,
  // Note [Growing a storage] in core/tensor.cc), keeping the storage offset. The view must lie
  // within the storage, except that a tensor without elements may lie anywhere (as in PyTorch).
  // Refused for an immutable tensor (immutable_id). On error the tensor is unchanged. Other
  // tensors viewing the old storage keep it. Not thread-safe with concurrent readers of this
  // tensor, as in PyTorch.
  absl::Status SetShapeAndStorage(IntArrayRef sizes, IntArrayRef strides, Ref<StorageImpl> storage);

  // immutable_id: nonzero when this tensor's elements do not change while it lives, unique in the
  // process (never reused), so that a kernel may keep data derived from it under this key
  // (Note [Immutable tensors] in core/tensor.cc). 0 for every tensor but those ImmutableAlias made
  // and their views.
  uint64_t immutable_id() const { return immutable_id_; }

 private:
  friend absl::StatusOr<Tensor> ImmutableAlias(const Tensor& t);
  friend void InheritImmutability(const Tensor& base, Tensor* view);
  Ref<StorageImpl> storage_;
  DimVector sizes_;
  DimVector strides_;
  int64_t storage_offset_;
  int64_t numel_;
  Device device_;
  ScalarType dtype_;
  bool is_contiguous_;
  uint64_t immutable_id_ = 0;
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(Ref<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return static_cast<bool>(impl_); }
  TensorImpl* impl() const { return impl_.get(); }
  const Ref<TensorImpl>& impl_ref() const { return impl_; }
  // TakeImpl gives up this handle's reference (for the C ABI, which hands it to the caller).
  Ref<TensorImpl> TakeImpl() && { return std::move(impl_); }

  ScalarType dtype() const { return impl_->dtype(); }
  Device device() const { return impl_->device(); }
  IntArrayRef sizes() const { return impl_->sizes(); }
  IntArrayRef strides() const { return impl_->strides(); }
  int64_t dim() const { return impl_->dim(); }
  int64_t numel() const { return impl_->numel(); }
  int64_t storage_offset() const { return impl_->storage_offset(); }
  bool is_contiguous() const { return impl_->is_contiguous(); }
  void* data_ptr() const { return impl_->data_ptr(); }
  template <typename T>
  T* data() const {
    return static_cast<T*>(impl_->data_ptr());
  }
  // IsSameStorage: whether two tensors view the same memory block.
  bool IsSameStorage(const Tensor& other) const {
    return impl_->storage() == other.impl_->storage();
  }

  // Description for messages: "float32[2, 3] on cpu".
  std::string ToString() const;

 private:
  Ref<TensorImpl> impl_;
};

// Empty allocates a contiguous tensor through the device type's allocator.
absl::StatusOr<Tensor> Empty(IntArrayRef sizes, ScalarType dtype, Device device);

// EmptyStrided allocates just enough storage for the given (non-negative) strides.
absl::StatusOr<Tensor> EmptyStrided(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype,
                                    Device device);

// CheckedLayout: what EmptyStrided's checks compute from a layout before it allocates, kept by
// a caller that allocates one layout again and again (a prepared call's outputs,
// dispatcher/prepared_call.h), so that each allocation skips them.
struct CheckedLayout {
  int64_t numel = 0;
  int64_t storage_elements = 0;  // what the strides reach
  bool contiguous = false;
};
// CheckLayout: EmptyStrided's checks of (sizes, strides, dtype), with its errors.
absl::StatusOr<CheckedLayout> CheckLayout(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype);
// EmptyChecked: EmptyStrided of a layout that CheckLayout accepted as `layout`.
absl::StatusOr<Tensor> EmptyChecked(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype,
                                    Device device, const CheckedLayout& layout);

// FromStorage views an existing storage; the view must lie within it.
absl::StatusOr<Tensor> FromStorage(Ref<StorageImpl> storage, ScalarType dtype, IntArrayRef sizes,
                                   IntArrayRef strides, int64_t storage_offset);

}  // namespace tessera
