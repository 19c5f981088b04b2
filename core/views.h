// Views: new sizes, strides and offset over the same storage, on any device.
//
// These never touch element memory, so they live in the core and work for every backend
// without plugin code (DESIGN.md, "Devices and dispatch keys"). Semantics and error messages
// follow PyTorch. Ops that may need a copy (reshape, flatten) are composites in dispatcher/.
#pragma once

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "core/shape.h"
#include "core/tensor.h"

namespace tessera {

// ComputeViewStrides: strides that let `new_sizes` view the same elements as a tensor with
// (old_sizes, old_strides), or nullopt when only a copy can produce that shape.
std::optional<DimVector> ComputeViewStrides(IntArrayRef old_sizes, IntArrayRef old_strides,
                                            IntArrayRef new_sizes);

// InferViewSizes resolves one -1 in `sizes` for a tensor of `numel` elements.
absl::StatusOr<DimVector> InferViewSizes(IntArrayRef sizes, int64_t numel);

absl::StatusOr<Tensor> View(const Tensor& self, IntArrayRef sizes);
absl::StatusOr<Tensor> AsStrided(const Tensor& self, IntArrayRef sizes, IntArrayRef strides,
                                 std::optional<int64_t> storage_offset);
absl::StatusOr<Tensor> Permute(const Tensor& self, IntArrayRef dims);
absl::StatusOr<Tensor> Transpose(const Tensor& self, int64_t dim0, int64_t dim1);
absl::StatusOr<Tensor> T(const Tensor& self);
absl::StatusOr<Tensor> Expand(const Tensor& self, IntArrayRef sizes);
// Slice: start/end default to the whole dim and are clamped like Python slices; step > 0.
absl::StatusOr<Tensor> Slice(const Tensor& self, int64_t dim, std::optional<int64_t> start,
                             std::optional<int64_t> end, int64_t step);
absl::StatusOr<Tensor> Select(const Tensor& self, int64_t dim, int64_t index);
absl::StatusOr<Tensor> Narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length);
// Squeeze removes every size-1 dim; SqueezeDims only the listed ones that have size 1.
absl::StatusOr<Tensor> Squeeze(const Tensor& self);
absl::StatusOr<Tensor> SqueezeDims(const Tensor& self, IntArrayRef dims);
absl::StatusOr<Tensor> Unsqueeze(const Tensor& self, int64_t dim);
absl::StatusOr<Tensor> Diagonal(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2);
absl::StatusOr<Tensor> Unfold(const Tensor& self, int64_t dim, int64_t size, int64_t step);

}  // namespace tessera
