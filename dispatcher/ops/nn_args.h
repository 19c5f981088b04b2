// How the NN ops read their per-spatial-dim arguments (PyTorch's expand_param_if_needed and
// pooling's pair rule), shared by the forward meta functions (nn_ops.cc) and the backward
// composites (nn_backward_ops.cc), so that a backward op reads its forward's arguments exactly
// as the forward did.
#pragma once

#include <array>
#include <cstdint>

#include "absl/status/statusor.h"
#include "core/shape.h"
#include "dispatcher/op_registry.h"

namespace tessera {
namespace ops {

// Pair: a pooling argument (int[2]): one value applies to both dims, [] means `fallback`.
absl::StatusOr<std::array<int64_t, 2>> Pair(const OperatorHandle& op, const char* arg,
                                            const Value& v, std::array<int64_t, 2> fallback);

// SpatialArg: a per-spatial-dim argument of convolution: one value applies to every dim, []
// means `fallback`, otherwise one value per dim.
absl::StatusOr<DimVector> SpatialArg(const OperatorHandle& op, const char* arg, const Value& v,
                                     int64_t dims, int64_t fallback);

}  // namespace ops
}  // namespace tessera
