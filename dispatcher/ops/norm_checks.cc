#include "dispatcher/ops/norm_checks.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {

absl::Status CheckNormalizedShape(const OperatorHandle& op, const Tensor& input, IntArrayRef norm) {
  if (norm.empty()) {
    return Invalid(op, "expected normalized_shape to be at least 1-dimensional, got []");
  }
  const int64_t axis = input.dim() - static_cast<int64_t>(norm.size());
  if (axis >= 0 && std::equal(norm.begin(), norm.end(), input.sizes().begin() + axis)) {
    return absl::OkStatus();
  }
  return Invalid(op, absl::StrFormat("given normalized_shape=%s, expected input with shape [*, "
                                     "%s], but got input of size %s",
                                     ShapeToString(norm), absl::StrJoin(norm, ", "),
                                     ShapeToString(input.sizes())));
}

absl::Status CheckChannelsInput(const OperatorHandle& op, const Tensor& input) {
  if (input.dim() >= 2) return absl::OkStatus();
  return Invalid(op, absl::StrFormat("expected an input with at least 2 dims [N, C, ...], got %s",
                                     ShapeToString(input.sizes())));
}

}  // namespace ops
}  // namespace tessera
