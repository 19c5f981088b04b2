// Reading the value of a one-element tensor, whatever its device.
//
// A device kernel may receive 0-dim CPU tensors among its tensor arguments: as in PyTorch, a
// 0-dim CPU tensor (`torch.tensor(2.0)`) joins tensors of any device, like a Scalar
// (docs/plugin_guide.md, "0-dim CPU tensors reach device kernels"). Its data_ptr() is host
// memory, so a kernel that hands every data pointer to its device's memory functions would
// misread it or crash. sdk::item reads such an argument on either side:
//
//   sdk::Tensor my_mul(const sdk::Tensor& self, const sdk::Tensor& other) {
//     if (other.dim() == 0) return scale_on_device(self, sdk::item<float>(other, "mul other"));
//     ...
//   }
//
// On the CPU it reads the element directly; on any other device through the device's copy
// functions (tsr_tensor_copy_to_host), so it never dereferences device memory.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "tessera/sdk/boxing.hpp"
#include "tessera/sdk/half.hpp"

namespace tessera {
namespace sdk {

// item returns the value of `t`, a tensor with exactly one element (0-dim, or any shape of one
// element), as a Scalar of its kind: bool for bool, int for the integer dtypes, double for the
// floating ones (float16 and bfloat16 widened exactly). `what` names the op and argument in
// errors ("mul.Tensor: argument 'other'"). Errors: an undefined tensor, a tensor of another
// number of elements, a meta tensor (it has no value): INVALID_ARGUMENT.
inline Scalar item(const Tensor& t, std::string_view what = "sdk::item") {
  if (!t.defined()) {
    fail(TSR_INVALID_ARGUMENT,
         std::string(what) + ": expected a tensor with one element, got an undefined tensor");
  }
  if (t.numel() != 1) {
    std::string shape = "[";
    for (size_t i = 0; i < t.sizes().size; ++i) {
      shape += (i ? ", " : "") + std::to_string(t.sizes()[i]);
    }
    fail(TSR_INVALID_ARGUMENT, std::string(what) +
                                   ": expected a tensor with one element (0-dim), got one of "
                                   "shape " +
                                   shape + "] with " + std::to_string(t.numel()) + " elements");
  }
  const tsr_device device = t.device();
  if (device.type == TSR_DEVICE_META) {
    fail(TSR_INVALID_ARGUMENT,
         std::string(what) + ": expected a tensor with a value, got a meta tensor (it has none)");
  }
  unsigned char bytes[8] = {};
  const size_t size = t.itemsize();
  if (size == 0 || size > sizeof bytes) {
    fail(TSR_INVALID_ARGUMENT,
         std::string(what) + ": invalid dtype " + std::to_string(static_cast<int>(t.dtype())));
  }
  if (device.type == TSR_DEVICE_CPU) {
    std::memcpy(bytes, t.data_ptr(), size);  // element 0 of host memory
  } else {
    t.copy_to_host(bytes, size);  // through the device's copy functions
  }
  auto as = [&bytes](auto zero) {
    decltype(zero) v;
    std::memcpy(&v, bytes, sizeof v);
    return v;
  };
  switch (t.dtype()) {
    case TSR_DTYPE_BOOL:
      return Scalar(bytes[0] != 0);
    case TSR_DTYPE_UINT8:
      return Scalar(static_cast<int64_t>(as(uint8_t{})));
    case TSR_DTYPE_INT8:
      return Scalar(static_cast<int64_t>(as(int8_t{})));
    case TSR_DTYPE_INT16:
      return Scalar(static_cast<int64_t>(as(int16_t{})));
    case TSR_DTYPE_INT32:
      return Scalar(static_cast<int64_t>(as(int32_t{})));
    case TSR_DTYPE_INT64:
      return Scalar(as(int64_t{}));
    case TSR_DTYPE_FLOAT16:
      return Scalar(static_cast<double>(to_float(Half{as(uint16_t{})})));
    case TSR_DTYPE_BFLOAT16:
      return Scalar(static_cast<double>(to_float(BFloat16{as(uint16_t{})})));
    case TSR_DTYPE_FLOAT32:
      return Scalar(static_cast<double>(as(float{})));
    case TSR_DTYPE_FLOAT64:
      return Scalar(as(double{}));
    default:
      break;
  }
  fail(TSR_INVALID_ARGUMENT,
       std::string(what) + ": invalid dtype " + std::to_string(static_cast<int>(t.dtype())));
}

// item<T> converts the value to T as a C++ cast from the Scalar would: bool is "not zero",
// integers truncate a floating value (Scalar::to_int, defined also out of range), floating
// types take the value (an integer above 2^53 rounds).
template <typename T>
T item(const Tensor& t, std::string_view what = "sdk::item") {
  static_assert(std::is_arithmetic_v<T>, "sdk::item<T>: T is a C++ arithmetic type");
  const Scalar v = item(t, what);
  if constexpr (std::is_same_v<T, bool>) {
    return v.is_floating_point() ? v.to_double() != 0.0 : v.to_int() != 0;
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v.to_double());
  } else {
    return static_cast<T>(v.to_int());
  }
}

}  // namespace sdk
}  // namespace tessera
