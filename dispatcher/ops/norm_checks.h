// The argument checks the normalizations' forward ops (nn_ops.cc: their meta functions and
// instance norm's composite) and backward ops (norm_backward_ops.cc) share, with one message
// each, so that a forward and its backward refuse the same input in the same words.
#pragma once

#include "absl/status/status.h"
#include "dispatcher/op_registry.h"

namespace tessera {
namespace ops {

// CheckNormalizedShape: layer norm's `normalized_shape` is non-empty and the trailing shape of
// `input`.
absl::Status CheckNormalizedShape(const OperatorHandle& op, const Tensor& input, IntArrayRef norm);

// CheckChannelsInput: a batch (or instance) norm's input has at least 2 dims, [N, C, ...].
absl::Status CheckChannelsInput(const OperatorHandle& op, const Tensor& input);

}  // namespace ops
}  // namespace tessera
