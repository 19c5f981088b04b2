// Compile-time boxing: a typed C++ kernel becomes a tsr_boxed_kernel_fn.
//
//   sdk::Tensor add(const sdk::Tensor& self, const sdk::Tensor& other, sdk::Scalar alpha);
//   ... lib.impl<&add>("add.Tensor");
//
// The wrapper reads each parameter from the stack by its C++ type, calls the kernel, and pushes
// what it returns (a Tensor, a std::tuple of them, or nothing for void). It allocates nothing
// of its own, and it catches every exception: an sdk::Error keeps its code, anything else
// becomes TSR_INTERNAL naming the exception.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "tessera/sdk/tensor.hpp"

namespace tessera {
namespace sdk {

// Scalar: a number that remembers whether it is a bool, an int or a double (tsr_scalar).
struct Scalar {
  tsr_scalar c{};
  Scalar() = default;
  Scalar(double v) {
    c.kind = TSR_SCALAR_DOUBLE;
    c.d = v;
  }  // NOLINT: implicit
  Scalar(int64_t v) {
    c.kind = TSR_SCALAR_INT;
    c.i = v;
  }                                                   // NOLINT: implicit
  Scalar(int v) : Scalar(static_cast<int64_t>(v)) {}  // NOLINT: implicit
  Scalar(bool v) {
    c.kind = TSR_SCALAR_BOOL;
    c.i = v;
  }  // NOLINT: implicit
  bool is_floating_point() const { return c.kind == TSR_SCALAR_DOUBLE; }
  double to_double() const { return c.kind == TSR_SCALAR_DOUBLE ? c.d : static_cast<double>(c.i); }
  // to_int truncates; a double that int64 cannot hold (NaN, inf, |v| >= 2^63) gives INT64_MIN,
  // what x86 (and so PyTorch on x86) gives, instead of C++'s undefined behaviour.
  int64_t to_int() const {
    if (c.kind != TSR_SCALAR_DOUBLE) return c.i;
    const bool fits = c.d >= -9223372036854775808.0 && c.d < 9223372036854775808.0;
    return fits ? static_cast<int64_t>(c.d) : INT64_MIN;
  }
};

namespace internal {

template <typename T>
struct ArgReader;

template <>
struct ArgReader<Tensor> {
  static Tensor read(const tsr_stack* s, size_t i) {
    tsr_tensor* t = nullptr;
    check(api().stack_get_tensor(s, i, &t));
    return Tensor::borrow(t);
  }
};
template <>
struct ArgReader<int64_t> {
  static int64_t read(const tsr_stack* s, size_t i) {
    int64_t v = 0;
    check(api().stack_get_int(s, i, &v));
    return v;
  }
};
template <>
struct ArgReader<double> {
  static double read(const tsr_stack* s, size_t i) {
    double v = 0;
    check(api().stack_get_double(s, i, &v));
    return v;
  }
};
template <>
struct ArgReader<bool> {
  static bool read(const tsr_stack* s, size_t i) {
    int32_t v = 0;
    check(api().stack_get_bool(s, i, &v));
    return v != 0;
  }
};
template <>
struct ArgReader<Scalar> {
  static Scalar read(const tsr_stack* s, size_t i) {
    Scalar v;
    check(api().stack_get_scalar(s, i, &v.c));
    return v;
  }
};
template <>
struct ArgReader<std::string_view> {
  static std::string_view read(const tsr_stack* s, size_t i) {
    tsr_string v{};
    check(api().stack_get_string(s, i, &v));
    return from_c(v);
  }
};
template <>
struct ArgReader<IntSpan> {
  static IntSpan read(const tsr_stack* s, size_t i) {
    IntSpan v;
    check(api().stack_get_int_list(s, i, &v.data, &v.size));
    return v;
  }
};
template <>
struct ArgReader<BoolSpan> {
  static BoolSpan read(const tsr_stack* s, size_t i) {
    // A 1.0 runtime has no bool[] slot (nor a way to pass one but a schema default).
    if (!TSR_API_HAS(&api(), stack_get_bool_list)) {
      throw Error(TSR_UNIMPLEMENTED,
                  "reading a bool[] argument needs a runtime of ABI 1.1 or newer (this one is " +
                      std::to_string(api().abi_major) + "." + std::to_string(api().abi_minor) +
                      ")");
    }
    BoolSpan v;
    check(api().stack_get_bool_list(s, i, &v.data, &v.size));
    return v;
  }
};
template <>
struct ArgReader<tsr_dtype> {
  static tsr_dtype read(const tsr_stack* s, size_t i) {
    tsr_dtype v{};
    check(api().stack_get_dtype(s, i, &v));
    return v;
  }
};
template <>
struct ArgReader<tsr_device> {
  static tsr_device read(const tsr_stack* s, size_t i) {
    tsr_device v{};
    check(api().stack_get_device(s, i, &v));
    return v;
  }
};
template <typename T>
struct ArgReader<std::optional<T>> {
  static std::optional<T> read(const tsr_stack* s, size_t i) {
    if (api().stack_kind(s, i) == TSR_VALUE_NONE) return std::nullopt;
    return ArgReader<T>::read(s, i);
  }
};

inline void push(tsr_stack* s, const Tensor& t) { check(api().stack_push_tensor(s, t.get())); }
template <typename... Ts>
void push(tsr_stack* s, const std::tuple<Ts...>& values) {
  std::apply([s](const auto&... v) { (push(s, v), ...); }, values);
}

template <typename F>
struct Signature;
template <typename R, typename... Args>
struct Signature<R (*)(Args...)> {
  using Return = R;
  using Params = std::tuple<std::decay_t<Args>...>;
  static constexpr size_t kArity = sizeof...(Args);
};

template <auto Kernel, size_t... I>
void CallBoxed(tsr_stack* stack, std::index_sequence<I...>) {
  using Sig = Signature<decltype(Kernel)>;
  // Read every argument before clearing the stack: the readers borrow from it.
  std::tuple<std::tuple_element_t<I, typename Sig::Params>...> args{
      ArgReader<std::tuple_element_t<I, typename Sig::Params>>::read(stack, I)...};
  if constexpr (std::is_void_v<typename Sig::Return>) {
    Kernel(std::get<I>(args)...);
    api().stack_clear(stack);
  } else {
    auto result = Kernel(std::get<I>(args)...);
    api().stack_clear(stack);
    push(stack, result);
  }
}

inline tsr_error* ToError(tsr_code code, const std::string& message) {
  return api().error_create(code, to_c(message));
}

}  // namespace internal

// Boxed<&kernel>: the C kernel function for a typed C++ kernel.
template <auto Kernel>
tsr_error* Boxed(void* /*context*/, const tsr_op* op, tsr_stack* stack) noexcept {
  try {
    internal::CallBoxed<Kernel>(
        stack, std::make_index_sequence<internal::Signature<decltype(Kernel)>::kArity>{});
    return nullptr;
  } catch (const Error& e) {
    return e.to_c();
  } catch (const std::exception& e) {
    return internal::ToError(TSR_INTERNAL, std::string(from_c(api().op_name(op))) +
                                               ": kernel threw an exception: " + e.what());
  } catch (...) {
    return internal::ToError(TSR_INTERNAL, std::string(from_c(api().op_name(op))) +
                                               ": kernel threw a non-standard exception");
  }
}

}  // namespace sdk
}  // namespace tessera
