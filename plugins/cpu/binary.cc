// Binary pointwise ops (op set v1), as out= kernels for both the Tensor and the Scalar
// overloads; the runtime derives the functional and in-place forms.
#include <atomic>
#include <cmath>
#include <string_view>

#include "math.hpp"
#include "pointwise.hpp"
#include "tessera/base/element_math.hpp"
#include "tessera/base/op_checks.hpp"

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

// binary: out = f(self, other), for `other` a tensor (TensorView) or a Scalar. `make(tag,
// compute)` returns f for the compute type of tag (compute: the dtype the operands promote to).
// A Scalar `other` is held by the loop in the compute type (a float for the 16-bit floats, as
// PyTorch's opmath does), not rounded to the tensor's dtype first.
template <Kind K, sdk::DtypeSet Set, typename Other, typename Make>
sdk::TensorView binary(const sdk::KernelContext& ctx, const sdk::TensorView& va, const Other& other,
                       const sdk::TensorView& vout, const Make& make) {
  constexpr bool kScalar = std::is_same_v<Other, sdk::Scalar>;
  const tsr_dtype compute = ctx.planned_compute_dtype();  // kFloat: float32 for integers
  dispatch<Set>(compute, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = std::conditional_t<K == Kind::kBool, bool, T>;
    const auto f = make(tag, compute);
    const tsr_dtype result = K == Kind::kBool ? TSR_DTYPE_BOOL : compute;
    PointwiseFrame frame(vout, result);
    frame.input(va, compute);
    if constexpr (kScalar) {
      const compute_t<T> value = scalar_value<T>(other);
      frame.run<R, T>([&f, value](compute_t<T> x) { return f(x, value); });
    } else {
      frame.input(other, compute);
      frame.run<R, T, T>(f);
    }
  });
  return vout;
}

using sdk::KernelContext;
using sdk::Scalar;
using sdk::TensorView;

// add.out(self, Tensor other, *, alpha, out) / add.Scalar_out(self, Scalar other, alpha, *, out);
// sub likewise. Other: TensorView or Scalar.
template <bool kSub, typename Other>
TensorView add_out(const KernelContext& ctx, TensorView self, Other other, Scalar alpha,
                   TensorView out) {
  return binary<Kind::kPromote, kAll>(ctx, self, other, out, [&](auto tag, tsr_dtype compute) {
    using C = compute_t<typename decltype(tag)::type>;
    // The plan checks alpha; a runtime whose plan predates that check does not
    // (tessera/base/op_checks.hpp says why the kernel asks again).
    if (const char* why = base::alpha_error(compute, alpha.c.kind)) {
      ctx.fail(TSR_INVALID_ARGUMENT, why);
    }
    const C a = scalar_value<typename decltype(tag)::type>(alpha);
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

template <typename Other>
TensorView mul_out(const KernelContext& ctx, TensorView self, Other other, TensorView out) {
  return binary<Kind::kPromote, kAll>(ctx, self, other, out, [](auto tag, tsr_dtype) {
    using C = compute_t<typename decltype(tag)::type>;
    return [](C x, C y) -> C { return wrap_mul(x, y); };
  });
}

// Integer kernels that divide record a zero divisor here (only their integral branches set
// it) and fail after the loop.
struct ZeroFlag {
  std::atomic<bool> hit{false};
};

template <typename F>
TensorView integer_division(const KernelContext& ctx, const F& run) {
  ZeroFlag flag;
  const TensorView out = run(&flag);
  if (flag.hit.load()) {
    ctx.fail(TSR_INVALID_ARGUMENT, "ZeroDivisionError (integer division by zero)");
  }
  return out;
}

// div.out / div.Scalar_out (true division) and div.out_mode (rounding_mode).
template <typename Other>
TensorView div_out(const KernelContext& ctx, TensorView self, Other other, TensorView out) {
  return binary<Kind::kFloat, kFloating>(ctx, self, other, out, [](auto tag, tsr_dtype) {
    using C = compute_t<typename decltype(tag)::type>;
    return [](C x, C y) -> C { return x / y; };
  });
}

TensorView div_mode_out(const KernelContext& ctx, TensorView self, TensorView other,
                        std::optional<std::string_view> rounding_mode, TensorView out) {
  if (!rounding_mode) return div_out(ctx, self, other, out);
  const bool floor_mode = *rounding_mode == "floor";
  return integer_division(ctx, [&](ZeroFlag* flag) {
    return binary<Kind::kPromote, kNumeric>(ctx, self, other, out, [&](auto tag, tsr_dtype) {
      using C = compute_t<typename decltype(tag)::type>;
      return [flag, floor_mode](C x, C y) -> C {
        if constexpr (std::is_integral_v<C>) {
          if (y == 0) {
            flag->hit.store(true, std::memory_order_relaxed);
            return 0;
          }
          return floor_mode ? div_floor(x, y) : div_trunc_int(x, y);
        } else {
          static_cast<void>(flag);  // only integers divide by zero into an error
          return floor_mode ? div_floor(x, y) : std::trunc(x / y);
        }
      };
    });
  });
}

template <bool kRemainder, typename Other>
TensorView mod_out(const KernelContext& ctx, TensorView self, Other other, TensorView out) {
  return integer_division(ctx, [&](ZeroFlag* flag) {
    return binary<Kind::kPromote, kNumeric>(ctx, self, other, out, [&](auto tag, tsr_dtype) {
      using C = compute_t<typename decltype(tag)::type>;
      return [flag](C x, C y) -> C {
        if constexpr (std::is_integral_v<C>) {
          if (y == 0) {
            flag->hit.store(true, std::memory_order_relaxed);
            return 0;
          }
          return kRemainder ? remainder(x, y) : mod_trunc_int(x, y);
        } else {
          static_cast<void>(flag);  // only integers divide by zero into an error
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
TensorView pow_scalar_base_out(const KernelContext& ctx, Scalar self, TensorView exponent,
                               TensorView out) {
  const tsr_dtype compute = ctx.planned_compute_dtype();
  dispatch<kNumeric>(compute, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const C b = scalar_value<T>(self);
    PointwiseFrame frame(out, compute);
    frame.input(exponent, compute);
    frame.run<T, T>([b](C y) { return pow_of(b, y); });
  });
  return out;
}

// pow.Tensor_Tensor_out and pow.Tensor_Scalar_out.
template <typename Other>
TensorView pow_out(const KernelContext& ctx, TensorView self, Other exponent, TensorView out) {
  if constexpr (std::is_same_v<Other, Scalar>) {  // asked again: tessera/base/op_checks.hpp
    if (const char* why =
            base::integer_power_error(self.dtype(), exponent.c.kind, exponent.to_double() < 0)) {
      ctx.fail(TSR_INVALID_ARGUMENT, why);
    }
  }
  return binary<Kind::kPromote, kNumeric>(ctx, self, exponent, out, [](auto tag, tsr_dtype) {
    using C = compute_t<typename decltype(tag)::type>;
    return [](C x, C y) -> C { return pow_of(x, y); };
  });
}

template <bool kMax>
TensorView extremum_out(const KernelContext& ctx, TensorView self, TensorView other,
                        TensorView out) {
  return binary<Kind::kPromote, kAll>(ctx, self, other, out, [](auto tag, tsr_dtype) {
    using C = compute_t<typename decltype(tag)::type>;
    return [](C x, C y) -> C { return kMax ? max_nan(x, y) : min_nan(x, y); };
  });
}

TensorView atan2_out(const KernelContext& ctx, TensorView self, TensorView other, TensorView out) {
  return binary<Kind::kFloat, kFloating>(ctx, self, other, out, [](auto tag, tsr_dtype) {
    using C = compute_t<typename decltype(tag)::type>;
    return [](C x, C y) -> C { return std::atan2(x, y); };
  });
}

#define TESSERA_BINARY(NAME, KIND, SET, EXPR)                                                     \
  template <typename Other>                                                                       \
  TensorView NAME##_out(const KernelContext& ctx, TensorView self, Other other, TensorView out) { \
    return binary<Kind::KIND, SET>(ctx, self, other, out, [](auto tag, tsr_dtype) {               \
      using C = compute_t<typename decltype(tag)::type>;                                          \
      return [](C x, C y) { return EXPR; };                                                       \
    });                                                                                           \
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

// ---- op set 1.7: the element functions are the base's (tessera/base/element_math.hpp) ----

// fmax / fmin: NaN only where both are; integers as maximum / minimum.
template <typename C>
C fmax_of(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    return std::fmax(a, b);
  } else {
    return a < b ? b : a;
  }
}
template <typename C>
C fmin_of(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    return std::fmin(a, b);
  } else {
    return b < a ? b : a;
  }
}

#define TESSERA_BINARY(NAME, KIND, SET, FN)                                                       \
  template <typename Other>                                                                       \
  TensorView NAME##_out(const KernelContext& ctx, TensorView self, Other other, TensorView out) { \
    return binary<Kind::KIND, SET>(ctx, self, other, out, [](auto tag, tsr_dtype) {               \
      using C = compute_t<typename decltype(tag)::type>;                                          \
      return [](C x, C y) -> C { return FN(x, y); };                                              \
    });                                                                                           \
  }
TESSERA_BINARY(copysign, kFloat, kFloating, std::copysign)
TESSERA_BINARY(fmax, kPromote, kAll, fmax_of)
TESSERA_BINARY(fmin, kPromote, kAll, fmin_of)
TESSERA_BINARY(heaviside, kPromote, kAll, base::heaviside)
TESSERA_BINARY(hypot, kPromote, kFloating, std::hypot)
TESSERA_BINARY(logaddexp, kPromote, kFloating, base::logaddexp)
TESSERA_BINARY(logaddexp2, kPromote, kFloating, base::logaddexp2)
TESSERA_BINARY(xlogy, kFloat, kFloating, base::xlogy)
TESSERA_BINARY(gcd, kPromote, kIntegral, base::gcd)
TESSERA_BINARY(lcm, kPromote, kIntegral, base::lcm)
TESSERA_BINARY(bitwise_left_shift, kPromote, kIntegral, base::shift_left)
TESSERA_BINARY(bitwise_right_shift, kPromote, kIntegral, base::shift_right)
#undef TESSERA_BINARY

// nextafter.out(Tensor self, Tensor other, *, Tensor(a!) out): float32, float64 and bfloat16
// (float16 as PyTorch: refused).
TensorView nextafter_out(const KernelContext& ctx, TensorView self, TensorView other,
                         TensorView out) {
  constexpr sdk::DtypeSet kSet = sdk::dtype_bit(TSR_DTYPE_BFLOAT16) |
                                 sdk::dtype_bit(TSR_DTYPE_FLOAT32) |
                                 sdk::dtype_bit(TSR_DTYPE_FLOAT64);
  return binary<Kind::kPromote, kSet>(ctx, self, other, out, [](auto tag, tsr_dtype) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    return [](C x, C y) -> C {
      if constexpr (std::is_same_v<T, BFloat16>) {
        return base::next_bfloat16(x, y);
      } else {
        return std::nextafter(x, y);
      }
    };
  });
}

// A Scalar self with a Tensor other (xlogy.OutScalar_Self, the shifts' Scalar_Tensor_out): f
// of the Scalar and each element, in the planned dtype.
template <Kind K, sdk::DtypeSet Set, typename F>
TensorView scalar_self(const KernelContext& ctx, const Scalar& self, const TensorView& other,
                       const TensorView& out, const F& f) {
  const tsr_dtype compute = ctx.planned_compute_dtype();
  dispatch<Set>(compute, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const C a = scalar_value<T>(self);
    PointwiseFrame frame(out, compute);
    frame.input(other, compute);
    frame.run<T, T>([a, &f](C y) -> C { return f(a, y); });
  });
  return out;
}

TensorView xlogy_scalar_self_out(const KernelContext& ctx, Scalar self, TensorView other,
                                 TensorView out) {
  return scalar_self<Kind::kFloat, kFloating>(ctx, self, other, out,
                                              [](auto x, auto y) { return base::xlogy(x, y); });
}
template <bool kLeft>
TensorView shift_scalar_self_out(const KernelContext& ctx, Scalar self, TensorView other,
                                 TensorView out) {
  return scalar_self<Kind::kPromote, kIntegral>(ctx, self, other, out, [](auto x, auto y) {
    return kLeft ? base::shift_left(x, y) : base::shift_right(x, y);
  });
}

}  // namespace

void register_binary(sdk::Library& lib) {
  using T = sdk::TensorView;  // the Tensor overload's `other`
  using S = sdk::Scalar;      // the Scalar overload's
  lib.impl<&add_out<false, T>>(TESSERA_OP("add.out"));
  lib.impl<&add_out<false, S>>(TESSERA_OP("add.Scalar_out"));
  lib.impl<&add_out<true, T>>(TESSERA_OP("sub.out"));
  lib.impl<&add_out<true, S>>(TESSERA_OP("sub.Scalar_out"));
  lib.impl<&mul_out<T>>(TESSERA_OP("mul.out"));
  lib.impl<&mul_out<S>>(TESSERA_OP("mul.Scalar_out"));
  lib.impl<&div_out<T>>(TESSERA_OP("div.out"));
  lib.impl<&div_out<S>>(TESSERA_OP("div.Scalar_out"));
  lib.impl<&div_mode_out>(TESSERA_OP("div.out_mode"));
  lib.impl<&pow_out<T>>(TESSERA_OP("pow.Tensor_Tensor_out"));
  lib.impl<&pow_out<S>>(TESSERA_OP("pow.Tensor_Scalar_out"));
  lib.impl<&pow_scalar_base_out>(TESSERA_OP("pow.Scalar_out"));
  lib.impl<&extremum_out<true>>(TESSERA_OP("maximum.out"));
  lib.impl<&extremum_out<false>>(TESSERA_OP("minimum.out"));
  lib.impl<&mod_out<false, T>>(TESSERA_OP("fmod.Tensor_out"));
  lib.impl<&mod_out<false, S>>(TESSERA_OP("fmod.Scalar_out"));
  lib.impl<&mod_out<true, T>>(TESSERA_OP("remainder.Tensor_out"));
  lib.impl<&mod_out<true, S>>(TESSERA_OP("remainder.Scalar_out"));
  lib.impl<&atan2_out>(TESSERA_OP("atan2.out"));
#define TESSERA_REGISTER(NAME, TENSOR_OUT, SCALAR_OUT)         \
  lib.impl<&NAME##_out<T>>(TESSERA_OP(#NAME "." #TENSOR_OUT)); \
  lib.impl<&NAME##_out<S>>(TESSERA_OP(#NAME "." #SCALAR_OUT));
  TESSERA_REGISTER(eq, Tensor_out, Scalar_out)
  TESSERA_REGISTER(ne, Tensor_out, Scalar_out)
  TESSERA_REGISTER(lt, Tensor_out, Scalar_out)
  TESSERA_REGISTER(le, Tensor_out, Scalar_out)
  TESSERA_REGISTER(gt, Tensor_out, Scalar_out)
  TESSERA_REGISTER(ge, Tensor_out, Scalar_out)
  TESSERA_REGISTER(bitwise_and, Tensor_out, Scalar_out)
  TESSERA_REGISTER(bitwise_or, Tensor_out, Scalar_out)
  TESSERA_REGISTER(bitwise_xor, Tensor_out, Scalar_out)
#undef TESSERA_REGISTER
  lib.impl<&logical_and_out<T>>(TESSERA_OP("logical_and.out"));
  lib.impl<&logical_or_out<T>>(TESSERA_OP("logical_or.out"));
  lib.impl<&logical_xor_out<T>>(TESSERA_OP("logical_xor.out"));
  // op set 1.7
  lib.impl<&copysign_out<T>>(TESSERA_OP("copysign.out"));
  lib.impl<&copysign_out<S>>(TESSERA_OP("copysign.Scalar_out"));
  lib.impl<&fmax_out<T>>(TESSERA_OP("fmax.out"));
  lib.impl<&fmin_out<T>>(TESSERA_OP("fmin.out"));
  lib.impl<&heaviside_out<T>>(TESSERA_OP("heaviside.out"));
  lib.impl<&hypot_out<T>>(TESSERA_OP("hypot.out"));
  lib.impl<&nextafter_out>(TESSERA_OP("nextafter.out"));
  lib.impl<&logaddexp_out<T>>(TESSERA_OP("logaddexp.out"));
  lib.impl<&logaddexp2_out<T>>(TESSERA_OP("logaddexp2.out"));
  lib.impl<&xlogy_out<T>>(TESSERA_OP("xlogy.OutTensor"));
  lib.impl<&xlogy_out<S>>(TESSERA_OP("xlogy.OutScalar_Other"));
  lib.impl<&xlogy_scalar_self_out>(TESSERA_OP("xlogy.OutScalar_Self"));
  lib.impl<&gcd_out<T>>(TESSERA_OP("gcd.out"));
  lib.impl<&lcm_out<T>>(TESSERA_OP("lcm.out"));
  lib.impl<&bitwise_left_shift_out<T>>(TESSERA_OP("bitwise_left_shift.Tensor_out"));
  lib.impl<&bitwise_left_shift_out<S>>(TESSERA_OP("bitwise_left_shift.Tensor_Scalar_out"));
  lib.impl<&shift_scalar_self_out<true>>(TESSERA_OP("bitwise_left_shift.Scalar_Tensor_out"));
  lib.impl<&bitwise_right_shift_out<T>>(TESSERA_OP("bitwise_right_shift.Tensor_out"));
  lib.impl<&bitwise_right_shift_out<S>>(TESSERA_OP("bitwise_right_shift.Tensor_Scalar_out"));
  lib.impl<&shift_scalar_self_out<false>>(TESSERA_OP("bitwise_right_shift.Scalar_Tensor_out"));
}

}  // namespace cpu
}  // namespace tessera
