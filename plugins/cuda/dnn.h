// The CUDA backend's convolutions on cuDNN, loaded at first use (Note [cuDNN at first use]).
// Plain C++ (no toolkit): the loader, the TESSERA_GPU_DNN knob and the mapping of a convolution
// onto cuDNN's calls are tested on the host against a fake library that convolves on the host
// (tests/dnn_test.cc, tests/fake_cudnn.c).
//
// Note [cuDNN at first use]
// As cuBLAS (Note [cuBLAS at first use] in blas.h), and for the same reasons: the plugin
// dlopen()s "libcudnn.so.9", then "libcudnn.so", at the first convolution, resolves the entry
// points it calls into a DnnLibrary, and falls back to the direct kernel (nn.h) when the library
// or a symbol is missing, saying once in the log which path convolutions take.
// TESSERA_GPU_DNN=auto|cudnn|own forces a path; `cudnn` without the library is an error naming
// what was searched. HIP has no cuDNN (MIOpen is not used): its convolutions always run on the
// direct kernel.
//
// What goes to cuDNN: a forward (not transposed) convolution of 1, 2 or 3 spatial dims, any
// groups, stride, padding and dilation, in float32, float64, float16 or bfloat16, whose input
// and output each address fewer than 2^31 elements and have no expanded (stride 0) dimension;
// a 1-d convolution as a 2-d one of height 1 (cuDNN takes 4 or 5 dims). A convolution cuDNN
// refuses before anything is queued (a descriptor, no algorithm, no workspace) runs on the
// direct kernel in auto mode.
// Input and output may have any strides (cuDNN's tensor descriptors take them); the weight must
// be contiguous (a filter descriptor has none), else it is copied first. The bias is added
// afterwards by cudnnAddTensor (a [1, C, 1...] tensor broadcast over the output). The
// algorithm is cuDNN's heuristic first choice (cudnnGetConvolutionForwardAlgorithm_v7) among
// those that succeed, under the math type it was ranked with, its workspace from the caching
// allocator (a choice whose workspace cannot be had gives way to the next). Math: float32 and
// float64 with CUDNN_FMA_MATH, so that float32 is never computed in TF32 (as Tessera's float32
// products, and as PyTorch with torch.backends.cudnn.allow_tf32 = False); the 16-bit floats
// with CUDNN_TENSOR_OP_MATH, accumulating in float32. Everything else (integer dtypes,
// transposed convolutions, sizes beyond int) runs on the direct kernel, as before.
//
// The types below are cuDNN's public ones, declared here (values from cudnn_graph.h and
// cudnn_cnn.h; dnn_ops.cc asserts them against the real headers where the toolkit has them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "vendor_library.h"

namespace tessera {
namespace gpu {

using cudnn_status = int;
using cudnn_handle = void*;
using cudnn_descriptor = void*;  // tensor, filter or convolution descriptor
enum CudnnDataType : int { kCudnnFloat = 0, kCudnnDouble = 1, kCudnnHalf = 2, kCudnnBfloat16 = 9 };
enum CudnnMathType : int { kCudnnTensorOpMath = 1, kCudnnFmaMath = 3 };
inline constexpr int kCudnnTensorNchw = 0;        // cudnnTensorFormat_t CUDNN_TENSOR_NCHW
inline constexpr int kCudnnCrossCorrelation = 1;  // cudnnConvolutionMode_t
inline constexpr cudnn_status kCudnnStatusSuccess = 0;

// cudnnConvolutionFwdAlgoPerf_t, as its ABI has it.
struct CudnnFwdAlgoPerf {
  int algo;
  cudnn_status status;
  float time;
  size_t memory;
  int determinism;
  int math_type;
  int reserved[3];
};

// The entry points, with cuDNN's signatures (cudnn_graph.h, cudnn_ops.h, cudnn_cnn.h).
using CudnnCreateFn = cudnn_status (*)(cudnn_handle*);
using CudnnSetStreamFn = cudnn_status (*)(cudnn_handle, void* stream);
using CudnnGetErrorStringFn = const char* (*)(cudnn_status);
using CudnnCreateDescriptorFn = cudnn_status (*)(cudnn_descriptor*);
using CudnnDestroyDescriptorFn = cudnn_status (*)(cudnn_descriptor);
using CudnnSetTensorNdFn = cudnn_status (*)(cudnn_descriptor, int data_type, int nb_dims,
                                            const int dims[], const int strides[]);
using CudnnSetFilterNdFn = cudnn_status (*)(cudnn_descriptor, int data_type, int format,
                                            int nb_dims, const int dims[]);
using CudnnSetConvolutionNdFn = cudnn_status (*)(cudnn_descriptor, int array_length,
                                                 const int pad[], const int stride[],
                                                 const int dilation[], int mode, int compute_type);
using CudnnSetConvolutionIntFn = cudnn_status (*)(cudnn_descriptor, int value);
using CudnnGetForwardAlgorithmFn = cudnn_status (*)(cudnn_handle, cudnn_descriptor x,
                                                    cudnn_descriptor w, cudnn_descriptor conv,
                                                    cudnn_descriptor y, int requested,
                                                    int* returned, CudnnFwdAlgoPerf* results);
using CudnnGetForwardWorkspaceSizeFn = cudnn_status (*)(cudnn_handle, cudnn_descriptor x,
                                                        cudnn_descriptor w, cudnn_descriptor conv,
                                                        cudnn_descriptor y, int algo,
                                                        size_t* bytes);
using CudnnConvolutionForwardFn = cudnn_status (*)(cudnn_handle, const void* alpha,
                                                   cudnn_descriptor x_desc, const void* x,
                                                   cudnn_descriptor w_desc, const void* w,
                                                   cudnn_descriptor conv, int algo, void* workspace,
                                                   size_t workspace_bytes, const void* beta,
                                                   cudnn_descriptor y_desc, void* y);
using CudnnAddTensorFn = cudnn_status (*)(cudnn_handle, const void* alpha, cudnn_descriptor a_desc,
                                          const void* a, const void* beta, cudnn_descriptor c_desc,
                                          void* c);

// DnnLibrary: a loaded libcudnn and its entry points (get_error_string may be null).
struct DnnLibrary {
  void* dl = nullptr;
  std::string path;  // the name dlopen() succeeded with
  CudnnCreateFn create = nullptr;
  CudnnSetStreamFn set_stream = nullptr;
  CudnnGetErrorStringFn get_error_string = nullptr;
  CudnnCreateDescriptorFn create_tensor = nullptr, create_filter = nullptr,
                          create_convolution = nullptr;
  CudnnDestroyDescriptorFn destroy_tensor = nullptr, destroy_filter = nullptr,
                           destroy_convolution = nullptr;
  CudnnSetTensorNdFn set_tensor = nullptr;
  CudnnSetFilterNdFn set_filter = nullptr;
  CudnnSetConvolutionNdFn set_convolution = nullptr;
  CudnnSetConvolutionIntFn set_group_count = nullptr, set_math_type = nullptr;
  CudnnGetForwardAlgorithmFn get_forward_algorithm = nullptr;
  CudnnGetForwardWorkspaceSizeFn get_forward_workspace_size = nullptr;
  CudnnConvolutionForwardFn convolution_forward = nullptr;
  CudnnAddTensorFn add_tensor = nullptr;
};

// The names the CUDA backend tries, in order.
std::vector<std::string> DefaultCudnnNames();

// LoadDnnLibrary dlopen()s the first of `names` that loads and resolves the entry points into
// *lib. false with *error naming every name tried and why it failed (dlerror's words, or the
// missing symbol).
bool LoadDnnLibrary(const std::vector<std::string>& names, DnnLibrary* lib, std::string* error);

// DnnStatusText: "cuDNN status N (CUDNN_STATUS_...)" from the library when it can say.
std::string DnnStatusText(const DnnLibrary& lib, cudnn_status status);

// TESSERA_GPU_DNN: which path the convolutions take (kLibrary: cuDNN or an error).
using DnnMode = LibraryMode;

// ParseDnnMode reads a value of TESSERA_GPU_DNN (null or "" is auto). `has_dnn` says whether the
// backend can use cuDNN at all (CUDA: yes; HIP: no, and `cudnn` is refused). false with *error
// naming the variable, the value found and the values expected.
bool ParseDnnMode(const char* value, bool has_dnn, DnnMode* mode, std::string* error);

// DnnTensor: one operand as the plugin has it (sizes and strides in elements).
struct DnnTensor {
  void* data = nullptr;
  std::vector<int64_t> sizes, strides;
};

// DnnConvProblem: a convolution as convolution.out has it (the meta function checked it).
struct DnnConvProblem {
  int32_t dtype = 0;  // a tsr_dtype
  DnnTensor input, weight, output;
  const void* bias = nullptr;  // [C_out], contiguous, or null
  std::vector<int64_t> stride, padding, dilation;
  bool transposed = false;
  int64_t groups = 1;
};

// DnnConvCall: one convolution in cuDNN's terms: 4-d or 5-d descriptors (a 1-d convolution gains
// a height of 1).
struct DnnConvCall {
  int data_type = kCudnnFloat;
  int compute_type = kCudnnFloat;
  int math_type = kCudnnFmaMath;
  int nb_dims = 4;
  int x_dims[5] = {}, x_strides[5] = {};
  int w_dims[5] = {};
  int y_dims[5] = {}, y_strides[5] = {};
  int bias_dims[5] = {}, bias_strides[5] = {};
  int pad[3] = {}, stride[3] = {}, dilation[3] = {};
  int groups = 1;
  const void* x = nullptr;
  const void* w = nullptr;
  void* y = nullptr;
  const void* bias = nullptr;
  // alpha and beta in the compute type's scalar: double for float64, else float.
  float alpha_f = 1, beta_f = 0;
  double alpha_d = 1, beta_d = 0;
  const void* alpha() const;
  const void* beta() const;
  const void* one() const;  // AddTensor's alpha and beta (1: out += bias)
};

// What PlanDnnConv found.
enum class DnnPlan {
  kReady,        // *call is filled
  kCopyWeight,   // the weight is not contiguous: copy it to a contiguous buffer, plan again
  kUseOwnKernel  // *why says why: the dtype, a transposed convolution, a size beyond int
};

DnnPlan PlanDnnConv(const DnnConvProblem& p, DnnConvCall* call, std::string* why);

// DnnRun: how RunDnnConv ended: kDone; kRefused, before anything was queued (a descriptor
// cuDNN does not take, no algorithm, no workspace), so the direct kernel may run the
// convolution instead; kFailed, after (the call fails). `error` names the cuDNN call and its
// status.
struct DnnRun {
  enum Outcome { kDone, kRefused, kFailed } outcome = kDone;
  std::string error;
};

// RunDnnConv queues `call` on `handle` (its stream already set) through `lib`: descriptors, the
// algorithm (the heuristic's first that works, under the math type it was ranked with; FMA only
// for float32 and float64), its workspace from `workspace(bytes)` (null when it cannot be had:
// the next choice is tried; the caller keeps it alive until the stream has run), the
// convolution, the bias. Descriptors are destroyed on every path, an exception from
// `workspace` included.
DnnRun RunDnnConv(const DnnLibrary& lib, cudnn_handle handle, const DnnConvCall& call,
                  const std::function<void*(size_t bytes)>& workspace);

}  // namespace gpu
}  // namespace tessera
