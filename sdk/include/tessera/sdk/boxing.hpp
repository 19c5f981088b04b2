// Compile-time boxing: a typed C++ kernel becomes a tsr_boxed_kernel_fn.
//
//   sdk::Tensor add(const sdk::Tensor& self, const sdk::Tensor& other, sdk::Scalar alpha);
//   ... lib.impl<&add>("add.Tensor");
//
// The wrapper reads each parameter from the stack by its C++ type, calls the kernel, and pushes
// what it returns (a Tensor, a std::tuple of them, or nothing for void). It allocates nothing
// of its own, and it catches every exception: an sdk::Error keeps its code, anything else
// becomes TSR_INTERNAL naming the exception.
//
// Kernels on a hot path take their tensors as sdk::TensorView (borrowed views, no reference
// counting, all of them read in one table call) and may take a first parameter
// `const sdk::KernelContext&` (not part of the schema) for what the call knows beyond its
// arguments: the op's name (for messages), the call plan (compute dtype, planned outputs):
//
//   sdk::TensorView add_out(const sdk::KernelContext& ctx, sdk::TensorView self,
//                           sdk::TensorView other, sdk::Scalar alpha, sdk::TensorView out);
//   ... lib.impl<&add_out>(TESSERA_OP("add.out"));
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "tessera/sdk/tensor.hpp"
#include "tessera/sdk/tensor_view.hpp"

namespace tessera {
namespace sdk {

// Scalar: a number that remembers whether it is a bool, an int or a double (tsr_scalar).
// It is made from any arithmetic C++ value, and from nothing else: the constructors are
// templates over the value's own type, so that an enum (a tsr_dtype, say) does not become a
// Scalar through its integer value, and an overload taking a Scalar beside one taking the
// enum (tessera::ops::arange(10, TSR_DTYPE_FLOAT32)) is never ambiguous.
struct Scalar {
  tsr_scalar c{};
  Scalar() = default;
  template <typename T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) {  // NOLINT: implicit
    c.kind = TSR_SCALAR_DOUBLE;
    c.d = static_cast<double>(v);
  }
  template <typename T,
            std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) {  // NOLINT: implicit; an unsigned value above INT64_MAX wraps, as in C++
    c.kind = TSR_SCALAR_INT;
    c.i = static_cast<int64_t>(v);
  }
  template <typename T, std::enable_if_t<std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) {  // NOLINT: implicit
    c.kind = TSR_SCALAR_BOOL;
    c.i = v;
  }
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

// KernelContext: what a typed kernel's call knows beyond its arguments. A kernel that takes
// `const KernelContext&` as its first parameter gets it from the boxing wrapper; that parameter
// is not one of the schema's (signature.hpp skips it). Nothing is read before it is asked for.
class KernelContext {
 public:
  KernelContext(const tsr_op* op, const tsr_stack* stack) : op_(op), stack_(stack) {}
  // A packed call's context (Packed<&kernel>): the plan is at hand, no table call needed.
  KernelContext(const tsr_op* op, const tsr_stack* stack, const tsr_call_plan* plan)
      : op_(op), stack_(stack), plan_(plan) {}

  const tsr_op* op() const { return op_; }
  const tsr_stack* stack() const { return stack_; }
  // op_name: the running op's name ("add.out"; one table call), for messages.
  std::string_view op_name() const {
    return op_ != nullptr ? from_c(api().op_name(op_)) : std::string_view("<unknown op>");
  }
  // plan: the call plan (tensor_view.hpp); compute_dtype: only its compute dtype (cheaper),
  // false where the call has none (an op without a Meta function, a 1.0 runtime).
  CallPlan plan() const { return call_plan(stack_); }
  bool compute_dtype(tsr_dtype* out) const {
    if (plan_ == nullptr) return sdk::compute_dtype(stack_, out);
    if (plan_->compute_dtype < 0) return false;
    *out = static_cast<tsr_dtype>(plan_->compute_dtype);
    return true;
  }
  // planned_compute_dtype: the compute dtype of a call of an op with a plan function (every
  // pointwise op); a call without one fails (INTERNAL) rather than guess. A plugin relying on
  // it states min_abi_minor 1 in describe(): a 1.0 runtime plans no call.
  tsr_dtype planned_compute_dtype() const {
    tsr_dtype planned;
    if (!compute_dtype(&planned)) fail(TSR_INTERNAL, "the call has no planned compute dtype");
    return planned;
  }
  // fail throws an Error whose message starts with the op's name: "add.out: <message>".
  [[noreturn]] void fail(tsr_code code, std::string_view message) const {
    throw Error(code, std::string(op_name()) + ": " + std::string(message));
  }

 private:
  const tsr_op* op_;
  const tsr_stack* stack_;
  const tsr_call_plan* plan_ = nullptr;
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
// A random op's `Generator? generator` argument: the kernel gets the draw the runtime reserved
// for the call (random.hpp), not the generator.
template <>
struct ArgReader<RandomDraw> {
  static RandomDraw read(const tsr_stack* s, size_t) { return call_plan(s).draw(); }
};
template <typename T>
struct ArgReader<std::optional<T>> {
  static_assert(!std::is_same_v<T, RandomDraw>,
                "a random op's Generator? argument is an sdk::RandomDraw, never std::optional: "
                "the runtime reserves a draw for every call, None included");
  static std::optional<T> read(const tsr_stack* s, size_t i) {
    if (api().stack_kind(s, i) == TSR_VALUE_NONE) return std::nullopt;
    return ArgReader<T>::read(s, i);
  }
};

// A kernel's returned Tensor; an undefined one is None, as ATen's backward ops return a gradient
// that output_mask did not ask for.
inline void push(tsr_stack* s, const Tensor& t) {
  check(t.defined() ? api().stack_push_tensor(s, t.get()) : api().stack_push_none(s));
}
inline void push(tsr_stack* s, const TensorView& v) { check(api().stack_push_tensor(s, v.get())); }
template <typename... Ts>
void push(tsr_stack* s, const std::tuple<Ts...>& values) {
  std::apply([s](const auto&... v) { (push(s, v), ...); }, values);
}

// IsView: a parameter read from the views of the stack (TensorView, std::optional of one).
template <typename T>
struct IsView : std::false_type {};
template <>
struct IsView<TensorView> : std::true_type {};
template <>
struct IsView<std::optional<TensorView>> : std::true_type {};

// NotATensor: what a TensorView parameter whose value is no tensor throws (tsr_op_call has
// checked the arguments against the schema, so only a kernel whose signature says Tensor where
// the schema has Tensor? gets here).
[[noreturn]] inline void NotATensor(const tsr_op* op, size_t i) {
  KernelContext(op, nullptr)
      .fail(TSR_INVALID_ARGUMENT, "argument " + std::to_string(i) +
                                      ": expected a tensor (the kernel takes sdk::TensorView), "
                                      "found None (for a Tensor? argument, take "
                                      "std::optional<sdk::TensorView>)");
}

// ParamReader: a parameter's value; views come from the array read for all of them at once,
// and TensorView parameters refer to that array (Stored), uncopied.
template <typename T>
struct ParamReader {
  using Stored = T;
  static T read(const tsr_op*, const tsr_stack* s, size_t i, const TensorView*, size_t) {
    return ArgReader<T>::read(s, i);
  }
};
template <>
struct ParamReader<TensorView> {
  using Stored = const TensorView&;
  static const TensorView& read(const tsr_op* op, const tsr_stack*, size_t i,
                                const TensorView* views, size_t first) {
    const TensorView& v = views[i - first];
    if (!v.defined()) NotATensor(op, i);
    return v;
  }
};
template <>
struct ParamReader<std::optional<TensorView>> {
  using Stored = std::optional<TensorView>;
  static std::optional<TensorView> read(const tsr_op*, const tsr_stack*, size_t i,
                                        const TensorView* views, size_t first) {
    const TensorView& v = views[i - first];
    if (!v.defined()) return std::nullopt;
    return v;
  }
};

// HasViews: whether a return value holds views (whose tensors the stack may own: the wrapper
// keeps them alive across clearing the stack).
template <typename R>
struct HasViews : std::is_same<R, TensorView> {};
template <typename... Ts>
struct HasViews<std::tuple<Ts...>> : std::disjunction<std::is_same<Ts, TensorView>...> {};

inline void Retain(const Tensor&) {}
inline void Retain(const TensorView& v) { api().tensor_retain(v.get()); }
inline void Release(const Tensor&) {}
inline void Release(const TensorView& v) { api().tensor_release(v.get()); }

// SetReturns replaces the stack's arguments by the kernel's returns.
template <typename R>
void SetReturns(tsr_stack* stack, const R& result) {
  if constexpr (HasViews<R>::value) {
    // A returned view is of an argument (an out= or in-place op's `Tensor(a!)`), whose last
    // reference may be the stack's: hold one across the clearing.
    if constexpr (std::is_same_v<R, TensorView>) {
      Retain(result);
    } else {
      std::apply([](const auto&... v) { (Retain(v), ...); }, result);
    }
    api().stack_clear(stack);
    tsr_error* error = nullptr;
    try {
      push(stack, result);
    } catch (const Error& e) {
      error = e.to_c();
    }
    if constexpr (std::is_same_v<R, TensorView>) {
      Release(result);
    } else {
      std::apply([](const auto&... v) { (Release(v), ...); }, result);
    }
    check(error);
  } else {
    api().stack_clear(stack);
    push(stack, result);
  }
}

template <typename... Ts>
struct FirstIsContext : std::false_type {};
template <typename T, typename... Ts>
struct FirstIsContext<T, Ts...> : std::is_same<std::decay_t<T>, KernelContext> {};

template <typename Tuple>
struct DropFirst;
template <typename T, typename... Ts>
struct DropFirst<std::tuple<T, Ts...>> {
  using type = std::tuple<Ts...>;
};

// Signature: a kernel's return type and its schema parameters (Params: without a leading
// KernelContext, kTakesContext says whether there is one).
template <typename F>
struct Signature;
template <typename R, typename... Args>
struct Signature<R (*)(Args...)> {
  using Return = R;
  static constexpr bool kTakesContext = FirstIsContext<Args...>::value;
  using Params =
      std::conditional_t<kTakesContext, typename DropFirst<std::tuple<std::decay_t<Args>...>>::type,
                         std::tuple<std::decay_t<Args>...>>;
  static constexpr size_t kArity = sizeof...(Args) - (kTakesContext ? 1 : 0);
};

// ViewRange: the first and one past the last parameter read as a view ({0, 0}: none).
template <typename Params, size_t... I>
constexpr std::pair<size_t, size_t> ViewRange(std::index_sequence<I...>) {
  constexpr bool kIsView[] = {false, IsView<std::tuple_element_t<I, Params>>::value...};
  size_t first = sizeof...(I), end = 0;
  for (size_t i = 0; i < sizeof...(I); ++i) {
    if (!kIsView[i + 1]) continue;
    if (first > i) first = i;
    end = i + 1;
  }
  return first < end ? std::pair<size_t, size_t>{first, end} : std::pair<size_t, size_t>{0, 0};
}

template <auto Kernel, size_t... I>
void CallBoxed(const tsr_op* op, tsr_stack* stack, std::index_sequence<I...> seq) {
  using Sig = Signature<decltype(Kernel)>;
  using Params = typename Sig::Params;
  // Every view in one table call.
  constexpr std::pair<size_t, size_t> range = ViewRange<Params>(seq);
  constexpr size_t kViews = range.second - range.first;
  TensorView views[kViews > 0 ? kViews : 1];
  if constexpr (kViews > 0) read_views(stack, range.first, kViews, views);
  // Read every argument before clearing the stack: the readers borrow from it.
  std::tuple<typename ParamReader<std::tuple_element_t<I, Params>>::Stored...> args{
      ParamReader<std::tuple_element_t<I, Params>>::read(op, stack, I, views, range.first)...};
  auto call = [&]() -> decltype(auto) {
    if constexpr (Sig::kTakesContext) {
      return Kernel(KernelContext(op, stack), std::get<I>(args)...);
    } else {
      (void)op;
      return Kernel(std::get<I>(args)...);
    }
  };
  if constexpr (std::is_void_v<typename Sig::Return>) {
    call();
    api().stack_clear(stack);
  } else {
    SetReturns(stack, call());
  }
}

// ---- the packed entry (tsr_packed_kernel_fn, ABI 1.1) ----
//
// The same typed kernel called from a tsr_kernel_call: each parameter read from the call's
// values and views (no table call), the returns stored in call->returns. The runtime calls it
// only for ops whose returns are all written arguments (out= and in-place forms) and checks
// what it returns; everywhere else Boxed<&kernel> runs.

// PackedValue: the value of argument i, which the dispatcher bound to the schema's kinds (the
// signature check tied the kernel's parameters to the same schema): another kind is a bug worth
// an error, not a misread.
inline const tsr_value& PackedValue(const tsr_kernel_call* call, size_t i, tsr_value_kind kind) {
  const tsr_value& v = call->args[i];
  if (v.kind != kind) {
    KernelContext(call->op, call->stack)
        .fail(TSR_INTERNAL, "argument " + std::to_string(i) + ": a packed call passed kind " +
                                std::to_string(v.kind) + ", the kernel reads kind " +
                                std::to_string(kind));
  }
  return v;
}

template <typename T>
struct ValueReader;
template <>
struct ValueReader<Tensor> {
  static Tensor read(const tsr_kernel_call* c, size_t i) {
    return Tensor::borrow(PackedValue(c, i, TSR_VALUE_TENSOR).u.tensor);
  }
};
template <>
struct ValueReader<int64_t> {
  static int64_t read(const tsr_kernel_call* c, size_t i) {
    return PackedValue(c, i, TSR_VALUE_INT).u.i;
  }
};
template <>
struct ValueReader<double> {
  static double read(const tsr_kernel_call* c, size_t i) {
    return PackedValue(c, i, TSR_VALUE_DOUBLE).u.d;
  }
};
template <>
struct ValueReader<bool> {
  static bool read(const tsr_kernel_call* c, size_t i) {
    return PackedValue(c, i, TSR_VALUE_BOOL).u.b != 0;
  }
};
template <>
struct ValueReader<Scalar> {
  static Scalar read(const tsr_kernel_call* c, size_t i) {
    Scalar v;
    v.c = PackedValue(c, i, TSR_VALUE_SCALAR).u.scalar;
    return v;
  }
};
template <>
struct ValueReader<std::string_view> {
  static std::string_view read(const tsr_kernel_call* c, size_t i) {
    return from_c(PackedValue(c, i, TSR_VALUE_STRING).u.string);
  }
};
template <>
struct ValueReader<IntSpan> {
  static IntSpan read(const tsr_kernel_call* c, size_t i) {
    const tsr_value& v = PackedValue(c, i, TSR_VALUE_INT_LIST);
    return IntSpan{static_cast<const int64_t*>(v.u.list.data), v.u.list.size};
  }
};
template <>
struct ValueReader<BoolSpan> {
  static BoolSpan read(const tsr_kernel_call* c, size_t i) {
    const tsr_value& v = PackedValue(c, i, TSR_VALUE_BOOL_LIST);
    return BoolSpan{static_cast<const uint8_t*>(v.u.list.data), v.u.list.size};
  }
};
template <>
struct ValueReader<tsr_dtype> {
  static tsr_dtype read(const tsr_kernel_call* c, size_t i) {
    return static_cast<tsr_dtype>(PackedValue(c, i, TSR_VALUE_DTYPE).u.dtype);
  }
};
template <>
struct ValueReader<tsr_device> {
  static tsr_device read(const tsr_kernel_call* c, size_t i) {
    return PackedValue(c, i, TSR_VALUE_DEVICE).u.device;
  }
};
template <>
struct ValueReader<RandomDraw> {
  static RandomDraw read(const tsr_kernel_call* c, size_t) {
    if (!TSR_FIELD_FITS(tsr_call_plan, rng_offset, c->plan->struct_size)) {
      KernelContext(c->op, c->stack)
          .fail(TSR_INTERNAL, "a random op's call plan without its draw: its struct_size is " +
                                  std::to_string(c->plan->struct_size) + ", the draw needs " +
                                  std::to_string(sizeof(tsr_call_plan)) +
                                  " (a runtime before ABI 1.2)");
    }
    return RandomDraw{c->plan->rng_seed, c->plan->rng_offset};
  }
};
template <typename T>
struct ValueReader<std::optional<T>> {
  static std::optional<T> read(const tsr_kernel_call* c, size_t i) {
    if (c->args[i].kind == TSR_VALUE_NONE) return std::nullopt;
    return ValueReader<T>::read(c, i);
  }
};
template <>
struct ValueReader<TensorView> {
  static TensorView read(const tsr_kernel_call* c, size_t i) {
    if (c->views[i] == nullptr) NotATensor(c->op, i);
    return TensorView::sized(*c->views[i]);
  }
};
template <>
struct ValueReader<std::optional<TensorView>> {
  static std::optional<TensorView> read(const tsr_kernel_call* c, size_t i) {
    if (c->views[i] == nullptr) return std::nullopt;
    return TensorView::sized(*c->views[i]);
  }
};

inline tsr_tensor* Handle(const Tensor& t) { return t.get(); }
inline tsr_tensor* Handle(const TensorView& v) { return v.get(); }

// StoreReturns puts the kernel's returns in call->returns (borrowed handles: the arguments they
// are stay on the caller's stack); a count other than the op's is the kernel's error.
template <typename R>
void StoreReturns(const tsr_kernel_call* call, const R& result) {
  tsr_tensor* handles[8];
  size_t count = 0;
  if constexpr (std::is_same_v<R, Tensor> || std::is_same_v<R, TensorView>) {
    handles[count++] = Handle(result);
  } else {
    static_assert(std::tuple_size_v<R> <= 8, "at most 8 returns");
    std::apply([&](const auto&... v) { ((handles[count++] = Handle(v)), ...); }, result);
  }
  if (count != call->num_returns) {
    KernelContext(call->op, call->stack)
        .fail(TSR_INTERNAL, "the kernel returns " + std::to_string(count) + " values, the op " +
                                std::to_string(call->num_returns));
  }
  for (size_t r = 0; r < count; ++r) {
    call->returns[r].kind = TSR_VALUE_TENSOR;
    call->returns[r].u.tensor = handles[r];
  }
}

template <auto Kernel, size_t... I>
void InvokePacked(const tsr_kernel_call* call, std::index_sequence<I...>) {
  using Sig = Signature<decltype(Kernel)>;
  using Params = typename Sig::Params;
  if (call->num_args != sizeof...(I)) {
    KernelContext(call->op, call->stack)
        .fail(TSR_INTERNAL, "a packed call passed " + std::to_string(call->num_args) +
                                " arguments, the kernel takes " + std::to_string(sizeof...(I)));
  }
  auto result = [&]() {
    if constexpr (Sig::kTakesContext) {
      return Kernel(KernelContext(call->op, call->stack, call->plan),
                    ValueReader<std::tuple_element_t<I, Params>>::read(call, I)...);
    } else {
      return Kernel(ValueReader<std::tuple_element_t<I, Params>>::read(call, I)...);
    }
  };
  if constexpr (std::is_void_v<typename Sig::Return>) {
    result();
    if (call->num_returns != 0) {
      KernelContext(call->op, call->stack).fail(TSR_INTERNAL, "the kernel returns nothing");
    }
  } else {
    StoreReturns(call, result());
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
        op, stack, std::make_index_sequence<internal::Signature<decltype(Kernel)>::kArity>{});
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

// Packed<&kernel>: the packed entry (tsr_packed_kernel_fn) of a typed C++ kernel.
template <auto Kernel>
tsr_error* Packed(void* /*context*/, const tsr_kernel_call* call) noexcept {
  try {
    internal::InvokePacked<Kernel>(
        call, std::make_index_sequence<internal::Signature<decltype(Kernel)>::kArity>{});
    return nullptr;
  } catch (const Error& e) {
    return e.to_c();
  } catch (const std::exception& e) {
    return internal::ToError(TSR_INTERNAL, std::string(from_c(api().op_name(call->op))) +
                                               ": kernel threw an exception: " + e.what());
  } catch (...) {
    return internal::ToError(TSR_INTERNAL, std::string(from_c(api().op_name(call->op))) +
                                               ": kernel threw a non-standard exception");
  }
}

}  // namespace sdk
}  // namespace tessera
