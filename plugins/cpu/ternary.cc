// Ternary pointwise ops (op set v1) as out= kernels: where, clamp, addcmul, addcdiv, lerp,
// masked_fill.
#include <cmath>

#include "math.hpp"
#include "pointwise.hpp"

namespace tessera {
namespace cpu {
namespace {

template <typename T>
compute_t<T> scalar_as(const sdk::Scalar& s) {
  using C = compute_t<T>;
  if (s.c.kind == TSR_SCALAR_DOUBLE) return convert<C>(s.c.d);
  return convert<C>(s.c.i);
}

using sdk::KernelContext;
using sdk::Scalar;
using sdk::Tensor;

// where.self_out(Tensor condition, Tensor self, Tensor other, *, Tensor(a!) out)
Tensor where_out(const KernelContext& ctx, const Tensor& condition, const Tensor& self,
                 const Tensor& other, const Tensor& out) {
  const Operand cond = operand(condition), a = operand(self), b = operand(other);
  sdk::ResultType rt;
  rt << a << b;
  const tsr_dtype compute = rt.get();
  dispatch<kAll>(compute, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    PointwiseFrame frame(out, compute);
    frame.input(cond, TSR_DTYPE_BOOL);
    frame.input(a, compute);
    frame.input(b, compute);
    pointwise<T, bool, T, T>(frame.build(),
                             [](bool c, compute_t<T> x, compute_t<T> y) { return c ? x : y; });
    frame.finish();
  });
  return out;
}

// clamp's bounds, one at a time: a NaN self stays, a NaN bound becomes the result (PyTorch's
// rule when both bounds are given; clamp_out drops a lone NaN Scalar bound first).
template <typename C>
C clamp_below(C x, C lo) {
  if (is_nan(x) || is_nan(lo)) return is_nan(x) ? x : lo;
  return x < lo ? lo : x;
}
template <typename C>
C clamp_above(C x, C hi) {
  if (is_nan(x) || is_nan(hi)) return is_nan(x) ? x : hi;
  return x > hi ? hi : x;
}

// clamp.out(Tensor self, Scalar? min=None, Scalar? max=None, *, Tensor(a!) out). The meta
// function has refused min = max = None before any kernel runs (both overloads). A NaN bound
// makes every element NaN only when both bounds are given; alone it is ignored, as PyTorch's
// clamp_out has it (TensorCompare.cpp: NaN fill `if (min && max)`, else clamp_min/clamp_max
// kernels computing max(x, nan) = x).
Tensor clamp_out(const KernelContext& ctx, const Tensor& self, std::optional<Scalar> lo,
                 std::optional<Scalar> hi, const Tensor& out) {
  sdk::ResultType rt;
  rt.add(self);
  if (lo) rt.add(*lo);
  if (hi) rt.add(*hi);
  const tsr_dtype compute = rt.get();
  dispatch<kNumeric>(compute, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    bool has_lo = lo.has_value(), has_hi = hi.has_value();
    const C l = has_lo ? scalar_as<T>(*lo) : C(0);
    const C h = has_hi ? scalar_as<T>(*hi) : C(0);
    if (has_lo != has_hi && (has_lo ? is_nan(l) : is_nan(h))) has_lo = has_hi = false;
    PointwiseFrame frame(out, compute);
    frame.input(operand(self), compute);
    pointwise<T, T>(frame.build(), [=](C x) -> C {
      if (has_lo) x = clamp_below(x, l);
      return has_hi ? clamp_above(x, h) : x;
    });
    frame.finish();
  });
  return out;
}

// clamp.Tensor_out(Tensor self, Tensor? min=None, Tensor? max=None, *, Tensor(a!) out): the
// bounds are tensors that broadcast with self; a NaN anywhere gives NaN, as in PyTorch.
Tensor clamp_tensor_out(const KernelContext& ctx, const Tensor& self_tensor,
                        const std::optional<Tensor>& min, const std::optional<Tensor>& max,
                        const Tensor& out) {
  const Operand self = operand(self_tensor);
  const bool has_lo = min.has_value(), has_hi = max.has_value();
  sdk::ResultType rt;
  rt << self;
  Operand lo, hi;
  if (has_lo) {
    lo = operand(*min);
    rt << lo;
  }
  if (has_hi) {
    hi = operand(*max);
    rt << hi;
  }
  const tsr_dtype compute = rt.get();
  dispatch<kNumeric>(compute, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    PointwiseFrame frame(out, compute);
    frame.input(self, compute);
    if (has_lo) frame.input(lo, compute);
    if (has_hi) frame.input(hi, compute);
    if (has_lo && has_hi) {
      pointwise<T, T, T, T>(frame.build(),
                            [](C x, C l, C h) { return clamp_above(clamp_below(x, l), h); });
    } else if (has_lo) {
      pointwise<T, T, T>(frame.build(), [](C x, C l) { return clamp_below(x, l); });
    } else {
      pointwise<T, T, T>(frame.build(), [](C x, C h) { return clamp_above(x, h); });
    }
    frame.finish();
  });
  return out;
}

// addcmul.out / addcdiv.out(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1,
// Tensor(a!) out)
template <bool kDiv>
Tensor addc_out(const KernelContext& ctx, const Tensor& self, const Tensor& tensor1,
                const Tensor& tensor2, Scalar value, const Tensor& out) {
  const Operand a = operand(self), t1 = operand(tensor1), t2 = operand(tensor2);
  sdk::ResultType rt;
  rt << a << t1 << t2;
  const tsr_dtype compute = rt.get();
  if (kDiv && sdk::is_integral(compute, true)) {
    ctx.fail(TSR_INVALID_ARGUMENT,
             "integer division with addcdiv is not supported; use true division (floating point "
             "inputs) instead");
  }
  constexpr sdk::DtypeSet kSet = kDiv ? kFloating : kNumeric;
  dispatch<kSet>(compute, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const C v = scalar_as<T>(value);
    PointwiseFrame frame(out, compute);
    frame.input(a, compute);
    frame.input(t1, compute);
    frame.input(t2, compute);
    pointwise<T, T, T, T>(frame.build(), [v](C x, C y, C z) -> C {
      if constexpr (kDiv) {
        return x + v * (y / z);
      } else {
        return wrap_add(x, wrap_mul(v, wrap_mul(y, z)));
      }
    });
    frame.finish();
  });
  return out;
}

// PyTorch's lerp formula: exact at both ends, monotonic in between.
template <typename C>
C lerp_of(C x, C y, C w) {
  return std::abs(w) < C(0.5) ? x + w * (y - x) : y - (y - x) * (C(1) - w);
}

// lerp.Scalar_out(Tensor self, Tensor end, Scalar weight, *, Tensor(a!) out) and
// lerp.Tensor_out(Tensor self, Tensor end, Tensor weight, *, Tensor(a!) out).
// Weight: Scalar or Tensor.
template <typename Weight>
Tensor lerp_out(const KernelContext& ctx, const Tensor& self, const Tensor& end,
                const Weight& weight_arg, const Tensor& out) {
  const Operand a = operand(self), b = operand(end), weight = operand(weight_arg);
  sdk::ResultType rt;
  rt << a << b;
  if (!weight.is_scalar) rt << weight;
  const tsr_dtype compute = rt.get();
  dispatch<kFloating>(compute, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    PointwiseFrame frame(out, compute);
    frame.input(a, compute);
    frame.input(b, compute);
    if (weight.is_scalar) {
      const C w = scalar_as<T>(weight.scalar);
      pointwise<T, T, T>(frame.build(), [w](C x, C y) { return lerp_of(x, y, w); });
    } else {
      frame.input(weight, compute);
      pointwise<T, T, T, T>(frame.build(), [](C x, C y, C w) { return lerp_of(x, y, w); });
    }
    frame.finish();
  });
  return out;
}

// masked_fill.Scalar_out(Tensor self, Tensor mask, Scalar value, *, Tensor(a!) out)
Tensor masked_fill_out(const KernelContext& ctx, const Tensor& self_tensor,
                       const Tensor& mask_tensor, Scalar value, const Tensor& out) {
  const Operand self = operand(self_tensor), mask = operand(mask_tensor);
  const tsr_dtype dtype = self.tensor.dtype();
  dispatch<kAll>(dtype, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const C v = value.c.kind == TSR_SCALAR_BOOL ? convert<C>(value.c.i != 0) : scalar_as<T>(value);
    PointwiseFrame frame(out, dtype);
    frame.input(self, dtype);
    frame.input(mask, TSR_DTYPE_BOOL);
    pointwise<T, T, bool>(frame.build(), [v](C x, bool m) -> C { return m ? v : x; });
    frame.finish();
  });
  return out;
}

}  // namespace

void register_ternary(sdk::Library& lib) {
  lib.impl<&where_out>(TESSERA_OP("where.self_out"));
  lib.impl<&clamp_out>(TESSERA_OP("clamp.out"));
  lib.impl<&clamp_tensor_out>(TESSERA_OP("clamp.Tensor_out"));
  lib.impl<&addc_out<false>>(TESSERA_OP("addcmul.out"));
  lib.impl<&addc_out<true>>(TESSERA_OP("addcdiv.out"));
  lib.impl<&lerp_out<sdk::Scalar>>(TESSERA_OP("lerp.Scalar_out"));
  lib.impl<&lerp_out<sdk::Tensor>>(TESSERA_OP("lerp.Tensor_out"));
  lib.impl<&masked_fill_out>(TESSERA_OP("masked_fill.Scalar_out"));
}

}  // namespace cpu
}  // namespace tessera
