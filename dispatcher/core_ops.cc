#include "dispatcher/core_ops.h"

#include "core/status_macros.h"

namespace tessera {

absl::Status DefineCoreOps(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(ops::DefineViewOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefineCopyOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefinePointwiseOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefinePointwiseComposites(registry));
  TSR_RETURN_IF_ERROR(ops::DefineActivationOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefineDecomposedTrainingOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefineNormBackwardOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefineNNBackwardOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefineReductionOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefineLinalgOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefineFactoryOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefineRandomOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefineDistributionOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefineIndexOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefineNNOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefineShapeOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefineLinalgComposites(registry));
  TSR_RETURN_IF_ERROR(ops::DefineReductionComposites(registry));
  TSR_RETURN_IF_ERROR(ops::DefineRearrangeOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefineFactoryComposites(registry));
  TSR_RETURN_IF_ERROR(ops::DefineActivationComposites(registry));
  TSR_RETURN_IF_ERROR(ops::DefineIsinOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefinePaddingOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefineLossComposites(registry));
  TSR_RETURN_IF_ERROR(ops::DefineIndexComposites(registry));
  TSR_RETURN_IF_ERROR(ops::DefineAdvancedIndexOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefineScanComposites(registry));
  TSR_RETURN_IF_ERROR(ops::DefineOrderStatistics(registry));
  TSR_RETURN_IF_ERROR(ops::DefineCountingOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefineDistanceOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefineUpsampleOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefinePoolingComposites(registry));
  TSR_RETURN_IF_ERROR(ops::DefineGroupNormAttentionOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefineFoldScatterOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefinePoolingBackwardOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefineUpsampleBackwardOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefineLossBackwardOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefineActivationBackwardOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefineViewBackwardOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefinePaddingBackwardOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefineGroupNormBackwardOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefineEmbeddingBagOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefineGridSamplerOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefineDistanceBackwardOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefineHostValueOps(registry));
  TSR_RETURN_IF_ERROR(ops::DefineResizeOps(registry));
  return absl::OkStatus();
}

}  // namespace tessera
