// The GPU backends' nn ops as out= kernels (Note [GPU nn kernels] in nn.h): each checks its
// operands (dtype, device, the shapes its kernel indexes by), builds the launch's arguments
// (nn_plan.h) and queues the kernel (kernels_nn.cu) on the current stream. linear runs on the
// matrix products' path (mm.out / addmm.out: cuBLAS or the tiled kernel) for the floating
// dtypes, and on the convolution kernel (a 1x1 convolution, exact wrapping integer
// arithmetic) for the integer ones. The semantics are the CPU backend's (plugins/cpu/nn.cc),
// which are PyTorch's.
#include "nn_ops.h"

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "dnn_ops.h"
#include "gpu_device.h"
#include "kernels_nn.h"
#include "op_support.h"
#include "shape_text.h"
#include "tessera/sdk/dtypes.hpp"
#include "tessera/sdk/stream.hpp"

namespace tessera {
namespace gpu {
namespace {

namespace sdk = ::tessera::sdk;
using sdk::IntSpan;
using sdk::Tensor;
using OptTensor = std::optional<Tensor>;

std::string DtypeName(int32_t dtype) { return sdk::dtype_name(static_cast<tsr_dtype>(dtype)); }

[[noreturn]] void Invalid(const char* op, const std::string& what) {
  sdk::fail(TSR_INVALID_ARGUMENT, std::string(op) + ": " + what);
}

// Operand: a tensor of the call, on the device, of dtype `dtype`.
NnOperand Operand(const char* op, const char* arg, const Tensor& t, int32_t dtype) {
  if (t.device().type == TSR_DEVICE_CPU) {
    Invalid(op, std::string("expected '") + arg + "' on " + TESSERA_GPU_PLUGIN_NAME +
                    ", got a CPU tensor");
  }
  if (t.dtype() != dtype) {
    Invalid(op, std::string("expected '") + arg + "' of dtype " + DtypeName(dtype) + ", got " +
                    DtypeName(t.dtype()));
  }
  NnOperand o;
  o.data = static_cast<char*>(t.data_ptr());
  o.sizes = t.sizes().vec();
  o.strides = t.strides().vec();
  return o;
}
NnOperand Optional(const char* op, const char* arg, const OptTensor& t, int32_t dtype) {
  return t ? Operand(op, arg, *t, dtype) : NnOperand{};
}

// The kernels index outputs by the shapes the op's meta function gives them; an out= tensor of
// another shape is refused rather than written past.
void ExpectShape(const char* op, const char* arg, const NnOperand& o,
                 const std::vector<int64_t>& sizes) {
  if (o.sizes != sizes) {
    Invalid(op, std::string("expected '") + arg + "' of shape " + ShapeText(sizes) + ", got " +
                    ShapeText(o.sizes));
  }
}

void Unplannable(const char* op, const std::string& error) {
  sdk::fail(TSR_UNIMPLEMENTED, std::string(op) + ": " + error);
}

// --- normalization --------------------------------------------------------------------------

// native_layer_norm.out(input, normalized_shape, weight, bias, eps, *, out0, out1, out2): the
// normalized input, and per row its mean and rstd (the input's rank, normalized dims of size 1).
std::tuple<Tensor, Tensor, Tensor> LayerNormOut(const Tensor& input, IntSpan normalized_shape,
                                                const OptTensor& weight, const OptTensor& bias,
                                                double eps, const Tensor& out0, const Tensor& out1,
                                                const Tensor& out2) {
  const char* op = "native_layer_norm.out";
  const int32_t dt = input.dtype();
  RequireDtype(op, dt, kNormDtypes);
  const NnOperand x = Operand(op, "input", input, dt);
  const int64_t axis = input.dim() - static_cast<int64_t>(normalized_shape.size);
  if (axis < 0) {
    Invalid(op, "expected 'normalized_shape' of at most the input's " +
                    std::to_string(input.dim()) + " dims, got " +
                    std::to_string(normalized_shape.size) + " dims");
  }
  const NnOperand y = Operand(op, "out0", out0, dt);
  const NnOperand mean = Operand(op, "out1", out1, dt);
  const NnOperand rstd = Operand(op, "out2", out2, dt);
  std::vector<int64_t> stat = x.sizes;
  for (size_t d = static_cast<size_t>(axis); d < stat.size(); ++d) stat[d] = 1;
  ExpectShape(op, "out0", y, x.sizes);
  ExpectShape(op, "out1", mean, stat);
  ExpectShape(op, "out2", rstd, stat);
  const std::vector<int64_t> norm(x.sizes.begin() + axis, x.sizes.end());
  const NnOperand w = Optional(op, "weight", weight, dt), b = Optional(op, "bias", bias, dt);
  if (weight) ExpectShape(op, "weight", w, norm);
  if (bias) ExpectShape(op, "bias", b, norm);
  LayerNormArgs args;
  uint32_t blocks = 0;
  std::string error;
  if (!MakeLayerNormArgs(x, y, w, b, mean, rstd, axis, eps, &args, &blocks, &error)) {
    Unplannable(op, error);
  }
  if (blocks > 0) {
    DeviceGuard guard(out0.device().index);
    Check(op, LaunchLayerNorm(dt, args, blocks, sdk::current_stream(out0.device())));
  }
  return {out0, out1, out2};
}

// native_batch_norm.out(input, weight, bias, running_mean, running_var, training, momentum,
// eps, *, out, save_mean, save_invstd): training normalizes with the batch's statistics,
// writes them to save_* ([C]) and updates the running ones in place (momentum, unbiased
// variance); inference uses the running statistics (save_* are [0]).
std::tuple<Tensor, Tensor, Tensor> BatchNormOut(
    const Tensor& input, const OptTensor& weight, const OptTensor& bias,
    const OptTensor& running_mean, const OptTensor& running_var, bool training, double momentum,
    double eps, const Tensor& out, const Tensor& save_mean, const Tensor& save_invstd) {
  const char* op = "native_batch_norm.out";
  const int32_t dt = input.dtype();
  RequireDtype(op, dt, kNormDtypes);
  const NnOperand x = Operand(op, "input", input, dt);
  if (x.sizes.size() < 2) {
    Invalid(op, "expected an input with at least 2 dims [N, C, ...], got " + ShapeText(x.sizes));
  }
  const int64_t C = x.sizes[1];
  const NnOperand y = Operand(op, "out", out, dt);
  ExpectShape(op, "out", y, x.sizes);
  const NnOperand sm = Operand(op, "save_mean", save_mean, dt);
  const NnOperand si = Operand(op, "save_invstd", save_invstd, dt);
  if (training) {
    ExpectShape(op, "save_mean", sm, {C});
    ExpectShape(op, "save_invstd", si, {C});
  }
  const NnOperand w = Optional(op, "weight", weight, dt), b = Optional(op, "bias", bias, dt);
  const NnOperand rm = Optional(op, "running_mean", running_mean, dt);
  const NnOperand rv = Optional(op, "running_var", running_var, dt);
  if (!training && (!running_mean || !running_var)) {
    Invalid(op, "running_mean and running_var must be defined in evaluation mode");
  }
  const char* names[] = {"weight", "bias", "running_mean", "running_var"};
  const OptTensor* given[] = {&weight, &bias, &running_mean, &running_var};
  const NnOperand* ops[] = {&w, &b, &rm, &rv};
  for (int i = 0; i < 4; ++i) {
    if (*given[i]) ExpectShape(op, names[i], *ops[i], {C});
  }
  BatchNormArgs args;
  uint32_t blocks = 0;
  std::string error;
  if (!MakeBatchNormArgs(x, y, w, b, rm, rv, training ? sm : NnOperand{},
                         training ? si : NnOperand{}, training, momentum, eps, &args, &blocks,
                         &error)) {
    Unplannable(op, error);
  }
  if (blocks > 0) {
    DeviceGuard guard(out.device().index);
    Check(op, LaunchBatchNorm(dt, args, blocks, sdk::current_stream(out.device())));
  }
  return {out, save_mean, save_invstd};
}

// --- pooling --------------------------------------------------------------------------------

// A pair argument (int[2]): one value applies to both dims, [] means `fallback`.
void PairOf(IntSpan v, const int64_t fallback[2], int64_t out[2]) {
  for (int i = 0; i < 2; ++i) {
    out[i] = v.size == 0 ? fallback[i] : v.size == 1 ? v[0] : v[static_cast<size_t>(i)];
  }
}

PoolWindow WindowOf(IntSpan kernel_size, IntSpan stride, IntSpan padding, IntSpan dilation) {
  PoolWindow w;
  const int64_t ones[2] = {1, 1}, zeros[2] = {0, 0};
  PairOf(kernel_size, ones, w.kernel);
  PairOf(stride, w.kernel, w.stride);
  PairOf(padding, zeros, w.padding);
  PairOf(dilation, ones, w.dilation);
  return w;
}

// The pooled outputs: the input's leading dims, any [OH, OW] (the meta function's).
void CheckPooled(const char* op, const char* arg, const NnOperand& x, const NnOperand& y) {
  if (y.sizes.size() != x.sizes.size() ||
      !std::equal(x.sizes.begin(), x.sizes.end() - 2, y.sizes.begin())) {
    Invalid(op, std::string("expected '") + arg + "' with the input's leading dims " +
                    ShapeText(std::vector<int64_t>(x.sizes.begin(), x.sizes.end() - 2)) + ", got " +
                    ShapeText(y.sizes));
  }
}

NnOperand PoolInput(const char* op, const Tensor& self) {
  const NnOperand x = Operand(op, "self", self, self.dtype());
  if (x.sizes.size() != 3 && x.sizes.size() != 4) {
    Invalid(op, "expected a 3D or 4D input, got " + ShapeText(x.sizes));
  }
  return x;
}

// max_pool2d_with_indices.out(self, kernel_size, stride, padding, dilation, ceil_mode, *, out,
// indices): int64 indices h * W + w in the input plane; the last NaN of a window wins, as in
// PyTorch. ceil_mode is in out's size already.
std::tuple<Tensor, Tensor> MaxPoolOut(const Tensor& self, IntSpan kernel_size, IntSpan stride,
                                      IntSpan padding, IntSpan dilation, bool /*ceil_mode*/,
                                      const Tensor& out, const Tensor& indices) {
  const char* op = "max_pool2d_with_indices.out";
  const int32_t dt = self.dtype();
  RequireDtype(op, dt, kMaxPoolDtypes);
  const NnOperand x = PoolInput(op, self);
  const NnOperand y = Operand(op, "out", out, dt);
  const NnOperand idx = Operand(op, "indices", indices, TSR_DTYPE_INT64);
  CheckPooled(op, "out", x, y);
  ExpectShape(op, "indices", idx, y.sizes);
  Pool2dArgs args;
  uint32_t blocks = 0;
  std::string error;
  if (!MakePool2dArgs(x, y, idx, WindowOf(kernel_size, stride, padding, dilation), false, 0, &args,
                      &blocks, &error)) {
    Unplannable(op, error);
  }
  if (blocks > 0) {
    DeviceGuard guard(out.device().index);
    Check(op, LaunchPool2d(dt, args, blocks, sdk::current_stream(out.device())));
  }
  return {out, indices};
}

// avg_pool2d.out(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
// divisor_override, *, out): PyTorch's divisor rules.
Tensor AvgPoolOut(const Tensor& self, IntSpan kernel_size, IntSpan stride, IntSpan padding,
                  bool /*ceil_mode*/, bool count_include_pad,
                  const std::optional<int64_t>& divisor_override, const Tensor& out) {
  const char* op = "avg_pool2d.out";
  const int32_t dt = self.dtype();
  RequireDtype(op, dt, kAvgPoolDtypes);
  if (divisor_override && *divisor_override == 0)
    Invalid(op, "expected 'divisor_override' to be non-zero, got 0");
  const NnOperand x = PoolInput(op, self);
  const NnOperand y = Operand(op, "out", out, dt);
  CheckPooled(op, "out", x, y);
  Pool2dArgs args;
  uint32_t blocks = 0;
  std::string error;
  if (!MakePool2dArgs(x, y, NnOperand{}, WindowOf(kernel_size, stride, padding, IntSpan{}),
                      count_include_pad, divisor_override.value_or(0), &args, &blocks, &error)) {
    Unplannable(op, error);
  }
  if (blocks > 0) {
    DeviceGuard guard(out.device().index);
    Check(op, LaunchPool2d(dt, args, blocks, sdk::current_stream(out.device())));
  }
  return out;
}

// --- convolution ----------------------------------------------------------------------------

// A per-spatial-dim list: one value applies to every dim, [] means `fallback`.
std::vector<int64_t> SpatialOf(IntSpan v, int dims, int64_t fallback) {
  std::vector<int64_t> r(static_cast<size_t>(dims));
  for (int d = 0; d < dims; ++d) {
    r[d] = v.size == 0 ? fallback : v.size == 1 ? v[0] : v[static_cast<size_t>(d)];
  }
  return r;
}

void RunConv(const char* op, int32_t dt, const NnOperand& x, const NnOperand& w, const NnOperand& b,
             const NnOperand& y, const std::vector<int64_t>& stride,
             const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation,
             bool transposed, int64_t groups, const Tensor& out) {
  ConvArgs args;
  uint32_t blocks = 0;
  std::string error;
  if (!MakeConvArgs(x, w, b, y, stride, padding, dilation, transposed, groups, &args, &blocks,
                    &error)) {
    Unplannable(op, error);
  }
  if (blocks > 0) {
    DeviceGuard guard(out.device().index);
    Check(op, LaunchConv(dt, args, blocks, sdk::current_stream(out.device())));
  }
}

// convolution.out(input, weight, bias, stride, padding, dilation, transposed, output_padding,
// groups, *, out): 1, 2 or 3 spatial dims, transposed too (output_padding is in out's size),
// every numeric dtype. The meta function has checked the arguments and sized `out`.
Tensor ConvolutionOut(const Tensor& input, const Tensor& weight, const OptTensor& bias,
                      IntSpan stride, IntSpan padding, IntSpan dilation, bool transposed,
                      IntSpan /*output_padding*/, int64_t groups, const Tensor& out) {
  const char* op = "convolution.out";
  const int32_t dt = input.dtype();
  RequireDtype(op, dt, kConvDtypes);
  const NnOperand x = Operand(op, "input", input, dt);
  const NnOperand w = Operand(op, "weight", weight, dt);
  const NnOperand y = Operand(op, "out", out, dt);
  const NnOperand b = Optional(op, "bias", bias, dt);
  const int dims = static_cast<int>(w.sizes.size()) - 2;
  if (dims < 1 || dims > 3 || x.sizes.size() != w.sizes.size() || groups <= 0) {
    Invalid(op, "expected input " + ShapeText(x.sizes) + " and weight " + ShapeText(w.sizes) +
                    " of 3, 4 or 5 dims alike and groups > 0, got groups " +
                    std::to_string(groups));
  }
  const int64_t channels = transposed ? w.sizes[1] * groups : w.sizes[0];
  if (y.sizes.size() != x.sizes.size() || y.sizes[0] != x.sizes[0] || y.sizes[1] != channels) {
    Invalid(op, "expected 'out' of shape [" + std::to_string(x.sizes[0]) + ", " +
                    std::to_string(channels) + ", ...] (" + std::to_string(x.sizes.size()) +
                    " dims), got " + ShapeText(y.sizes));
  }
  if (bias) ExpectShape(op, "bias", b, {channels});
  const std::vector<int64_t> strides = SpatialOf(stride, dims, 1);
  const std::vector<int64_t> paddings = SpatialOf(padding, dims, 0);
  const std::vector<int64_t> dilations = SpatialOf(dilation, dims, 1);
  // cuDNN where it is loaded and takes the convolution (dnn.h), the direct kernel otherwise.
  if (RunOnCudnn(op, input, weight, bias, strides, paddings, dilations, transposed, groups, out)) {
    return out;
  }
  RunConv(op, dt, x, w, b, y, strides, paddings, dilations, transposed, groups, out);
  return out;
}

// --- linear ---------------------------------------------------------------------------------

// Calls into the runtime (other ops, on this plugin): a stack of its own per call.
class OpStack {
 public:
  OpStack() { sdk::check(sdk::api().stack_create(&s_)); }
  ~OpStack() { sdk::api().stack_release(s_); }
  OpStack(const OpStack&) = delete;
  OpStack& operator=(const OpStack&) = delete;
  void Push(const Tensor& t) { sdk::check(sdk::api().stack_push_tensor(s_, t.get())); }
  void Push(const std::vector<int64_t>& v) {
    sdk::check(sdk::api().stack_push_int_list(s_, v.data(), v.size()));
  }
  void PushOne() {  // the Scalar 1
    tsr_scalar one{};
    one.kind = TSR_SCALAR_INT;
    one.i = 1;
    sdk::check(sdk::api().stack_push_scalar(s_, one));
  }
  // Call: runs `op` on what was pushed and returns its first result.
  Tensor Call(const tsr_op* op) {
    sdk::check(sdk::api().op_call(op, s_));
    tsr_tensor* r = nullptr;
    sdk::check(sdk::api().stack_get_tensor(s_, 0, &r));
    Tensor result = Tensor::borrow(r);
    sdk::api().stack_clear(s_);
    return result;
  }

 private:
  tsr_stack* s_ = nullptr;
};

const tsr_op* FindOp(const char* name) {
  const tsr_op* op = nullptr;
  sdk::check(sdk::api().op_find(sdk::to_c(name), &op));
  return op;
}

// linear.out(input, weight, bias=None, *, out): input [*, K] seen as [M, K] (a view where its
// strides allow, else a copy: reshape), out as [M, N] (a dense temporary copied back when out is
// not contiguous). The floating dtypes run input @ weight.T (+ bias) as mm.out / addmm.out on
// the matrix products' path; the integer ones as a 1x1 convolution of [M, K, 1] by weight
// [N, K, 1] (exact, wrapping like the CPU's integer products).
Tensor LinearOut(const Tensor& input, const Tensor& weight, const OptTensor& bias,
                 const Tensor& out) {
  const char* op = "linear.out";
  const int32_t dt = input.dtype();
  RequireDtype(op, dt, kConvDtypes);
  const NnOperand x = Operand(op, "input", input, dt);
  const NnOperand w = Operand(op, "weight", weight, dt);
  const NnOperand y = Operand(op, "out", out, dt);
  const NnOperand b = Optional(op, "bias", bias, dt);
  if (x.sizes.empty() || w.sizes.size() != 2 || x.sizes.back() != w.sizes[1]) {
    Invalid(op, "input " + ShapeText(x.sizes) + " and weight " + ShapeText(w.sizes) +
                    " cannot be multiplied (expected input [*, in] and weight [out, in])");
  }
  const int64_t K = w.sizes[1], N = w.sizes[0];
  int64_t M = 1;
  for (size_t d = 0; d + 1 < x.sizes.size(); ++d) M *= x.sizes[d];
  std::vector<int64_t> out_sizes(x.sizes.begin(), x.sizes.end() - 1);
  out_sizes.push_back(N);
  ExpectShape(op, "out", y, out_sizes);
  if (bias && (b.sizes.size() > 1 || bias->numel() != N)) {
    Invalid(op, "expected bias of shape [" + std::to_string(N) + "], got " + ShapeText(b.sizes));
  }
  if (out.numel() == 0) return out;
  static const tsr_op* const reshape = FindOp("reshape");
  static const tsr_op* const view = FindOp("view");
  OpStack st;
  Tensor a2 = input;
  if (input.dim() != 2) {
    st.Push(input);
    st.Push(std::vector<int64_t>{M, K});
    a2 = st.Call(reshape);
  }
  const bool staged = !out.is_contiguous();
  Tensor o2 = out;
  if (staged) {
    o2 = Tensor::empty({M, N}, static_cast<tsr_dtype>(dt), out.device());
  } else if (out.dim() != 2) {
    st.Push(out);
    st.Push(std::vector<int64_t>{M, N});
    o2 = st.Call(view);
  }
  if ((kFloatingDtypes & DtypeBit(dt)) != 0) {
    static const tsr_op* const t = FindOp("t");
    static const tsr_op* const addmm_out = FindOp("addmm.out");
    static const tsr_op* const mm_out = FindOp("mm.out");
    st.Push(weight);
    const Tensor wt = st.Call(t);
    if (bias) st.Push(*bias);
    st.Push(a2);
    st.Push(wt);
    if (bias) {
      st.PushOne();  // beta
      st.PushOne();  // alpha
    }
    st.Push(o2);
    st.Call(bias ? addmm_out : mm_out);
  } else {
    NnOperand x3 = Operand(op, "input", a2, dt), y3 = Operand(op, "out", o2, dt), w3 = w;
    for (NnOperand* o : {&x3, &y3, &w3}) {  // [rows, channels] -> [rows, channels, 1]
      o->sizes.push_back(1);
      o->strides.push_back(1);
    }
    NnOperand b1 = b;
    if (bias && b1.sizes.empty()) {  // a 0-dim bias of one output feature
      b1.sizes = {1};
      b1.strides = {0};
    }
    RunConv(op, dt, x3, w3, b1, y3, {1}, {0}, {1}, false, 1, out);
  }
  if (staged) {
    static const tsr_op* const copy = FindOp("copy_");
    st.Push(o2);
    st.Push(out_sizes);
    const Tensor shaped = st.Call(view);
    st.Push(out);
    st.Push(shaped);
    st.Call(copy);
  }
  return out;
}

}  // namespace

void RegisterNnOps(sdk::Library& lib) {
  lib.impl<&LayerNormOut>(TESSERA_OP("native_layer_norm.out"));
  lib.impl<&BatchNormOut>(TESSERA_OP("native_batch_norm.out"));
  lib.impl<&MaxPoolOut>(TESSERA_OP("max_pool2d_with_indices.out"));
  lib.impl<&AvgPoolOut>(TESSERA_OP("avg_pool2d.out"));
  lib.impl<&ConvolutionOut>(TESSERA_OP("convolution.out"));
  lib.impl<&LinearOut>(TESSERA_OP("linear.out"));
}

}  // namespace gpu
}  // namespace tessera
