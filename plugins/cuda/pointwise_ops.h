// The pointwise ops beyond arithmetic (comparisons, extrema, integer division, pow, the ternary
// ops, the remaining unary ops) as functors for the GPU elementwise iterator (elementwise.h),
// compiled for the device by kernels_pointwise.cu and for the host by the tests, which run them
// for every (block, thread) of a launch (tests/pointwise_test.cc).
//
// Note [GPU pointwise families]
// Each functor is a family of ops that share their dtypes and arity, with the op chosen by a
// member at run time (CompareOp: eq, ne, lt, le, gt, ge and the logical ops), so that a family
// costs one kernel per compute dtype and path rather than one per op: kernels.cu's compile time
// (nvcc for one architecture, hipcc for three, in CI on 2 cores) grows with the number of
// kernels, and a branch on a launch-wide constant costs a GPU next to nothing. Ops whose output
// is bool-valued (comparisons, predicates) and where/masked_fill (a bool condition among other
// dtypes) almost never meet the plan's fast path (one dtype for every operand), so only their
// general kernel is built. VisitPointwise maps a PointwiseKind to its functor, for the kernels'
// launcher and for the host tests alike. The semantics are PyTorch's CUDA kernels' and the CPU
// plugin's (plugins/cpu/binary.cc, ternary.cc, unary.cc); the only departure is integer
// division by zero, which PyTorch's CPU backend refuses and its CUDA backend leaves undefined:
// a GPU cannot refuse an element of queued work, so here x / 0 is -1 (all bits set) and x % 0
// is x, the same on every GPU, and a zero Scalar divisor is refused before launching.
#pragma once

#include <cmath>
#include <string>
#include <type_traits>

#include "elementwise.h"
#include "elementwise_plan.h"
#include "tessera/base/element_math.hpp"
#include "tessera/base/special_math.hpp"

namespace tessera {
namespace gpu {

// Every op of kernels_pointwise.cu.
enum class PointwiseKind : int32_t {
  // binary: output and two inputs
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kLogicalAnd,
  kLogicalOr,
  kLogicalXor,
  kBitwiseAnd,
  kBitwiseOr,
  kBitwiseXor,
  kMaximum,
  kMinimum,
  kRemainder,
  kFmod,
  kDivTrunc,
  kDivFloor,
  kPow,
  kAtan2,
  // binary, op set 1.7: floating (FloatBinaryOp) ...
  kCopysign,
  kHypot,
  kNextafter,  // not float16, as PyTorch
  kLogaddexp,
  kLogaddexp2,
  kXlogy,
  // ... every dtype (ExtremumOp ignoring NaN; HeavisideOp) ...
  kFmax,
  kFmin,
  kHeaviside,
  // ... and the integers (IntegerBinaryOp)
  kGcd,
  kLcm,
  kShiftLeft,
  kShiftRight,
  // binary, the activations' backward ops (ActivationBackwardOp): gradient and the forward's
  // input (or result)
  kThresholdBackward,  // numeric; the rest floating
  kGeluBackward,
  kGeluTanhBackward,
  kSiluBackward,
  kSigmoidBackward,  // of the result
  kTanhBackward,     // of the result
  kHardtanhBackward,
  kLeakyReluBackward,
  kEluBackward,
  kEluBackwardOfResult,
  kHardswishBackward,
  kHardsigmoidBackward,
  kSoftplusBackward,
  kShrinkBackward,  // hardshrink and softshrink
  // ternary: output and three inputs
  kWhere,  // condition, self, other (masked_fill: mask, value, self)
  kClamp,  // self, min, max
  kAddcmul,
  kAddcdiv,
  kLerp,  // self, end, weight
  // unary, floating
  kExp2,
  kExpm1,
  kLog2,
  kLog10,
  kLog1p,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kErf,
  kSilu,
  kGelu,
  kGeluTanh,
  kLeakyRelu,
  kElu,
  kHardswish,
  kHardsigmoid,
  kSoftplus,
  kMish,
  kHardshrink,
  kSoftshrink,
  kFrac,
  kDeg2rad,
  kRad2deg,
  kErfc,
  kErfinv,
  kLgamma,
  kDigamma,
  kPolygamma,
  kI0,
  kSinc,
  kAcosh,
  kAsinh,
  kAtanh,
  kLogit,
  kRoundDecimals,
  // unary, exact in the input's dtype
  kFloor,
  kCeil,
  kRound,
  kTrunc,
  kThreshold,
  kSign,
  kNanToNum,
  kBitwiseNot,
  // unary, bool-valued
  kIsNan,
  kIsInf,
  kIsFinite,
  kLogicalNot,
  kSignbit,
};

// pow's exponent when it is a Scalar: PyTorch's CUDA kernel computes these exponents without
// pow (x*x, sqrt, ...), which differs from pow in the last bit and at -0 and -inf.
enum class PowMode : int32_t {
  kGeneral,
  kSquare,
  kCube,
  kInverseSquare,
  kSqrt,
  kRsqrt,
  kReciprocal,
};

// What an op takes besides its operands.
struct PointwiseParams {
  ConstantValue value;  // addcmul / addcdiv: `value`
  PowMode pow = PowMode::kGeneral;
  int64_t decimals = 0;  // round.decimals
  int64_t order = 0;     // polygamma's n
  // The activations' Scalars, in schema order (leaky_relu's slope; elu's alpha, scale,
  // input_scale; softplus's beta, threshold; threshold's threshold, value; ...).
  ConstantValue args[3];
};

// PointwiseArity: the op's inputs (the launch has one operand more, the output).
constexpr int PointwiseArity(PointwiseKind kind) {
  return kind < PointwiseKind::kWhere ? 2 : kind < PointwiseKind::kExp2 ? 3 : 1;
}

// PointwiseDtypes: the compute dtypes an op has kernels for (PyTorch's CUDA set); the plugin
// refuses others with UNIMPLEMENTED before planning.
constexpr uint32_t PointwiseDtypes(PointwiseKind kind) {
  using K = PointwiseKind;
  if (kind <= K::kLogicalXor) return kAllDtypes;
  if (kind <= K::kBitwiseXor) return kIntegralAndBoolDtypes;
  if (kind <= K::kMinimum) return kAllDtypes;
  if (kind <= K::kPow) return kNumericDtypes;
  if (kind == K::kAtan2) return kFloatingDtypes;
  if (kind == K::kNextafter) return kFloatingDtypes & ~DtypeBit(TSR_DTYPE_FLOAT16);
  if (kind <= K::kXlogy) return kFloatingDtypes;
  if (kind <= K::kHeaviside) return kAllDtypes;
  if (kind <= K::kShiftRight) return kIntegralDtypes;
  if (kind == K::kThresholdBackward) return kNumericDtypes;
  if (kind <= K::kShrinkBackward) return kFloatingDtypes;
  if (kind == K::kWhere) return kAllDtypes;
  if (kind == K::kClamp || kind == K::kAddcmul) return kNumericDtypes;
  if (kind <= K::kRoundDecimals) return kFloatingDtypes;  // addcdiv, lerp, the floating unary
  if (kind <= K::kThreshold) return kNumericDtypes;
  if (kind == K::kSign || kind == K::kNanToNum || kind >= K::kIsNan) return kAllDtypes;
  return kIntegralAndBoolDtypes;  // bitwise_not
}

// --- helpers ------------------------------------------------------------------------------

template <typename C>
TSR_GPU_HD TSR_GPU_INLINE bool IsNan(C a) {
  if constexpr (std::is_floating_point_v<C>) {
    return a != a;
  } else {
    return false;
  }
}

// IsNegative: a < 0, without comparing an unsigned value with 0.
template <typename C>
TSR_GPU_HD TSR_GPU_INLINE bool IsNegative(C a) {
  if constexpr (std::is_signed_v<C>) {
    return a < C(0);
  } else {
    return false;
  }
}

// maximum / minimum, and clamp's bounds: a NaN operand is the result (the first one's if both).
template <typename C>
TSR_GPU_HD TSR_GPU_INLINE C MaxNan(C a, C b) {
  if (IsNan(a)) return a;
  if (IsNan(b)) return b;
  return a > b ? a : b;
}
template <typename C>
TSR_GPU_HD TSR_GPU_INLINE C MinNan(C a, C b) {
  if (IsNan(a)) return a;
  if (IsNan(b)) return b;
  return a < b ? a : b;
}

// Relu6: min(max(x, 0), 6), NaN staying NaN (hardswish, hardsigmoid).
template <typename C>
TSR_GPU_HD TSR_GPU_INLINE C Relu6(C x) {
  return x < C(0) ? C(0) : x > C(6) ? C(6) : x;
}

// --- binary -------------------------------------------------------------------------------

// CompareOp: eq .. ge and the logical ops, 1 or 0 in the compute dtype (the output, usually
// bool, converts it).
template <typename C>
struct CompareOp {
  static constexpr int kArity = 2;
  PointwiseKind kind;
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C a, C b) const {
    bool r;
    switch (kind) {
      case PointwiseKind::kEq:
        r = a == b;
        break;
      case PointwiseKind::kNe:
        r = a != b;
        break;
      case PointwiseKind::kLt:
        r = a < b;
        break;
      case PointwiseKind::kLe:
        r = a <= b;
        break;
      case PointwiseKind::kGt:
        r = a > b;
        break;
      case PointwiseKind::kGe:
        r = a >= b;
        break;
      case PointwiseKind::kLogicalAnd:
        r = a != C(0) && b != C(0);
        break;
      case PointwiseKind::kLogicalOr:
        r = a != C(0) || b != C(0);
        break;
      default:  // kLogicalXor
        r = (a != C(0)) != (b != C(0));
        break;
    }
    return static_cast<C>(r);
  }
};

// BitwiseOp: and, or, xor of integers and bool.
template <typename C>
struct BitwiseOp {
  static constexpr int kArity = 2;
  PointwiseKind kind;
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C a, C b) const {
    if (kind == PointwiseKind::kBitwiseAnd) return static_cast<C>(a & b);
    if (kind == PointwiseKind::kBitwiseOr) return static_cast<C>(a | b);
    return static_cast<C>(a ^ b);
  }
};

// ExtremumOp: maximum and minimum (NaN propagates; clamp with one bound is one of them), or fmax
// and fmin (ignore_nan: a NaN operand gives the other).
template <typename C>
struct ExtremumOp {
  static constexpr int kArity = 2;
  bool max;
  bool ignore_nan = false;
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C a, C b) const {
    if (ignore_nan) {
      if (IsNan(a)) return b;
      if (IsNan(b)) return a;
    }
    return max ? MaxNan(a, b) : MinNan(a, b);
  }
};

// FloatBinaryOp: copysign, hypot, nextafter, logaddexp, logaddexp2, xlogy (C is float or double),
// with the base's element functions (tessera/base/element_math.hpp) where ATen's rules are its
// own. bfloat16: nextafter steps in bfloat16's bits.
template <typename C>
struct FloatBinaryOp {
  static constexpr int kArity = 2;
  PointwiseKind kind;
  bool bfloat16 = false;  // the storage type, for nextafter
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C a, C b) const {
    switch (kind) {
      case PointwiseKind::kCopysign:
        return std::copysign(a, b);
      case PointwiseKind::kHypot:
        return std::hypot(a, b);
      case PointwiseKind::kNextafter:
        return bfloat16 ? static_cast<C>(
                              base::next_bfloat16(static_cast<float>(a), static_cast<float>(b)))
                        : std::nextafter(a, b);
      case PointwiseKind::kLogaddexp:
        return base::logaddexp(a, b);
      case PointwiseKind::kLogaddexp2:
        return base::logaddexp2(a, b);
      default:  // kXlogy
        return base::xlogy(a, b);
    }
  }
};

// HeavisideOp: values where self is 0, else 1 or 0 by self's sign (NaN gives 0).
template <typename C>
struct HeavisideOp {
  static constexpr int kArity = 2;
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C x, C values) const { return base::heaviside(x, values); }
};

// IntegerBinaryOp: gcd, lcm and the shifts, as the base's element functions define them.
template <typename C>
struct IntegerBinaryOp {
  static constexpr int kArity = 2;
  PointwiseKind kind;
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C a, C b) const {
    switch (kind) {
      case PointwiseKind::kGcd:
        return base::gcd(a, b);
      case PointwiseKind::kLcm:
        return base::lcm(a, b);
      case PointwiseKind::kShiftLeft:
        return base::shift_left(a, b);
      default:  // kShiftRight
        return base::shift_right(a, b);
    }
  }
};

// DivisionOp: remainder (the divisor's sign, Python's %), fmod (the dividend's sign), and
// div's rounding modes trunc and floor. Integers: x / 0 = -1 and x % 0 = x (Note [GPU pointwise
// families]); MIN / -1 wraps to MIN and MIN % -1 is 0, as on the CPU.
template <typename C>
struct DivisionOp {
  static constexpr int kArity = 2;
  PointwiseKind kind;
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      const bool quotient = kind == PointwiseKind::kDivTrunc || kind == PointwiseKind::kDivFloor;
      if (b == 0) return quotient ? static_cast<C>(-1) : a;
      bool minus_one = false;
      if constexpr (std::is_signed_v<C>) minus_one = b == C(-1);
      C q, r;
      if (minus_one) {
        q = WrapSub(C(0), a);
        r = 0;
      } else {
        q = static_cast<C>(a / b);
        r = static_cast<C>(a % b);
      }
      const bool differ = r != 0 && (IsNegative(r) != IsNegative(b));
      switch (kind) {
        case PointwiseKind::kRemainder:
          return differ ? static_cast<C>(r + b) : r;
        case PointwiseKind::kFmod:
          return r;
        case PointwiseKind::kDivTrunc:
          return q;
        default:
          return differ ? static_cast<C>(q - 1) : q;
      }
    } else {
      switch (kind) {
        case PointwiseKind::kRemainder: {
          C r = std::fmod(a, b);
          if (r != 0 && ((r < 0) != (b < 0))) r += b;
          return r;
        }
        case PointwiseKind::kFmod:
          return std::fmod(a, b);
        case PointwiseKind::kDivTrunc:
          return std::trunc(a / b);
        default:
          return DivFloor(a, b);
      }
    }
  }
  // Python's floor division of floats, exact where a / b rounds across an integer.
  TSR_GPU_HD TSR_GPU_INLINE static C DivFloor(C a, C b) {
    if (b == 0) return a / b;
    const C mod = std::fmod(a, b);
    C div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= C(1);
    if (div == 0) return std::copysign(C(0), a / b);
    C floored = std::floor(div);
    if (div - floored > C(0.5)) floored += C(1);
    return floored;
  }
};

// Integer power by squaring, wrapping; a negative exponent gives 1 / base^n truncated (1, -1
// or 0), as PyTorch.
template <typename C>
TSR_GPU_HD TSR_GPU_INLINE C IntPow(C base, C exp) {
  if constexpr (std::is_signed_v<C>) {
    if (exp < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exp % 2 == 0) ? C(1) : C(-1);
      return 0;
    }
  }
  C result = 1;
  while (exp != 0) {
    if (exp & 1) result = WrapMul(result, base);
    exp = static_cast<C>(exp >> 1);
    base = WrapMul(base, base);
  }
  return result;
}

template <typename C>
struct PowOp {
  static constexpr int kArity = 2;
  PowMode mode;
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      return IntPow(a, b);
    } else {
      switch (mode) {
        case PowMode::kSquare:
          return a * a;
        case PowMode::kCube:
          return a * a * a;
        case PowMode::kInverseSquare:
          return C(1) / (a * a);
        case PowMode::kSqrt:
          return std::sqrt(a);
        case PowMode::kRsqrt:
          return C(1) / std::sqrt(a);
        case PowMode::kReciprocal:
          return C(1) / a;
        default:
          return std::pow(a, b);
      }
    }
  }
};

template <typename C>
struct Atan2Op {
  static constexpr int kArity = 2;
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C a, C b) const { return std::atan2(a, b); }
};

// ActivationBackwardOp: the gradient of an activation at x (the forward's input, or its
// result for sigmoid, tanh and elu of the result) times g, PyTorch's formulas
// (plugins/cpu/activations.cc computes the same). a, b, c: the op's Scalars in schema order.
template <typename C>
struct ActivationBackwardOp {
  static constexpr int kArity = 2;
  PointwiseKind kind;
  C a = 0, b = 0, c = 0;
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C g, C x) const {
    if constexpr (!std::is_floating_point_v<C>) {
      return x <= a ? C(0) : g;  // kThresholdBackward, the only integral one
    } else {
      switch (kind) {
        case PointwiseKind::kThresholdBackward:
          return x <= a ? C(0) : g;
        case PointwiseKind::kGeluBackward: {  // Phi(x) + x phi(x)
          const C cdf = C(0.5) * (C(1) + std::erf(x * C(0.70710678118654752440)));
          const C pdf = std::exp(C(-0.5) * x * x) * C(0.39894228040143267794);
          return g * (cdf + x * pdf);
        }
        case PointwiseKind::kGeluTanhBackward: {
          const C beta = C(0.79788456080286535588), kappa = C(0.044715);
          const C t = std::tanh(beta * (x + kappa * x * x * x));
          const C inner = beta * (C(1) + C(3) * kappa * x * x);
          return g * (C(0.5) * (C(1) + t) + C(0.5) * x * (C(1) - t * t) * inner);
        }
        case PointwiseKind::kSiluBackward: {
          const C s = C(1) / (C(1) + std::exp(-x));
          return g * s * (C(1) + x * (C(1) - s));
        }
        case PointwiseKind::kSigmoidBackward:
          return g * (C(1) - x) * x;
        case PointwiseKind::kTanhBackward:
          return g * (C(1) - x * x);
        case PointwiseKind::kHardtanhBackward:  // a, b: min_val, max_val
          return x <= a || x >= b ? C(0) : g;
        case PointwiseKind::kLeakyReluBackward:  // a: negative_slope
          return x > C(0) ? g : g * a;
        case PointwiseKind::kEluBackward:  // a, b, c: alpha, scale, input_scale; NaN: g * b
          return x <= C(0) ? g * c * (a * b) * std::exp(x * c) : g * b;
        case PointwiseKind::kEluBackwardOfResult:
          return x <= C(0) ? g * c * (x + a * b) : g * b;
        case PointwiseKind::kHardswishBackward:
          if (x < C(-3)) return C(0);
          return x <= C(3) ? g * (x / C(3) + C(0.5)) : g;
        case PointwiseKind::kHardsigmoidBackward:
          return x > C(-3) && x < C(3) ? g * C(1.0 / 6.0) : C(0);
        case PointwiseKind::kSoftplusBackward: {  // a, b: beta, threshold
          const C z = std::exp(x * a);
          return x * a > b ? g : g * z / (z + C(1));
        }
        default:  // kShrinkBackward; a: lambd
          return x >= -a && x <= a ? C(0) : g;
      }
    }
  }
};

// --- ternary ------------------------------------------------------------------------------

// WhereOp: condition ? a : b, the condition read in the compute dtype (0 or 1).
template <typename C>
struct WhereOp {
  static constexpr int kArity = 3;
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C condition, C a, C b) const {
    return condition != C(0) ? a : b;
  }
};

// ClampOp: both bounds; min > max gives max, a NaN anywhere gives NaN (PyTorch).
template <typename C>
struct ClampOp {
  static constexpr int kArity = 3;
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C x, C lo, C hi) const {
    return MinNan(MaxNan(x, lo), hi);
  }
};

// AddcOp: addcmul (self + value * t1 * t2, wrapping for integers) and addcdiv (self + value *
// (t1 / t2), floating only).
template <typename C>
struct AddcOp {
  static constexpr int kArity = 3;
  C value;
  bool div;
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C a, C b, C c) const {
    if constexpr (std::is_floating_point_v<C>) {
      return div ? a + value * (b / c) : a + value * b * c;  // PyTorch's CUDA order
    } else {
      return WrapAdd(a, WrapMul(value, WrapMul(b, c)));
    }
  }
};

// LerpOp: PyTorch's formula, exact at both ends and monotonic in between.
template <typename C>
struct LerpOp {
  static constexpr int kArity = 3;
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C a, C b, C w) const {
    return std::fabs(w) < C(0.5) ? a + w * (b - a) : b - (b - a) * (C(1) - w);
  }
};

// --- unary --------------------------------------------------------------------------------

// FloatUnaryOp: the floating unary ops (C is float or double).
template <typename C>
struct FloatUnaryOp {
  static constexpr int kArity = 1;
  PointwiseKind kind;
  C ten_pow = 1;  // round.decimals: 10^|decimals|
  bool negative_decimals = false;
  C k0 = 0, k1 = 0, k2 = 0;  // the activations' Scalars, in schema order; logit's eps (< 0: none)
  int64_t n = 0;             // polygamma's order
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C a) const {
    switch (kind) {
      case PointwiseKind::kFrac:
        return a - std::trunc(a);
      case PointwiseKind::kDeg2rad:
        return a * C(0.017453292519943295769);
      case PointwiseKind::kRad2deg:
        return a * C(57.295779513082320877);
      case PointwiseKind::kErfc:
        return std::erfc(a);
      case PointwiseKind::kErfinv:
        return base::erfinv(a);
      case PointwiseKind::kLgamma:
        return std::lgamma(a);
      case PointwiseKind::kDigamma:
        return base::digamma(a);
      case PointwiseKind::kPolygamma:
        return base::polygamma(n, a);
      case PointwiseKind::kI0:
        return base::bessel_i0(a);
      case PointwiseKind::kSinc:
        return base::sinc(a);
      case PointwiseKind::kAcosh:
        return std::acosh(a);
      case PointwiseKind::kAsinh:
        return std::asinh(a);
      case PointwiseKind::kAtanh:
        return std::atanh(a);
      case PointwiseKind::kLogit:  // k0, k1: eps and 1 - eps, or a negative k0 (no clamp)
        return base::logit(a, k0 >= C(0), k0, k1);
      case PointwiseKind::kExp2:
        return std::exp2(a);
      case PointwiseKind::kExpm1:
        return std::expm1(a);
      case PointwiseKind::kLog2:
        return std::log2(a);
      case PointwiseKind::kLog10:
        return std::log10(a);
      case PointwiseKind::kLog1p:
        return std::log1p(a);
      case PointwiseKind::kTan:
        return std::tan(a);
      case PointwiseKind::kAsin:
        return std::asin(a);
      case PointwiseKind::kAcos:
        return std::acos(a);
      case PointwiseKind::kAtan:
        return std::atan(a);
      case PointwiseKind::kSinh:
        return std::sinh(a);
      case PointwiseKind::kCosh:
        return std::cosh(a);
      case PointwiseKind::kErf:
        return std::erf(a);
      case PointwiseKind::kSilu:
        return a / (C(1) + std::exp(-a));
      case PointwiseKind::kGelu:  // x/2 (1 + erf(x / sqrt 2))
        return a * C(0.5) * (C(1) + std::erf(a * C(0.70710678118654752440)));
      case PointwiseKind::kGeluTanh: {  // x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        const C inner = C(0.79788456080286535588) * (a + C(0.044715) * a * a * a);
        return C(0.5) * a * (C(1) + std::tanh(inner));
      }
      case PointwiseKind::kLeakyRelu:  // k0: negative_slope
        return a > C(0) ? a : a * k0;
      case PointwiseKind::kElu:  // k0, k1, k2: alpha, scale, input_scale
        return a > C(0) ? a * k1 : std::expm1(a * k2) * (k0 * k1);
      case PointwiseKind::kHardswish:
        return a * Relu6(a + C(3)) / C(6);
      case PointwiseKind::kHardsigmoid:
        return Relu6(a + C(3)) / C(6);
      case PointwiseKind::kSoftplus:  // k0, k1: beta, threshold
        return a * k0 > k1 ? a : std::log1p(std::exp(a * k0)) / k0;
      case PointwiseKind::kMish:
        return a * std::tanh(std::log1p(std::exp(a)));
      case PointwiseKind::kHardshrink:  // k0: lambd
        return a >= -k0 && a <= k0 ? C(0) : a;
      case PointwiseKind::kSoftshrink:  // k0: lambd; NaN stays NaN (a * 0)
        return a > k0 ? a - k0 : a < -k0 ? a + k0 : a * C(0);
      default:  // kRoundDecimals
        return negative_decimals ? std::nearbyint(a / ten_pow) * ten_pow
                                 : std::nearbyint(a * ten_pow) / ten_pow;
    }
  }
};

// ExactUnaryOp: floor, ceil, round (halves to even), trunc (integers pass through), threshold
// (value where x <= threshold), sign and bitwise_not (integers and bool), nan_to_num (integers
// and bool pass through), in the input's dtype.
template <typename C>
struct ExactUnaryOp {
  static constexpr int kArity = 1;
  PointwiseKind kind;
  C threshold = 0, value = 0;  // threshold's Scalars; nan_to_num's nan and posinf
  C neginf = 0;                // nan_to_num's
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C a) const {
    if constexpr (std::is_same_v<C, bool>) {
      return kind == PointwiseKind::kBitwiseNot ? !a : a;
    } else if constexpr (std::is_floating_point_v<C>) {
      switch (kind) {
        case PointwiseKind::kNanToNum:
          return base::nan_to_num(a, threshold, value, neginf);
        case PointwiseKind::kThreshold:
          return a <= threshold ? value : a;
        case PointwiseKind::kFloor:
          return std::floor(a);
        case PointwiseKind::kCeil:
          return std::ceil(a);
        case PointwiseKind::kRound:
          return std::nearbyint(a);
        case PointwiseKind::kTrunc:
          return std::trunc(a);
        default:  // kSign (bitwise_not is refused for floats); NaN gives 0, as the CPU's
          return static_cast<C>((C(0) < a) - (a < C(0)));
      }
    } else {
      if (kind == PointwiseKind::kThreshold) return a <= threshold ? value : a;
      if (kind == PointwiseKind::kSign) return static_cast<C>((C(0) < a) - IsNegative(a));
      if (kind == PointwiseKind::kBitwiseNot) return static_cast<C>(~a);
      return a;  // floor .. trunc, nan_to_num
    }
  }
};

// PredicateOp: isnan, isinf, isfinite, logical_not, signbit: 1 or 0 in the input's dtype.
template <typename C>
struct PredicateOp {
  static constexpr int kArity = 1;
  PointwiseKind kind;
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C a) const {
    bool r;
    if constexpr (std::is_floating_point_v<C>) {
      const bool nan = a != a;
      const bool inf = !nan && (a - a) != (a - a);  // inf - inf is NaN
      r = kind == PointwiseKind::kIsNan      ? nan
          : kind == PointwiseKind::kIsInf    ? inf
          : kind == PointwiseKind::kIsFinite ? !nan && !inf
          : kind == PointwiseKind::kSignbit  ? std::signbit(a)
                                             : a == C(0);
    } else {
      r = kind == PointwiseKind::kIsFinite     ? true
          : kind == PointwiseKind::kLogicalNot ? a == C(0)
          : kind == PointwiseKind::kSignbit    ? IsNegative(a)
                                               : false;
    }
    return static_cast<C>(r);
  }
};

// ConstantAs: a Scalar's value in C, as MakeArgs converts constants.
template <typename C>
C ConstantAs(const ConstantValue& v) {
  return v.kind == ConstantValue::kDouble ? Convert<C>(v.d)
         : v.kind == ConstantValue::kBool ? Convert<C>(v.i != 0)
                                          : Convert<C>(v.i);
}

// VisitPointwise calls f(op, fast) with the functor of `kind` for storage type S and
// std::true_type / std::false_type saying whether its fast-path kernel is built (Note [GPU
// pointwise families]); it returns f's answer, or an error when S is not among the op's dtypes.
template <typename S, typename F>
std::string VisitPointwise(PointwiseKind kind, const PointwiseParams& p, F&& f) {
  using C = OpMath<S>;
  using K = PointwiseKind;
  constexpr uint32_t kSelf = DtypeBit(kDtypeOf<S>);
  if ((PointwiseDtypes(kind) & kSelf) == 0) {
    return "no kernel for compute dtype " + std::to_string(kDtypeOf<S>);
  }
  std::true_type fast;
  std::false_type general;
  if (kind <= K::kLogicalXor) return f(CompareOp<C>{kind}, general);
  if (kind <= K::kBitwiseXor) {
    if constexpr ((kIntegralAndBoolDtypes & kSelf) != 0) return f(BitwiseOp<C>{kind}, fast);
  } else if (kind <= K::kMinimum) {
    return f(ExtremumOp<C>{kind == K::kMaximum}, fast);
  } else if (kind <= K::kDivFloor) {
    if constexpr ((kNumericDtypes & kSelf) != 0) return f(DivisionOp<C>{kind}, fast);
  } else if (kind == K::kPow) {
    if constexpr ((kNumericDtypes & kSelf) != 0) return f(PowOp<C>{p.pow}, fast);
  } else if (kind == K::kAtan2) {
    if constexpr ((kFloatingDtypes & kSelf) != 0) return f(Atan2Op<C>{}, fast);
  } else if (kind <= K::kXlogy) {
    if constexpr ((kFloatingDtypes & kSelf) != 0) {
      return f(FloatBinaryOp<C>{kind, kDtypeOf<S> == TSR_DTYPE_BFLOAT16}, fast);
    }
  } else if (kind <= K::kFmin) {
    return f(ExtremumOp<C>{kind == K::kFmax, true}, fast);
  } else if (kind == K::kHeaviside) {
    return f(HeavisideOp<C>{}, fast);
  } else if (kind <= K::kShiftRight) {
    if constexpr ((kIntegralDtypes & kSelf) != 0) return f(IntegerBinaryOp<C>{kind}, fast);
  } else if (kind <= K::kShrinkBackward) {
    if constexpr ((kNumericDtypes & kSelf) != 0) {
      return f(ActivationBackwardOp<C>{kind, ConstantAs<C>(p.args[0]), ConstantAs<C>(p.args[1]),
                                       ConstantAs<C>(p.args[2])},
               fast);
    }
  } else if (kind == K::kWhere) {
    return f(WhereOp<C>{}, general);
  } else if (kind == K::kClamp) {
    if constexpr ((kNumericDtypes & kSelf) != 0) return f(ClampOp<C>{}, fast);
  } else if (kind == K::kAddcmul || kind == K::kAddcdiv) {
    if constexpr ((kNumericDtypes & kSelf) != 0) {
      return f(AddcOp<C>{ConstantAs<C>(p.value), kind == K::kAddcdiv}, fast);
    }
  } else if (kind == K::kLerp) {
    if constexpr ((kFloatingDtypes & kSelf) != 0) return f(LerpOp<C>{}, fast);
  } else if (kind <= K::kRoundDecimals) {
    if constexpr ((kFloatingDtypes & kSelf) != 0) {
      FloatUnaryOp<C> op{kind};
      op.k0 = ConstantAs<C>(p.args[0]);
      op.k1 = ConstantAs<C>(p.args[1]);
      op.k2 = ConstantAs<C>(p.args[2]);
      op.n = p.order;
      if (kind == K::kRoundDecimals) {
        const double n = std::fabs(static_cast<double>(p.decimals));  // -INT64_MIN: no int64_t
        op.ten_pow = static_cast<C>(std::pow(10.0, n));
        op.negative_decimals = p.decimals < 0;
      }
      return f(op, fast);
    }
  } else if (kind <= K::kBitwiseNot) {
    return f(ExactUnaryOp<C>{kind, ConstantAs<C>(p.args[0]), ConstantAs<C>(p.args[1]),
                             ConstantAs<C>(p.args[2])},
             fast);
  } else {
    return f(PredicateOp<C>{kind}, general);
  }
  return "no kernel for compute dtype " + std::to_string(kDtypeOf<S>);
}

}  // namespace gpu
}  // namespace tessera
