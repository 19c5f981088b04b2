// Tensor: an owning (reference-counted) handle to a tsr_tensor, usable by plugins and
// applications alike.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/sdk/dispatch.hpp"
#include "tessera/sdk/dtypes.hpp"
#include "tessera/sdk/error.hpp"
#include "tessera/sdk/type_name.hpp"

namespace tessera {
// The argument types of the Tensor methods' parameters (runtime.hpp, boxing.hpp): declared here,
// where tensor_methods.inc names them, and defined where ops.hpp, which defines the methods,
// includes them.
struct IntListArg;
struct IntListOrNone;
struct FloatListOrNone;
struct BoolArg;
struct StringArg;
namespace sdk {
struct Scalar;
class Generator;
}  // namespace sdk

namespace sdk {

namespace internal {
// HostTypeName: the C++ type of dtype `d`'s host elements, for messages: dispatch.hpp's types,
// spelt as a user writes them (type_name would say "long int" for int64_t).
static_assert(kNumDtypes == 10, "HostTypeName and HostElementFits need a case for the new dtype");
inline const char* HostTypeName(tsr_dtype d) {
  switch (d) {
    case TSR_DTYPE_BOOL:
      return "uint8_t";
    case TSR_DTYPE_UINT8:
      return "uint8_t";
    case TSR_DTYPE_INT8:
      return "int8_t";
    case TSR_DTYPE_INT16:
      return "int16_t";
    case TSR_DTYPE_INT32:
      return "int32_t";
    case TSR_DTYPE_INT64:
      return "int64_t";
    case TSR_DTYPE_FLOAT16:
      return "sdk::Half (or uint16_t for its bits)";
    case TSR_DTYPE_BFLOAT16:
      return "sdk::BFloat16 (or uint16_t for its bits)";
    case TSR_DTYPE_FLOAT32:
      return "float";
    case TSR_DTYPE_FLOAT64:
      return "double";
    default:
      return "no type (not a dtype)";
  }
}

// HostElementFits<T>(dtype): whether host elements of type T hold a tensor of `dtype` value for
// value. A float tensor read as int32_t gave its bits as integers, silently, when only sizes
// were compared. So a number type must be the dtype's own: float for float32, double for
// float64, an integer of the dtype's size and signedness for an integer dtype (int64_t or
// long long for int64; uint8_t also for bool, whose elements are 0 or 1; std::vector<bool> has
// no data() to copy through), sdk::Half or sdk::BFloat16 for theirs, or uint16_t for those
// two's bits. Another type (a struct) is taken on its size alone.
template <typename T>
bool HostElementFits(tsr_dtype d) {
  if (sizeof(T) != element_size(d)) return false;
  if constexpr (std::is_same_v<T, Half>) return d == TSR_DTYPE_FLOAT16;
  if constexpr (std::is_same_v<T, BFloat16>) return d == TSR_DTYPE_BFLOAT16;
  if constexpr (std::is_floating_point_v<T>) {
    return d == (sizeof(T) == 4 ? TSR_DTYPE_FLOAT32 : TSR_DTYPE_FLOAT64);
  }
  if constexpr (std::is_same_v<T, bool>) return false;  // std::vector<bool>: see above
  if constexpr (std::is_integral_v<T>) {
    if (d == TSR_DTYPE_FLOAT16 || d == TSR_DTYPE_BFLOAT16) return std::is_unsigned_v<T>;  // bits
    if (d == TSR_DTYPE_BOOL || d == TSR_DTYPE_UINT8) return std::is_unsigned_v<T>;
    return is_integral(d, /*include_bool=*/false) && std::is_signed_v<T>;
  }
  return true;  // a type of no dtype, of the right size
}
// CheckHostElements refuses host elements of type T for a tensor of `dtype`, naming both.
template <typename T>
void CheckHostElements(const char* what, tsr_dtype d) {
  if (HostElementFits<T>(d)) return;
  fail(TSR_INVALID_ARGUMENT, std::string(what) + ": host elements of type " +
                                 std::string(type_name<T>()) + " (" + std::to_string(sizeof(T)) +
                                 " bytes) for a tensor of dtype " + dtype_name(d) + ", expected " +
                                 HostTypeName(d));
}
}  // namespace internal

// IntSpan: a borrowed array of int64 (sizes, strides, int list arguments).
struct IntSpan {
  const int64_t* data = nullptr;
  size_t size = 0;
  const int64_t* begin() const { return data; }
  const int64_t* end() const { return data + size; }
  int64_t operator[](size_t i) const { return data[i]; }
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }
};

// BoolSpan: a borrowed array of bools, one byte (0 or 1) each (bool[] arguments, ABI 1.1).
struct BoolSpan {
  const uint8_t* data = nullptr;
  size_t size = 0;
  const uint8_t* begin() const { return data; }
  const uint8_t* end() const { return data + size; }
  bool operator[](size_t i) const { return data[i] != 0; }
  std::vector<bool> vec() const { return std::vector<bool>(begin(), end()); }
};

inline constexpr tsr_device kCpu = {TSR_DEVICE_CPU, 0};
// kMeta: where Meta functions put their results (shape and dtype, no memory).
inline constexpr tsr_device kMeta = {TSR_DEVICE_META, 0};

class Tensor {
 public:
  Tensor() = default;
  // adopt takes over a reference the caller owns; borrow adds one.
  static Tensor adopt(tsr_tensor* t) { return Tensor(t); }
  static Tensor borrow(tsr_tensor* t) {
    if (t) api().tensor_retain(t);
    return Tensor(t);
  }

  Tensor(const Tensor& o) : t_(o.t_) {
    if (t_) api().tensor_retain(t_);
  }
  Tensor(Tensor&& o) noexcept : t_(std::exchange(o.t_, nullptr)) {}
  Tensor& operator=(Tensor o) noexcept {
    std::swap(t_, o.t_);
    return *this;
  }
  ~Tensor() {
    if (t_) api().tensor_release(t_);
  }

  // empty allocates uninitialized elements on `device`.
  static Tensor empty(const std::vector<int64_t>& sizes, tsr_dtype dtype,
                      tsr_device device = kCpu) {
    tsr_tensor* t = nullptr;
    check(api().tensor_empty(sizes.data(), sizes.size(), dtype, device, &t));
    return adopt(t);
  }
  // from_host copies host values (row-major) into a new tensor on `device`.
  template <typename T>
  static Tensor from_host(const std::vector<T>& values, const std::vector<int64_t>& sizes,
                          tsr_dtype dtype, tsr_device device = kCpu) {
    internal::CheckHostElements<T>("from_host", dtype);
    Tensor t = empty(sizes, dtype, device);
    t.copy_from_host(values.data(), values.size() * sizeof(T));
    return t;
  }

  // from_host_memory wraps `nbytes` of host memory at `data` as a CPU tensor without copying
  // (tsr_tensor_from_host_memory; `strides` empty: contiguous). `release(data)` runs once, when
  // the last reference goes (on whichever thread drops it); an empty `release` borrows the
  // memory, which must then outlive every reference. On error `release` does not run: the
  // memory stays the caller's. An exception thrown by `release` is caught and dropped (it would
  // cross the C ABI).
  static Tensor from_host_memory(void* data, size_t nbytes, const std::vector<int64_t>& sizes,
                                 tsr_dtype dtype, std::function<void(void*)> release = {},
                                 const std::vector<int64_t>& strides = {}) {
    if (!strides.empty() && strides.size() != sizes.size()) {
      throw Error(TSR_INVALID_ARGUMENT,
                  "from_host_memory: expected " + std::to_string(sizes.size()) +
                      " strides (one per size), got " + std::to_string(strides.size()));
    }
    auto* owner = release ? new std::function<void(void*)>(std::move(release)) : nullptr;
    tsr_tensor* t = nullptr;
    tsr_error* e = api().tensor_from_host_memory(
        data, nbytes, sizes.data(), strides.empty() ? nullptr : strides.data(), sizes.size(), dtype,
        owner ? &ReleaseHostMemory : nullptr, owner, &t);
    if (e != nullptr) {
      delete owner;  // not called: the memory stays the caller's
      check(e);
    }
    return adopt(t);
  }
  // from_vector: a CPU tensor over `values` itself, moved in and kept alive by the tensor (no
  // element is copied); T is the dtype's C++ type, as for from_host.
  template <typename T>
  static Tensor from_vector(std::vector<T> values, const std::vector<int64_t>& sizes,
                            tsr_dtype dtype) {
    internal::CheckHostElements<T>("from_vector", dtype);
    auto* kept = new std::vector<T>(std::move(values));
    try {
      return from_host_memory(kept->data(), kept->size() * sizeof(T), sizes, dtype,
                              [kept](void*) { delete kept; });
    } catch (...) {
      delete kept;
      throw;
    }
  }

  void copy_from_host(const void* src, size_t nbytes) {
    check(api().tensor_copy_from_host(t_, src, nbytes));
  }
  void copy_to_host(void* dst, size_t nbytes) const {
    check(api().tensor_copy_to_host(t_, dst, nbytes));
  }
  // to_vector copies the elements to the host; T is the dtype's C++ type (HostElementFits).
  template <typename T>
  std::vector<T> to_vector() const {
    internal::CheckHostElements<T>("to_vector", dtype());
    std::vector<T> out(static_cast<size_t>(numel()));
    copy_to_host(out.data(), out.size() * sizeof(T));
    return out;
  }

  bool defined() const { return t_ != nullptr; }
  tsr_tensor* get() const { return t_; }
  tsr_tensor* release() { return std::exchange(t_, nullptr); }

  int64_t dim() const { return api().tensor_dim(t_); }
  IntSpan sizes() const { return IntSpan{api().tensor_sizes(t_), static_cast<size_t>(dim())}; }
  IntSpan strides() const { return IntSpan{api().tensor_strides(t_), static_cast<size_t>(dim())}; }
  int64_t size(int64_t d) const { return sizes()[static_cast<size_t>(d < 0 ? d + dim() : d)]; }
  int64_t numel() const { return api().tensor_numel(t_); }
  int64_t storage_offset() const { return api().tensor_storage_offset(t_); }
  tsr_dtype dtype() const { return api().tensor_dtype(t_); }
  tsr_device device() const { return api().tensor_device(t_); }
  bool is_contiguous() const { return api().tensor_is_contiguous(t_) != 0; }
  size_t itemsize() const { return api().dtype_size(dtype()); }
  void* data_ptr() const { return api().tensor_data_ptr(t_); }
  template <typename T>
  T* data() const {
    return static_cast<T*>(data_ptr());
  }

  // The ops ATen offers as Tensor methods, as methods, with the tensor as their `self`:
  // x.view({2, -1}), x.relu_(), x.sum({1}, true), x.transpose(0, 1).contiguous(). Declared here
  // (generated from dispatcher/tensor_methods.txt); tessera/sdk/ops.hpp defines them, so a
  // translation unit that calls one includes it (else the compiler says the inline function is
  // used but never defined).
#include "tessera/sdk/tensor_methods.inc"

 private:
  explicit Tensor(tsr_tensor* t) : t_(t) {}
  static void ReleaseHostMemory(void* data, void* context) {
    auto* release = static_cast<std::function<void(void*)>*>(context);
    try {
      (*release)(data);
    } catch (...) {  // nothing may cross the C ABI; the memory is the deleter's to free
    }
    delete release;
  }
  tsr_tensor* t_ = nullptr;
};

}  // namespace sdk
}  // namespace tessera
