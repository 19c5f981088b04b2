// Ternary pointwise ops (op set v1) as out= kernels: where, clamp, addcmul, addcdiv, lerp,
// masked_fill.
#include <cmath>

#include "math.hpp"
#include "pointwise.hpp"
#include "tessera/base/op_checks.hpp"

namespace tessera {
namespace cpu {
namespace {

using sdk::KernelContext;
using sdk::Scalar;
using sdk::TensorView;

// where.self_out(Tensor condition, Tensor self, Tensor other, *, Tensor(a!) out)
TensorView where_out(const KernelContext& ctx, TensorView condition, TensorView self,
                     TensorView other, TensorView out) {
  const tsr_dtype compute = ctx.planned_compute_dtype();
  dispatch<kAll>(compute, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    PointwiseFrame frame(out, compute);
    frame.input(condition, TSR_DTYPE_BOOL);
    frame.input(self, compute);
    frame.input(other, compute);
    frame.run<T, bool, T, T>([](bool c, compute_t<T> x, compute_t<T> y) { return c ? x : y; });
  });
  return out;
}

// clamp.out(Tensor self, Scalar? min=None, Scalar? max=None, *, Tensor(a!) out). The meta
// function has refused min = max = None before any kernel runs (both overloads). A NaN bound
// makes every element NaN only when both bounds are given; alone it is ignored, as PyTorch's
// clamp_out has it (TensorCompare.cpp: NaN fill `if (min && max)`, else clamp_min/clamp_max
// kernels computing max(x, nan) = x).
TensorView clamp_out(const KernelContext& ctx, TensorView self, std::optional<Scalar> lo,
                     std::optional<Scalar> hi, TensorView out) {
  const tsr_dtype compute = ctx.planned_compute_dtype();
  dispatch<kNumeric>(compute, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    bool has_lo = lo.has_value(), has_hi = hi.has_value();
    const C l = has_lo ? scalar_as<T>(*lo) : C(0);
    const C h = has_hi ? scalar_as<T>(*hi) : C(0);
    if (has_lo != has_hi && (has_lo ? is_nan(l) : is_nan(h))) has_lo = has_hi = false;
    PointwiseFrame frame(out, compute);
    frame.input(self, compute);
    frame.run<T, T>([=](C x) -> C {
      if (has_lo) x = clamp_below(x, l);
      return has_hi ? clamp_above(x, h) : x;
    });
  });
  return out;
}

// clamp.Tensor_out(Tensor self, Tensor? min=None, Tensor? max=None, *, Tensor(a!) out): the
// bounds are tensors that broadcast with self; a NaN anywhere gives NaN, as in PyTorch.
TensorView clamp_tensor_out(const KernelContext& ctx, TensorView self,
                            std::optional<TensorView> min, std::optional<TensorView> max,
                            TensorView out) {
  const bool has_lo = min.has_value(), has_hi = max.has_value();
  const tsr_dtype compute = ctx.planned_compute_dtype();
  dispatch<kNumeric>(compute, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    PointwiseFrame frame(out, compute);
    frame.input(self, compute);
    if (has_lo) frame.input(*min, compute);
    if (has_hi) frame.input(*max, compute);
    if (has_lo && has_hi) {
      frame.run<T, T, T, T>([](C x, C l, C h) { return clamp_above(clamp_below(x, l), h); });
    } else if (has_lo) {
      frame.run<T, T, T>([](C x, C l) { return clamp_below(x, l); });
    } else {
      frame.run<T, T, T>([](C x, C h) { return clamp_above(x, h); });
    }
  });
  return out;
}

// addcmul.out / addcdiv.out(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1,
// Tensor(a!) out)
template <bool kDiv>
TensorView addc_out(const KernelContext& ctx, TensorView self, TensorView tensor1,
                    TensorView tensor2, Scalar value, TensorView out) {
  const tsr_dtype compute = ctx.planned_compute_dtype();
  if (kDiv) {  // the plan's check, asked again: tessera/base/op_checks.hpp
    if (const char* why = base::addcdiv_error(compute)) ctx.fail(TSR_INVALID_ARGUMENT, why);
  }
  constexpr sdk::DtypeSet kSet = kDiv ? kFloating : kNumeric;
  dispatch<kSet>(compute, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const C v = scalar_as<T>(value);
    PointwiseFrame frame(out, compute);
    frame.input(self, compute);
    frame.input(tensor1, compute);
    frame.input(tensor2, compute);
    frame.run<T, T, T, T>([v](C x, C y, C z) -> C {
      if constexpr (kDiv) {
        return x + v * (y / z);
      } else {
        return wrap_add(x, wrap_mul(v, wrap_mul(y, z)));
      }
    });
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
TensorView lerp_out(const KernelContext& ctx, TensorView self, TensorView end, const Weight& weight,
                    TensorView out) {
  constexpr bool kScalarWeight = std::is_same_v<Weight, Scalar>;
  const tsr_dtype compute = ctx.planned_compute_dtype();
  dispatch<kFloating>(compute, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    PointwiseFrame frame(out, compute);
    frame.input(self, compute);
    frame.input(end, compute);
    if constexpr (kScalarWeight) {
      const C w = scalar_as<T>(weight);
      frame.run<T, T, T>([w](C x, C y) { return lerp_of(x, y, w); });
    } else {
      frame.input(weight, compute);
      frame.run<T, T, T, T>([](C x, C y, C w) { return lerp_of(x, y, w); });
    }
  });
  return out;
}

// masked_fill.Scalar_out(Tensor self, Tensor mask, Scalar value, *, Tensor(a!) out)
TensorView masked_fill_out(const KernelContext& ctx, TensorView self, TensorView mask, Scalar value,
                           TensorView out) {
  const tsr_dtype dtype = ctx.planned_compute_dtype();  // self's
  dispatch<kAll>(dtype, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const C v = value.c.kind == TSR_SCALAR_BOOL ? convert<C>(value.c.i != 0) : scalar_as<T>(value);
    PointwiseFrame frame(out, dtype);
    frame.input(self, dtype);
    frame.input(mask, TSR_DTYPE_BOOL);
    frame.run<T, T, bool>([v](C x, bool m) -> C { return m ? v : x; });
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
  lib.impl<&lerp_out<sdk::TensorView>>(TESSERA_OP("lerp.Tensor_out"));
  lib.impl<&masked_fill_out>(TESSERA_OP("masked_fill.Scalar_out"));
}

}  // namespace cpu
}  // namespace tessera
