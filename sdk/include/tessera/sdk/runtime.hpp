// The C++ embedding API for applications: a Runtime object, tensors, ops as functions and
// operators, and moving tensors between devices.
//
//   tessera::Runtime rt;                      // loads the default plugins (the CPU backend)
//   auto a = Tensor::from_host<float>({1, 2, 3}, {3}, TSR_DTYPE_FLOAT32);
//   auto b = tessera::to(a, "npu:0");
//   auto c = b + b;                           // runs on the npu
//
// Applications link libtessera.so; this header (unlike the plugin headers) uses its exported
// entry points to find the runtime's table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/c/determinism.h"
#include "tessera/c/device.h"
#include "tessera/c/loader.h"
#include "tessera/c/parallel.h"
#include "tessera/sdk/boxing.hpp"

namespace tessera {

using sdk::Scalar;
using sdk::Tensor;

class Runtime {
 public:
  Runtime() {
    sdk::api_slot() = tsr_runtime_api_get();
    sdk::check(tsr_plugin_load_default());
  }

  // load_plugin loads a plugin explicitly; throws with the refusal reason. Returns its report.
  const tsr_load_report& load_plugin(std::string_view path) {
    const tsr_load_report* report = nullptr;
    sdk::check(tsr_plugin_load(sdk::to_c(path), &report));
    return *report;
  }
};

// kw passes an argument by name, as Python's `name=value`; default_arg stands for a defaulted
// argument skipped in the middle (op.h, ABI 1.1):
//   tessera::call1(to_copy, t, tessera::kw("memory_format", TSR_MEMORY_FORMAT_CONTIGUOUS));
template <typename T>
struct Keyword {
  std::string_view name;
  T value;
};
template <typename T>
Keyword<T> kw(std::string_view name, T value) {
  return Keyword<T>{name, std::move(value)};
}
struct DefaultArg {};
inline constexpr DefaultArg default_arg{};

// IntListArg: an int[] argument: a brace list, a vector, a tensor's sizes(), or one integer.
// One integer for an int[N] parameter is N copies of it, as PyTorch's Python API takes it
// (adaptive_avg_pool2d(x, 1) is a 1x1 output, max_pool2d(x, 2) a 2x2 window; the generated
// functions call Sized(N)); a list, a brace list of one included, goes as written. It owns a
// copy: the C++ functions are for convenience; a hot loop calls call1 with a std::vector it
// keeps.
struct IntListArg {
  IntListArg(std::initializer_list<int64_t> l) : value(l) {}   // NOLINT: implicit
  IntListArg(std::vector<int64_t> l) : value(std::move(l)) {}  // NOLINT: implicit
  IntListArg(sdk::IntSpan l) : value(l.begin(), l.end()) {}    // NOLINT: a tensor's sizes()
  template <typename T,
            std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  IntListArg(T v) : value{static_cast<int64_t>(v)}, one_integer(true) {}  // NOLINT: implicit
  // Sized: for an int[n] parameter: one integer as n copies of it; anything else as given.
  IntListArg Sized(size_t n) const {
    if (!one_integer || n <= 1) return *this;
    return IntListArg(std::vector<int64_t>(n, value.front()));
  }
  std::vector<int64_t> value;
  bool one_integer = false;  // made from one integer, not from a list
};

// IntListOrNone: an int[]? argument (sum's dim): what IntListArg takes, or {} or std::nullopt
// for None. (std::optional<std::vector<int64_t>> takes no brace list: {1} would be the
// vector's explicit size constructor.)
struct IntListOrNone {
  IntListOrNone() = default;
  IntListOrNone(std::nullopt_t) {}                                                     // NOLINT
  IntListOrNone(std::initializer_list<int64_t> l) : value(std::vector<int64_t>(l)) {}  // NOLINT
  IntListOrNone(std::vector<int64_t> l) : value(std::move(l)) {}                       // NOLINT
  template <typename T,
            std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  IntListOrNone(T v) : value(std::vector<int64_t>{static_cast<int64_t>(v)}) {}  // NOLINT
  std::optional<std::vector<int64_t>> value;
};

// FloatListOrNone: a float[]? argument (upsample's scale_factors): a brace list, a vector, or
// std::nullopt for None.
struct FloatListOrNone {
  FloatListOrNone() = default;
  FloatListOrNone(std::nullopt_t) {}                                                   // NOLINT
  FloatListOrNone(std::initializer_list<double> l) : value(std::vector<double>(l)) {}  // NOLINT
  FloatListOrNone(std::vector<double> l) : value(std::move(l)) {}                      // NOLINT
  std::optional<std::vector<double>> value;
};

// BoolArg: a bool argument, from a bool alone: an enum or a number beside it would otherwise
// convert silently (sum(x, {1}, TSR_DTYPE_FLOAT64) would be keepdim = true).
struct BoolArg {
  template <typename T, std::enable_if_t<std::is_same_v<T, bool>, int> = 0>
  BoolArg(T v) : value(v) {}  // NOLINT: implicit
  bool value;
};

// StringArg: a str argument: a literal, std::string or std::string_view, and never a brace
// list (std::string_view would take {0, 0}, and an int[] beside it in another overload would
// then be ambiguous).
//
// A parameter type only: it views the caller's characters for the duration of the call (a
// StringArg kept in a variable from a temporary std::string dangles).
struct StringArg {
  StringArg(std::nullptr_t) = delete;            // a null pointer is no string
  StringArg(const char* s) : value(s) {}         // NOLINT: implicit
  StringArg(std::string_view s) : value(s) {}    // NOLINT: implicit
  StringArg(const std::string& s) : value(s) {}  // NOLINT: implicit
  std::string_view value;
};

namespace sdk {

// RequireGenerators: the runtime's generator slots (ABI 1.2), or an error naming its version.
inline const tsr_runtime_api& RequireGenerators() {
  const tsr_runtime_api& a = api();
  if (!TSR_API_HAS(&a, stack_push_generator)) {
    throw Error(TSR_UNIMPLEMENTED, "generators need a runtime of ABI 1.2 or newer (this one is " +
                                       std::to_string(a.abi_major) + "." +
                                       std::to_string(a.abi_minor) + ")");
  }
  return a;
}

// Generator: a random number generator (tessera/c/generator.h), shared by reference; pass it
// as a random op's `generator` argument (ops::rand({2, 3}, gen), or std::nullopt for the
// device's default one). Its state is a seed and an offset: copy it out with state() and put it
// back with set_state() to replay the same numbers (docs/random.md).
class Generator {
 public:
  explicit Generator(uint64_t seed) { check(RequireGenerators().generator_create(seed, &g_)); }
  // default_for: the default generator of `device` (what random ops draw from when given none).
  static Generator default_for(tsr_device device) {
    Generator g;
    check(RequireGenerators().generator_default(device, &g.g_));
    return g;
  }
  Generator(const Generator& o) : g_(o.g_) { api().generator_retain(g_); }
  Generator(Generator&& o) noexcept : g_(std::exchange(o.g_, nullptr)) {}
  Generator& operator=(Generator o) noexcept {
    std::swap(g_, o.g_);
    return *this;
  }
  ~Generator() {
    if (g_ != nullptr) api().generator_release(g_);
  }

  struct State {
    uint64_t seed = 0;
    uint64_t offset = 0;
  };
  State state() const {
    State st;
    check(api().generator_get_state(g_, &st.seed, &st.offset));
    return st;
  }
  void set_state(State st) { check(api().generator_set_state(g_, st.seed, st.offset)); }
  void manual_seed(uint64_t seed) { set_state(State{seed, 0}); }  // offset 0
  tsr_generator* get() const { return g_; }

 private:
  Generator() = default;
  tsr_generator* g_ = nullptr;
};

// manual_seed seeds every device's default generator at offset 0 (torch.manual_seed).
inline void manual_seed(uint64_t seed) { RequireGenerators().manual_seed(seed); }

}  // namespace sdk

using sdk::Generator;
using sdk::manual_seed;

namespace internal {

inline void push(tsr_stack* s, const Generator& g) {
  sdk::check(sdk::RequireGenerators().stack_push_generator(s, g.get()));
}
inline void push(tsr_stack* s, const Tensor& v) {
  if (!v.defined()) {  // said in C++ terms, not the C ABI's (tsr_stack_push_none)
    throw sdk::Error(TSR_INVALID_ARGUMENT,
                     "an argument is an undefined Tensor (pass std::nullopt for None)");
  }
  sdk::check(sdk::api().stack_push_tensor(s, v.get()));
}
inline void push(tsr_stack* s, const std::vector<Tensor>& v) {
  std::vector<tsr_tensor*> raw;
  raw.reserve(v.size());
  for (const Tensor& t : v) raw.push_back(t.get());
  sdk::check(sdk::api().stack_push_tensor_list(s, raw.data(), raw.size()));
}
// Tensor?[] (index.Tensor's indices): std::nullopt elements, and undefined tensors, are None.
inline void push(tsr_stack* s, const std::vector<std::optional<Tensor>>& v) {
  std::vector<tsr_tensor*> raw;
  raw.reserve(v.size());
  for (const std::optional<Tensor>& t : v) raw.push_back(t && t->defined() ? t->get() : nullptr);
  sdk::check(sdk::api().stack_push_tensor_list(s, raw.data(), raw.size()));
}
inline void push(tsr_stack* s, int64_t v) { sdk::check(sdk::api().stack_push_int(s, v)); }
inline void push(tsr_stack* s, int v) { push(s, static_cast<int64_t>(v)); }
inline void push(tsr_stack* s, double v) { sdk::check(sdk::api().stack_push_double(s, v)); }
inline void push(tsr_stack* s, bool v) { sdk::check(sdk::api().stack_push_bool(s, v)); }
inline void push(tsr_stack* s, const Scalar& v) {
  sdk::check(sdk::api().stack_push_scalar(s, v.c));
}
inline void push(tsr_stack* s, std::string_view v) {
  sdk::check(sdk::api().stack_push_string(s, sdk::to_c(v)));
}
// A string literal is a string, not the bool it would otherwise convert to.
inline void push(tsr_stack* s, const char* v) { push(s, std::string_view(v)); }
inline void push(tsr_stack* s, const std::vector<int64_t>& v) {
  sdk::check(sdk::api().stack_push_int_list(s, v.data(), v.size()));
}
inline void push(tsr_stack* s, tsr_dtype v) { sdk::check(sdk::api().stack_push_dtype(s, v)); }
inline void push(tsr_stack* s, tsr_device v) { sdk::check(sdk::api().stack_push_device(s, v)); }
inline void push(tsr_stack* s, std::nullopt_t) { sdk::check(sdk::api().stack_push_none(s)); }
inline void push(tsr_stack* s, tsr_layout v) { push(s, static_cast<int64_t>(v)); }
inline void push(tsr_stack* s, tsr_memory_format v) { push(s, static_cast<int64_t>(v)); }
inline void push(tsr_stack* s, const std::vector<bool>& v) {
  std::vector<uint8_t> bytes(v.begin(), v.end());
  sdk::check(sdk::api().stack_push_bool_list(s, bytes.data(), bytes.size()));
}

inline void push(tsr_stack* s, DefaultArg) { sdk::check(tsr_stack_push_default(s)); }
inline void push(tsr_stack* s, const StringArg& v) { push(s, v.value); }
inline void push(tsr_stack* s, const BoolArg& v) { push(s, v.value); }
inline void push(tsr_stack* s, const IntListArg& v) { push(s, v.value); }
inline void push(tsr_stack* s, const IntListOrNone& v) {
  if (v.value) return push(s, *v.value);
  push(s, std::nullopt);
}
inline void push(tsr_stack* s, const FloatListOrNone& v) {
  if (!v.value) return push(s, std::nullopt);
  sdk::check(sdk::api().stack_push_double_list(s, v.value->data(), v.value->size()));
}
// An optional: its value, or None (an undefined Tensor in an optional is None too, as libtorch
// takes it for a Tensor? argument).
template <typename T>
void push(tsr_stack* s, const std::optional<T>& v) {
  if constexpr (std::is_same_v<T, Tensor>) {
    if (v && !v->defined()) return push(s, std::nullopt);
  }
  if (v) return push(s, *v);
  push(s, std::nullopt);
}
template <typename T>
void push(tsr_stack* s, const Keyword<T>& v) {
  sdk::check(tsr_stack_name_next(s, sdk::to_c(v.name)));
  push(s, v.value);
}

// Stack: a tsr_stack borrowed from a per-thread pool for the duration of one call, so that a
// call costs no allocation once the thread has made one (a pool, not a single stack, because
// a call may reenter: a kernel or fallback on this thread may call ops too).
class Stack {
 public:
  Stack() {
    std::vector<tsr_stack*>& free = Free();
    if (free.empty()) {
      sdk::check(sdk::api().stack_create(&s_));
    } else {
      s_ = free.back();
      free.pop_back();
    }
  }
  ~Stack() {
    sdk::api().stack_clear(s_);
    Free().push_back(s_);
  }
  Stack(const Stack&) = delete;
  Stack& operator=(const Stack&) = delete;
  tsr_stack* get() const { return s_; }

 private:
  struct Pool {
    std::vector<tsr_stack*> stacks;
    ~Pool() {
      for (tsr_stack* s : stacks) sdk::api().stack_release(s);
    }
  };
  static std::vector<tsr_stack*>& Free() {
    thread_local Pool pool;
    return pool.stacks;
  }
  tsr_stack* s_ = nullptr;
};

}  // namespace internal

// find_op looks an op up by name; keep the result (it is valid for the process).
inline const tsr_op* find_op(std::string_view name) {
  const tsr_op* op = nullptr;
  sdk::check(sdk::api().op_find(sdk::to_c(name), &op));
  return op;
}

namespace internal {
template <typename... Args>
void Invoke(const tsr_op* op, const Stack& stack, const Args&... args) {
  (push(stack.get(), args), ...);
  sdk::check(sdk::api().op_call(op, stack.get()));
}
}  // namespace internal

namespace internal {

// Packed arguments (tsr_op_call_values, ABI 1.1): one call for the whole argument list instead
// of a table call per value. PackedArg<T> says whether an argument type has a tsr_value form
// that borrows from the argument (named arguments and bool[] do not: they take the stack).
template <typename T>
struct PackedArg : std::false_type {};
template <typename T>
inline constexpr bool kPacked = PackedArg<std::decay_t<T>>::value;

inline tsr_value packed_value(tsr_value_kind kind) {
  tsr_value v{};
  v.kind = kind;
  return v;
}
#define TESSERA_PACKED_ARG(T, KIND, FIELD, EXPR) \
  template <>                                    \
  struct PackedArg<T> : std::true_type {};       \
  inline tsr_value to_packed(const T& v) {       \
    tsr_value c = packed_value(KIND);            \
    c.u.FIELD = EXPR;                            \
    return c;                                    \
  }
TESSERA_PACKED_ARG(int64_t, TSR_VALUE_INT, i, v)
TESSERA_PACKED_ARG(int, TSR_VALUE_INT, i, v)
TESSERA_PACKED_ARG(double, TSR_VALUE_DOUBLE, d, v)
TESSERA_PACKED_ARG(bool, TSR_VALUE_BOOL, b, v ? 1 : 0)
TESSERA_PACKED_ARG(Scalar, TSR_VALUE_SCALAR, scalar, v.c)
TESSERA_PACKED_ARG(tsr_dtype, TSR_VALUE_DTYPE, dtype, static_cast<int32_t>(v))
TESSERA_PACKED_ARG(tsr_device, TSR_VALUE_DEVICE, device, v)
TESSERA_PACKED_ARG(tsr_layout, TSR_VALUE_INT, i, static_cast<int64_t>(v))
TESSERA_PACKED_ARG(tsr_memory_format, TSR_VALUE_INT, i, static_cast<int64_t>(v))
TESSERA_PACKED_ARG(std::string_view, TSR_VALUE_STRING, string, sdk::to_c(v))
#undef TESSERA_PACKED_ARG
template <>
struct PackedArg<Tensor> : std::true_type {};
// An undefined Tensor is refused as on the stack (pass std::nullopt for None).
inline tsr_value to_packed(const Tensor& v) {
  tsr_value c = packed_value(TSR_VALUE_TENSOR);
  c.u.tensor = v.get();
  return c;
}
template <>
struct PackedArg<std::vector<int64_t>> : std::true_type {};
inline tsr_value to_packed(const std::vector<int64_t>& v) {
  tsr_value c = packed_value(TSR_VALUE_INT_LIST);
  c.u.list.data = v.data();
  c.u.list.size = v.size();
  return c;
}
template <>
struct PackedArg<std::vector<Tensor>> : std::true_type {};
inline tsr_value to_packed(const std::vector<Tensor>& v) {
  static_assert(sizeof(Tensor) == sizeof(tsr_tensor*), "a Tensor is its handle");
  tsr_value c = packed_value(TSR_VALUE_TENSOR_LIST);
  c.u.list.data = v.data();
  c.u.list.size = v.size();
  return c;
}
template <>
struct PackedArg<std::nullopt_t> : std::true_type {};
inline tsr_value to_packed(std::nullopt_t) { return packed_value(TSR_VALUE_NONE); }
template <>
struct PackedArg<DefaultArg> : std::true_type {};
inline tsr_value to_packed(DefaultArg) { return packed_value(TSR_VALUE_DEFAULT); }
template <>
struct PackedArg<StringArg> : std::true_type {};
inline tsr_value to_packed(const StringArg& v) { return to_packed(v.value); }
template <>
struct PackedArg<BoolArg> : std::true_type {};
inline tsr_value to_packed(const BoolArg& v) { return to_packed(v.value); }
template <>
struct PackedArg<IntListArg> : std::true_type {};
inline tsr_value to_packed(const IntListArg& v) { return to_packed(v.value); }
template <>
struct PackedArg<IntListOrNone> : std::true_type {};
inline tsr_value to_packed(const IntListOrNone& v) {
  return v.value ? to_packed(*v.value) : packed_value(TSR_VALUE_NONE);
}
// An optional packs as its value does, or as None (an undefined Tensor too, as on the stack).
template <typename T>
struct PackedArg<std::optional<T>> : PackedArg<T> {};
template <typename T>
tsr_value to_packed(const std::optional<T>& v) {
  if constexpr (std::is_same_v<T, Tensor>) {
    if (v && !v->defined()) return packed_value(TSR_VALUE_NONE);
  }
  return v ? to_packed(*v) : packed_value(TSR_VALUE_NONE);
}

}  // namespace internal

// returned_tensors: the tensors a call left on `stack` (after tsr_op_call), in order: a None (a
// backward op's gradient its output_mask did not ask for) as an undefined Tensor, a Tensor[]
// return (split, unbind) as its elements. The elements of a list are not told apart from the
// returns around it; every op of op set 1.8 that returns a list returns that alone.
inline std::vector<Tensor> returned_tensors(tsr_stack* stack) {
  std::vector<Tensor> out;
  for (size_t i = 0; i < sdk::api().stack_size(stack); ++i) {
    const tsr_value_kind kind = sdk::api().stack_kind(stack, i);
    if (kind == TSR_VALUE_NONE) {
      out.emplace_back();
    } else if (kind == TSR_VALUE_TENSOR_LIST) {
      tsr_tensor* const* list = nullptr;
      size_t n = 0;
      sdk::check(sdk::api().stack_get_tensor_list(stack, i, &list, &n));
      for (size_t k = 0; k < n; ++k) {
        out.push_back(list[k] == nullptr ? Tensor() : Tensor::borrow(list[k]));
      }
    } else {
      tsr_tensor* t = nullptr;
      sdk::check(sdk::api().stack_get_tensor(stack, i, &t));
      out.push_back(Tensor::borrow(t));
    }
  }
  return out;
}

// call runs `op` with `args` and returns its returns as tensors (a None return, as a backward
// op's output_mask gives, as an undefined Tensor; a Tensor[] return, as split's, as its
// elements in order).
template <typename... Args>
std::vector<Tensor> call(const tsr_op* op, const Args&... args) {
  internal::Stack stack;
  internal::Invoke(op, stack, args...);
  return returned_tensors(stack.get());
}

// call1 runs an op and returns its first return, a tensor (undefined for the None of a Tensor?
// return), with no vector on the way. With a 1.1 runtime and arguments that all have a packed
// form (tensors, numbers, Scalars, dtypes, devices, int lists, tensor lists, strings, None,
// default_arg) it makes one tsr_op_call_values call; then an op whose returns include a list
// or a string is refused (use call()). Otherwise it goes through a stack.
template <typename... Args>
Tensor call1(const tsr_op* op, const Args&... args) {
  if constexpr ((internal::kPacked<Args> && ...)) {
    if (TSR_API_HAS(&sdk::api(), op_call_values)) {
      const tsr_value values[sizeof...(Args) + 1] = {internal::to_packed(args)...};
      for (size_t i = 0; i < sizeof...(Args); ++i) {  // said in C++ terms, not the C ABI's
        if (values[i].kind == TSR_VALUE_TENSOR && values[i].u.tensor == nullptr) {
          throw sdk::Error(TSR_INVALID_ARGUMENT,
                           "call1: " + std::string(sdk::from_c(sdk::api().op_name(op))) +
                               ": argument " + std::to_string(i + 1) +
                               " is an undefined Tensor (pass std::nullopt for None)");
        }
      }
      // Room for every return (call1 of an op with several returns gives the first, as on the
      // stack); the others are released.
      constexpr size_t kRoom = 8;
      tsr_value results[kRoom];
      size_t n = 0;
      sdk::check(sdk::api().op_call_values(op, values, sizeof...(Args), results, kRoom, &n));
      for (size_t r = 1; r < n; ++r) {
        if (results[r].kind == TSR_VALUE_TENSOR) sdk::api().tensor_release(results[r].u.tensor);
      }
      const tsr_value& result = results[0];
      if (n > 0 && result.kind == TSR_VALUE_TENSOR) return Tensor::adopt(result.u.tensor);
      if (n > 0 && result.kind == TSR_VALUE_NONE) return Tensor();  // a Tensor? return
      throw sdk::Error(TSR_INVALID_ARGUMENT,
                       "call1: " + std::string(sdk::from_c(sdk::api().op_name(op))) +
                           (n == 0 ? std::string(" returns nothing")
                                   : " returns no tensor first (a value of kind " +
                                         std::to_string(result.kind) + ")"));
    }
  }
  internal::Stack stack;
  internal::Invoke(op, stack, args...);
  if (sdk::api().stack_size(stack.get()) > 0 &&
      sdk::api().stack_kind(stack.get(), 0) == TSR_VALUE_NONE) {
    return Tensor();  // a Tensor? return, as above
  }
  tsr_tensor* t = nullptr;
  sdk::check(sdk::api().stack_get_tensor(stack.get(), 0, &t));
  return Tensor::borrow(t);
}

// Ops as functions (a few for now; every op is reachable through find_op + call).
inline Tensor add(const Tensor& a, const Tensor& b, Scalar alpha = Scalar(int64_t{1})) {
  static const tsr_op* op = find_op("add.Tensor");
  return call1(op, a, b, alpha);
}
inline Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha = Scalar(int64_t{1})) {
  static const tsr_op* op = find_op("sub.Tensor");
  return call1(op, a, b, alpha);
}
inline Tensor mul(const Tensor& a, const Tensor& b) {
  static const tsr_op* op = find_op("mul.Tensor");
  return call1(op, a, b);
}
inline Tensor neg(const Tensor& a) {
  static const tsr_op* op = find_op("neg");
  return call1(op, a);
}
}  // namespace tessera

namespace tessera {
namespace sdk {  // beside Tensor, so that argument-dependent lookup finds them
inline Tensor operator+(const Tensor& a, const Tensor& b) { return tessera::add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return tessera::sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return tessera::mul(a, b); }
inline Tensor operator-(const Tensor& a) { return tessera::neg(a); }
}  // namespace sdk

// set_num_threads: the thread count of every backend's parallel loops from now on
// (tsr_set_num_threads; Tessera's own, apart from any other library's in the process).
inline void set_num_threads(int threads) { sdk::check(tsr_set_num_threads(threads)); }
inline int num_threads() { return tsr_num_threads(); }

// set_deterministic_algorithms: PyTorch's torch.use_deterministic_algorithms for the whole
// process (tessera/c/determinism.h): TSR_DETERMINISTIC_ON passes over kernels their plugins
// declare nondeterministic, TSR_DETERMINISTIC_WARN runs them with a warning.
inline void set_deterministic_algorithms(tsr_deterministic_mode mode) {
  sdk::check(tsr_set_deterministic_algorithms(mode));
}
inline tsr_deterministic_mode deterministic_algorithms() {
  return static_cast<tsr_deterministic_mode>(tsr_deterministic_algorithms());
}

// parse_device reads "npu:0", "cpu", ...
inline tsr_device parse_device(std::string_view text) {
  tsr_device d{};
  sdk::check(tsr_device_parse(sdk::to_c(text), &d));
  return d;
}

// to copies a tensor to another device (same dtype), through host memory.
inline Tensor to(const Tensor& t, tsr_device device) {
  std::vector<unsigned char> staging(static_cast<size_t>(t.numel()) * t.itemsize());
  t.copy_to_host(staging.data(), staging.size());
  Tensor out = Tensor::empty(t.sizes().vec(), t.dtype(), device);
  out.copy_from_host(staging.data(), staging.size());
  return out;
}
inline Tensor to(const Tensor& t, std::string_view device) { return to(t, parse_device(device)); }

// Streams and events of asynchronous devices (tessera/c/device.h, Note [Asynchronous devices]).
// Move-only owners of one reference each.
//
//   tessera::Stream side = tessera::Stream::create(tessera::parse_device("cuda:0"));
//   {
//     tessera::StreamGuard guard(side);  // kernels on cuda:0 launch on `side` in this scope
//     c = a + b;
//   }
//   side.synchronize();                  // errors of that work surface here
class Event;

class Stream {
 public:
  // create makes a new stream (UNIMPLEMENTED on a synchronous device).
  static Stream create(tsr_device device) {
    tsr_stream* s = nullptr;
    sdk::check(tsr_stream_create(device, &s));
    return Stream(s);
  }
  // current: this thread's current stream on `device`; default_of: the device's default one.
  static Stream current(tsr_device device) {
    tsr_stream* s = nullptr;
    sdk::check(tsr_stream_get_current(device, &s));
    return Stream(s);
  }
  static Stream default_of(tsr_device device) {
    tsr_stream* s = nullptr;
    sdk::check(tsr_stream_get_default(device, &s));
    return Stream(s);
  }

  Stream(Stream&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  Stream& operator=(Stream o) noexcept {
    std::swap(s_, o.s_);
    return *this;
  }
  Stream(const Stream&) = delete;
  ~Stream() { tsr_stream_release(s_); }

  void synchronize() const { sdk::check(tsr_stream_synchronize(s_)); }
  inline void wait(const Event& event) const;
  tsr_device device() const { return tsr_stream_device(s_); }
  void* native() const { return tsr_stream_native(s_); }  // cudaStream_t, hipStream_t, ...
  tsr_stream* get() const { return s_; }

 private:
  explicit Stream(tsr_stream* s) : s_(s) {}
  tsr_stream* s_ = nullptr;
};

class Event {
 public:
  static Event create(tsr_device device) {
    tsr_event* e = nullptr;
    sdk::check(tsr_event_create(device, &e));
    return Event(e);
  }
  Event(Event&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  Event& operator=(Event o) noexcept {
    std::swap(e_, o.e_);
    return *this;
  }
  Event(const Event&) = delete;
  ~Event() { tsr_event_release(e_); }

  // record marks the end of `stream`'s work so far (no stream: the current one).
  void record(const Stream& stream) const { sdk::check(tsr_event_record(e_, stream.get())); }
  void record() const { sdk::check(tsr_event_record(e_, nullptr)); }
  void synchronize() const { sdk::check(tsr_event_synchronize(e_)); }
  tsr_event* get() const { return e_; }

 private:
  explicit Event(tsr_event* e) : e_(e) {}
  tsr_event* e_ = nullptr;
};

inline void Stream::wait(const Event& event) const {
  sdk::check(tsr_stream_wait_event(s_, event.get()));
}

// StreamGuard makes `stream` this thread's current stream on its device for the guard's scope
// and restores the one that was current before.
class StreamGuard {
 public:
  explicit StreamGuard(const Stream& stream) : previous_(Stream::current(stream.device())) {
    sdk::check(tsr_stream_set_current(stream.get()));
  }
  ~StreamGuard() { tsr_error_release(tsr_stream_set_current(previous_.get())); }
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  Stream previous_;
};

// record_stream: `t`'s memory is also used by work on `stream` (PyTorch's Tensor.record_stream).
inline void record_stream(const Tensor& t, const Stream& stream) {
  sdk::check(tsr_tensor_record_stream(t.get(), stream.get()));
}

// synchronize waits for all work on `device`.
inline void synchronize(tsr_device device) { sdk::check(tsr_device_synchronize(device)); }

}  // namespace tessera
