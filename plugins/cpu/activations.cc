// Activations and their backward ops (op set 1.2) as out= kernels; the runtime derives the
// functional and in-place forms, and defines celu, selu and mish_backward as composites.
//
// Each is PyTorch's CPU formula (aten/src/ATen/native/cpu/Activation.cpp), computed in the
// planned compute dtype (float for the 16-bit floats); the Scalars convert to it once. The
// plan has made every check that is op semantics (scalars that overflow, softshrink's lambd,
// the in-place backward refusals); a dtype outside an op's set is refused here, as "not
// implemented".
#include <cmath>
#include <string_view>

#include "math.hpp"
#include "pointwise.hpp"
#include "tessera/base/op_checks.hpp"

namespace tessera {
namespace cpu {
namespace {

using sdk::KernelContext;
using sdk::Scalar;
using sdk::TensorView;

// forward: out = f(self), f = make(tag) for the compute type's tag (it captures the Scalars).
template <sdk::DtypeSet Set, typename Make>
TensorView forward(const KernelContext& ctx, const TensorView& self, const TensorView& out,
                   const Make& make) {
  const tsr_dtype compute = ctx.planned_compute_dtype();
  dispatch<Set>(compute, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    PointwiseFrame frame(out, compute);
    frame.input(self, compute);
    frame.run<T, T>(make(tag));
  });
  return out;
}

// backward: grad_input = f(grad_output, x), x the forward's input or result; the two broadcast
// and promote as a binary op's operands.
template <sdk::DtypeSet Set, typename Make>
TensorView backward(const KernelContext& ctx, const TensorView& grad, const TensorView& x,
                    const TensorView& out, const Make& make) {
  const tsr_dtype compute = ctx.planned_compute_dtype();
  dispatch<Set>(compute, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    PointwiseFrame frame(out, compute);
    frame.input(grad, compute);
    frame.input(x, compute);
    frame.run<T, T, T>(make(tag));
  });
  return out;
}

// The compute type C of a dispatch tag.
#define TSR_C(tag) compute_t<typename decltype(tag)::type>

// ---- forward ----

// hardtanh.out(Tensor self, Scalar min_val=-1, Scalar max_val=1, *, Tensor(a!) out): clamp, on
// integers with the limits truncated (as ATen's hardtanh_out).
TensorView hardtanh_out(const KernelContext& ctx, TensorView self, Scalar min_val, Scalar max_val,
                        TensorView out) {
  return forward<kNumeric>(ctx, self, out, [&](auto tag) {
    using C = TSR_C(tag);
    const C lo = scalar_as<typename decltype(tag)::type>(min_val);
    const C hi = scalar_as<typename decltype(tag)::type>(max_val);
    return [=](C x) { return clamp_above(clamp_below(x, lo), hi); };
  });
}

// leaky_relu.out(Tensor self, Scalar negative_slope=0.01, *, Tensor(a!) out)
TensorView leaky_relu_out(const KernelContext& ctx, TensorView self, Scalar negative_slope,
                          TensorView out) {
  return forward<kFloating>(ctx, self, out, [&](auto tag) {
    using C = TSR_C(tag);
    const C slope = scalar_as<typename decltype(tag)::type>(negative_slope);
    return [=](C x) { return x > 0 ? x : x * slope; };
  });
}

// elu.out(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1, *, Tensor(a!) out):
// scale * x above 0, alpha * scale * (exp(x * input_scale) - 1) at or below.
TensorView elu_out(const KernelContext& ctx, TensorView self, Scalar alpha, Scalar scale,
                   Scalar input_scale, TensorView out) {
  return forward<kFloating>(ctx, self, out, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = TSR_C(tag);
    const C neg = scalar_as<T>(alpha) * scalar_as<T>(scale);
    const C pos = scalar_as<T>(scale);
    const C in = scalar_as<T>(input_scale);
    return [=](C x) -> C { return x <= 0 ? std::expm1(x * in) * neg : x * pos; };
  });
}

// hardswish.out(Tensor self, *, Tensor(a!) out): x * relu6(x + 3) / 6 (NaN stays NaN).
TensorView hardswish_out(const KernelContext& ctx, TensorView self, TensorView out) {
  return forward<kFloating>(ctx, self, out, [](auto tag) {
    using C = TSR_C(tag);
    return [](C x) -> C {
      const C r = x + C(3);
      return x * (r < C(0) ? C(0) : r > C(6) ? C(6) : r) / C(6);
    };
  });
}

// hardsigmoid.out(Tensor self, *, Tensor(a!) out): relu6(x + 3) / 6.
TensorView hardsigmoid_out(const KernelContext& ctx, TensorView self, TensorView out) {
  return forward<kFloating>(ctx, self, out, [](auto tag) {
    using C = TSR_C(tag);
    return [](C x) -> C {
      const C r = x + C(3);
      return (r < C(0) ? C(0) : r > C(6) ? C(6) : r) / C(6);
    };
  });
}

// softplus.out(Tensor self, Scalar beta=1, Scalar threshold=20, *, Tensor(a!) out):
// log(1 + exp(beta * x)) / beta, and x itself where beta * x passes the threshold.
TensorView softplus_out(const KernelContext& ctx, TensorView self, Scalar beta, Scalar threshold,
                        TensorView out) {
  return forward<kFloating>(ctx, self, out, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = TSR_C(tag);
    const C b = scalar_as<T>(beta), t = scalar_as<T>(threshold);
    return [=](C x) -> C { return x * b > t ? x : std::log1p(std::exp(x * b)) / b; };
  });
}

// mish.out(Tensor self, *, Tensor(a!) out): x * tanh(softplus(x)).
TensorView mish_out(const KernelContext& ctx, TensorView self, TensorView out) {
  return forward<kFloating>(ctx, self, out, [](auto tag) {
    using C = TSR_C(tag);
    return [](C x) -> C { return x * std::tanh(std::log1p(std::exp(x))); };
  });
}

// threshold.out(Tensor self, Scalar threshold, Scalar value, *, Tensor(a!) out): value where
// x <= threshold, x elsewhere (NaN stays).
TensorView threshold_out(const KernelContext& ctx, TensorView self, Scalar threshold, Scalar value,
                         TensorView out) {
  return forward<kNumeric>(ctx, self, out, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = TSR_C(tag);
    const C t = scalar_as<T>(threshold), v = scalar_as<T>(value);
    return [=](C x) { return x <= t ? v : x; };
  });
}

// hardshrink.out(Tensor self, Scalar lambd=0.5, *, Tensor(a!) out): 0 on [-lambd, lambd].
TensorView hardshrink_out(const KernelContext& ctx, TensorView self, Scalar lambd, TensorView out) {
  return forward<kFloating>(ctx, self, out, [&](auto tag) {
    using C = TSR_C(tag);
    const C l = scalar_as<typename decltype(tag)::type>(lambd);
    return [=](C x) { return x >= -l && x <= l ? C(0) : x; };
  });
}

// softshrink.out(Tensor self, Scalar lambd=0.5, *, Tensor(a!) out): x moved lambd towards 0, 0 on
// [-lambd, lambd] (x * 0 there, so NaN stays NaN).
TensorView softshrink_out(const KernelContext& ctx, TensorView self, Scalar lambd, TensorView out) {
  return forward<kFloating>(ctx, self, out, [&](auto tag) {
    using C = TSR_C(tag);
    const C l = scalar_as<typename decltype(tag)::type>(lambd);
    return [=](C x) -> C { return x > l ? x - l : x < -l ? x + l : x * C(0); };
  });
}

// ---- backward ----

// threshold_backward.grad_input(Tensor grad_output, Tensor self, Scalar threshold, *,
// Tensor(a!) grad_input): relu's backward (threshold 0): no gradient where x <= threshold.
TensorView threshold_backward_out(const KernelContext& ctx, TensorView grad, TensorView self,
                                  Scalar threshold, TensorView out) {
  return backward<kNumeric>(ctx, grad, self, out, [&](auto tag) {
    using C = TSR_C(tag);
    const C t = scalar_as<typename decltype(tag)::type>(threshold);
    return [=](C g, C x) { return x <= t ? C(0) : g; };
  });
}

// gelu_backward.grad_input(Tensor grad_output, Tensor self, *, str approximate='none',
// Tensor(a!) grad_input): g * d/dx gelu(x), exact (Phi(x) + x phi(x)) or of the tanh form.
TensorView gelu_backward_out(const KernelContext& ctx, TensorView grad, TensorView self,
                             std::string_view approximate, TensorView out) {
  if (approximate == "tanh") {
    return backward<kFloating>(ctx, grad, self, out, [](auto tag) {
      using C = TSR_C(tag);
      return [](C g, C x) -> C {
        const C beta = C(M_2_SQRTPI * M_SQRT1_2), kappa = C(0.044715);
        const C t = std::tanh(beta * (x + kappa * x * x * x));
        const C inner_grad = beta * (C(1) + C(3) * kappa * x * x);
        return g * (C(0.5) * (C(1) + t) + C(0.5) * x * (C(1) - t * t) * inner_grad);
      };
    });
  }
  if (approximate != "none") {  // the plan refuses it first (op_checks.hpp says why we ask)
    ctx.fail(TSR_INVALID_ARGUMENT, std::string(base::gelu_approximate_error(approximate)) +
                                       ", got '" + std::string(approximate) + "'");
  }
  return backward<kFloating>(ctx, grad, self, out, [](auto tag) {
    using C = TSR_C(tag);
    return [](C g, C x) -> C {
      const C cdf = C(0.5) * (C(1) + std::erf(x * C(M_SQRT1_2)));
      const C pdf = std::exp(C(-0.5) * x * x) * C(M_2_SQRTPI * M_SQRT1_2 * 0.5);
      return g * (cdf + x * pdf);
    };
  });
}

// silu_backward.grad_input(Tensor grad_output, Tensor self, *, Tensor(a!) grad_input):
// g * s * (1 + x * (1 - s)), s = sigmoid(x).
TensorView silu_backward_out(const KernelContext& ctx, TensorView grad, TensorView self,
                             TensorView out) {
  return backward<kFloating>(ctx, grad, self, out, [](auto tag) {
    using C = TSR_C(tag);
    return [](C g, C x) -> C {
      const C s = C(1) / (C(1) + std::exp(-x));
      return g * s * (C(1) + x * (C(1) - s));
    };
  });
}

// sigmoid_backward.grad_input(Tensor grad_output, Tensor output, *, Tensor(a!) grad_input):
// from the forward's result y: g * y * (1 - y).
TensorView sigmoid_backward_out(const KernelContext& ctx, TensorView grad, TensorView output,
                                TensorView out) {
  return backward<kFloating>(ctx, grad, output, out, [](auto tag) {
    using C = TSR_C(tag);
    return [](C g, C y) -> C { return g * (C(1) - y) * y; };
  });
}

// tanh_backward.grad_input(Tensor grad_output, Tensor output, *, Tensor(a!) grad_input):
// g * (1 - y^2).
TensorView tanh_backward_out(const KernelContext& ctx, TensorView grad, TensorView output,
                             TensorView out) {
  return backward<kFloating>(ctx, grad, output, out, [](auto tag) {
    using C = TSR_C(tag);
    return [](C g, C y) -> C { return g * (C(1) - y * y); };
  });
}

// hardtanh_backward.grad_input(Tensor grad_output, Tensor self, Scalar min_val, Scalar max_val,
// *, Tensor(a!) grad_input): no gradient at or beyond the limits.
TensorView hardtanh_backward_out(const KernelContext& ctx, TensorView grad, TensorView self,
                                 Scalar min_val, Scalar max_val, TensorView out) {
  return backward<kFloating>(ctx, grad, self, out, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = TSR_C(tag);
    const C lo = scalar_as<T>(min_val), hi = scalar_as<T>(max_val);
    return [=](C g, C x) { return x <= lo || x >= hi ? C(0) : g; };
  });
}

// leaky_relu_backward.grad_input(Tensor grad_output, Tensor self, Scalar negative_slope,
// bool self_is_result, *, Tensor(a!) grad_input): the same for the input and for the result
// (a non-negative slope keeps the sign; the plan refused a negative one with a result).
TensorView leaky_relu_backward_out(const KernelContext& ctx, TensorView grad, TensorView self,
                                   Scalar negative_slope, bool /*self_is_result*/, TensorView out) {
  return backward<kFloating>(ctx, grad, self, out, [&](auto tag) {
    using C = TSR_C(tag);
    const C slope = scalar_as<typename decltype(tag)::type>(negative_slope);
    return [=](C g, C x) { return x > 0 ? g : g * slope; };
  });
}

// elu_backward.grad_input(Tensor grad_output, Scalar alpha, Scalar scale, Scalar input_scale,
// bool is_result, Tensor self_or_result, *, Tensor(a!) grad_input): below 0, from the input x:
// g * input_scale * alpha * scale * exp(x * input_scale); from the result y:
// g * input_scale * (y + alpha * scale). Above: g * scale.
TensorView elu_backward_out(const KernelContext& ctx, TensorView grad, Scalar alpha, Scalar scale,
                            Scalar input_scale, bool is_result, TensorView self_or_result,
                            TensorView out) {
  return backward<kFloating>(ctx, grad, self_or_result, out, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = TSR_C(tag);
    const C neg = scalar_as<T>(alpha) * scalar_as<T>(scale);
    const C pos = scalar_as<T>(scale);
    const C in = scalar_as<T>(input_scale);
    return [=](C g, C v) -> C {
      // ATen's test (v <= 0 takes the negative piece), so NaN takes the positive one.
      if (!(v <= 0)) return g * pos;
      return is_result ? g * in * (v + neg) : g * in * neg * std::exp(v * in);
    };
  });
}

// hardswish_backward.out(Tensor grad_output, Tensor self, *, Tensor(a!) out): 0 below -3,
// g * (x / 3 + 1/2) up to 3, g above (and for NaN, as ATen's comparisons fall through).
TensorView hardswish_backward_out(const KernelContext& ctx, TensorView grad, TensorView self,
                                  TensorView out) {
  return backward<kFloating>(ctx, grad, self, out, [](auto tag) {
    using C = TSR_C(tag);
    return [](C g, C x) -> C {
      if (x < C(-3)) return C(0);
      if (x <= C(3)) return g * (x / C(3) + C(0.5));
      return g;
    };
  });
}

// hardsigmoid_backward.grad_input(Tensor grad_output, Tensor self, *, Tensor(a!) grad_input):
// g * (1/6) strictly inside (-3, 3), 0 elsewhere (NaN too).
TensorView hardsigmoid_backward_out(const KernelContext& ctx, TensorView grad, TensorView self,
                                    TensorView out) {
  return backward<kFloating>(ctx, grad, self, out, [](auto tag) {
    using C = TSR_C(tag);
    return [](C g, C x) -> C { return x > C(-3) && x < C(3) ? g * C(1.0 / 6.0) : C(0); };
  });
}

// softplus_backward.grad_input(Tensor grad_output, Tensor self, Scalar beta, Scalar threshold,
// *, Tensor(a!) grad_input): g * sigmoid(beta * x), g past the threshold.
TensorView softplus_backward_out(const KernelContext& ctx, TensorView grad, TensorView self,
                                 Scalar beta, Scalar threshold, TensorView out) {
  return backward<kFloating>(ctx, grad, self, out, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = TSR_C(tag);
    const C b = scalar_as<T>(beta), t = scalar_as<T>(threshold);
    return [=](C g, C x) -> C {
      const C z = std::exp(x * b);
      return x * b > t ? g : g * z / (z + C(1));
    };
  });
}

// hardshrink_backward.grad_input / softshrink_backward.grad_input(Tensor grad_out, Tensor self,
// Scalar lambd, *, Tensor(a!) grad_input): no gradient on [-lambd, lambd].
TensorView shrink_backward_out(const KernelContext& ctx, TensorView grad, TensorView self,
                               Scalar lambd, TensorView out) {
  return backward<kFloating>(ctx, grad, self, out, [&](auto tag) {
    using C = TSR_C(tag);
    const C l = scalar_as<typename decltype(tag)::type>(lambd);
    return [=](C g, C x) { return x >= -l && x <= l ? C(0) : g; };
  });
}

#undef TSR_C

}  // namespace

void register_activations(sdk::Library& lib) {
  lib.impl<&hardtanh_out>(TESSERA_OP("hardtanh.out"));
  lib.impl<&leaky_relu_out>(TESSERA_OP("leaky_relu.out"));
  lib.impl<&elu_out>(TESSERA_OP("elu.out"));
  lib.impl<&hardswish_out>(TESSERA_OP("hardswish.out"));
  lib.impl<&hardsigmoid_out>(TESSERA_OP("hardsigmoid.out"));
  lib.impl<&softplus_out>(TESSERA_OP("softplus.out"));
  lib.impl<&mish_out>(TESSERA_OP("mish.out"));
  lib.impl<&threshold_out>(TESSERA_OP("threshold.out"));
  lib.impl<&hardshrink_out>(TESSERA_OP("hardshrink.out"));
  lib.impl<&softshrink_out>(TESSERA_OP("softshrink.out"));
  lib.impl<&threshold_backward_out>(TESSERA_OP("threshold_backward.grad_input"));
  lib.impl<&gelu_backward_out>(TESSERA_OP("gelu_backward.grad_input"));
  lib.impl<&silu_backward_out>(TESSERA_OP("silu_backward.grad_input"));
  lib.impl<&sigmoid_backward_out>(TESSERA_OP("sigmoid_backward.grad_input"));
  lib.impl<&tanh_backward_out>(TESSERA_OP("tanh_backward.grad_input"));
  lib.impl<&hardtanh_backward_out>(TESSERA_OP("hardtanh_backward.grad_input"));
  lib.impl<&leaky_relu_backward_out>(TESSERA_OP("leaky_relu_backward.grad_input"));
  lib.impl<&elu_backward_out>(TESSERA_OP("elu_backward.grad_input"));
  lib.impl<&hardswish_backward_out>(TESSERA_OP("hardswish_backward.out"));
  lib.impl<&hardsigmoid_backward_out>(TESSERA_OP("hardsigmoid_backward.grad_input"));
  lib.impl<&softplus_backward_out>(TESSERA_OP("softplus_backward.grad_input"));
  lib.impl<&shrink_backward_out>(TESSERA_OP("hardshrink_backward.grad_input"));
  lib.impl<&shrink_backward_out>(TESSERA_OP("softshrink_backward.grad_input"));
}

}  // namespace cpu
}  // namespace tessera
