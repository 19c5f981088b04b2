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
  return absl::OkStatus();
}

}  // namespace tessera
