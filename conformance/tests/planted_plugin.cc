// A small plugin with one bug planted on purpose (TESSERA_PLANTED_BUG), for testing that the
// conformance suite catches it with the right status and leaves the healthy ops passing.
// Device: PrivateUse2 renamed "bug", plain host memory. Ops (out= forms, float32; add also
// int32): add, neg, abs, sqrt, silu, relu; sum and native_batch_norm (float32, dense input); and in
// float64, for the gradient oracle, threshold and threshold_backward (out= forms),
// native_layer_norm and native_layer_norm_backward (dense inputs, weight and bias given). No CPU
// fallback: every other op is unsupported.
//
//   1 wrong_dtype     add gives wrong int32 results (float32 is right)
//   2 ignores_strides neg reads its input as if it were contiguous
//   3 writes_past     abs writes one element past the end of its output
//   4 crashes         sqrt dereferences NULL
//   5 claims_dtype    silu computes int32 inputs, which PyTorch refuses
//   6 slow            relu sleeps far past any reasonable timeout
//   7 keeps_running_stats native_batch_norm (float32) normalizes right in training but never
//                     updates running_mean and running_var
//   8 crashes_loading tsr_plugin_init dies of SIGSEGV
//   9 hangs_loading   tsr_plugin_init never returns (sleeps for an hour)
//  10 fork_unsafe     no bug in its ops: its device, like CUDA's, cannot be used in a process
//                     forked after the plugin was loaded (every allocation there is refused),
//                     so a suite that forks after loading it fails every case
//  11 passes_threshold_grad threshold_backward passes the gradient through where the input is
//                     <= threshold too (its forward is right)
//  12 drops_mean_grad native_layer_norm_backward drops the mean term of grad_input,
//                     -sum(grad * weight) per row (its forward and the other two gradients are
//                     right)
//  13 sums_in_arrival_order sum (float32) adds its four partial sums in an order that changes
//                     from call to call, as adding them in the order threads finish does: every
//                     result is close, but not the same bits twice
//  14 fails_sometimes neg (float32) adds 1 to every element on every fifth call, right
//                     otherwise: a flaky kernel, which --rerun-failures reports as flaky
//  15 ignores_offset  uniform_ (float32) draws every call at offset 0: the generator's seed
//                     is used, the offset the runtime reserved for the call is not
//  16 declares_arrival_order no bug: 13's sum, declared nondeterministic (sdk::nondeterministic),
//                     with the CPU fallback registered: with deterministic algorithms on, sum
//                     runs on the fallback and gives the same bits every time
//  17 declares_without_fallback the same declared sum without any fallback: with deterministic
//                     algorithms on, nothing may run sum (FAILED_PRECONDITION)
//  18 ignores_output_mask native_layer_norm_backward returns all three gradients whatever
//                     output_mask asks (right values; ATen returns None for a false entry)
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "tessera/sdk/loops.hpp"
#include "tessera/sdk/plugin.hpp"
#include "tessera/sdk/random.hpp"

#ifndef TESSERA_PLANTED_BUG
#error "define TESSERA_PLANTED_BUG (1..17)"
#endif

namespace {

using tessera::sdk::Scalar;
using tessera::sdk::Tensor;
namespace sdk = tessera::sdk;

constexpr int kBug = TESSERA_PLANTED_BUG;
constexpr tsr_device_type kType = TSR_DEVICE_PRIVATEUSE2;

// ---- device: host memory; allocations padded like many device allocators' ----
tsr_error* Count(void*, int32_t* out) {
  *out = 1;
  return nullptr;
}
// The process that loaded the plugin (fork_unsafe: the only one whose allocations succeed).
pid_t loaded_in = 0;

tsr_error* Allocate(void*, int32_t, size_t nbytes, void** out) {
  if (kBug == 10 && getpid() != loaded_in) {
    const std::string why = "the device was initialized in process " + std::to_string(loaded_in) +
                            "; it cannot be used in this forked child (process " +
                            std::to_string(getpid()) + ")";
    return sdk::api().error_create(TSR_FAILED_PRECONDITION, sdk::to_c(why));
  }
  // Generous padding: the planted out-of-bounds reads and writes stay inside the allocation,
  // so that sanitizer builds see the conformance suite catch them, not a heap overflow.
  *out = std::malloc(nbytes + 4096);
  return *out ? nullptr
              : sdk::api().error_create(TSR_RESOURCE_EXHAUSTED, sdk::to_c("out of memory"));
}
void Free(void*, int32_t, void* p) { std::free(p); }
tsr_error* Copy(void*, int32_t, void* dst, const void* src, size_t n) {
  if (n) std::memcpy(dst, src, n);
  return nullptr;
}
tsr_error* CopyDD(void*, int32_t, void* dst, int32_t, const void* src, size_t n) {
  if (n) std::memcpy(dst, src, n);
  return nullptr;
}
tsr_error* Sync(void*, int32_t) { return nullptr; }

tsr_device_interface Interface() {
  tsr_device_interface d{};
  d.struct_size = sizeof d;
  d.device_type = kType;
  d.device_count = &Count;
  d.allocate = &Allocate;
  d.free = &Free;
  d.copy_host_to_device = &Copy;
  d.copy_device_to_host = &Copy;
  d.copy_device_to_device = &CopyDD;
  d.synchronize = &Sync;
  return d;
}

template <typename T>
sdk::Operand<T> In(const Tensor& t) {
  return sdk::operand(t, t.data<T>());
}

void RequireFloat(const Tensor& t, const char* op) {
  if (t.dtype() != TSR_DTYPE_FLOAT32) {
    sdk::fail(TSR_UNIMPLEMENTED, std::string(op) + ": the planted plugin does float32 only");
  }
}

// add.out(self, other, alpha, out): float32 and int32 (same dtypes, no promotion).
Tensor AddOut(const Tensor& a, const Tensor& b, Scalar alpha, const Tensor& out) {
  if (a.dtype() != b.dtype() || a.dtype() != out.dtype() ||
      (a.dtype() != TSR_DTYPE_FLOAT32 && a.dtype() != TSR_DTYPE_INT32)) {
    sdk::fail(TSR_UNIMPLEMENTED, "add.out: the planted plugin does float32 and int32 only");
  }
  if (a.dtype() == TSR_DTYPE_FLOAT32) {
    const float al = static_cast<float>(alpha.to_double());
    sdk::elementwise(
        In<float>(out), [al](float x, float y) { return x + al * y; }, In<float>(a), In<float>(b));
  } else {
    const int32_t al = static_cast<int32_t>(alpha.to_int());
    const int32_t wrong = kBug == 1 ? 1 : 0;
    sdk::elementwise(
        In<int32_t>(out), [al, wrong](int32_t x, int32_t y) { return x + al * y + wrong; },
        In<int32_t>(a), In<int32_t>(b));
  }
  return out;
}

Tensor NegOut(const Tensor& a, const Tensor& out) {
  RequireFloat(a, "neg.out");
  static std::atomic<int64_t> calls{0};
  const float off = kBug == 14 && calls++ % 5 == 4 ? 1.0f : 0.0f;  // every fifth call is wrong
  if (kBug == 2) {  // reads the input as contiguous, whatever its strides
    sdk::elementwise(
        In<float>(out), [](float x) { return -x; },
        sdk::contiguous_operand(a.data<float>(), a.sizes().vec()));
  } else {
    sdk::elementwise(
        In<float>(out), [off](float x) { return -x + off; }, In<float>(a));
  }
  return out;
}

// uniform_ (float32): element i from its Philox block (tessera/sdk/random.hpp), or under bug 15
// from the block of offset 0 whatever the call's offset.
Tensor Uniform(const Tensor& self, double from, double to, sdk::RandomDraw draw) {
  RequireFloat(self, "uniform_");
  if (kBug == 15) draw.offset = 0;
  std::vector<float> values(static_cast<size_t>(self.numel()));
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = sdk::uniform_float(draw.block(i), static_cast<float>(from), static_cast<float>(to));
  }
  Tensor written = self;
  written.copy_from_host(values.data(), values.size() * sizeof(float));  // strided ones too
  return written;
}

Tensor AbsOut(const Tensor& a, const Tensor& out) {
  RequireFloat(a, "abs.out");
  sdk::elementwise(
      In<float>(out), [](float x) { return std::fabs(x); }, In<float>(a));
  if (kBug == 3 && out.numel() > 0 && out.is_contiguous()) {
    out.data<float>()[out.numel()] = 12345.0f;  // one past the end
  }
  return out;
}

Tensor SqrtOut(const Tensor& a, const Tensor& out) {
  RequireFloat(a, "sqrt.out");
  if (kBug == 4) {
    volatile int* null_pointer = nullptr;
    *null_pointer = 1;  // a segmentation fault, on purpose
  }
  sdk::elementwise(
      In<float>(out), [](float x) { return std::sqrt(x); }, In<float>(a));
  return out;
}

Tensor SiluOut(const Tensor& a, const Tensor& out) {
  if (kBug == 5 && a.dtype() == TSR_DTYPE_INT32) {  // claims a dtype PyTorch refuses
    sdk::elementwise(
        In<int32_t>(out), [](int32_t x) { return x > 0 ? x : 0; }, In<int32_t>(a));
    return out;
  }
  RequireFloat(a, "silu.out");
  sdk::elementwise(
      In<float>(out), [](float x) { return x / (1 + std::exp(-x)); }, In<float>(a));
  return out;
}

Tensor ReluOut(const Tensor& a, const Tensor& out) {
  RequireFloat(a, "relu.out");
  if (kBug == 6) std::this_thread::sleep_for(std::chrono::seconds(30));
  sdk::elementwise(
      In<float>(out), [](float x) { return std::isnan(x) || x > 0 ? x : 0.0f; }, In<float>(a));
  return out;
}

// sum(self, *, dtype=None) (float32, dense): four partial sums, added in a fixed order, or under
// bug 13 (and the declared 16, 17) starting from a different one on each call.
Tensor Sum(const Tensor& a, std::optional<tsr_dtype> dtype) {
  RequireFloat(a, "sum");
  if (dtype || !a.is_contiguous()) {
    sdk::fail(TSR_UNIMPLEMENTED, "sum: the planted plugin sums dense float32, no dtype");
  }
  static std::atomic<int> calls{0};
  const bool arrival_order = kBug == 13 || kBug == 16 || kBug == 17;
  const int first = arrival_order ? calls++ % 4 : 0;
  const int64_t n = a.numel();
  float partial[4] = {0, 0, 0, 0};
  for (int k = 0; k < 4; ++k) {
    for (int64_t i = n * k / 4; i < n * (k + 1) / 4; ++i) partial[k] += a.data<float>()[i];
  }
  float total = 0;
  for (int j = 0; j < 4; ++j) total += partial[(first + j) % 4];
  Tensor out = Tensor::empty({}, TSR_DTYPE_FLOAT32, a.device());
  *out.data<float>() = total;
  return out;
}

// native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
// float32 with a dense input; running statistics updated in training except under bug 7.
std::tuple<Tensor, Tensor, Tensor> BatchNorm(const Tensor& in, const std::optional<Tensor>& w,
                                             const std::optional<Tensor>& b,
                                             const std::optional<Tensor>& rm,
                                             const std::optional<Tensor>& rv, bool training,
                                             double momentum, double eps) {
  RequireFloat(in, "native_batch_norm");
  if (!in.is_contiguous()) {
    sdk::fail(TSR_UNIMPLEMENTED, "native_batch_norm: the planted plugin takes dense inputs only");
  }
  const int64_t N = in.size(0), C = in.size(1), inner = N * C == 0 ? 0 : in.numel() / (N * C);
  Tensor out = Tensor::empty(in.sizes().vec(), in.dtype(), in.device());
  Tensor mean = Tensor::empty({training ? C : 0}, in.dtype(), in.device());
  Tensor invstd = Tensor::empty({training ? C : 0}, in.dtype(), in.device());
  auto at = [](const std::optional<Tensor>& t, int64_t c) -> float& {
    return t->data<float>()[c * t->strides()[0]];
  };
  const float* x = in.data<float>();
  for (int64_t c = 0; c < C; ++c) {
    double mu, var, sum = 0, sq = 0;
    const double n = static_cast<double>(N * inner);
    for (int64_t i = 0; i < N; ++i)
      for (int64_t j = 0; j < inner; ++j) sum += x[(i * C + c) * inner + j];
    if (training) {
      mu = sum / n;
      for (int64_t i = 0; i < N; ++i)
        for (int64_t j = 0; j < inner; ++j) {
          const double d = x[(i * C + c) * inner + j] - mu;
          sq += d * d;
        }
      var = sq / n;
      mean.data<float>()[c] = static_cast<float>(mu);
      invstd.data<float>()[c] = static_cast<float>(1 / std::sqrt(var + eps));
      if (kBug != 7 && rm)
        at(rm, c) = static_cast<float>(momentum * mu + (1 - momentum) * at(rm, c));
      if (kBug != 7 && rv) {
        at(rv, c) = static_cast<float>(momentum * sq / (n - 1) + (1 - momentum) * at(rv, c));
      }
    } else {
      mu = at(rm, c);
      var = at(rv, c);
    }
    const double scale = (w ? at(w, c) : 1.0) / std::sqrt(var + eps), shift = b ? at(b, c) : 0.0;
    for (int64_t i = 0; i < N; ++i)
      for (int64_t j = 0; j < inner; ++j) {
        const int64_t k = (i * C + c) * inner + j;
        out.data<float>()[k] = static_cast<float>((x[k] - mu) * scale + shift);
      }
  }
  return {out, mean, invstd};
}

// ---- float64 ops for the gradient oracle ----

void RequireDenseDouble(const Tensor& t, const char* op) {
  if (t.dtype() != TSR_DTYPE_FLOAT64 || !t.is_contiguous()) {
    sdk::fail(TSR_UNIMPLEMENTED,
              std::string(op) + ": the planted plugin does dense float64 tensors only");
  }
}

// threshold.out(self, threshold, value, out): x <= threshold ? value : x.
Tensor ThresholdOut(const Tensor& a, Scalar threshold, Scalar value, const Tensor& out) {
  RequireDenseDouble(a, "threshold.out");
  const double th = threshold.to_double(), v = value.to_double();
  sdk::elementwise(
      In<double>(out), [th, v](double x) { return x <= th ? v : x; }, In<double>(a));
  return out;
}

// threshold_backward.grad_input(grad_output, self, threshold, grad_input): x <= threshold ? 0 :
// grad; bug 11 passes the gradient through everywhere.
Tensor ThresholdBackwardOut(const Tensor& grad, const Tensor& a, Scalar threshold,
                            const Tensor& out) {
  RequireDenseDouble(a, "threshold_backward.grad_input");
  const double th = threshold.to_double();
  sdk::elementwise(
      In<double>(out), [th](double g, double x) { return x <= th && kBug != 11 ? 0.0 : g; },
      In<double>(grad), In<double>(a));
  return out;
}

// The rows of a layer norm: `rows` of `n` elements each.
struct LayerNormRows {
  int64_t rows, n;
};
LayerNormRows RowsOf(const Tensor& x, sdk::IntSpan normalized_shape) {
  int64_t n = 1;
  for (int64_t d : normalized_shape) n *= d;
  return {n == 0 ? 0 : x.numel() / n, n};
}

// native_layer_norm(input, normalized_shape, weight, bias, eps) -> (out, mean, rstd).
std::tuple<Tensor, Tensor, Tensor> LayerNorm(const Tensor& x, sdk::IntSpan norm,
                                             const std::optional<Tensor>& w,
                                             const std::optional<Tensor>& b, double eps) {
  RequireDenseDouble(x, "native_layer_norm");
  if (!w || !b) sdk::fail(TSR_UNIMPLEMENTED, "native_layer_norm: the planted plugin wants both");
  const auto [rows, n] = RowsOf(x, norm);
  std::vector<int64_t> stat = x.sizes().vec();
  for (size_t d = stat.size() - norm.size; d < stat.size(); ++d) stat[d] = 1;
  Tensor out = Tensor::empty(x.sizes().vec(), x.dtype(), x.device());
  Tensor mean = Tensor::empty(stat, x.dtype(), x.device());
  Tensor rstd = Tensor::empty(stat, x.dtype(), x.device());
  const double* xp = x.data<double>();
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < n; ++i) sum += xp[r * n + i];
    const double m = sum / static_cast<double>(n);
    for (int64_t i = 0; i < n; ++i) sq += (xp[r * n + i] - m) * (xp[r * n + i] - m);
    const double rs = 1 / std::sqrt(sq / static_cast<double>(n) + eps);
    mean.data<double>()[r] = m;
    rstd.data<double>()[r] = rs;
    for (int64_t i = 0; i < n; ++i) {
      out.data<double>()[r * n + i] =
          (xp[r * n + i] - m) * rs * w->data<double>()[i] + b->data<double>()[i];
    }
  }
  return {out, mean, rstd};
}

// native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias,
// output_mask) -> (grad_input, grad_weight, grad_bias): None where output_mask is false (bug 18:
// every gradient whatever it says); bug 12 drops grad_input's mean term.
std::tuple<Tensor, Tensor, Tensor> LayerNormBackward(
    const Tensor& g, const Tensor& x, sdk::IntSpan norm, const Tensor& mean, const Tensor& rstd,
    const std::optional<Tensor>& w, const std::optional<Tensor>& b, sdk::BoolSpan mask) {
  RequireDenseDouble(x, "native_layer_norm_backward");
  RequireDenseDouble(g, "native_layer_norm_backward");
  if (!w || !b || mask.size != 3) {
    sdk::fail(TSR_UNIMPLEMENTED,
              "native_layer_norm_backward: the planted plugin needs a weight and a bias");
  }
  const auto [rows, n] = RowsOf(x, norm);
  Tensor dx = Tensor::empty(x.sizes().vec(), x.dtype(), x.device());
  const std::vector<int64_t> norm_shape(norm.begin(), norm.end());
  Tensor dw = Tensor::empty(norm_shape, x.dtype(), x.device());
  Tensor db = Tensor::empty(norm_shape, x.dtype(), x.device());
  for (int64_t i = 0; i < n; ++i) dw.data<double>()[i] = db.data<double>()[i] = 0;
  const double *gp = g.data<double>(), *xp = x.data<double>(), *wp = w->data<double>();
  for (int64_t r = 0; r < rows; ++r) {
    const double m = mean.data<double>()[r], rs = rstd.data<double>()[r];
    double sum_gx = 0, sum_gx_xhat = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double x_hat = (xp[r * n + i] - m) * rs, gx = gp[r * n + i] * wp[i];
      sum_gx += gx;
      sum_gx_xhat += gx * x_hat;
      dw.data<double>()[i] += gp[r * n + i] * x_hat;
      db.data<double>()[i] += gp[r * n + i];
    }
    if (kBug == 12) sum_gx = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double x_hat = (xp[r * n + i] - m) * rs, gx = gp[r * n + i] * wp[i];
      dx.data<double>()[r * n + i] = rs / static_cast<double>(n) *
                                     (static_cast<double>(n) * gx - sum_gx - x_hat * sum_gx_xhat);
    }
  }
  if (kBug == 18) return {dx, dw, db};
  return {mask.data[0] ? dx : Tensor(), mask.data[1] ? dw : Tensor(), mask.data[2] ? db : Tensor()};
}

}  // namespace

TESSERA_PLUGIN(lib) {
  if (kBug == 8) std::raise(SIGSEGV);
  if (kBug == 9) std::this_thread::sleep_for(std::chrono::hours(1));
  loaded_in = getpid();
  lib.describe("planted", "1.0", kType, "bug");
  lib.device(Interface());
  lib.impl<&AddOut>("add.out");
  lib.impl<&NegOut>("neg.out");
  lib.impl<&AbsOut>("abs.out");
  lib.impl<&SqrtOut>("sqrt.out");
  lib.impl<&SiluOut>("silu.out");
  lib.impl<&ReluOut>("relu.out");
  lib.impl<&BatchNorm>("native_batch_norm");
  if (kBug == 16 || kBug == 17) {
    lib.impl<&Sum>("sum", sdk::nondeterministic("partial sums added in the order threads finish"));
  } else {
    lib.impl<&Sum>("sum");
  }
  if (kBug == 16) lib.cpu_fallback();
  lib.impl<&ThresholdOut>("threshold.out");
  lib.impl<&ThresholdBackwardOut>("threshold_backward.grad_input");
  lib.impl<&LayerNorm>("native_layer_norm");
  lib.impl<&LayerNormBackward>("native_layer_norm_backward");
  lib.impl<&Uniform>("uniform_");
}
