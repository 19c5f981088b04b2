// What the random composites share (random_ops.cc: the factories, Bernoulli and dropout;
// distribution_ops.cc: the distributions drawn from uniform_ and normal_): every one reaches the
// two random kernels through these, so each draw is one kernel call with the call's generator.
#pragma once

#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dispatcher/op_registry.h"

namespace tessera {
namespace ops {

// ExpectFloating: INVALID_ARGUMENT unless `dtype` is floating ("expected a floating-point
// `what`, got int64").
absl::Status ExpectFloating(const OperatorHandle& op, std::string_view what, ScalarType dtype);

// Fill calls the random kernel `kernel` ("uniform_" or "normal_") on `t` with its two
// parameters and the generator value `generator` (None or a Generator): one draw.
absl::Status Fill(OpRegistry& r, std::string_view kernel, const Tensor& t, double a, double b,
                  const Value& generator);

// UniformLike: a float64 tensor of `like`'s shape on its device, uniform in [0, 1) (53 bits):
// one draw.
absl::StatusOr<Tensor> UniformLike(OpRegistry& r, const Tensor& like, const Value& generator);

// MaxFinite: the largest finite value of a floating dtype.
double MaxFinite(ScalarType dtype);

// ExactIntegerRange: the integers `dtype` holds exactly, as [min, max] (a floating dtype: its
// contiguous integers, +-2^digits; int64 and float64: the whole int64 range).
std::pair<int64_t, int64_t> ExactIntegerRange(ScalarType dtype);

}  // namespace ops
}  // namespace tessera
