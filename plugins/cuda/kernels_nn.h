// The GPU nn kernels' launchers (kernels_nn.cu; Note [GPU nn kernels] in nn.h), callable from
// host code compiled by g++. Each queues one launch of `blocks` blocks (a plan's, > 0) on
// `stream` (the vendor's stream handle) and returns "" or the launch's error in the vendor's
// words; the kernel's own errors surface at the next synchronizing call.
#pragma once

#include <cstdint>
#include <string>

#include "nn_plan.h"

namespace tessera {
namespace gpu {

// The dtypes each kernel has: the floating types for the normalizations and max pooling, and
// int64 for avg pooling too (the CPU backend's sets); every numeric type for convolution.
inline constexpr uint32_t kNormDtypes = kFloatingDtypes;
inline constexpr uint32_t kMaxPoolDtypes = kFloatingDtypes;
inline constexpr uint32_t kAvgPoolDtypes = kFloatingDtypes | DtypeBit(TSR_DTYPE_INT64);
inline constexpr uint32_t kConvDtypes = kNumericDtypes;

std::string LaunchLayerNorm(int32_t dtype, const LayerNormArgs& args, uint32_t blocks,
                            void* stream);
std::string LaunchBatchNorm(int32_t dtype, const BatchNormArgs& args, uint32_t blocks,
                            void* stream);
// max pooling when args.indices is set, avg pooling otherwise.
std::string LaunchPool2d(int32_t dtype, const Pool2dArgs& args, uint32_t blocks, void* stream);
std::string LaunchConv(int32_t dtype, const ConvArgs& args, uint32_t blocks, void* stream);

}  // namespace gpu
}  // namespace tessera
