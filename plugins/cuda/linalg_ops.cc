// The GPU plugin's matrix products (mm, bmm, addmm) as typed out= kernels: cuBLAS where it is
// loaded (Note [cuBLAS at first use] in blas.h; TESSERA_GPU_BLAS), our tiled kernel elsewhere
// (Note [GPU tiled GEMM] in gemm.h, kernels_gemm.cu). linear (nn_ops.cc) runs on the same path.
#include "linalg_ops.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "blas.h"
#include "elementwise_ops.h"
#include "gpu_device.h"
#include "kernels.h"
#include "op_support.h"
#include "tessera/sdk/plugin.hpp"
#include "tessera/sdk/stream.hpp"
#include "vendor_handles.h"

#if !defined(TESSERA_GPU_HIP) && __has_include(<cublas_api.h>)
// blas.h declares cuBLAS's types itself (the HIP build and the host tests have no header); here
// they are checked against the toolkit's.
#include <cublas_api.h>
#define TESSERA_GPU_SAME_VALUE(real, ours) \
  static_assert(static_cast<int>(real) == static_cast<int>(tessera::gpu::ours), #real)
TESSERA_GPU_SAME_VALUE(CUBLAS_STATUS_SUCCESS, kCublasStatusSuccess);
TESSERA_GPU_SAME_VALUE(CUBLAS_OP_N, kCublasOpN);
TESSERA_GPU_SAME_VALUE(CUBLAS_OP_T, kCublasOpT);
TESSERA_GPU_SAME_VALUE(CUDA_R_32F, kCudaR32F);
TESSERA_GPU_SAME_VALUE(CUDA_R_64F, kCudaR64F);
TESSERA_GPU_SAME_VALUE(CUDA_R_16F, kCudaR16F);
TESSERA_GPU_SAME_VALUE(CUDA_R_16BF, kCudaR16BF);
TESSERA_GPU_SAME_VALUE(CUBLAS_COMPUTE_32F, kCublasCompute32F);
TESSERA_GPU_SAME_VALUE(CUBLAS_COMPUTE_64F, kCublasCompute64F);
TESSERA_GPU_SAME_VALUE(CUBLAS_GEMM_DEFAULT, kCublasGemmDefault);
#undef TESSERA_GPU_SAME_VALUE
static_assert(sizeof(cublasStatus_t) == sizeof(int) && sizeof(cublasOperation_t) == sizeof(int) &&
              sizeof(cudaDataType) == sizeof(int) && sizeof(cublasComputeType_t) == sizeof(int) &&
              sizeof(cublasGemmAlgo_t) == sizeof(int));
static_assert(sizeof(cublasHandle_t) == sizeof(tessera::gpu::cublas_handle));
#endif

namespace tessera {
namespace gpu {
namespace {

namespace sdk = ::tessera::sdk;
using sdk::Scalar;
using sdk::Tensor;
// --- matrix products (gemm.h, kernels_gemm.cu; Note [GPU tiled GEMM]) ----------------------

// The operands of a product: same dtype (the meta function has checked the shapes), a floating
// one, on the call's device.
void CheckProductOperands(const char* op, std::initializer_list<const Tensor*> operands,
                          const Tensor& out) {
  for (const Tensor* t : operands) {
    if (t->dtype() != out.dtype()) {
      sdk::fail(TSR_INVALID_ARGUMENT, std::string(op) + ": expected every operand of dtype " +
                                          sdk::dtype_name(out.dtype()) + " (the output's), got " +
                                          sdk::dtype_name(t->dtype()));
    }
    if (t->device().type == TSR_DEVICE_CPU) {
      sdk::fail(TSR_INVALID_ARGUMENT, std::string(op) + ": expected operands on " +
                                          TESSERA_GPU_PLUGIN_NAME + ", got a CPU tensor");
    }
  }
  RequireDtype(op, out.dtype(), kFloatingDtypes);
}

// The products' path (TESSERA_GPU_BLAS; blas.h, Note [cuBLAS at first use]).
#ifdef TESSERA_GPU_HIP
constexpr bool kHasBlas = false;
#else
constexpr bool kHasBlas = true;
#endif

// CheckBlasSetting: TESSERA_GPU_BLAS holds a known value ("" or an error naming it).
std::string BlasSettingError() {
  BlasMode mode;
  std::string error;
  return ParseBlasMode(std::getenv("TESSERA_GPU_BLAS"), kHasBlas, &mode, &error) ? "" : error;
}

#ifndef TESSERA_GPU_HIP
// The products' library, loaded at the first product (TESSERA_GPU_BLAS=own never loads it).
struct BlasState {
  BlasMode mode = BlasMode::kAuto;
  bool loaded = false;
  BlasLibrary lib;
  std::string error;  // why it did not load
};

const BlasState& Blas() {
  static const BlasState state = [] {
    BlasState s;
    std::string error;
    if (!ParseBlasMode(std::getenv("TESSERA_GPU_BLAS"), true, &s.mode, &error)) {
      s.mode = BlasMode::kOwn;  // unreachable: the load refused the value
    }
    std::string message = TESSERA_GPU_PLUGIN_NAME ": matrix products on ";
    if (s.mode == BlasMode::kOwn) {
      message += "the tiled kernel (TESSERA_GPU_BLAS=own)";
    } else if ((s.loaded = LoadBlasLibrary(DefaultCublasNames(), &s.lib, &s.error))) {
      message += "cuBLAS (" + s.lib.path + ")";
    } else {
      message += "the tiled kernel: " + s.error;
    }
    sdk::api().log(TSR_LOG_INFO, sdk::to_c(message));
    return s;
  }();
  return state;
}

// The calling thread's cuBLAS handle on `device` (the current device, by the caller's guard).
struct CublasTag {};
cublas_handle BlasHandle(const char* op, const BlasLibrary& lib, int32_t device) {
  return VendorHandles<CublasTag>::Get(device, [&] {
    cublas_handle h = nullptr;
    if (const cublas_status s = lib.create(&h); s != kCublasStatusSuccess) {
      sdk::fail(TSR_INTERNAL, std::string(op) + ": cublasCreate_v2 failed on " +
                                  TESSERA_GPU_PLUGIN_NAME ":" + std::to_string(device) + ": " +
                                  StatusText(lib, s));
    }
    return h;
  });
}

// Strides of a contiguous tensor of `sizes`.
std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t i = sizes.size(); i-- > 1;) strides[i - 1] = strides[i] * sizes[i];
  return strides;
}

// RunOnCublas: the product on cuBLAS; false when it takes the tiled kernel (TESSERA_GPU_BLAS=own,
// no library in auto mode, or a problem cuBLAS is not given: PlanBlasGemm's kUseOwnKernel).
// self (addmm with beta != 0) is first copied into out, which cuBLAS scales by beta.
bool RunOnCublas(const char* op, GemmProblem p, const Tensor& a, const Tensor& b,
                 const Tensor* self, const Tensor& out, bool batched) {
  const BlasState& blas = Blas();
  if (blas.mode == BlasMode::kOwn) return false;
  if (!blas.loaded) {
    if (blas.mode == BlasMode::kAuto) return false;
    sdk::fail(TSR_FAILED_PRECONDITION,
              std::string(op) + ": TESSERA_GPU_BLAS=cublas but " + blas.error +
                  "; install cuBLAS 13 (libcublas.so.13) where the dynamic loader finds it "
                  "(LD_LIBRARY_PATH), or set TESSERA_GPU_BLAS=auto or own");
  }
  std::optional<Tensor> copies[2];
  BlasGemmCall call;
  std::string why;
  BlasPlan plan;
  while ((plan = PlanBlasGemm(out.dtype(), p, &call, &why)) == BlasPlan::kCopyA ||
         plan == BlasPlan::kCopyB) {
    // An operand with strides cuBLAS does not take: a contiguous copy (once each).
    const int i = plan == BlasPlan::kCopyA ? 0 : 1;
    if (copies[i]) return false;  // cannot happen: a contiguous operand always plans
    const Tensor& src = i == 0 ? a : b;
    copies[i] = Tensor::empty(src.sizes().vec(), src.dtype(), src.device());
    CopyOnDevice(*copies[i], src, false);
    const std::vector<int64_t> st = ContiguousStrides(src.sizes().vec());
    const int o = batched ? 1 : 0;
    if (i == 0) {
      p.a = copies[i]->data_ptr();
      p.a_batch = batched ? st[0] : 0;
      p.a_row = st[o];
      p.a_col = st[o + 1];
    } else {
      p.b = copies[i]->data_ptr();
      p.b_batch = batched ? st[0] : 0;
      p.b_row = st[o];
      p.b_col = st[o + 1];
    }
  }
  if (plan == BlasPlan::kUseOwnKernel) return false;
  if (self != nullptr &&
      !(self->data_ptr() == out.data_ptr() && self->sizes().vec() == out.sizes().vec() &&
        self->strides().vec() == out.strides().vec())) {
    CopyOnDevice(out, *self,
                 false);  // self broadcast into out; cuBLAS adds alpha * A @ B to beta * out
  }
  DeviceGuard guard(out.device().index);
  const cublas_handle handle = BlasHandle(op, blas.lib, out.device().index);
  if (const cublas_status s = blas.lib.set_stream(handle, sdk::current_stream(out.device()));
      s != kCublasStatusSuccess) {
    sdk::fail(TSR_INTERNAL,
              std::string(op) + ": cublasSetStream_v2 failed: " + StatusText(blas.lib, s));
  }
  if (const std::string error = RunBlasGemm(blas.lib, handle, call); !error.empty()) {
    sdk::fail(TSR_INTERNAL, std::string(op) + ": " +
                                (call.batch == 1 ? "cublasGemmEx" : "cublasGemmStridedBatchedEx") +
                                " failed: " + error);
  }
  return true;
}
#endif

// RunGemm: C = beta * self + alpha * A @ B on cuBLAS (CUDA, where it can) or the tiled kernel.
// self is addmm's (beta != 0), null otherwise.
void RunGemm(const char* op, const GemmProblem& p, const Tensor& a, const Tensor& b,
             const Tensor* self, const Tensor& out, bool batched) {
  if (p.m == 0 || p.n == 0 || p.batch == 0) return;
#ifndef TESSERA_GPU_HIP
  if (RunOnCublas(op, p, a, b, self, out, batched)) return;
#endif
  uint32_t x, y, z;
  if (!GemmGrid(p, &x, &y, &z)) {
    sdk::fail(TSR_UNIMPLEMENTED,
              std::string(op) + ": a product of " + std::to_string(p.m) + " rows and " +
                  std::to_string(p.batch) +
                  " batches exceeds the GPU kernel's grid (65535 tiles of 16 rows, 65535 batches)");
  }
  DeviceGuard guard(out.device().index);
  Check(op, LaunchGemm(out.dtype(), p, sdk::current_stream(out.device())));
}

// Problem of self (M x K, or B x M x K) @ mat2 into out.
GemmProblem ProductOf(const Tensor& a, const Tensor& b, const Tensor& out, bool batched) {
  GemmProblem p;
  const int o = batched ? 1 : 0;
  p.a = a.data_ptr();
  p.b = b.data_ptr();
  p.c = out.data_ptr();
  p.batch = batched ? a.sizes()[0] : 1;
  p.m = a.sizes()[o];
  p.k = a.sizes()[o + 1];
  p.n = b.sizes()[o + 1];
  p.a_batch = batched ? a.strides()[0] : 0;
  p.a_row = a.strides()[o];
  p.a_col = a.strides()[o + 1];
  p.b_batch = batched ? b.strides()[0] : 0;
  p.b_row = b.strides()[o];
  p.b_col = b.strides()[o + 1];
  p.c_batch = batched ? out.strides()[0] : 0;
  p.c_row = out.strides()[o];
  p.c_col = out.strides()[o + 1];
  return p;
}

// mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out)
Tensor MmOut(const Tensor& self, const Tensor& mat2, const Tensor& out) {
  CheckProductOperands("mm.out", {&self, &mat2}, out);
  RunGemm("mm.out", ProductOf(self, mat2, out, false), self, mat2, nullptr, out, false);
  return out;
}

// bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out)
Tensor BmmOut(const Tensor& self, const Tensor& mat2, const Tensor& out) {
  CheckProductOperands("bmm.out", {&self, &mat2}, out);
  RunGemm("bmm.out", ProductOf(self, mat2, out, true), self, mat2, nullptr, out, true);
  return out;
}

// addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1,
// Tensor(a!) out): self broadcasts to [M, N]; beta = 0 ignores it (NaN included).
Tensor AddmmOut(const Tensor& self, const Tensor& mat1, const Tensor& mat2, Scalar beta,
                Scalar alpha, const Tensor& out) {
  const char* op = "addmm.out";
  CheckProductOperands(op, {&self, &mat1, &mat2}, out);
  GemmProblem p = ProductOf(mat1, mat2, out, false);
  p.alpha = alpha.to_double();
  p.beta = beta.to_double();
  if (p.beta != 0) {
    const std::vector<int64_t> sizes = self.sizes().vec(), strides = self.strides().vec();
    const size_t r = sizes.size();
    if (r > 2 || (r >= 1 && sizes[r - 1] != p.n && sizes[r - 1] != 1) ||
        (r == 2 && sizes[0] != p.m && sizes[0] != 1)) {
      sdk::fail(TSR_INVALID_ARGUMENT, std::string(op) + ": expected 'self' to broadcast to [" +
                                          std::to_string(p.m) + ", " + std::to_string(p.n) +
                                          "], got " + std::to_string(r) + " dimensions");
    }
    p.self = self.data_ptr();
    p.self_col = r >= 1 && sizes[r - 1] != 1 ? strides[r - 1] : 0;
    p.self_row = r == 2 && sizes[0] != 1 ? strides[0] : 0;
  }
  RunGemm(op, p, mat1, mat2, p.beta != 0 ? &self : nullptr, out, false);
  return out;
}

}  // namespace

std::string CheckBlasSetting() { return BlasSettingError(); }

void RegisterLinalgOps(sdk::Library& lib) {
  lib.impl<&MmOut>(TESSERA_OP("mm.out"));
  lib.impl<&BmmOut>(TESSERA_OP("bmm.out"));
  lib.impl<&AddmmOut>(TESSERA_OP("addmm.out"));
}

}  // namespace gpu
}  // namespace tessera
