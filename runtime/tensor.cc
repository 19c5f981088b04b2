#include "tessera/c/tensor.h"

#include <cstring>

#include "absl/numeric/int128.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "core/status_macros.h"
#include "core/views.h"
#include "runtime/device_registry.h"
#include "runtime/handles.h"
#include "runtime/runtime_state.h"
#include "runtime/struct_sizes.h"

namespace tessera {
namespace capi {
namespace {

// Takes the enum by reference: see RawEnum.
absl::StatusOr<ScalarType> ToDtype(const tsr_dtype& dtype, const char* fn) {
  const int32_t raw = RawEnum(dtype);
  if (!IsValidScalarType(raw)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: expected a tsr_dtype in [0, %d), got %d", fn, kNumScalarTypes, raw));
  }
  return static_cast<ScalarType>(raw);
}

absl::StatusOr<IntArrayRef> ToDims(const int64_t* dims, size_t ndim, const char* what,
                                   const char* fn) {
  if (ndim > 0 && dims == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: expected %d %s, got NULL", fn, ndim, what));
  }
  return IntArrayRef(dims, ndim);
}

absl::Status CheckOut(const void* out, const char* fn) {
  if (out == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: expected an output pointer, got NULL", fn));
  }
  return absl::OkStatus();
}

absl::Status CheckTensor(const tsr_tensor* t, const char* arg, const char* fn) {
  if (t == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: expected a tensor for '%s', got NULL", fn, arg));
  }
  return absl::OkStatus();
}

// CheckHostCopy: `nbytes` matches the tensor and the tensor has data.
absl::Status CheckHostCopy(const Tensor& t, const void* buffer, size_t nbytes, const char* fn) {
  const size_t expected = t.impl()->nbytes();
  if (nbytes != expected) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: expected a buffer of %d bytes (%s), got %d bytes", fn, expected,
                        t.ToString(), nbytes));
  }
  if (buffer == nullptr && nbytes > 0) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: expected a host buffer, got NULL", fn));
  }
  if (t.device().type == DeviceType::kMeta) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %s is a meta tensor and has no data to copy", fn, t.ToString()));
  }
  return absl::OkStatus();
}

// WrapHostMemory: tsr_tensor_from_host_memory with a storage offset (elements from `data`).
tsr_error* WrapHostMemory(const char* fn, void* data, size_t nbytes, int64_t storage_offset,
                          const int64_t* sizes, const int64_t* strides, size_t ndim,
                          const tsr_dtype& dtype, tsr_deleter_fn deleter, void* deleter_context,
                          tsr_tensor** out) {
  if (auto s = CheckOut(out, fn); !s.ok()) return ToError(s);
  *out = nullptr;
  absl::StatusOr<IntArrayRef> dims = ToDims(sizes, ndim, "sizes", fn);
  absl::StatusOr<ScalarType> type = ToDtype(dtype, fn);
  for (const absl::Status& s : {dims.status(), type.status()}) {
    if (!s.ok()) return ToError(s);
  }
  // Validate everything before the storage exists: on error the memory stays the caller's
  // and the deleter must not run.
  auto named = [fn](const absl::Status& s) {
    return MakeError(s.code(), absl::StrCat(fn, ": ", s.message()));
  };
  absl::StatusOr<int64_t> numel = ComputeNumel(*dims);
  if (!numel.ok()) return named(numel.status());
  DimVector steps;
  if (strides != nullptr) {
    steps.assign(strides, strides + ndim);
  } else {
    absl::StatusOr<DimVector> contiguous = ContiguousStrides(*dims);
    if (!contiguous.ok()) return named(contiguous.status());
    steps = *std::move(contiguous);
  }
  absl::StatusOr<int64_t> elements = StorageElementsFor(*dims, steps);
  if (!elements.ok()) return named(elements.status());
  if (storage_offset < 0) {
    return ToError(absl::InvalidArgumentError(
        absl::StrFormat("%s: expected a non-negative storage offset, got %d", fn, storage_offset)));
  }
  const size_t item = ElementSize(*type);
  // An empty view needs no memory, wherever it starts (as FromStorage has it).
  const uint64_t end = *elements == 0 ? 0
                                      : static_cast<uint64_t>(storage_offset) +
                                            static_cast<uint64_t>(*elements);  // < 2^64
  if (end > nbytes / item) {
    const std::string at = storage_offset == 0
                               ? std::string()
                               : absl::StrFormat(" at storage offset %d", storage_offset);
    return ToError(absl::InvalidArgumentError(absl::StrFormat(
        "%s: a %s view with sizes %s and strides %s%s needs %d bytes, but %d were given", fn,
        ScalarTypeName(*type), ShapeToString(*dims), ShapeToString(steps), at,
        absl::uint128(end) * item, nbytes)));
  }
  if (data == nullptr && nbytes > 0) {
    return ToError(absl::InvalidArgumentError(
        absl::StrFormat("%s: expected host memory for %d bytes, got NULL", fn, nbytes)));
  }
  // Kernels read elements as T*: a misaligned T* is undefined behaviour, which vectorized
  // loops may turn into a fault or wrong lanes. DLPack imports refuse it the same way. An
  // empty view reads nothing, wherever it starts.
  if (*elements > 0 && reinterpret_cast<uintptr_t>(data) % item != 0) {
    return ToError(absl::InvalidArgumentError(absl::StrFormat(
        "%s: expected data aligned to %d bytes (the size of a %s element), found %p", fn, item,
        ScalarTypeName(*type), data)));
  }
  DataPtr ptr;
  ptr.data = data;
  ptr.deleter = deleter;
  ptr.deleter_context = deleter_context;
  // A plugin's deleter is the plugin's code: the plugin stays loaded (mapped) until it ran,
  // as for the device memory it allocates. That costs a dladdr and a lock per wrap with a
  // deleter; kernels that allocate their outputs with tensor_empty do not pay it.
  if (deleter != nullptr) ptr.owner = PluginOwning(reinterpret_cast<const void*>(deleter));
  ptr.device = Device(DeviceType::kCPU);
  absl::StatusOr<Tensor> t = FromStorage(Ref<StorageImpl>::Make(std::move(ptr), nbytes), *type,
                                         *dims, steps, storage_offset);
  if (!t.ok()) return ToError(t.status());  // unreachable after the checks above
  *out = Wrap(*std::move(t));
  return nullptr;
}

}  // namespace
}  // namespace capi
}  // namespace tessera

using namespace tessera;        // NOLINT: this file only implements the C entry points
using namespace tessera::capi;  // NOLINT

extern "C" {

tsr_error* tsr_tensor_empty(const int64_t* sizes, size_t ndim, tsr_dtype dtype, tsr_device device,
                            tsr_tensor** out) {
  return Guard(__func__, [&]() -> tsr_error* {
    constexpr const char* fn = "tsr_tensor_empty";
    if (auto s = CheckOut(out, fn); !s.ok()) return ToError(s);
    *out = nullptr;
    absl::StatusOr<IntArrayRef> dims = ToDims(sizes, ndim, "sizes", fn);
    absl::StatusOr<ScalarType> type = ToDtype(dtype, fn);
    absl::StatusOr<Device> dev = ToDevice(device, fn);
    if (!dims.ok()) return ToError(dims.status());
    if (!type.ok()) return ToError(type.status());
    if (!dev.ok()) return ToError(dev.status());
    absl::StatusOr<Tensor> t = Empty(*dims, *type, *dev);
    if (!t.ok()) return ToError(t.status());
    *out = Wrap(*std::move(t));
    return nullptr;
  });
}

tsr_error* tsr_tensor_empty_strided(const int64_t* sizes, const int64_t* strides, size_t ndim,
                                    tsr_dtype dtype, tsr_device device, tsr_tensor** out) {
  return Guard(__func__, [&]() -> tsr_error* {
    constexpr const char* fn = "tsr_tensor_empty_strided";
    if (auto s = CheckOut(out, fn); !s.ok()) return ToError(s);
    *out = nullptr;
    absl::StatusOr<IntArrayRef> dims = ToDims(sizes, ndim, "sizes", fn);
    absl::StatusOr<IntArrayRef> steps = ToDims(strides, ndim, "strides", fn);
    absl::StatusOr<ScalarType> type = ToDtype(dtype, fn);
    absl::StatusOr<Device> dev = ToDevice(device, fn);
    for (const absl::Status& s : {dims.status(), steps.status(), type.status(), dev.status()}) {
      if (!s.ok()) return ToError(s);
    }
    absl::StatusOr<Tensor> t = EmptyStrided(*dims, *steps, *type, *dev);
    if (!t.ok()) return ToError(t.status());
    *out = Wrap(*std::move(t));
    return nullptr;
  });
}

tsr_error* tsr_tensor_from_host_memory(void* data, size_t nbytes, const int64_t* sizes,
                                       const int64_t* strides, size_t ndim, tsr_dtype dtype,
                                       tsr_deleter_fn deleter, void* deleter_context,
                                       tsr_tensor** out) {
  return Guard(__func__, [&]() -> tsr_error* {
    return WrapHostMemory("tsr_tensor_from_host_memory", data, nbytes, 0, sizes, strides, ndim,
                          dtype, deleter, deleter_context, out);
  });
}

tsr_error* tsr_tensor_from_host_memory_desc(const tsr_host_memory_desc* desc, tsr_tensor** out) {
  return Guard(__func__, [&]() -> tsr_error* {
    constexpr const char* fn = "tsr_tensor_from_host_memory_desc";
    if (auto s = CheckOut(out, fn); !s.ok()) return ToError(s);
    *out = nullptr;
    if (desc == nullptr) {
      return ToError(absl::InvalidArgumentError(
          absl::StrFormat("%s: expected a tsr_host_memory_desc, got NULL", fn)));
    }
    // Every field is 1.1's: a caller's struct must hold them all (a later minor's fields, read
    // only within struct_size, would default to zero).
    constexpr size_t kSize_1_1 = size_in_1_1::tsr_host_memory_desc;
    if (desc->struct_size < kSize_1_1) {
      return ToError(absl::InvalidArgumentError(absl::StrFormat(
          "%s: expected desc->struct_size >= %d (sizeof(tsr_host_memory_desc) of ABI 1.1), got %d",
          fn, kSize_1_1, desc->struct_size)));
    }
    tsr_dtype dtype;
    std::memcpy(&dtype, &desc->dtype, sizeof dtype);
    return WrapHostMemory(fn, desc->data, desc->nbytes, desc->storage_offset, desc->sizes,
                          desc->strides, desc->ndim, dtype, desc->deleter, desc->deleter_context,
                          out);
  });
}

tsr_error* tsr_tensor_as_strided(tsr_tensor* tensor, const int64_t* sizes, const int64_t* strides,
                                 size_t ndim, int64_t storage_offset, tsr_tensor** out) {
  return Guard(__func__, [&]() -> tsr_error* {
    constexpr const char* fn = "tsr_tensor_as_strided";
    if (auto s = CheckOut(out, fn); !s.ok()) return ToError(s);
    *out = nullptr;
    if (auto s = CheckTensor(tensor, "tensor", fn); !s.ok()) return ToError(s);
    absl::StatusOr<IntArrayRef> dims = ToDims(sizes, ndim, "sizes", fn);
    absl::StatusOr<IntArrayRef> steps = ToDims(strides, ndim, "strides", fn);
    for (const absl::Status& s : {dims.status(), steps.status()}) {
      if (!s.ok()) return ToError(s);
    }
    // core/views.h's AsStrided is the as_strided op's: the same checks, messages prefixed with
    // "as_strided: "; restate them as this function's.
    absl::StatusOr<Tensor> view = AsStrided(Borrow(tensor), *dims, *steps, storage_offset);
    if (!view.ok()) {
      absl::string_view message = view.status().message();
      absl::ConsumePrefix(&message, "as_strided: ");
      return MakeError(view.status().code(), absl::StrCat(fn, ": ", message));
    }
    *out = Wrap(*std::move(view));
    return nullptr;
  });
}

tsr_error* tsr_tensor_copy_from_host(tsr_tensor* dst, const void* src, size_t nbytes) {
  return Guard(__func__, [&]() -> tsr_error* {
    constexpr const char* fn = "tsr_tensor_copy_from_host";
    if (auto s = CheckTensor(dst, "dst", fn); !s.ok()) return ToError(s);
    Tensor t = Borrow(dst);
    if (auto s = CheckHostCopy(t, src, nbytes, fn); !s.ok()) return ToError(s);
    return ToError(CopyFromHost(src, t));
  });
}

tsr_error* tsr_tensor_copy_to_host(const tsr_tensor* src, void* dst, size_t nbytes) {
  return Guard(__func__, [&]() -> tsr_error* {
    constexpr const char* fn = "tsr_tensor_copy_to_host";
    if (auto s = CheckTensor(src, "src", fn); !s.ok()) return ToError(s);
    Tensor t = Borrow(src);
    if (auto s = CheckHostCopy(t, dst, nbytes, fn); !s.ok()) return ToError(s);
    return ToError(CopyToHost(t, dst));
  });
}

tsr_error* tsr_tensor_copy_from_host_async(tsr_tensor* dst, const void* src, size_t nbytes,
                                           tsr_stream* stream) {
  return Guard(__func__, [&]() -> tsr_error* {
    constexpr const char* fn = "tsr_tensor_copy_from_host_async";
    if (auto s = CheckTensor(dst, "dst", fn); !s.ok()) return ToError(s);
    Tensor t = Borrow(dst);
    if (auto s = CheckHostCopy(t, src, nbytes, fn); !s.ok()) return ToError(s);
    return ToError(CopyFromHostAsync(src, t, stream));
  });
}

tsr_error* tsr_tensor_copy_to_host_async(const tsr_tensor* src, void* dst, size_t nbytes,
                                         tsr_stream* stream) {
  return Guard(__func__, [&]() -> tsr_error* {
    constexpr const char* fn = "tsr_tensor_copy_to_host_async";
    if (auto s = CheckTensor(src, "src", fn); !s.ok()) return ToError(s);
    Tensor t = Borrow(src);
    if (auto s = CheckHostCopy(t, dst, nbytes, fn); !s.ok()) return ToError(s);
    return ToError(CopyToHostAsync(t, dst, stream));
  });
}

void tsr_tensor_retain(tsr_tensor* tensor) {
  if (tensor) Unwrap(tensor)->Retain();
}

void tsr_tensor_release(tsr_tensor* tensor) {
  if (tensor) Unwrap(tensor)->Release();
}

int64_t tsr_tensor_dim(const tsr_tensor* t) { return t ? Unwrap(t)->dim() : 0; }
const int64_t* tsr_tensor_sizes(const tsr_tensor* t) {
  return t ? Unwrap(t)->sizes().data() : nullptr;
}
const int64_t* tsr_tensor_strides(const tsr_tensor* t) {
  return t ? Unwrap(t)->strides().data() : nullptr;
}
int64_t tsr_tensor_storage_offset(const tsr_tensor* t) {
  return t ? Unwrap(t)->storage_offset() : 0;
}
int64_t tsr_tensor_numel(const tsr_tensor* t) { return t ? Unwrap(t)->numel() : 0; }
tsr_dtype tsr_tensor_dtype(const tsr_tensor* t) {
  return t ? static_cast<tsr_dtype>(Unwrap(t)->dtype()) : TSR_DTYPE_FLOAT32;
}
tsr_device tsr_tensor_device(const tsr_tensor* t) {
  if (t == nullptr) return tsr_device{TSR_DEVICE_CPU, 0};
  const Device d = Unwrap(t)->device();
  return tsr_device{static_cast<int32_t>(d.type), d.index};
}
int32_t tsr_tensor_is_contiguous(const tsr_tensor* t) { return t ? Unwrap(t)->is_contiguous() : 0; }
uint64_t tsr_tensor_immutable_id(const tsr_tensor* t) { return t ? Unwrap(t)->immutable_id() : 0; }
void* tsr_tensor_data_ptr(const tsr_tensor* t) { return t ? Unwrap(t)->data_ptr() : nullptr; }

size_t tsr_dtype_size(tsr_dtype dtype) {
  const int32_t raw = RawEnum(dtype);
  return IsValidScalarType(raw) ? ElementSize(static_cast<ScalarType>(raw)) : 0;
}

}  // extern "C"
