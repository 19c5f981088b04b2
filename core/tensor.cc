#include "core/tensor.h"

#include <algorithm>
#include <atomic>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/host_allocator.h"
#include "core/internal/block_pool.h"
#include "core/status_macros.h"

namespace tessera {

using TensorImplPool = internal::BlockPool<sizeof(TensorImpl)>;
using StorageImplPool = internal::BlockPool<sizeof(StorageImpl), alignof(StorageImpl)>;

void* TensorImpl::operator new(size_t size) {
  return size == sizeof(TensorImpl) ? TensorImplPool::Allocate() : ::operator new(size);
}
void TensorImpl::operator delete(void* block, size_t size) {
  size == sizeof(TensorImpl) ? TensorImplPool::Free(block) : ::operator delete(block);
}
// StorageImpl is over-aligned (Note [Small storages inline]): every block, pooled or not, is
// allocated and freed with its alignment.
void* StorageImpl::operator new(size_t size) {
  return size == sizeof(StorageImpl)
             ? StorageImplPool::Allocate()
             : ::operator new (size, std::align_val_t{alignof(StorageImpl)});
}
void StorageImpl::operator delete(void* block, size_t size) {
  size == sizeof(StorageImpl) ? StorageImplPool::Free(block) : StorageImplPool::Delete(block);
}

TensorImpl::TensorImpl(Ref<StorageImpl> storage, ScalarType dtype, Device device, IntArrayRef sizes,
                       IntArrayRef strides, int64_t storage_offset, int64_t numel,
                       bool is_contiguous)
    : storage_(std::move(storage)),
      sizes_(sizes.begin(), sizes.end()),
      strides_(strides.begin(), strides.end()),
      storage_offset_(storage_offset),
      numel_(numel),
      device_(device),
      dtype_(dtype),
      is_contiguous_(is_contiguous) {}

// Note [Immutable tensors]
// Some kernels spend more on preparing an argument than on using it: a convolution reorders
// its weights into the blocked layout its fast kernels read, on every call, though the weights
// of a model never change. An immutable tensor lets a kernel do that once: its elements do not
// change while it lives, and its immutable_id names it, never reused, so a kernel (through
// TSR_VIEW_IMMUTABLE and tsr_tensor_immutable_id) may cache what it derived under that id and the
// view's layout without ever finding a stale entry. The promise is its maker's: a compiled
// model marks immutable the constants that no node writes (schema alias annotations) and no output
// shows (so the application never holds them); nothing else makes one. A view of an immutable
// tensor (every view op: core/views.cc) has its id: its elements are some of the same elements,
// which nothing changes either (compiling follows writes through views, and an output that is
// a view of a constant shows it), and a kernel's cache keys on the view's dtype, offset, sizes
// and strides besides the id, so two views of one tensor never find each other's entries; a
// linear layer's weight, transposed by a view op on every run, is found again on each. An id's
// entries outlive the tensor in such a cache until evicted (the cache is bounded), and are
// never found again.
absl::StatusOr<Tensor> ImmutableAlias(const Tensor& t) {
  if (!t.defined())
    return absl::InvalidArgumentError("ImmutableAlias: expected a tensor, got none");
  static std::atomic<uint64_t> next_id{1};
  const TensorImpl& from = *t.impl();
  Tensor alias(Ref<TensorImpl>::Make(from.storage(), from.dtype(), from.device(), from.sizes(),
                                     from.strides(), from.storage_offset(), from.numel(),
                                     from.is_contiguous()));
  alias.impl()->immutable_id_ = next_id.fetch_add(1, std::memory_order_relaxed);
  return alias;
}

void InheritImmutability(const Tensor& base, Tensor* view) {
  view->impl()->immutable_id_ = base.impl()->immutable_id_;
}

std::string Tensor::ToString() const {
  if (!defined()) return "undefined tensor";
  return absl::StrFormat("%s%s on %s", ScalarTypeName(dtype()), ShapeToString(sizes()),
                         DeviceToString(device()));
}

namespace {

absl::Status CheckDtype(ScalarType dtype) {
  if (!IsValidScalarType(static_cast<int>(dtype))) {
    return absl::InvalidArgumentError(
        absl::StrFormat("expected a dtype in [0, %d) (bool ... float64), got %d", kNumScalarTypes,
                        static_cast<int>(dtype)));
  }
  return absl::OkStatus();
}

absl::StatusOr<Ref<StorageImpl>> AllocateStorage(Device device, int64_t elements,
                                                 ScalarType dtype) {
  int64_t nbytes;
  if (__builtin_mul_overflow(elements, static_cast<int64_t>(ElementSize(dtype)), &nbytes)) {
    return absl::OutOfRangeError(absl::StrFormat(
        "a storage of %d elements of %s overflows int64 bytes", elements, ScalarTypeName(dtype)));
  }
  if (device.index < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("expected a device index >= 0, got %d", device.index));
  }
  DataPtr data;
  Allocator* allocator = nullptr;
  if (device.type == DeviceType::kMeta) {
    data.device = device;  // shape-only: no memory
  } else {
    allocator = GetAllocator(device.type);
    if (allocator == nullptr) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "cannot allocate on %s: no backend has registered device type '%s' (is its plugin "
          "loaded?)",
          DeviceToString(device), DeviceTypeName(device.type)));
    }
    // Note [Small storages inline] (storage.h). The device check is the host allocator's.
    if (static_cast<size_t>(nbytes) <= StorageImpl::kInlineBytes &&
        allocator == &HostAllocator::Global() && device == Device(DeviceType::kCPU, 0)) {
      return Ref<StorageImpl>::Make(StorageImpl::InlineTag{}, static_cast<size_t>(nbytes),
                                    allocator);
    }
    TSR_ASSIGN_OR_RETURN(data, allocator->Allocate(device, static_cast<size_t>(nbytes)));
  }
  return Ref<StorageImpl>::Make(std::move(data), static_cast<size_t>(nbytes), allocator);
}

// CapacityOf: how many elements of `dtype` the storage holds. Wrapped host memory may claim
// more than INT64_MAX bytes (nbytes is a size_t from the embedder); capped, never negative.
int64_t CapacityOf(const StorageImpl& storage, ScalarType dtype) {
  return static_cast<int64_t>(
      std::min<size_t>(storage.nbytes() / ElementSize(dtype), static_cast<size_t>(INT64_MAX)));
}

}  // namespace

absl::Status TensorImpl::ResizeOutput(std::string_view op, IntArrayRef sizes) {
  // An output of the result's shape keeps its strides and storage, as ATen's resize_output:
  // a transposed out= is written through its strides, not restrided under the caller.
  if (sizes_.size() == sizes.size() && std::equal(sizes.begin(), sizes.end(), sizes_.begin())) {
    return absl::OkStatus();
  }
  auto refused = [&](const absl::Status& why) {
    return absl::Status(
        why.code(), absl::StrFormat("%s: cannot resize the output %s%s on %s to %s: %s", op,
                                    ScalarTypeName(dtype_), ShapeToString(sizes_),
                                    DeviceToString(device_), ShapeToString(sizes), why.message()));
  };
  absl::StatusOr<int64_t> numel = ComputeNumel(sizes);
  if (!numel.ok()) return refused(numel.status());
  absl::StatusOr<DimVector> strides = ContiguousStrides(sizes);
  if (!strides.ok()) return refused(strides.status());
  // offset + numel wraps negative for numel near INT64_MAX, which read as "fits" and kept a
  // storage far too small (ones.out(size=[INT64_MAX], out=select(int64[3], 0, 2))).
  int64_t end;
  if (__builtin_add_overflow(storage_offset_, *numel, &end) ||
      end > CapacityOf(*storage_, dtype_)) {
    absl::StatusOr<Ref<StorageImpl>> storage = AllocateStorage(device_, *numel, dtype_);
    if (!storage.ok()) return refused(storage.status());
    storage_ = *std::move(storage);
    storage_offset_ = 0;
  }
  sizes_.assign(sizes.begin(), sizes.end());
  strides_ = *std::move(strides);
  numel_ = *numel;
  is_contiguous_ = true;
  return absl::OkStatus();
}

// Note [Growing a storage]
// PyTorch's resize_ grows a tensor's storage in place: the storage object gets a larger
// allocation holding a copy of its old bytes, so every tensor viewing it moves along. Tessera
// never swaps the memory under an existing storage: memory that was exported (DLPack, the
// embedding guide's Ownership) or handed to a kernel must not be pulled from under its holder,
// and a storage's data pointer is fixed for its life (kernels and caches may hold it). So a
// resize_ that needs more room gives the tensor a NEW storage on the same device, holding a copy
// of the old storage's bytes (the composite copies them through the op registry, so it works on
// every device: dispatcher/ops/resize_ops.cc), and SetShapeAndStorage points the tensor at it.
// Other views of the old storage keep the old memory and no longer see the tensor's writes:
// a deliberate difference from PyTorch, documented in docs/op_set.md. A resize that fits keeps
// the storage. Only storages Tessera allocated grow (allocator set); wrapped memory is refused
// as PyTorch refuses a non-resizable storage. ResizeOutput replaces a too-small storage the
// same way, without the copy (outputs are overwritten).
absl::Status TensorImpl::SetShapeAndStorage(IntArrayRef sizes, IntArrayRef strides,
                                            Ref<StorageImpl> storage) {
  if (immutable_id_ != 0) {
    return absl::FailedPreconditionError(
        absl::StrFormat("cannot resize the immutable tensor %s%s on %s (Note [Immutable "
                        "tensors]: its maker promised that nothing changes it)",
                        ScalarTypeName(dtype_), ShapeToString(sizes_), DeviceToString(device_)));
  }
  if (!storage) return absl::InvalidArgumentError("expected a storage, got NULL");
  if (storage->device() != device_) {
    return absl::InvalidArgumentError(
        absl::StrFormat("expected a storage on %s (the tensor's device), got one on %s",
                        DeviceToString(device_), DeviceToString(storage->device())));
  }
  TSR_ASSIGN_OR_RETURN(const int64_t elements, StorageElementsFor(sizes, strides));
  TSR_ASSIGN_OR_RETURN(const int64_t numel, ComputeNumel(sizes));
  int64_t end = 0;
  const bool end_overflows = __builtin_add_overflow(storage_offset_, elements, &end);
  if (numel > 0 && (end_overflows || end > CapacityOf(*storage, dtype_))) {
    return absl::OutOfRangeError(absl::StrFormat(
        "sizes %s, strides %s and offset %d need %s elements of %s, but the storage holds %d",
        ShapeToString(sizes), ShapeToString(strides), storage_offset_,
        end_overflows ? absl::StrCat(storage_offset_, " + ", elements) : absl::StrCat(end),
        ScalarTypeName(dtype_), CapacityOf(*storage, dtype_)));
  }
  storage_ = std::move(storage);
  sizes_.assign(sizes.begin(), sizes.end());
  strides_.assign(strides.begin(), strides.end());
  numel_ = numel;
  is_contiguous_ = IsContiguousLayout(sizes_, strides_);
  return absl::OkStatus();
}

absl::StatusOr<Tensor> Empty(IntArrayRef sizes, ScalarType dtype, Device device) {
  TSR_RETURN_IF_ERROR(CheckDtype(dtype));
  TSR_ASSIGN_OR_RETURN(const int64_t numel, ComputeNumel(sizes));
  TSR_ASSIGN_OR_RETURN(DimVector strides, ContiguousStrides(sizes));
  TSR_ASSIGN_OR_RETURN(Ref<StorageImpl> storage, AllocateStorage(device, numel, dtype));
  return Tensor(Ref<TensorImpl>::Make(std::move(storage), dtype, device, sizes,
                                      IntArrayRef(strides), 0, numel, /*is_contiguous=*/true));
}

namespace {

// LayoutInOnePass: what ComputeNumel, StorageElementsFor and IsContiguousLayout say of a layout,
// in one pass over its dims, for the common case: as many strides as sizes, every size positive,
// every stride non-negative, nothing overflowing. False for any other layout, which the three
// functions then check one by one, with their errors. (The three passes were ~140 instructions
// of every small op's output; the instruction gate.)
bool LayoutInOnePass(IntArrayRef sizes, IntArrayRef strides, CheckedLayout* layout) {
  if (sizes.size() != strides.size()) return false;
  int64_t numel = 1, last = 0, expected = 1;
  bool contiguous = true;
  for (size_t i = sizes.size(); i-- > 0;) {
    const int64_t n = sizes[i], s = strides[i];
    int64_t span;
    if (n <= 0 || s < 0 || __builtin_mul_overflow(numel, n, &numel) ||
        __builtin_mul_overflow(n - 1, s, &span) || __builtin_add_overflow(last, span, &last)) {
      return false;
    }
    if (n != 1) {  // IsContiguousLayout's rule: size-1 dims take any stride
      contiguous = contiguous && s == expected;
      expected *= n;  // at most numel: no overflow
    }
  }
  if (last == INT64_MAX) return false;  // the element count, last + 1, would overflow
  layout->numel = numel;
  layout->storage_elements = last + 1;
  layout->contiguous = contiguous;
  return true;
}

// LayoutOf: the layout's facts in one pass where it can, else through the three checked
// functions, with their errors. A Status and an out-parameter rather than a StatusOr: this runs
// for every op's output and every view.
absl::Status LayoutOf(IntArrayRef sizes, IntArrayRef strides, CheckedLayout* layout) {
  if (ABSL_PREDICT_TRUE(LayoutInOnePass(sizes, strides, layout))) return absl::OkStatus();
  TSR_ASSIGN_OR_RETURN(layout->numel, ComputeNumel(sizes));
  TSR_ASSIGN_OR_RETURN(layout->storage_elements, StorageElementsFor(sizes, strides));
  layout->contiguous = IsContiguousLayout(sizes, strides);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CheckedLayout> CheckLayout(IntArrayRef sizes, IntArrayRef strides,
                                          ScalarType dtype) {
  TSR_RETURN_IF_ERROR(CheckDtype(dtype));
  CheckedLayout layout;
  TSR_RETURN_IF_ERROR(LayoutOf(sizes, strides, &layout));
  return layout;
}

// EmptyStrided makes CheckLayout's checks itself, not through it: a call and a StatusOr more
// were some 100 instructions on every small op's output (the instruction gate); the test
// EmptyCheckedMakesWhatEmptyStridedMakes holds the two to the same checks.
absl::StatusOr<Tensor> EmptyStrided(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype,
                                    Device device) {
  TSR_RETURN_IF_ERROR(CheckDtype(dtype));
  CheckedLayout layout;
  TSR_RETURN_IF_ERROR(LayoutOf(sizes, strides, &layout));
  TSR_ASSIGN_OR_RETURN(Ref<StorageImpl> storage,
                       AllocateStorage(device, layout.storage_elements, dtype));
  return Tensor(Ref<TensorImpl>::Make(std::move(storage), dtype, device, sizes, strides, 0,
                                      layout.numel, layout.contiguous));
}

absl::StatusOr<Tensor> EmptyChecked(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype,
                                    Device device, const CheckedLayout& layout) {
  TSR_ASSIGN_OR_RETURN(Ref<StorageImpl> storage,
                       AllocateStorage(device, layout.storage_elements, dtype));
  return Tensor(Ref<TensorImpl>::Make(std::move(storage), dtype, device, sizes, strides, 0,
                                      layout.numel, layout.contiguous));
}

absl::StatusOr<Tensor> FromStorage(Ref<StorageImpl> storage, ScalarType dtype, IntArrayRef sizes,
                                   IntArrayRef strides, int64_t storage_offset) {
  TSR_RETURN_IF_ERROR(CheckDtype(dtype));
  if (!storage) return absl::InvalidArgumentError("expected a storage, got NULL");
  CheckedLayout layout;
  TSR_RETURN_IF_ERROR(LayoutOf(sizes, strides, &layout));
  const int64_t numel = layout.numel, elements = layout.storage_elements;
  if (storage_offset < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("expected a non-negative storage offset, got %d", storage_offset));
  }
  const int64_t capacity = CapacityOf(*storage, dtype);
  int64_t end = 0;
  const bool end_overflows = __builtin_add_overflow(storage_offset, elements, &end);
  if (elements > 0 && (end_overflows || end > capacity)) {
    return absl::OutOfRangeError(absl::StrFormat(
        "a view with sizes %s, strides %s and offset %d needs %s elements of %s, but the "
        "storage holds %d",
        ShapeToString(sizes), ShapeToString(strides), storage_offset,
        end_overflows ? absl::StrCat(storage_offset, " + ", elements) : absl::StrCat(end),
        ScalarTypeName(dtype), capacity));
  }
  const Device device = storage->device();
  return Tensor(Ref<TensorImpl>::Make(std::move(storage), dtype, device, sizes, strides,
                                      storage_offset, numel, layout.contiguous));
}

}  // namespace tessera
