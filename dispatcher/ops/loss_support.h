// What the loss composites (decomposed_training_ops.cc's mse_loss and nll_loss,
// loss_composites.cc's forwards, loss_backward_ops.cc's backwards) share: the reduction's
// numbers and their check, and the dtype checks of ATen's loss kernels, one message each, so
// that a loss and its backward refuse the same argument in the same words.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "core/dtype.h"
#include "core/type_promotion.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {

// ATen's at::Reduction values, as the schemas' `int reduction` carries them.
constexpr int64_t kReductionNone = 0, kReductionMean = 1, kReductionSum = 2;

// CheckReduction: `reduction` is none, mean or sum. ATen treats any other value as none or sum
// (or fails an internal assert), depending on the op; Tessera refuses it everywhere.
inline absl::Status CheckReduction(const OperatorHandle& op, int64_t reduction) {
  if (reduction == kReductionNone || reduction == kReductionMean || reduction == kReductionSum) {
    return absl::OkStatus();
  }
  return Invalid(op, absl::StrFormat("expected reduction to be 0 (none), 1 (mean) or 2 (sum), "
                                     "got %d",
                                     reduction));
}

// CastRefused: ATen's refusal of a result its output (of dtype `to`) cannot hold.
inline absl::Status CastRefused(const OperatorHandle& op, ScalarType from, ScalarType to) {
  return Invalid(op, absl::StrFormat("result type %s can't be cast to the desired output type %s",
                                     ScalarTypeName(from), ScalarTypeName(to)));
}

// FloatingResultInto: the promoted dtype of `operands`, which must be floating (NotFloating) and
// cast to `out`, the dtype of the tensor ATen's kernel writes (CastRefused).
inline absl::StatusOr<ScalarType> FloatingResultInto(const OperatorHandle& op,
                                                     std::initializer_list<const Tensor*> operands,
                                                     ScalarType out) {
  ResultTypeBuilder promotion;
  for (const Tensor* t : operands) promotion.AddTensor(t->dtype(), t->dim());
  const ScalarType dtype = promotion.Result();
  if (!IsFloatingType(dtype)) return NotFloating(op, dtype);
  if (!CanCast(dtype, out)) return CastRefused(op, dtype, out);
  return dtype;
}

// SameDtype: each of `others` has self's dtype, ATen's TensorIterator check for kernels that take
// one dtype (the output's, which is self's): "Found dtype Double but expected Float".
inline absl::Status SameDtype(const OperatorHandle& op, const Tensor& self,
                              std::initializer_list<const Tensor*> others) {
  for (const Tensor* t : others) {
    if (t->dtype() != self.dtype()) {
      return Invalid(op, absl::StrFormat("Found dtype %s but expected %s",
                                         ScalarTypeName(t->dtype()), ScalarTypeName(self.dtype())));
    }
  }
  return absl::OkStatus();
}

}  // namespace ops
}  // namespace tessera
