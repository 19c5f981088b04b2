// The cuDNN loader, the TESSERA_GPU_DNN knob and the mapping of a convolution onto cuDNN
// (dnn.h; Note [cuDNN at first use]).
#include "dnn.h"

#include <climits>

#include "tessera/c/common.h"
#include "vendor_library.h"

namespace tessera {
namespace gpu {

std::vector<std::string> DefaultCudnnNames() { return {"libcudnn.so.9", "libcudnn.so"}; }

namespace {

// ResolveAll: every required entry point of `l`, or the name of the first one missing.
const char* ResolveAll(void* dl, DnnLibrary* l) {
  struct Entry {
    const char* name;
    bool ok;
  };
  const Entry entries[] = {
      {"cudnnCreate", Resolve(dl, "cudnnCreate", &l->create)},
      {"cudnnSetStream", Resolve(dl, "cudnnSetStream", &l->set_stream)},
      {"cudnnCreateTensorDescriptor",
       Resolve(dl, "cudnnCreateTensorDescriptor", &l->create_tensor)},
      {"cudnnDestroyTensorDescriptor",
       Resolve(dl, "cudnnDestroyTensorDescriptor", &l->destroy_tensor)},
      {"cudnnSetTensorNdDescriptor", Resolve(dl, "cudnnSetTensorNdDescriptor", &l->set_tensor)},
      {"cudnnCreateFilterDescriptor",
       Resolve(dl, "cudnnCreateFilterDescriptor", &l->create_filter)},
      {"cudnnDestroyFilterDescriptor",
       Resolve(dl, "cudnnDestroyFilterDescriptor", &l->destroy_filter)},
      {"cudnnSetFilterNdDescriptor", Resolve(dl, "cudnnSetFilterNdDescriptor", &l->set_filter)},
      {"cudnnCreateConvolutionDescriptor",
       Resolve(dl, "cudnnCreateConvolutionDescriptor", &l->create_convolution)},
      {"cudnnDestroyConvolutionDescriptor",
       Resolve(dl, "cudnnDestroyConvolutionDescriptor", &l->destroy_convolution)},
      {"cudnnSetConvolutionNdDescriptor",
       Resolve(dl, "cudnnSetConvolutionNdDescriptor", &l->set_convolution)},
      {"cudnnSetConvolutionGroupCount",
       Resolve(dl, "cudnnSetConvolutionGroupCount", &l->set_group_count)},
      {"cudnnSetConvolutionMathType",
       Resolve(dl, "cudnnSetConvolutionMathType", &l->set_math_type)},
      {"cudnnGetConvolutionForwardAlgorithm_v7",
       Resolve(dl, "cudnnGetConvolutionForwardAlgorithm_v7", &l->get_forward_algorithm)},
      {"cudnnGetConvolutionForwardWorkspaceSize",
       Resolve(dl, "cudnnGetConvolutionForwardWorkspaceSize", &l->get_forward_workspace_size)},
      {"cudnnConvolutionForward", Resolve(dl, "cudnnConvolutionForward", &l->convolution_forward)},
      {"cudnnAddTensor", Resolve(dl, "cudnnAddTensor", &l->add_tensor)},
  };
  for (const Entry& e : entries) {
    if (!e.ok) return e.name;
  }
  Resolve(dl, "cudnnGetErrorString", &l->get_error_string);
  return nullptr;
}

}  // namespace

bool LoadDnnLibrary(const std::vector<std::string>& names, DnnLibrary* lib, std::string* error) {
  DnnLibrary l;
  l.dl = OpenLibrary(
      "cuDNN", names, [&l](void* dl) { return ResolveAll(dl, &l); }, &l.path, error);
  if (l.dl == nullptr) return false;
  *lib = l;
  return true;
}

std::string DnnStatusText(const DnnLibrary& lib, cudnn_status status) {
  std::string text = "cuDNN status " + std::to_string(status);
  if (lib.get_error_string != nullptr) {
    if (const char* s = lib.get_error_string(status); s != nullptr)
      text += " (" + std::string(s) + ")";
  }
  return text;
}

bool ParseDnnMode(const char* value, bool has_dnn, DnnMode* mode, std::string* error) {
  static const LibraryKnob knob{
      "TESSERA_GPU_DNN", "cudnn",
      "this backend has no cuDNN; its convolutions always run on the direct kernel"};
  return ParseLibraryMode(knob, value, has_dnn, mode, error);
}

const void* DnnConvCall::alpha() const {
  return data_type == kCudnnDouble ? static_cast<const void*>(&alpha_d)
                                   : static_cast<const void*>(&alpha_f);
}

const void* DnnConvCall::beta() const {
  return data_type == kCudnnDouble ? static_cast<const void*>(&beta_d)
                                   : static_cast<const void*>(&beta_f);
}

const void* DnnConvCall::one() const { return alpha(); }

namespace {

bool FitsInt(int64_t v) { return v >= 0 && v <= INT_MAX; }

// ToInts copies `v` into `out` (cuDNN's int arrays), inserting `inserted` before index
// `insert` (a 1-d convolution's height; -1: none). false when a value does not fit int.
bool ToInts(const std::vector<int64_t>& v, int insert, int64_t inserted, int* out) {
  int k = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (static_cast<int>(i) == insert) {
      if (!FitsInt(inserted)) return false;
      out[k++] = static_cast<int>(inserted);
    }
    if (!FitsInt(v[i])) return false;
    out[k++] = static_cast<int>(v[i]);
  }
  return true;
}

bool Contiguous(const DnnTensor& t) {
  int64_t expected = 1;
  for (size_t i = t.sizes.size(); i-- > 0;) {
    if (t.sizes[i] != 1 && t.strides[i] != expected) return false;
    expected *= t.sizes[i];
  }
  return true;
}

}  // namespace

DnnPlan PlanDnnConv(const DnnConvProblem& p, DnnConvCall* call, std::string* why) {
  *call = DnnConvCall();
  switch (p.dtype) {
    case TSR_DTYPE_FLOAT32:
      call->data_type = call->compute_type = kCudnnFloat;
      call->math_type = kCudnnFmaMath;
      break;
    case TSR_DTYPE_FLOAT64:
      call->data_type = call->compute_type = kCudnnDouble;
      call->math_type = kCudnnFmaMath;
      break;
    case TSR_DTYPE_FLOAT16:
      call->data_type = kCudnnHalf;
      call->compute_type = kCudnnFloat;
      call->math_type = kCudnnTensorOpMath;
      break;
    case TSR_DTYPE_BFLOAT16:
      call->data_type = kCudnnBfloat16;
      call->compute_type = kCudnnFloat;
      call->math_type = kCudnnTensorOpMath;
      break;
    default:
      *why = "cuDNN convolves floating dtypes only";
      return DnnPlan::kUseOwnKernel;
  }
  if (p.transposed) {
    *why = "a transposed convolution (not mapped onto cuDNN yet)";
    return DnnPlan::kUseOwnKernel;
  }
  const size_t spatial = p.weight.sizes.size() - 2;
  if (spatial < 1 || spatial > 3 || p.input.sizes.size() != spatial + 2 ||
      p.output.sizes.size() != spatial + 2 || p.stride.size() != spatial ||
      p.padding.size() != spatial || p.dilation.size() != spatial || !FitsInt(p.groups)) {
    *why = "an unexpected rank";
    return DnnPlan::kUseOwnKernel;
  }
  for (int64_t s : p.input.sizes) {
    if (s == 0) {
      *why = "an empty input";
      return DnnPlan::kUseOwnKernel;
    }
  }
  // cuDNN's tensor descriptors address at most 2^31 - 1 elements (PyTorch splits the batch
  // above that), and take no expanded (stride 0) dimension.
  for (const DnnTensor* t : {&p.input, &p.output}) {
    int64_t last = 0;
    for (size_t i = 0; i < t->sizes.size(); ++i) {
      if (t->sizes[i] > 1 && t->strides[i] == 0) {
        *why = "an expanded (stride 0) operand";
        return DnnPlan::kUseOwnKernel;
      }
      if (t->strides[i] > 0 && t->sizes[i] - 1 > (INT_MAX - last) / t->strides[i]) {
        *why = "an operand past 2^31 - 1 elements";
        return DnnPlan::kUseOwnKernel;
      }
      last += (t->sizes[i] - 1) * t->strides[i];
    }
  }
  if (!Contiguous(p.weight)) return DnnPlan::kCopyWeight;
  // A 1-d convolution is a 2-d one of height 1: the height goes before the width.
  const int insert = spatial == 1 ? 2 : -1;
  call->nb_dims = spatial == 1 ? 4 : static_cast<int>(spatial) + 2;
  std::vector<int64_t> w_strides(p.weight.sizes.size());
  int64_t next = 1;
  for (size_t i = w_strides.size(); i-- > 0;) {
    w_strides[i] = next;
    next *= p.weight.sizes[i];
  }
  // The inserted height's stride: the width's times its size (any value is right for size 1,
  // but cuDNN checks that strides are consistent).
  auto height_stride = [](const DnnTensor& t) { return t.strides.back() * t.sizes.back(); };
  const int space = spatial == 1 ? 0 : -1;  // padding etc. gain the height's 0 / 1 in front
  if (!ToInts(p.input.sizes, insert, 1, call->x_dims) ||
      !ToInts(p.input.strides, insert, height_stride(p.input), call->x_strides) ||
      !ToInts(p.weight.sizes, insert, 1, call->w_dims) ||
      !ToInts(p.output.sizes, insert, 1, call->y_dims) ||
      !ToInts(p.output.strides, insert, height_stride(p.output), call->y_strides) ||
      !ToInts(p.padding, space, 0, call->pad) || !ToInts(p.stride, space, 1, call->stride) ||
      !ToInts(p.dilation, space, 1, call->dilation)) {
    *why = "a size, stride or window parameter beyond int";
    return DnnPlan::kUseOwnKernel;
  }
  call->groups = static_cast<int>(p.groups);
  // The bias as a [1, C, 1...] tensor broadcast over the output.
  for (int i = 0; i < call->nb_dims; ++i) {
    call->bias_dims[i] = i == 1 ? call->y_dims[1] : 1;
    call->bias_strides[i] = i == 0 ? call->y_dims[1] : 1;
  }
  call->x = p.input.data;
  call->w = p.weight.data;
  call->y = p.output.data;
  call->bias = p.bias;
  return DnnPlan::kReady;
}

namespace {

// Descriptors: the four of one convolution, destroyed on every path out (an exception from the
// workspace callback included).
struct Descriptors {
  const DnnLibrary& lib;
  cudnn_descriptor x = nullptr, w = nullptr, y = nullptr, conv = nullptr, bias = nullptr;
  ~Descriptors() {
    if (bias != nullptr) lib.destroy_tensor(bias);
    if (conv != nullptr) lib.destroy_convolution(conv);
    if (w != nullptr) lib.destroy_filter(w);
    if (y != nullptr) lib.destroy_tensor(y);
    if (x != nullptr) lib.destroy_tensor(x);
  }
};

}  // namespace

DnnRun RunDnnConv(const DnnLibrary& lib, cudnn_handle handle, const DnnConvCall& c,
                  const std::function<void*(size_t bytes)>& workspace) {
  Descriptors d{lib};
  DnnRun run;
  // step: a call of the library; false (and run.error naming it) when it fails.
  auto step = [&](const char* what, cudnn_status s) {
    if (s == kCudnnStatusSuccess) return true;
    run.error = std::string(what) + " failed: " + DnnStatusText(lib, s);
    return false;
  };
  const int spatial = c.nb_dims - 2;
  // Before anything is queued: a failure here leaves the convolution to the direct kernel.
  run.outcome = DnnRun::kRefused;
  if (!step("cudnnCreateTensorDescriptor", lib.create_tensor(&d.x)) ||
      !step("cudnnCreateTensorDescriptor", lib.create_tensor(&d.y)) ||
      !step("cudnnCreateFilterDescriptor", lib.create_filter(&d.w)) ||
      !step("cudnnCreateConvolutionDescriptor", lib.create_convolution(&d.conv)) ||
      !step("cudnnSetTensorNdDescriptor (input)",
            lib.set_tensor(d.x, c.data_type, c.nb_dims, c.x_dims, c.x_strides)) ||
      !step("cudnnSetTensorNdDescriptor (output)",
            lib.set_tensor(d.y, c.data_type, c.nb_dims, c.y_dims, c.y_strides)) ||
      !step("cudnnSetFilterNdDescriptor",
            lib.set_filter(d.w, c.data_type, kCudnnTensorNchw, c.nb_dims, c.w_dims)) ||
      !step("cudnnSetConvolutionNdDescriptor",
            lib.set_convolution(d.conv, spatial, c.pad, c.stride, c.dilation,
                                kCudnnCrossCorrelation, c.compute_type)) ||
      !step("cudnnSetConvolutionGroupCount", lib.set_group_count(d.conv, c.groups)) ||
      !step("cudnnSetConvolutionMathType", lib.set_math_type(d.conv, c.math_type))) {
    return run;
  }
  // The heuristic's choices, best first. Each is ranked under a math type, which the descriptor
  // must carry for its workspace size and its run (PyTorch's Note [behavior of cudnnFind and
  // cudnnGet]); float32 and float64 take FMA ones only (never TF32). The first whose workspace
  // size cuDNN can tell and the allocator can give runs.
  CudnnFwdAlgoPerf perf[8] = {};
  int returned = 0;
  if (!step("cudnnGetConvolutionForwardAlgorithm_v7",
            lib.get_forward_algorithm(handle, d.x, d.w, d.conv, d.y, 8, &returned, perf))) {
    return run;
  }
  int algo = -1;
  size_t bytes = 0;
  void* space = nullptr;
  for (int i = 0; i < returned && algo < 0; ++i) {
    if (perf[i].status != kCudnnStatusSuccess) continue;
    if (c.math_type == kCudnnFmaMath && perf[i].math_type != kCudnnFmaMath) continue;
    if (lib.set_math_type(d.conv, perf[i].math_type) != kCudnnStatusSuccess) continue;
    size_t need = 0;
    if (lib.get_forward_workspace_size(handle, d.x, d.w, d.conv, d.y, perf[i].algo, &need) !=
        kCudnnStatusSuccess) {
      continue;
    }
    void* got = need > 0 ? workspace(need) : nullptr;
    if (need > 0 && got == nullptr) continue;  // no memory for it: a leaner choice may do
    algo = perf[i].algo;
    bytes = need;
    space = got;
  }
  if (algo < 0) {
    run.error = "cudnnGetConvolutionForwardAlgorithm_v7 offered no algorithm that fits (" +
                std::to_string(returned) + " offered)";
    return run;
  }
  run.outcome = DnnRun::kFailed;  // from here on, work may be queued
  if (!step("cudnnConvolutionForward",
            lib.convolution_forward(handle, c.alpha(), d.x, c.x, d.w, c.w, d.conv, algo, space,
                                    bytes, c.beta(), d.y, c.y))) {
    return run;
  }
  if (c.bias != nullptr &&
      (!step("cudnnCreateTensorDescriptor", lib.create_tensor(&d.bias)) ||
       !step("cudnnSetTensorNdDescriptor (bias)",
             lib.set_tensor(d.bias, c.data_type, c.nb_dims, c.bias_dims, c.bias_strides)) ||
       !step("cudnnAddTensor",
             lib.add_tensor(handle, c.one(), d.bias, c.bias, c.one(), d.y, c.y)))) {
    return run;
  }
  run.outcome = DnnRun::kDone;
  return run;
}

}  // namespace gpu
}  // namespace tessera
