// The CUDA backend's convolutions on cuDNN (dnn_ops.cc; Note [cuDNN at first use] in dnn.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessera/sdk/plugin.hpp"

namespace tessera {
namespace gpu {

// CheckDnnSetting: why TESSERA_GPU_DNN's value refuses the plugin's load, or "" (docs/build.md).
std::string CheckDnnSetting();

// RunOnCudnn runs convolution.out on cuDNN and returns true, or returns false when the
// convolution takes the direct kernel (TESSERA_GPU_DNN=own, no cuDNN in auto mode, the HIP
// backend, or what dnn.h keeps on the direct kernel). A cuDNN failure fails the call, naming the
// cuDNN call and its status; TESSERA_GPU_DNN=cudnn without the library fails it too.
bool RunOnCudnn(const char* op, const sdk::Tensor& input, const sdk::Tensor& weight,
                const std::optional<sdk::Tensor>& bias, const std::vector<int64_t>& stride,
                const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation,
                bool transposed, int64_t groups, const sdk::Tensor& out);

}  // namespace gpu
}  // namespace tessera
