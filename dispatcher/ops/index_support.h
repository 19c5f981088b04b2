// Helpers shared by op set 1.9's indexing composites (index_composites.cc,
// advanced_index_ops.cc, counting_ops.cc, fold_scatter_ops.cc): reading an index's range back
// to the host, an index laid along one dim, the flat positions of a mask's true elements, and
// the meta device's refusal of ops whose shapes depend on values, all through ops every backend
// has.
#pragma once

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "dispatcher/op_registry.h"

namespace tessera {
namespace ops {

// Range: the least and greatest element of an index.
struct Range {
  int64_t min = 0;
  int64_t max = 0;
};
// IndexRange: the Range of a non-empty integer tensor, read back to the host (one
// synchronization); nullopt on the meta device, which has no values.
absl::StatusOr<std::optional<Range>> IndexRange(OpRegistry& r, const Tensor& index);

// AtLeast1d: a 0-dim tensor as one of shape [1] (ATen's index and scatter ops treat it so);
// others as they are.
absl::StatusOr<Tensor> AtLeast1d(const Tensor& t);

// RefuseMeta: UNIMPLEMENTED for a tensor on the meta device where the op's result shape depends
// on values, which a meta tensor does not have (as ATen's meta functions refuse); OK otherwise.
absl::Status RefuseMeta(const OperatorHandle& op, const Tensor& t);

// AsLong: an int32 index as int64 (the scatter and gather ops take int64 only); others as they
// are.
absl::StatusOr<Tensor> AsLong(OpRegistry& r, const Tensor& index);

// WrapNegative: index + size where index < 0 (an index already checked to lie in [-size, size)).
absl::StatusOr<Tensor> WrapNegative(OpRegistry& r, const Tensor& index, int64_t size);

// AlongDim: a 1-D (or 0-dim) int64 index of n elements laid along `dim` of a tensor of `shape`
// with n at `dim`: viewed as [1, .., n, .., 1] and expanded (no copy), so that
// scatter/gather with it act on whole slices, as index_add, index_copy and index_fill do.
absl::StatusOr<Tensor> AlongDim(const Tensor& index, int64_t dim, IntArrayRef shape);

// FlatNonzero: the positions, in row-major order, of the true elements of a bool tensor, as a
// 1-D int64 tensor on its device. A cumsum numbers the true elements; each scatters its
// position into its slot (the false ones into one spare slot, cut off). Reads the count back to
// the host (the result's size depends on it); UNIMPLEMENTED on the meta device, whose tensors
// have no values (`op` names the op called).
absl::StatusOr<Tensor> FlatNonzero(const OperatorHandle& op, const Tensor& mask);

}  // namespace ops
}  // namespace tessera
