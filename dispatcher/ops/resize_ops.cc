// Op set 1.11's resize ops, as composites on every device: resize_ (self takes a new shape,
// contiguous or channels-last, keeping its storage offset and the storage's old contents),
// resize_as_ (self takes the template's shape), and the functional and out= forms that
// native_functions.yaml autogenerates for functionalization (resize, resize.out, resize_as,
// resize_as.out: a clone of self resized, then copied into out).
//
// After ATen's Resize.cpp (resize_, resize_as_, resize_impl), Resize.h (maybe_resize_storage_cpu,
// resize_bytes_cpu) and c10's TensorImpl::empty_tensor_restride and suggest_memory_format, with
// the samples of the OpInfos `resize_` and `resize_as_`. Growing a storage follows Tessera's rule
// instead of PyTorch's (Note [Growing a storage] in core/tensor.cc): self gets a new storage
// holding a copy of the old one's bytes; other views of the old storage keep the old memory.
//
// The three forms of each op are defined apart, not linked as variants (Note [Variants]): a
// derived in-place form checks that the result keeps self's shape, which resize_ exists to
// change. As composites their results get the count check only (Note [Kernel results]); written
// memory is checked as for every in-place op (Note [Memory overlap]): an expanded self (stride
// 0 over more than one element) is refused like any write into it, where PyTorch resizes it.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/layout.h"
#include "core/shape.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {
namespace {

// Format: an optional MemoryFormat argument (None: nullopt).
std::optional<MemoryFormat> Format(const Value& v) {
  if (v.is_none()) return std::nullopt;
  return static_cast<MemoryFormat>(v.to_int());
}

// ChannelsLastStrides: c10's get_channels_last_strides_2d/3d: the channel dim innermost, then
// the spatial dims from the last, then the batch. Raw sizes, as c10 multiplies them (a size-0
// dim gives the dims outside it stride 0), but a product past int64 is refused where c10's
// wraps ([0, 2^32, 2^32, 2^32] has no elements, so the sizes alone do not bound it).
std::optional<DimVector> ChannelsLastStrides(IntArrayRef sizes) {
  DimVector strides(sizes.size());
  const size_t nd = sizes.size();
  strides[1] = 1;
  strides[nd - 1] = sizes[1];
  for (size_t d = nd - 1; d-- > 2;) {
    if (__builtin_mul_overflow(strides[d + 1], sizes[d + 1], &strides[d])) return std::nullopt;
  }
  if (__builtin_mul_overflow(strides[2], sizes[2], &strides[0])) return std::nullopt;
  return strides;
}

// IsChannelsLastStrides: c10's is_channels_last_strides_2d_s4 / _3d_s5 (what
// suggest_memory_format reads): strides ascending in the order C, W, H, (D,) N, ambiguous
// cases (a trivial C stride, N111) read as contiguous.
bool IsChannelsLastStrides(IntArrayRef sizes, IntArrayRef strides) {
  static constexpr int kOrder4[] = {1, 3, 2, 0};
  static constexpr int kOrder5[] = {1, 4, 3, 2, 0};
  const int* order = sizes.size() == 4 ? kOrder4 : kOrder5;
  const int n = static_cast<int>(sizes.size());
  if (strides[1] == 0) return false;
  int64_t min = 0;
  for (int k = 0; k < n; ++k) {
    const int d = order[k];
    if (sizes[d] == 0 || strides[d] < min) return false;
    if (d == 0 && min == strides[1]) return false;
    min = strides[d];
    if (sizes[d] > 1) min *= sizes[d];
  }
  return true;
}

// SuggestMemoryFormat: TensorBase::suggest_memory_format (not the exact-match form): channels
// last where a 4-D (5-D) tensor's strides are like it, else contiguous.
MemoryFormat SuggestMemoryFormat(const Tensor& t) {
  if (t.dim() == 4 && IsChannelsLastStrides(t.sizes(), t.strides())) {
    return MemoryFormat::kChannelsLast;
  }
  if (t.dim() == 5 && IsChannelsLastStrides(t.sizes(), t.strides())) {
    return MemoryFormat::kChannelsLast3d;
  }
  return MemoryFormat::kContiguous;
}

// Resize: self.resize_(size, memory_format=format), where ATen's resize_impl_cpu_ and
// empty_tensor_restride run one after the other. Every check comes first here, so a refused
// call leaves self unchanged (ATen resizes before it refuses a memory format).
absl::Status Resize(const OperatorHandle& op, const Tensor& self, IntArrayRef size,
                    std::optional<MemoryFormat> format) {
  // ATen's numel check reads each size as unsigned, so a negative one overflows the product
  // (and slips through beside a 0: size [0, -1] is accepted there); every one is refused here.
  for (const int64_t d : size) {
    if (d < 0) {
      return Invalid(op, absl::StrFormat("numel: integer multiplication overflow (size %s has "
                                         "the negative dimension %d)",
                                         ShapeToString(size), d));
    }
  }
  if (!ComputeNumel(size).ok()) {
    return Invalid(op, absl::StrFormat("numel: integer multiplication overflow (size %s)",
                                       ShapeToString(size)));
  }
  const int64_t numel = *ComputeNumel(size);
  if (format == MemoryFormat::kPreserve) {
    return Invalid(op, "Unsupported memory formatPreserve");  // ATen's words, c10's name
  }
  if (format == MemoryFormat::kChannelsLast && size.size() != 4) {
    return Invalid(op, "required rank 4 tensor to use channels_last format");
  }
  if (format == MemoryFormat::kChannelsLast3d && size.size() != 5) {
    return Invalid(op, "required rank 5 tensor to use channels_last_3d format");
  }
  // The same sizes and no memory format: nothing changes, strides included (ATen's early
  // return), so a transposed self stays transposed.
  if (!format && SameDims(self.sizes(), size)) return absl::OkStatus();
  std::optional<DimVector> strides;
  if (format == MemoryFormat::kChannelsLast || format == MemoryFormat::kChannelsLast3d) {
    strides = ChannelsLastStrides(size);
  } else if (absl::StatusOr<DimVector> contiguous = ContiguousStrides(size); contiguous.ok()) {
    strides = *std::move(contiguous);
  }
  if (!strides) {  // c10's empty_tensor_restride: [0, 2^32, 2^32, 2^32]
    return Invalid(op,
                   absl::StrFormat("Stride calculation overflowed (size %s)", ShapeToString(size)));
  }
  TensorImpl& impl = *self.impl();
  Ref<StorageImpl> storage = impl.storage();
  // Both layouts are dense: the view needs offset + numel elements, whose bytes must fit int64
  // (ATen's computeStorageNbytesContiguous, on every device, meta too). A view without elements
  // needs none (ATen does not resize the storage for it).
  const size_t itemsize = impl.itemsize();
  int64_t needed = 0;
  if (__builtin_add_overflow(impl.storage_offset(), numel, &needed) ||
      needed > INT64_MAX / static_cast<int64_t>(itemsize)) {
    return Invalid(op, absl::StrFormat("Storage size calculation overflowed with sizes=%s",
                                       ShapeToString(size)));
  }
  const bool grows = numel > 0 && static_cast<uint64_t>(needed) > storage->nbytes() / itemsize;
  if (grows) {
    // Note [Growing a storage] (core/tensor.cc): a new storage with the old bytes, never new
    // memory under the old storage. Memory Tessera did not allocate cannot grow, as PyTorch's
    // non-resizable storages (from_numpy, DLPack-less wrapping) cannot.
    const bool meta = self.device().type == DeviceType::kMeta;
    if (!meta && storage->allocator() == nullptr) {
      return Invalid(op, "Trying to resize storage that is not resizable");
    }
    TSR_ASSIGN_OR_RETURN(Tensor grown, Empty({needed}, self.dtype(), self.device()));
    Ref<StorageImpl> fresh = grown.impl()->storage();
    // The old bytes move as bytes (any dtype, any device: copy_ of two uint8 views), all of
    // them: other elements than self's may be read through self later.
    const size_t old_bytes = storage->nbytes();
    if (!meta && old_bytes > 0) {
      const int64_t n = static_cast<int64_t>(old_bytes);
      TSR_ASSIGN_OR_RETURN(Tensor from, FromStorage(storage, ScalarType::kUInt8, {n}, {1}, 0));
      TSR_ASSIGN_OR_RETURN(Tensor to, FromStorage(fresh, ScalarType::kUInt8, {n}, {1}, 0));
      TSR_RETURN_IF_ERROR(
          CallOne(op.registry(), "copy_", {Value(to), Value(from), Value(false)}).status());
    }
    // The bytes past the old ones are unspecified, as ATen's uninitialized memory, but zeros
    // here: a bool (or any type whose bit patterns are not all values) read from raw memory is
    // undefined behaviour in every later kernel (UBSan: "load of value 30, which is not a valid
    // value for type 'bool'", copying a grown bool tensor).
    const int64_t fresh_bytes = needed * static_cast<int64_t>(itemsize);
    if (!meta && fresh_bytes > static_cast<int64_t>(old_bytes)) {
      const int64_t start = static_cast<int64_t>(old_bytes);
      TSR_ASSIGN_OR_RETURN(Tensor tail, FromStorage(fresh, ScalarType::kUInt8,
                                                    {fresh_bytes - start}, {1}, start));
      TSR_RETURN_IF_ERROR(
          CallOne(op.registry(), "fill_.Scalar", {Value(tail), Value(Scalar(int64_t{0}))})
              .status());
    }
    storage = std::move(fresh);
  }
  absl::Status set = impl.SetShapeAndStorage(size, *strides, std::move(storage));
  if (!set.ok()) return absl::Status(set.code(), absl::StrCat(op.name(), ": ", set.message()));
  return absl::OkStatus();
}

// resize_(self, size, *, memory_format=None) -> self.
TensorsOr ResizeInPlace(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  TSR_RETURN_IF_ERROR(Resize(op, self, s[1].int_list(), Format(s[2])));
  return std::vector<Tensor>{self};
}

// resize_as_(self, the_template, *, memory_format=None): self.resize_(the_template.sizes()),
// then restrided to memory_format if one is given, Preserve meaning the template's suggested
// format (ATen's resize_as_; None leaves the strides as resize_ left them). The template's
// dtype and device do not matter there (only its sizes and strides are read); here it is on
// self's device, or a 0-dim CPU tensor, as the dispatcher takes an op's tensors.
absl::Status ResizeAs(const OperatorHandle& op, const Tensor& self, const Tensor& like,
                      std::optional<MemoryFormat> format) {
  if (format == MemoryFormat::kPreserve) format = SuggestMemoryFormat(like);
  return Resize(op, self, like.sizes(), format);
}

TensorsOr ResizeAsInPlace(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  TSR_RETURN_IF_ERROR(ResizeAs(op, self, s[1].tensor(), Format(s[2])));
  return std::vector<Tensor>{self};
}

// The functional forms, as ATen's autogenerated ones: a clone of self (memory_format None:
// preserved, so a dense non-contiguous self keeps its strides and the resized clone shows its
// elements in memory order) resized in place.
absl::StatusOr<Tensor> ResizedOf(const OperatorHandle& op, const Stack& s) {
  TSR_ASSIGN_OR_RETURN(Tensor copy, CallOne(op.registry(), "clone", {s[0], Value(std::nullopt)}));
  TSR_RETURN_IF_ERROR(Resize(op, copy, s[1].int_list(), Format(s[2])));
  return copy;
}

absl::StatusOr<Tensor> ResizedAsOf(const OperatorHandle& op, const Stack& s) {
  TSR_ASSIGN_OR_RETURN(Tensor copy, CallOne(op.registry(), "clone", {s[0], Value(std::nullopt)}));
  TSR_RETURN_IF_ERROR(ResizeAs(op, copy, s[1].tensor(), Format(s[2])));
  return copy;
}

// The out= forms, as ATen's autogenerated ones: the functional result, out resized to its
// shape (resize_output) and copied in with copy_, which converts to any dtype of out.
template <absl::StatusOr<Tensor> (*F)(const OperatorHandle&, const Stack&)>
TensorsOr IntoAnyOut(const OperatorHandle& op, const Stack& s) {
  TSR_ASSIGN_OR_RETURN(Tensor result, F(op, s));
  const Tensor& out = s[3].tensor();
  TSR_RETURN_IF_ERROR(out.impl()->ResizeOutput(op.name(), result.sizes()));
  TSR_RETURN_IF_ERROR(CallOne(op.registry(), "copy_", {out, result}).status());
  return std::vector<Tensor>{out};
}

}  // namespace

absl::Status DefineResizeOps(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(DefineAll(
      registry,
      {
          {"resize_(Tensor(a!) self, SymInt[] size, *, MemoryFormat? memory_format=None) -> "
           "Tensor(a!)",
           MakeKernel<Named<ResizeInPlace>>("core::resize_")},
          {"resize(Tensor self, SymInt[] size, *, MemoryFormat? memory_format=None) -> Tensor",
           MakeKernel<Named<ComputeOne<ResizedOf>>>("core::resize")},
          {"resize.out(Tensor self, SymInt[] size, *, MemoryFormat? memory_format=None, "
           "Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<IntoAnyOut<ResizedOf>>>("core::resize_out")},
          {"resize_as_(Tensor(a!) self, Tensor the_template, *, MemoryFormat? "
           "memory_format=None) -> Tensor(a!)",
           MakeKernel<Named<ResizeAsInPlace>>("core::resize_as_")},
          {"resize_as(Tensor self, Tensor the_template, *, MemoryFormat? memory_format=None) -> "
           "Tensor",
           MakeKernel<Named<ComputeOne<ResizedAsOf>>>("core::resize_as")},
          {"resize_as.out(Tensor self, Tensor the_template, *, MemoryFormat? "
           "memory_format=None, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<IntoAnyOut<ResizedAsOf>>>("core::resize_as_out")},
      },
      KernelSlot::kComposite));
  // Only shapes (and the template's strides) are read before anything is written, so self may
  // be the template, and out may overlap self (Note [Memory overlap]: kReadsFirst). What a
  // write into an expanded self or out refuses stays refused.
  for (const char* name : {"resize_as_", "resize.out", "resize_as.out"}) {
    TSR_RETURN_IF_ERROR(registry.SetOutputAliasing(name, OutputAliasing::kReadsFirst));
  }
  return absl::OkStatus();
}

}  // namespace ops
}  // namespace tessera
