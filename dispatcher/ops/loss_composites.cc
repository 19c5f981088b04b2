// Op set 1.9's pointwise losses and log_sigmoid, composites over the pointwise ops and the
// reductions so every backend has them: huber_loss, smooth_l1_loss, soft_margin_loss,
// binary_cross_entropy, binary_cross_entropy_with_logits, log_sigmoid and log_sigmoid_forward.
//
// Semantics are ATen's (aten/src/ATen/native/Loss.cpp, Activation.cpp and their CPU kernels,
// with torch/_decomp's decompositions for the math):
// - reduction 0 (none), 1 (mean) or 2 (sum); the mean of no element is 0 / 0, NaN. ATen treats
//   any other value as none (or fails an internal assert); Tessera refuses it, as its mse_loss
//   and nll_loss do.
// - The result's dtype and shape are each op's own in ATen, because each writes into a
//   different tensor: smooth_l1_loss broadcasts and promotes (a structured binary op);
//   huber_loss broadcasts into self's dtype (empty_like(input)); soft_margin_loss keeps self's
//   shape and dtype (it writes in place into a copy of -self); binary_cross_entropy takes a target
//   and a dtype equal to self's; binary_cross_entropy_with_logits keeps the target's shape and
//   dtype ((1 - target).mul_(input)).
// - Several pointwise steps: the 16-bit floats compute in float32 and round once (Opmath), as
//   torch/_decomp's pw_cast_for_opmath computes them.
#include <cstdint>

#include "absl/strings/str_format.h"
#include "core/dtype.h"
#include "core/host_copy.h"
#include "core/shape.h"
#include "core/status_macros.h"
#include "core/type_promotion.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"
#include "dispatcher/ops/loss_support.h"

namespace tessera {
namespace ops {
namespace {

// Reduce: the elementwise losses as the reduction asks (ATen's apply_loss_reduction).
absl::StatusOr<Tensor> Reduce(OpRegistry& r, Tensor loss, int64_t reduction) {
  if (reduction == kReductionMean) return CallOne(r, "mean", {Value(std::move(loss)), Value()});
  if (reduction == kReductionSum) return CallOne(r, "sum", {Value(std::move(loss)), Value()});
  return loss;
}

// Scalars for the pointwise ops.
Value Number(double v) { return Value(Scalar(v)); }

// ---- huber_loss, smooth_l1_loss ----

// The piecewise loss of z = |self - target| that huber_loss and smooth_l1_loss share:
// z < k ? 0.5 z^2 / scale : slope (z - 0.5 k). huber: k = delta, scale 1, slope delta.
// smooth_l1: k = beta, scale beta, slope 1 (beta 0 is the L1 loss: z < 0 never holds, and the
// other branch's 0 / 0 is discarded by where).
absl::StatusOr<Tensor> PiecewiseLoss(OpRegistry& r, const Value& x, const Value& t, double k,
                                     double scale, double slope) {
  TSR_ASSIGN_OR_RETURN(Tensor diff, CallOne(r, "sub.Tensor", {x, t, Number(1)}));
  TSR_ASSIGN_OR_RETURN(Tensor z, CallOne(r, "abs", {Value(diff)}));
  TSR_ASSIGN_OR_RETURN(Tensor small, CallOne(r, "lt.Scalar", {Value(z), Number(k)}));
  TSR_ASSIGN_OR_RETURN(Tensor square, CallOne(r, "mul.Tensor", {Value(z), Value(z)}));
  TSR_ASSIGN_OR_RETURN(Tensor inner, CallOne(r, "div.Scalar", {Value(square), Number(2 * scale)}));
  TSR_ASSIGN_OR_RETURN(Tensor shifted,
                       CallOne(r, "sub.Scalar", {Value(z), Number(0.5 * k), Number(1)}));
  TSR_ASSIGN_OR_RETURN(Tensor outer, CallOne(r, "mul.Scalar", {Value(shifted), Number(slope)}));
  return CallOne(r, "where.self", {Value(small), Value(inner), Value(outer)});
}

// huber_loss(self, target, reduction=1, delta=1.0): self and target broadcast; the result has
// self's dtype (ATen computes into empty_like(input)), which the promoted dtype must cast to.
absl::StatusOr<Tensor> HuberLossOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  const Tensor& target = s[1].tensor();
  const int64_t reduction = s[2].to_int();
  const double delta = s[3].to_double();
  if (!(delta > 0))
    return Invalid(op, "huber_loss does not support non-positive values for delta.");
  TSR_RETURN_IF_ERROR(CheckReduction(op, reduction));
  TSR_ASSIGN_OR_RETURN(const ScalarType dtype,
                       FloatingResultInto(op, {&self, &target}, self.dtype()));
  OpRegistry& r = op.registry();
  const Opmath opmath(dtype, self.dtype());
  TSR_ASSIGN_OR_RETURN(const Value x, opmath.In(r, s[0]));
  TSR_ASSIGN_OR_RETURN(const Value t, opmath.In(r, s[1]));
  TSR_ASSIGN_OR_RETURN(Tensor loss, PiecewiseLoss(r, x, t, delta, 1.0, delta));
  TSR_ASSIGN_OR_RETURN(loss, Reduce(r, std::move(loss), reduction));
  return opmath.Out(r, std::move(loss));
}

// smooth_l1_loss(self, target, reduction=1, beta=1.0): a structured binary op, as mse_loss:
// broadcast, the promoted dtype (floating).
absl::StatusOr<Tensor> SmoothL1LossOf(const OperatorHandle& op, const Stack& s) {
  const int64_t reduction = s[2].to_int();
  const double beta = s[3].to_double();
  if (!(beta >= 0)) return Invalid(op, "smooth_l1_loss does not support negative values for beta.");
  TSR_RETURN_IF_ERROR(CheckReduction(op, reduction));
  ResultTypeBuilder promotion;
  for (int i : {0, 1}) promotion.AddTensor(s[i].tensor().dtype(), s[i].tensor().dim());
  const ScalarType dtype = promotion.Result();
  if (!IsFloatingType(dtype)) return NotFloating(op, dtype);
  OpRegistry& r = op.registry();
  const Opmath opmath(dtype);
  TSR_ASSIGN_OR_RETURN(const Value x, opmath.In(r, s[0]));
  TSR_ASSIGN_OR_RETURN(const Value t, opmath.In(r, s[1]));
  TSR_ASSIGN_OR_RETURN(Tensor loss, PiecewiseLoss(r, x, t, beta, beta, 1.0));
  TSR_ASSIGN_OR_RETURN(loss, Reduce(r, std::move(loss), reduction));
  return opmath.Out(r, std::move(loss));
}

// ---- soft_margin_loss ----

// soft_margin_loss(self, target, reduction=1): log1p(exp(-self * target)). ATen writes -self into
// an output of self's shape and dtype and multiplies the target into it in place, so the target
// broadcasts to self's shape and the result keeps self's dtype.
absl::StatusOr<Tensor> SoftMarginLossOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  const Tensor& target = s[1].tensor();
  const int64_t reduction = s[2].to_int();
  TSR_RETURN_IF_ERROR(CheckReduction(op, reduction));
  TSR_RETURN_IF_ERROR(
      CheckBroadcastsTo(op, "target", target.sizes(), self.sizes(), "self's shape"));
  // An integral self cannot hold exp's result (ATen's exp_ refuses it in place).
  TSR_ASSIGN_OR_RETURN(const ScalarType dtype,
                       FloatingResultInto(op, {&self, &target}, self.dtype()));
  OpRegistry& r = op.registry();
  const Opmath opmath(dtype, self.dtype());
  TSR_ASSIGN_OR_RETURN(const Value x, opmath.In(r, s[0]));
  TSR_ASSIGN_OR_RETURN(const Value t, opmath.In(r, s[1]));
  TSR_ASSIGN_OR_RETURN(Tensor margin, CallOne(r, "mul.Tensor", {x, t}));
  TSR_ASSIGN_OR_RETURN(margin, CallOne(r, "neg", {Value(margin)}));
  TSR_ASSIGN_OR_RETURN(Tensor loss, CallOne(r, "exp", {Value(margin)}));
  TSR_ASSIGN_OR_RETURN(loss, CallOne(r, "log1p", {Value(loss)}));
  TSR_ASSIGN_OR_RETURN(loss, Reduce(r, std::move(loss), reduction));
  return opmath.Out(r, std::move(loss));
}

// ---- binary_cross_entropy ----

// CheckUnitInterval: every element of `t` in [0, 1] (NaN is not), as ATen's CPU kernel checks
// each one as it computes; here one read of a 0-dim bool back to the host (as bernoulli's
// probabilities are checked). A Meta tensor has no values to check.
absl::Status CheckUnitInterval(const OperatorHandle& op, const Tensor& t, const char* name) {
  if (t.numel() == 0 || t.device().type == DeviceType::kMeta) return absl::OkStatus();
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Tensor low, CallOne(r, "ge.Scalar", {Value(t), Number(0)}));
  TSR_ASSIGN_OR_RETURN(Tensor high, CallOne(r, "le.Scalar", {Value(t), Number(1)}));
  TSR_ASSIGN_OR_RETURN(Tensor in_range, CallOne(r, "logical_and", {Value(low), Value(high)}));
  TSR_ASSIGN_OR_RETURN(Tensor all, CallOne(r, "all", {Value(in_range)}));
  bool ok = false;
  TSR_RETURN_IF_ERROR(CopyTensorToHost(all, &ok));
  if (ok) return absl::OkStatus();
  return Invalid(op, absl::StrFormat("all elements of %s should be between 0 and 1", name));
}

// binary_cross_entropy(self, target, weight=None, reduction=1):
// -w (t max(log x, -100) + (1 - t) max(log1p(-x), -100)), self's shape and dtype.
// The target must have self's shape: the message is torch.nn.functional's, which refuses any
// other before calling the op (ATen's kernel itself would broadcast it through squeezed views).
// The target has self's dtype (ATen's TensorIterator takes one dtype); the weight broadcasts to
// self's shape and any dtype multiplies in (loss.mul_(weight)). Every element of self, and in
// current PyTorch of the target too (not yet in 1.13), must be in [0, 1].
absl::StatusOr<Tensor> BinaryCrossEntropyOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  const Tensor& target = s[1].tensor();
  const int64_t reduction = s[3].to_int();
  TSR_RETURN_IF_ERROR(CheckReduction(op, reduction));
  if (!SameDims(target.sizes(), self.sizes())) {
    return Invalid(op, absl::StrFormat("Using a target size (%s) that is different to the input "
                                       "size (%s) is deprecated. Please ensure they have the same "
                                       "size.",
                                       ShapeToString(target.sizes()), ShapeToString(self.sizes())));
  }
  TSR_RETURN_IF_ERROR(SameDtype(op, self, {&target}));
  if (!IsFloatingType(self.dtype())) return NotFloating(op, self.dtype());
  if (!s[2].is_none()) {
    TSR_RETURN_IF_ERROR(
        CheckBroadcastsTo(op, "weight", s[2].tensor().sizes(), self.sizes(), "self's shape"));
  }
  TSR_RETURN_IF_ERROR(CheckUnitInterval(op, self, "input"));
  TSR_RETURN_IF_ERROR(CheckUnitInterval(op, target, "target"));
  OpRegistry& r = op.registry();
  const Opmath opmath(self.dtype());
  TSR_ASSIGN_OR_RETURN(const Value x, opmath.In(r, s[0]));
  TSR_ASSIGN_OR_RETURN(const Value t, opmath.In(r, s[1]));
  // The logs clamped at -100, so x = 0 or 1 gives a finite loss (and 0 * log 0 never NaN).
  TSR_ASSIGN_OR_RETURN(Tensor log_x, CallOne(r, "log", {x}));
  TSR_ASSIGN_OR_RETURN(log_x, CallOne(r, "clamp_min", {Value(log_x), Number(-100)}));
  TSR_ASSIGN_OR_RETURN(Tensor minus_x, CallOne(r, "neg", {x}));
  TSR_ASSIGN_OR_RETURN(Tensor log_1mx, CallOne(r, "log1p", {Value(minus_x)}));
  TSR_ASSIGN_OR_RETURN(log_1mx, CallOne(r, "clamp_min", {Value(log_1mx), Number(-100)}));
  TSR_ASSIGN_OR_RETURN(Tensor t_minus_1, CallOne(r, "sub.Scalar", {t, Number(1), Number(1)}));
  TSR_ASSIGN_OR_RETURN(Tensor first, CallOne(r, "mul.Tensor", {Value(t_minus_1), Value(log_1mx)}));
  TSR_ASSIGN_OR_RETURN(Tensor second, CallOne(r, "mul.Tensor", {t, Value(log_x)}));
  TSR_ASSIGN_OR_RETURN(Tensor loss,
                       CallOne(r, "sub.Tensor", {Value(first), Value(second), Number(1)}));
  if (!s[2].is_none()) {
    // A weight of any dtype multiplies in, its values converted (loss.mul_(weight) casts).
    TSR_ASSIGN_OR_RETURN(const Value w, opmath.In(r, s[2]));
    TSR_ASSIGN_OR_RETURN(loss, CallOne(r, "mul.Tensor", {Value(loss), w}));
  }
  TSR_ASSIGN_OR_RETURN(loss, Reduce(r, std::move(loss), reduction));
  return opmath.Out(r, std::move(loss));
}

// ---- binary_cross_entropy_with_logits ----

// binary_cross_entropy_with_logits(self, target, weight=None, pos_weight=None, reduction=1):
// (1 - t) x - lw log_sigmoid(x), lw = (pos_weight - 1) t + 1 (1 without pos_weight), times the
// weight, as current ATen computes it (through log_sigmoid; 1.13 wrote out the same log-sum-exp).
// ATen computes into (1 - target): the result has the target's shape and dtype, self broadcasts
// to the target's shape, the weight too, and pos_weight * target to self's shape (it multiplies
// log_sigmoid(self) in place). torch.nn.functional refuses a target of another shape than self's
// before calling the op; the op itself broadcasts as said.
absl::StatusOr<Tensor> BinaryCrossEntropyWithLogitsOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  const Tensor& target = s[1].tensor();
  const bool weighted = !s[2].is_none(), positive_weighted = !s[3].is_none();
  const int64_t reduction = s[4].to_int();
  TSR_RETURN_IF_ERROR(CheckReduction(op, reduction));
  if (!IsFloatingType(self.dtype())) return NotFloating(op, self.dtype());
  ResultTypeBuilder promotion;
  promotion.AddTensor(self.dtype(), self.dim());
  promotion.AddTensor(target.dtype(), target.dim());
  if (!CanCast(promotion.Result(), target.dtype())) {
    return CastRefused(op, promotion.Result(), target.dtype());
  }
  TSR_RETURN_IF_ERROR(
      CheckBroadcastsTo(op, "self", self.sizes(), target.sizes(), "the target's shape"));
  if (positive_weighted) {
    const Tensor& pos_weight = s[3].tensor();
    absl::StatusOr<DimVector> scaled = BroadcastShapes(pos_weight.sizes(), target.sizes());
    if (!scaled.ok()) {
      return Invalid(
          op, absl::StrFormat("pos_weight of shape %s does not broadcast with the "
                              "target's shape %s",
                              ShapeToString(pos_weight.sizes()), ShapeToString(target.sizes())));
    }
    TSR_RETURN_IF_ERROR(
        CheckBroadcastsTo(op, "pos_weight * target", *scaled, self.sizes(), "self's shape"));
    promotion.AddTensor(pos_weight.dtype(), pos_weight.dim());
  }
  if (weighted) {
    const Tensor& weight = s[2].tensor();
    TSR_RETURN_IF_ERROR(
        CheckBroadcastsTo(op, "weight", weight.sizes(), target.sizes(), "the target's shape"));
    promotion.AddTensor(weight.dtype(), weight.dim());
  }
  OpRegistry& r = op.registry();
  const Opmath opmath(promotion.Result(), target.dtype());
  TSR_ASSIGN_OR_RETURN(const Value x, opmath.In(r, s[0]));
  TSR_ASSIGN_OR_RETURN(const Value t, opmath.In(r, s[1]));
  TSR_ASSIGN_OR_RETURN(Tensor log_sigmoid, CallOne(r, "log_sigmoid", {x}));
  if (positive_weighted) {
    TSR_ASSIGN_OR_RETURN(const Value pw, opmath.In(r, s[3]));
    TSR_ASSIGN_OR_RETURN(Tensor lw, CallOne(r, "sub.Scalar", {pw, Number(1), Number(1)}));
    TSR_ASSIGN_OR_RETURN(lw, CallOne(r, "mul.Tensor", {Value(lw), t}));
    TSR_ASSIGN_OR_RETURN(lw, CallOne(r, "add.Scalar", {Value(lw), Number(1), Number(1)}));
    TSR_ASSIGN_OR_RETURN(log_sigmoid, CallOne(r, "mul.Tensor", {Value(log_sigmoid), Value(lw)}));
  }
  TSR_ASSIGN_OR_RETURN(Tensor loss, CallOne(r, "rsub.Scalar", {t, Number(1), Number(1)}));
  TSR_ASSIGN_OR_RETURN(loss, CallOne(r, "mul.Tensor", {Value(loss), x}));
  TSR_ASSIGN_OR_RETURN(loss,
                       CallOne(r, "sub.Tensor", {Value(loss), Value(log_sigmoid), Number(1)}));
  if (weighted) {
    TSR_ASSIGN_OR_RETURN(const Value w, opmath.In(r, s[2]));
    TSR_ASSIGN_OR_RETURN(loss, CallOne(r, "mul.Tensor", {Value(loss), w}));
  }
  TSR_ASSIGN_OR_RETURN(loss, Reduce(r, std::move(loss), reduction));
  return opmath.Out(r, std::move(loss));
}

// ---- log_sigmoid ----

// log_sigmoid_forward(self) -> (output, buffer): output = min(x, 0) - log1p(exp(-|x|)), which
// neither overflows nor loses the small values; buffer = exp(-|x|), what ATen's CPU kernel keeps
// for log_sigmoid_backward (its CUDA kernel returns an empty buffer instead; the CPU's is the one
// every backend can compute, and log_sigmoid_backward reads it on the CPU). Floating dtypes, the
// 16-bit ones computed in float32 as ATen's CPU kernel computes them.
TensorsOr LogSigmoidForward(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  if (!IsFloatingType(self.dtype())) return NotFloating(op, self.dtype());
  OpRegistry& r = op.registry();
  const Opmath opmath(self.dtype());
  TSR_ASSIGN_OR_RETURN(const Value x, opmath.In(r, s[0]));
  TSR_ASSIGN_OR_RETURN(Tensor magnitude, CallOne(r, "abs", {x}));
  TSR_ASSIGN_OR_RETURN(Tensor minus, CallOne(r, "neg", {Value(magnitude)}));
  TSR_ASSIGN_OR_RETURN(Tensor z, CallOne(r, "exp", {Value(minus)}));
  TSR_ASSIGN_OR_RETURN(Tensor low, CallOne(r, "clamp_max", {x, Number(0)}));
  TSR_ASSIGN_OR_RETURN(Tensor softplus, CallOne(r, "log1p", {Value(z)}));
  TSR_ASSIGN_OR_RETURN(Tensor output,
                       CallOne(r, "sub.Tensor", {Value(low), Value(softplus), Number(1)}));
  TSR_ASSIGN_OR_RETURN(output, opmath.Out(r, std::move(output)));
  TSR_ASSIGN_OR_RETURN(Tensor buffer, opmath.Out(r, std::move(z)));
  return std::vector<Tensor>{output, buffer};
}

// log_sigmoid(self): log_sigmoid_forward's output, through the registry as ATen's calls it, so a
// backend's own log_sigmoid_forward serves both.
absl::StatusOr<Tensor> LogSigmoidOf(const OperatorHandle& op, const Stack& s) {
  if (!IsFloatingType(s[0].tensor().dtype())) return NotFloating(op, s[0].tensor().dtype());
  return CallOne(op.registry(), "log_sigmoid_forward", {s[0]});
}

}  // namespace

absl::Status DefineLossComposites(OpRegistry& registry) {
  return DefineAll(
      registry,
      {
          {"huber_loss(Tensor self, Tensor target, int reduction=1, float delta=1.0) -> Tensor",
           MakeKernel<Named<ComputeOne<HuberLossOf>>>("core::huber_loss")},
          {"huber_loss.out(Tensor self, Tensor target, int reduction=1, float delta=1.0, *, "
           "Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<HuberLossOf, 4, /*kCastable=*/true>>>(
               "core::huber_loss_out")},
          {"smooth_l1_loss(Tensor self, Tensor target, int reduction=1, float beta=1.0) -> Tensor",
           MakeKernel<Named<ComputeOne<SmoothL1LossOf>>>("core::smooth_l1_loss")},
          {"smooth_l1_loss.out(Tensor self, Tensor target, int reduction=1, float beta=1.0, *, "
           "Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<SmoothL1LossOf, 4, /*kCastable=*/true>>>(
               "core::smooth_l1_loss_out")},
          // soft_margin_loss.out and binary_cross_entropy.out take the exact dtype (ATen's
          // kernels write into the out tensor itself: "Found dtype Double but expected Float").
          {"soft_margin_loss(Tensor self, Tensor target, int reduction=1) -> Tensor",
           MakeKernel<Named<ComputeOne<SoftMarginLossOf>>>("core::soft_margin_loss")},
          {"soft_margin_loss.out(Tensor self, Tensor target, int reduction=1, *, Tensor(a!) out) "
           "-> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<SoftMarginLossOf, 3>>>("core::soft_margin_loss_out")},
          {"binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, int "
           "reduction=1) -> Tensor",
           MakeKernel<Named<ComputeOne<BinaryCrossEntropyOf>>>("core::binary_cross_entropy")},
          {"binary_cross_entropy.out(Tensor self, Tensor target, Tensor? weight=None, int "
           "reduction=1, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<BinaryCrossEntropyOf, 4>>>(
               "core::binary_cross_entropy_out")},
          // The out= form current ATen generates (autogen): the result copied in, cast as copy_
          // casts it.
          {"binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, "
           "Tensor? pos_weight=None, int reduction=1) -> Tensor",
           MakeKernel<Named<ComputeOne<BinaryCrossEntropyWithLogitsOf>>>(
               "core::binary_cross_entropy_with_logits")},
          {"binary_cross_entropy_with_logits.out(Tensor self, Tensor target, Tensor? "
           "weight=None, Tensor? pos_weight=None, int reduction=1, *, Tensor(a!) out) -> "
           "Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<BinaryCrossEntropyWithLogitsOf, 5, /*kCastable=*/true>>>(
               "core::binary_cross_entropy_with_logits_out")},
          {"log_sigmoid_forward(Tensor self) -> (Tensor output, Tensor buffer)",
           MakeKernel<Named<LogSigmoidForward>>("core::log_sigmoid_forward")},
          {"log_sigmoid_forward.output(Tensor self, *, Tensor(a!) output, Tensor(b!) buffer) -> "
           "(Tensor(a!), Tensor(b!))",
           MakeKernel<Named<ComputeIntoOuts<LogSigmoidForward, 1, 2>>>(
               "core::log_sigmoid_forward_output")},
          {"log_sigmoid(Tensor self) -> Tensor",
           MakeKernel<Named<ComputeOne<LogSigmoidOf>>>("core::log_sigmoid")},
          {"log_sigmoid.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<LogSigmoidOf, 1>>>("core::log_sigmoid_out")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera
