// The core op library: ops whose definition (and some of whose kernels) the runtime itself
// provides, before any backend loads.
//
// - view ops: composites over core/views.h, on every device;
// - copies a composite needs from backends (clone), defined here so reshape can call them;
// - meta functions (DispatchKey::kMeta) computing output shape and dtype for the pointwise,
//   reduction and matrix-product families; a call with Meta tensors runs them.
#pragma once

#include "absl/status/status.h"
#include "core/layout.h"
#include "dispatcher/op_registry.h"

namespace tessera {

// MemoryFormat values as the stack carries them (ints; core/layout.h).
inline constexpr int64_t kMemoryFormatContiguous = static_cast<int64_t>(MemoryFormat::kContiguous);
inline constexpr int64_t kMemoryFormatPreserve = static_cast<int64_t>(MemoryFormat::kPreserve);

// DefineCoreOps defines all of the above in `registry` (OpRegistry::Global does this).
absl::Status DefineCoreOps(OpRegistry& registry);

namespace ops {
absl::Status DefineViewOps(OpRegistry& registry);
absl::Status DefineCopyOps(OpRegistry& registry);
absl::Status DefinePointwiseOps(OpRegistry& registry);
absl::Status DefinePointwiseComposites(OpRegistry& registry);  // after the pointwise ops
absl::Status DefineReductionOps(OpRegistry& registry);
absl::Status DefineLinalgOps(OpRegistry& registry);
absl::Status DefineFactoryOps(OpRegistry& registry);
absl::Status DefineNNOps(OpRegistry& registry);
absl::Status DefineIndexOps(OpRegistry& registry);
absl::Status DefineActivationOps(OpRegistry& registry);  // after the pointwise ops
absl::Status DefineDecomposedTrainingOps(OpRegistry& registry);
absl::Status DefineNormBackwardOps(OpRegistry& registry);
absl::Status DefineNNBackwardOps(OpRegistry& registry);    // op set 1.4
absl::Status DefineRandomOps(OpRegistry& registry);        // op set 1.5
absl::Status DefineDistributionOps(OpRegistry& registry);  // op set 1.6, after the random ops
// Op set 1.8's composites, after the ops they call.
absl::Status DefineShapeOps(OpRegistry& registry);
absl::Status DefineLinalgComposites(OpRegistry& registry);
absl::Status DefineReductionComposites(OpRegistry& registry);
absl::Status DefineRearrangeOps(OpRegistry& registry);
absl::Status DefineFactoryComposites(OpRegistry& registry);
absl::Status DefineActivationComposites(OpRegistry& registry);
absl::Status DefineIsinOps(OpRegistry& registry);
// Op set 1.9's composites.
absl::Status DefinePaddingOps(OpRegistry& registry);
absl::Status DefineLossComposites(OpRegistry& registry);
absl::Status DefineIndexComposites(OpRegistry& registry);
absl::Status DefineAdvancedIndexOps(OpRegistry& registry);  // after the index composites
absl::Status DefineScanComposites(OpRegistry& registry);
absl::Status DefineOrderStatistics(OpRegistry& registry);
absl::Status DefineCountingOps(OpRegistry& registry);
absl::Status DefineDistanceOps(OpRegistry& registry);  // after the factory composites
absl::Status DefineUpsampleOps(OpRegistry& registry);
absl::Status DefinePoolingComposites(OpRegistry& registry);
absl::Status DefineGroupNormAttentionOps(OpRegistry& registry);
absl::Status DefineFoldScatterOps(OpRegistry& registry);
// Op set 1.10's composites: the backward ops of training graphs, embedding_bag, grid_sampler.
absl::Status DefinePoolingBackwardOps(OpRegistry& registry);
absl::Status DefineUpsampleBackwardOps(OpRegistry& registry);
absl::Status DefineLossBackwardOps(OpRegistry& registry);
absl::Status DefineActivationBackwardOps(OpRegistry& registry);
absl::Status DefineViewBackwardOps(OpRegistry& registry);
absl::Status DefinePaddingBackwardOps(OpRegistry& registry);
absl::Status DefineGroupNormBackwardOps(OpRegistry& registry);
absl::Status DefineEmbeddingBagOps(OpRegistry& registry);
absl::Status DefineGridSamplerOps(OpRegistry& registry);
absl::Status DefineDistanceBackwardOps(OpRegistry& registry);
// Ops that return a host value (bool, Scalar) instead of a tensor: item, equal, allclose, ...
absl::Status DefineHostValueOps(OpRegistry& registry);
// Op set 1.11: resize_ and resize_as_ (a tensor's shape and storage changed in place).
absl::Status DefineResizeOps(OpRegistry& registry);

// CheckMaskedFillValue: masked_fill's value tensor must be 0-dim (PyTorch's message).
absl::Status CheckMaskedFillValue(const OperatorHandle& op, const Tensor& value);
}  // namespace ops

}  // namespace tessera
