// Op set 1.8's gated activations, composites over the pointwise ops so every backend has them:
// glu (the first half of a dim times the sigmoid of the second; the 16-bit floats compute in
// float32 and round once, Opmath, as ATen's kernel) and prelu (x where x > 0, else weight * x,
// weight one value or one per channel, dim 1), which checks and shapes weight, then calls
// _prelu_kernel (weight broadcast against self), as current ATen's does: a graph traced from it
// names _prelu_kernel. Floating dtypes only, as ATen's.
#include "absl/strings/str_format.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {
namespace {

// glu(self, dim=-1)
absl::StatusOr<Tensor> GluOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  if (self.dim() == 0) {
    return Invalid(op, "glu does not support scalars because halving size must be even");
  }
  TSR_ASSIGN_OR_RETURN(const int64_t dim, WrapDim(s[1].to_int(), self.dim(), op.name()));
  const int64_t size = self.sizes()[dim];
  if (size % 2 != 0) {
    return Invalid(
        op,
        absl::StrFormat("Halving dimension must be even, but dimension %d is size %d", dim, size));
  }
  if (!IsFloatingType(self.dtype())) return NotFloating(op, self.dtype());
  const Opmath math(self.dtype());
  TSR_ASSIGN_OR_RETURN(Tensor first, Narrow(self, dim, 0, size / 2));
  TSR_ASSIGN_OR_RETURN(Tensor second, Narrow(self, dim, size / 2, size / 2));
  TSR_ASSIGN_OR_RETURN(Value a, math.In(r, Value(first)));
  TSR_ASSIGN_OR_RETURN(Value b, math.In(r, Value(second)));
  TSR_ASSIGN_OR_RETURN(Tensor gate, CallOne(r, "sigmoid", {b}));
  TSR_ASSIGN_OR_RETURN(Tensor product, CallOne(r, "mul.Tensor", {a, Value(gate)}));
  return math.Out(r, std::move(product));
}

// prelu(self, weight)
absl::StatusOr<Tensor> PreluOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  const Tensor& weight = s[1].tensor();
  if (self.dtype() != weight.dtype()) {
    return Invalid(op,
                   absl::StrFormat("Type promoting not supported. Got %s and %s",
                                   ScalarTypeName(self.dtype()), ScalarTypeName(weight.dtype())));
  }
  if (weight.numel() != 1) {
    if (self.dim() == 0) return Invalid(op, "Not allow zero-dim input tensor.");
    const int64_t channels = self.dim() > 1 ? self.sizes()[1] : 1;
    if (channels != weight.numel()) {
      return Invalid(op, absl::StrFormat("Mismatch of parameter numbers and input channel size. "
                                         "Found parameter numbers = %d and channel size = %d.",
                                         weight.numel(), channels));
    }
  }
  if (weight.dim() > 1) {
    return Invalid(op, absl::StrFormat("Expected `weight` to be a scalar or 1D tensor, but got: "
                                       "ndim = %d",
                                       weight.dim()));
  }
  if (!IsFloatingType(self.dtype())) return NotFloating(op, self.dtype());
  // weight along dim 1 of self (a single weight broadcasts as it is).
  Tensor w = weight;
  if (self.dim() != weight.dim()) {
    DimVector shape(self.dim(), 1);
    if (self.dim() > 1) shape[1] = weight.numel();
    TSR_ASSIGN_OR_RETURN(
        w, CallOne(r, "reshape", {Value(weight), Value(IntList(shape.begin(), shape.end()))}));
  }
  return CallOne(r, "_prelu_kernel", {s[0], Value(w)});
}

// _prelu_kernel(self, weight): where(self > 0, self, weight * self), weight broadcast to self's
// shape. One rounding in any dtype (the product), so no Opmath.
absl::StatusOr<Tensor> PreluKernelOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  const Tensor& weight = s[1].tensor();
  if (self.dtype() != weight.dtype()) {
    return Invalid(op,
                   absl::StrFormat("expected self and weight of one dtype, got %s and %s",
                                   ScalarTypeName(self.dtype()), ScalarTypeName(weight.dtype())));
  }
  if (!IsFloatingType(self.dtype())) return NotFloating(op, self.dtype());
  TSR_RETURN_IF_ERROR(
      CheckBroadcastsTo(op, "weight", weight.sizes(), self.sizes(), "self's shape"));
  TSR_ASSIGN_OR_RETURN(Tensor positive, CallOne(r, "gt.Scalar", {s[0], Value(Scalar(int64_t{0}))}));
  TSR_ASSIGN_OR_RETURN(Tensor scaled, CallOne(r, "mul.Tensor", {s[1], s[0]}));
  return CallOne(r, "where.self", {Value(positive), s[0], Value(scaled)});
}

}  // namespace

absl::Status DefineActivationComposites(OpRegistry& registry) {
  return DefineAll(
      registry,
      {
          {"glu(Tensor self, int dim=-1) -> Tensor",
           MakeKernel<Named<ComputeOne<GluOf>>>("core::glu")},
          {"glu.out(Tensor self, int dim=-1, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<GluOf, 2, /*kCastable=*/true>>>("core::glu_out")},
          {"prelu(Tensor self, Tensor weight) -> Tensor",
           MakeKernel<Named<ComputeOne<PreluOf>>>("core::prelu")},
          {"_prelu_kernel(Tensor self, Tensor weight) -> Tensor",
           MakeKernel<Named<ComputeOne<PreluKernelOf>>>("core::_prelu_kernel")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera
