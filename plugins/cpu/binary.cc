// Binary pointwise ops (op set v1), as out= kernels for both the Tensor and the Scalar
// overloads; the runtime derives the functional and in-place forms.
#include <atomic>
#include <cmath>
#include <string_view>

#include "math.hpp"
#include "pointwise.hpp"

namespace tessera {
namespace cpu {
namespace {

enum class Kind {
  kPromote,  // computes in and returns the promoted dtype (add)
  kFloat,    // the promoted dtype, integers and bool as float32 (div, atan2)
  kBool,     // computes in the promoted dtype, returns bool (eq)
};

template <typename T>
compute_t<T> scalar_value(const sdk::Scalar& s) {
  using C = compute_t<T>;
  if (s.c.kind == TSR_SCALAR_DOUBLE) return convert<C>(s.c.d);
  if (s.c.kind == TSR_SCALAR_BOOL) return convert<C>(s.c.i != 0);
  return convert<C>(s.c.i);
}

// binary: out = f(self, other). `make(tag, compute)` returns f for the compute type of tag
// (compute: the dtype the operands promote to). A Scalar
// `other` is held by the loop in the compute type (a float for the 16-bit floats, as PyTorch's
// opmath does), not rounded to the tensor's dtype first.
template <Kind K, sdk::DtypeSet Set, typename Make>
void binary(const char* op, tsr_stack* s, const Make& make) {
  // self, other, [alpha or rounding_mode,] out: every view in one call.
  const size_t n = sdk::api().stack_size(s);
  sdk::TensorView v[5];
  if (n < 3 || n > 5) {
    sdk::fail(TSR_INTERNAL, std::string(op) + ": expected 3 to 5 arguments for a binary op");
  }
  sdk::read_views(s, 0, n, v);
  const sdk::TensorView &va = v[0], &vb = v[1], &vout = v[n - 1];
  const tsr_dtype compute = compute_dtype(s, [&] {
    sdk::ResultType rt;
    rt << operand_from(s, 0, va) << operand_from(s, 1, vb);
    const tsr_dtype promoted = rt.get();
    return K == Kind::kFloat && !sdk::is_floating(promoted) ? TSR_DTYPE_FLOAT32 : promoted;
  });
  dispatch<Set>(compute, op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = std::conditional_t<K == Kind::kBool, bool, T>;
    const auto f = make(tag, compute);
    const tsr_dtype result = K == Kind::kBool ? TSR_DTYPE_BOOL : compute;
    if (dense_alike(vout, result, va, vb, compute)) {
      // The common case (same dtypes, same shape, all dense): one loop, no iterator.
      dense_loop<R, T, T>(f, vout.numel(), vout.data_ptr(), {va.data_ptr(), vb.data_ptr()});
      return;
    }
    const Operand a = operand_from(s, 0, va), b = operand_from(s, 1, vb);
    PointwiseFrame frame(vout.tensor(), result);
    frame.input(a, compute);
    if (b.is_scalar) {
      const compute_t<T> value = scalar_value<T>(b.scalar);
      pointwise<R, T>(frame.build(), [&f, value](compute_t<T> x) { return f(x, value); });
    } else {
      frame.input(b, compute);
      pointwise<R, T, T>(frame.build(), f);
    }
    frame.finish();
  });
  set_result(s, vout.get());
}

// alpha of add/sub, checked as PyTorch does.
template <typename T>
compute_t<T> alpha_value(const char* op, const sdk::Scalar& alpha, tsr_dtype compute) {
  if (sdk::is_integral(compute, true) && alpha.c.kind == TSR_SCALAR_DOUBLE) {
    sdk::fail(TSR_INVALID_ARGUMENT, std::string(op) +
                                        ": for integral input tensors, argument alpha must not "
                                        "be a floating point number");
  }
  if (compute != TSR_DTYPE_BOOL && alpha.c.kind == TSR_SCALAR_BOOL) {
    sdk::fail(TSR_INVALID_ARGUMENT,
              std::string(op) + ": boolean alpha only supported for boolean results");
  }
  return scalar_value<T>(alpha);
}

// add.out / add.Scalar_out (self, other, alpha, out); sub likewise.
template <bool kSub>
void add_out(const char* op, tsr_stack* s) {
  const sdk::Scalar alpha = arg<sdk::Scalar>(s, 2);
  binary<Kind::kPromote, kAll>(op, s, [&](auto tag, tsr_dtype compute) {
    using C = compute_t<typename decltype(tag)::type>;
    const C a = alpha_value<typename decltype(tag)::type>(op, alpha, compute);
    const bool unit = alpha.to_double() == 1;
    return [a, unit](C x, C y) -> C {
      const C scaled = unit ? y : wrap_mul(a, y);
      if constexpr (std::is_same_v<C, bool>) {
        return x || scaled;
      } else if constexpr (kSub) {
        return wrap_sub(x, scaled);
      } else {
        return wrap_add(x, scaled);
      }
    };
  });
}

void mul_out(const char* op, tsr_stack* s) {
  binary<Kind::kPromote, kAll>(op, s, [](auto tag, tsr_dtype) {
    using C = compute_t<typename decltype(tag)::type>;
    return [](C x, C y) -> C { return wrap_mul(x, y); };
  });
}

[[noreturn]] void zero_division(const char* op) {
  sdk::fail(TSR_INVALID_ARGUMENT,
            std::string(op) + ": ZeroDivisionError (integer division by zero)");
}

// Integer kernels that divide record a zero divisor here (only their integral branches set
// it) and fail after the loop.
struct ZeroFlag {
  std::atomic<bool> hit{false};
};

template <typename F>
void integer_division(const char* op, const F& run) {
  ZeroFlag flag;
  run(&flag);
  if (flag.hit.load()) zero_division(op);
}

// div.out / div.Scalar_out (true division) and div.out_mode (rounding_mode).
void div_out(const char* op, tsr_stack* s) {
  binary<Kind::kFloat, kFloating>(op, s, [](auto tag, tsr_dtype) {
    using C = compute_t<typename decltype(tag)::type>;
    return [](C x, C y) -> C { return x / y; };
  });
}

void div_mode_out(const char* op, tsr_stack* s) {
  if (is_none(s, 2)) {
    div_out(op, s);
    return;
  }
  const std::string_view mode = arg<std::string_view>(s, 2);
  const bool floor_mode = mode == "floor";
  integer_division(op, [&](ZeroFlag* flag) {
    binary<Kind::kPromote, kNumeric>(op, s, [&](auto tag, tsr_dtype) {
      using C = compute_t<typename decltype(tag)::type>;
      return [flag, floor_mode](C x, C y) -> C {
        if constexpr (std::is_integral_v<C>) {
          if (y == 0) {
            flag->hit.store(true, std::memory_order_relaxed);
            return 0;
          }
          return floor_mode ? div_floor(x, y) : div_trunc_int(x, y);
        } else {
          return floor_mode ? div_floor(x, y) : std::trunc(x / y);
        }
      };
    });
  });
}

template <bool kRemainder>
void mod_out(const char* op, tsr_stack* s) {
  integer_division(op, [&](ZeroFlag* flag) {
    binary<Kind::kPromote, kNumeric>(op, s, [&](auto tag, tsr_dtype) {
      using C = compute_t<typename decltype(tag)::type>;
      return [flag](C x, C y) -> C {
        if constexpr (std::is_integral_v<C>) {
          if (y == 0) {
            flag->hit.store(true, std::memory_order_relaxed);
            return 0;
          }
          return kRemainder ? remainder(x, y) : mod_trunc_int(x, y);
        } else {
          return kRemainder ? remainder(x, y) : std::fmod(x, y);
        }
      };
    });
  });
}

template <typename C>
C pow_of(C x, C y) {
  if constexpr (std::is_integral_v<C>) {
    return int_pow(x, y);
  } else {
    return std::pow(x, y);
  }
}

// pow.Scalar_out(Scalar self, Tensor exponent, *, Tensor(a!) out): a Scalar base.
void pow_scalar_base_out(const char* op, tsr_stack* s) {
  const Operand base = read_operand(s, 0), exponent = read_operand(s, 1);
  const sdk::Tensor out = arg<sdk::Tensor>(s, sdk::api().stack_size(s) - 1);
  sdk::ResultType rt;
  rt << base << exponent;
  const tsr_dtype compute = rt.get();
  dispatch<kNumeric>(compute, op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const C b = scalar_value<T>(base.scalar);
    PointwiseFrame frame(out, compute);
    frame.input(exponent, compute);
    pointwise<T, T>(frame.build(), [b](C y) { return pow_of(b, y); });
    frame.finish();
  });
  set_result(s, out);
}

// pow.Tensor_Tensor_out and pow.Tensor_Scalar_out.
void pow_out(const char* op, tsr_stack* s) {
  if (!is_tensor(s, 1)) {
    const sdk::Scalar e = arg<sdk::Scalar>(s, 1);
    if (sdk::is_integral(arg<sdk::Tensor>(s, 0).dtype(), true) && !e.is_floating_point() &&
        e.c.i < 0) {
      sdk::fail(TSR_INVALID_ARGUMENT,
                std::string(op) + ": integers to negative integer powers are not allowed");
    }
  }
  binary<Kind::kPromote, kNumeric>(op, s, [](auto tag, tsr_dtype) {
    using C = compute_t<typename decltype(tag)::type>;
    return [](C x, C y) -> C { return pow_of(x, y); };
  });
}

template <bool kMax>
void extremum_out(const char* op, tsr_stack* s) {
  binary<Kind::kPromote, kAll>(op, s, [](auto tag, tsr_dtype) {
    using C = compute_t<typename decltype(tag)::type>;
    return [](C x, C y) -> C { return kMax ? max_nan(x, y) : min_nan(x, y); };
  });
}

void atan2_out(const char* op, tsr_stack* s) {
  binary<Kind::kFloat, kFloating>(op, s, [](auto tag, tsr_dtype) {
    using C = compute_t<typename decltype(tag)::type>;
    return [](C x, C y) -> C { return std::atan2(x, y); };
  });
}

#define TESSERA_BINARY(NAME, KIND, SET, EXPR)                \
  void NAME##_out(const char* op, tsr_stack* s) {            \
    binary<Kind::KIND, SET>(op, s, [](auto tag, tsr_dtype) { \
      using C = compute_t<typename decltype(tag)::type>;     \
      return [](C x, C y) { return EXPR; };                  \
    });                                                      \
  }
TESSERA_BINARY(eq, kBool, kAll, x == y)
TESSERA_BINARY(ne, kBool, kAll, x != y)
TESSERA_BINARY(lt, kBool, kAll, x < y)
TESSERA_BINARY(le, kBool, kAll, x <= y)
TESSERA_BINARY(gt, kBool, kAll, x > y)
TESSERA_BINARY(ge, kBool, kAll, x >= y)
TESSERA_BINARY(logical_and, kBool, kAll, (x != 0) && (y != 0))
TESSERA_BINARY(logical_or, kBool, kAll, (x != 0) || (y != 0))
TESSERA_BINARY(logical_xor, kBool, kAll, (x != 0) != (y != 0))
TESSERA_BINARY(bitwise_and, kPromote, kIntegralAndBool, static_cast<C>(x& y))
TESSERA_BINARY(bitwise_or, kPromote, kIntegralAndBool, static_cast<C>(x | y))
TESSERA_BINARY(bitwise_xor, kPromote, kIntegralAndBool, static_cast<C>(x ^ y))
#undef TESSERA_BINARY

}  // namespace

void register_binary(sdk::Library& lib) {
  impl<&add_out<false>>(lib, "add.out");
  impl<&add_out<false>>(lib, "add.Scalar_out");
  impl<&add_out<true>>(lib, "sub.out");
  impl<&add_out<true>>(lib, "sub.Scalar_out");
  impl<&mul_out>(lib, "mul.out");
  impl<&mul_out>(lib, "mul.Scalar_out");
  impl<&div_out>(lib, "div.out");
  impl<&div_out>(lib, "div.Scalar_out");
  impl<&div_mode_out>(lib, "div.out_mode");
  impl<&pow_out>(lib, "pow.Tensor_Tensor_out");
  impl<&pow_out>(lib, "pow.Tensor_Scalar_out");
  impl<&pow_scalar_base_out>(lib, "pow.Scalar_out");
  impl<&extremum_out<true>>(lib, "maximum.out");
  impl<&extremum_out<false>>(lib, "minimum.out");
  impl<&mod_out<false>>(lib, "fmod.Tensor_out");
  impl<&mod_out<false>>(lib, "fmod.Scalar_out");
  impl<&mod_out<true>>(lib, "remainder.Tensor_out");
  impl<&mod_out<true>>(lib, "remainder.Scalar_out");
  impl<&atan2_out>(lib, "atan2.out");
  impl<&eq_out>(lib, "eq.Tensor_out");
  impl<&eq_out>(lib, "eq.Scalar_out");
  impl<&ne_out>(lib, "ne.Tensor_out");
  impl<&ne_out>(lib, "ne.Scalar_out");
  impl<&lt_out>(lib, "lt.Tensor_out");
  impl<&lt_out>(lib, "lt.Scalar_out");
  impl<&le_out>(lib, "le.Tensor_out");
  impl<&le_out>(lib, "le.Scalar_out");
  impl<&gt_out>(lib, "gt.Tensor_out");
  impl<&gt_out>(lib, "gt.Scalar_out");
  impl<&ge_out>(lib, "ge.Tensor_out");
  impl<&ge_out>(lib, "ge.Scalar_out");
  impl<&logical_and_out>(lib, "logical_and.out");
  impl<&logical_or_out>(lib, "logical_or.out");
  impl<&logical_xor_out>(lib, "logical_xor.out");
  impl<&bitwise_and_out>(lib, "bitwise_and.Tensor_out");
  impl<&bitwise_or_out>(lib, "bitwise_or.Tensor_out");
  impl<&bitwise_xor_out>(lib, "bitwise_xor.Tensor_out");
  impl<&bitwise_and_out>(lib, "bitwise_and.Scalar_out");
  impl<&bitwise_or_out>(lib, "bitwise_or.Scalar_out");
  impl<&bitwise_xor_out>(lib, "bitwise_xor.Scalar_out");
}

}  // namespace cpu
}  // namespace tessera
