// The CUDA backend's convolutions on cuDNN, loaded at the first convolution (Note [cuDNN at
// first use] in dnn.h; TESSERA_GPU_DNN). The HIP backend builds this file too, without cuDNN:
// its convolutions always take the direct kernel.
#include "dnn_ops.h"

#include <cstddef>
#include <cstdlib>
#include <string>
#include <vector>

#include "dnn.h"
#include "elementwise_ops.h"
#include "gpu_device.h"
#include "tessera/sdk/stream.hpp"
#include "vendor_handles.h"

#if !defined(TESSERA_GPU_HIP) && __has_include(<cudnn_graph.h>) && __has_include(<cudnn_cnn.h>)
// dnn.h declares cuDNN's types itself (the HIP build and the host tests have no header); here
// the toolkit's headers hold it to them.
#include <cudnn_cnn.h>
#include <cudnn_graph.h>
#define TESSERA_GPU_SAME_DNN_VALUE(theirs, ours) \
  static_assert(static_cast<int>(theirs) == static_cast<int>(tessera::gpu::ours), #theirs)
TESSERA_GPU_SAME_DNN_VALUE(CUDNN_STATUS_SUCCESS, kCudnnStatusSuccess);
TESSERA_GPU_SAME_DNN_VALUE(CUDNN_DATA_FLOAT, kCudnnFloat);
TESSERA_GPU_SAME_DNN_VALUE(CUDNN_DATA_DOUBLE, kCudnnDouble);
TESSERA_GPU_SAME_DNN_VALUE(CUDNN_DATA_HALF, kCudnnHalf);
TESSERA_GPU_SAME_DNN_VALUE(CUDNN_DATA_BFLOAT16, kCudnnBfloat16);
TESSERA_GPU_SAME_DNN_VALUE(CUDNN_TENSOR_OP_MATH, kCudnnTensorOpMath);
TESSERA_GPU_SAME_DNN_VALUE(CUDNN_FMA_MATH, kCudnnFmaMath);
TESSERA_GPU_SAME_DNN_VALUE(CUDNN_TENSOR_NCHW, kCudnnTensorNchw);
TESSERA_GPU_SAME_DNN_VALUE(CUDNN_CROSS_CORRELATION, kCudnnCrossCorrelation);
static_assert(sizeof(cudnnConvolutionFwdAlgoPerf_t) == sizeof(tessera::gpu::CudnnFwdAlgoPerf) &&
              offsetof(cudnnConvolutionFwdAlgoPerf_t, memory) ==
                  offsetof(tessera::gpu::CudnnFwdAlgoPerf, memory) &&
              offsetof(cudnnConvolutionFwdAlgoPerf_t, mathType) ==
                  offsetof(tessera::gpu::CudnnFwdAlgoPerf, math_type));
static_assert(sizeof(cudnnHandle_t) == sizeof(tessera::gpu::cudnn_handle) &&
              sizeof(cudnnStatus_t) == sizeof(int) && sizeof(cudnnDataType_t) == sizeof(int));
#undef TESSERA_GPU_SAME_DNN_VALUE
#endif

namespace tessera {
namespace gpu {
namespace {

namespace sdk = ::tessera::sdk;
using sdk::Tensor;

#ifdef TESSERA_GPU_HIP
constexpr bool kHasDnn = false;
#else
constexpr bool kHasDnn = true;
#endif

#ifndef TESSERA_GPU_HIP
// The convolutions' library, loaded at the first convolution (TESSERA_GPU_DNN=own never loads
// it).
struct DnnState {
  DnnMode mode = DnnMode::kAuto;
  bool loaded = false;
  DnnLibrary lib;
  std::string error;  // why it did not load
};

const DnnState& Dnn() {
  static const DnnState state = [] {
    DnnState s;
    std::string error;
    if (!ParseDnnMode(std::getenv("TESSERA_GPU_DNN"), true, &s.mode, &error)) {
      s.mode = DnnMode::kOwn;  // unreachable: the load refused the value
    }
    std::string message = TESSERA_GPU_PLUGIN_NAME ": convolutions on ";
    if (s.mode == DnnMode::kOwn) {
      message += "the direct kernel (TESSERA_GPU_DNN=own)";
    } else if ((s.loaded = LoadDnnLibrary(DefaultCudnnNames(), &s.lib, &s.error))) {
      message += "cuDNN (" + s.lib.path + ")";
    } else {
      message += "the direct kernel: " + s.error;
    }
    sdk::api().log(TSR_LOG_INFO, sdk::to_c(message));
    return s;
  }();
  return state;
}

struct CudnnTag {};

DnnTensor View(const Tensor& t) {
  return DnnTensor{t.data_ptr(), t.sizes().vec(), t.strides().vec()};
}
#endif

}  // namespace

std::string CheckDnnSetting() {
  DnnMode mode;
  std::string error;
  return ParseDnnMode(std::getenv("TESSERA_GPU_DNN"), kHasDnn, &mode, &error) ? "" : error;
}

bool RunOnCudnn(const char* op, const Tensor& input, const Tensor& weight,
                const std::optional<Tensor>& bias, const std::vector<int64_t>& stride,
                const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation,
                bool transposed, int64_t groups, const Tensor& out) {
#ifdef TESSERA_GPU_HIP
  return false;
#else
  const DnnState& dnn = Dnn();
  if (dnn.mode == DnnMode::kOwn) return false;
  if (!dnn.loaded) {
    if (dnn.mode == DnnMode::kAuto) return false;
    sdk::fail(TSR_FAILED_PRECONDITION,
              std::string(op) + ": TESSERA_GPU_DNN=cudnn but " + dnn.error +
                  "; install cuDNN 9 (libcudnn.so.9) where the dynamic loader finds it "
                  "(LD_LIBRARY_PATH), or set TESSERA_GPU_DNN=auto or own");
  }
  if (out.numel() == 0) return false;
  DnnConvProblem p;
  p.dtype = out.dtype();
  p.input = View(input);
  p.weight = View(weight);
  p.output = View(out);
  std::optional<Tensor> contiguous_bias;
  if (bias) {
    contiguous_bias = bias->is_contiguous()
                          ? *bias
                          : Tensor::empty(bias->sizes().vec(), bias->dtype(), out.device());
    if (!bias->is_contiguous()) CopyOnDevice(*contiguous_bias, *bias, false);
    p.bias = contiguous_bias->data_ptr();
  }
  p.stride = stride;
  p.padding = padding;
  p.dilation = dilation;
  p.transposed = transposed;
  p.groups = groups;
  DnnConvCall call;
  std::string why;
  DnnPlan plan = PlanDnnConv(p, &call, &why);
  std::optional<Tensor> weight_copy;
  if (plan == DnnPlan::kCopyWeight) {  // a filter descriptor takes no strides
    weight_copy = Tensor::empty(weight.sizes().vec(), weight.dtype(), out.device());
    CopyOnDevice(*weight_copy, weight, false);
    p.weight = View(*weight_copy);
    plan = PlanDnnConv(p, &call, &why);
  }
  if (plan != DnnPlan::kReady) return false;
  const tsr_device device = out.device();
  DeviceGuard guard(device.index);
  void* handle = VendorHandles<CudnnTag>::Get(device.index, [&] {
    cudnn_handle h = nullptr;
    if (const cudnn_status s = dnn.lib.create(&h); s != kCudnnStatusSuccess) {
      sdk::fail(TSR_INTERNAL, std::string(op) + ": cudnnCreate failed on " +
                                  TESSERA_GPU_PLUGIN_NAME ":" + std::to_string(device.index) +
                                  ": " + DnnStatusText(dnn.lib, s));
    }
    return h;
  });
  if (const cudnn_status s = dnn.lib.set_stream(handle, sdk::current_stream(device));
      s != kCudnnStatusSuccess) {
    sdk::fail(TSR_INTERNAL,
              std::string(op) + ": cudnnSetStream failed: " + DnnStatusText(dnn.lib, s));
  }
  // The workspace: a block of the caching allocator on this stream, freed when this returns;
  // the stream runs the convolution before any later use of the block. None when the device
  // has no memory for it (RunDnnConv tries a leaner algorithm).
  std::optional<Tensor> workspace;
  const DnnRun run = RunDnnConv(dnn.lib, handle, call, [&](size_t bytes) -> void* {
    try {
      workspace = Tensor::empty({static_cast<int64_t>(bytes)}, TSR_DTYPE_UINT8, device);
    } catch (const sdk::Error& e) {
      if (e.code() != TSR_RESOURCE_EXHAUSTED) throw;
      return nullptr;
    }
    return workspace->data_ptr();
  });
  if (run.outcome == DnnRun::kDone) return true;
  // Refused before anything was queued: the direct kernel, unless cuDNN was required.
  if (run.outcome == DnnRun::kRefused && dnn.mode == DnnMode::kAuto) return false;
  sdk::fail(TSR_INTERNAL, std::string(op) + ": " + run.error);
#endif
}

}  // namespace gpu
}  // namespace tessera
