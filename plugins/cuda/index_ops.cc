// The GPU backends' index, shape and sort ops as out= kernels (and clone), on the kernels of
// index.h (Note [GPU index kernels] in index_plan.h, Note [GPU sort] in index.h). Semantics
// and messages are the CPU backend's (plugins/cpu/index.cc, copy.cc); the meta functions have
// checked shapes, dtypes, dims and `reduce` before a kernel runs.
#include "index_ops.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "gpu_device.h"
#include "kernels_index.h"
#include "op_support.h"
#include "tessera/base/layout.hpp"
#include "tessera/sdk/stream.hpp"

namespace tessera {
namespace gpu {
namespace {

using sdk::Scalar;
using sdk::Tensor;

// Every tensor argument is in the device's memory, but for a 0-dim CPU tensor, which PyTorch
// lets join any device's op: OnDevice copies it to `device` (8 bytes at most).
void RequireOnDevice(const char* op, const Tensor& t, const char* arg) {
  if (t.device().type == TESSERA_GPU_DEVICE_TYPE) return;
  sdk::fail(TSR_INVALID_ARGUMENT, std::string(op) + ": expected '" + arg + "' on " +
                                      TESSERA_GPU_PLUGIN_NAME +
                                      " or a 0-dim CPU tensor, got a tensor on another device");
}
Tensor OnDevice(const char* op, const Tensor& t, const char* arg, tsr_device device) {
  if (t.device().type == TESSERA_GPU_DEVICE_TYPE) return t;
  if (t.device().type != TSR_DEVICE_CPU || t.dim() != 0) RequireOnDevice(op, t, arg);
  Tensor copy = Tensor::empty({}, t.dtype(), device);
  copy.copy_from_host(t.data_ptr(), t.itemsize());
  return copy;
}

void CheckCuda(const char* op, const char* what, cudaError_t e) {
  if (e != cudaSuccess) {
    sdk::fail(e == cudaErrorMemoryAllocation ? TSR_RESOURCE_EXHAUSTED : TSR_INTERNAL,
              std::string(op) + ": " + what + ": " + ErrorText(e));
  }
}

int64_t WrapDim(const char* op, int64_t dim, int64_t ndim) {
  const int64_t wrapped = base::wrap_dim(dim, ndim);
  if (wrapped < 0) {
    const int64_t n = ndim == 0 ? 1 : ndim;
    // ATen's IndexError, as the runtime's own dim check (core/shape.cc) words and codes it.
    sdk::fail(TSR_OUT_OF_RANGE, std::string(op) +
                                    ": Dimension out of range (expected to be in range of [" +
                                    std::to_string(-n) + ", " + std::to_string(n - 1) +
                                    "], but got " + std::to_string(dim) + ")");
  }
  return wrapped;
}

// A 0-dim tensor as one element of one dimension (as the CPU backend iterates it).
std::vector<int64_t> SizesOrScalar(const Tensor& t) {
  std::vector<int64_t> v = t.sizes().vec();
  if (v.empty()) v.push_back(1);
  return v;
}
std::vector<int64_t> StridesOrScalar(const Tensor& t) {
  std::vector<int64_t> v = t.strides().vec();
  if (v.empty()) v.push_back(0);
  return v;
}

TensorSpec Spec(const Tensor& t) {
  return {static_cast<char*>(t.data_ptr()), SizesOrScalar(t), StridesOrScalar(t),
          static_cast<int64_t>(t.itemsize())};
}

void Planned(const char* op, bool ok, const std::string& error) {
  if (!ok) sdk::fail(TSR_UNIMPLEMENTED, std::string(op) + ": " + error);
}

void Launch(const char* op, IndexKind kind, const Tensor& out, const IndexArgs& args) {
  if (args.numel == 0) return;
  DeviceGuard guard(out.device().index);
  Check(op, LaunchIndex(kind, out.dtype(), args, sdk::current_stream(out.device())));
}

// CopyInto: dst = src, same dtype and sizes, any strides (scatter's out = self, clone).
void CopyInto(const char* op, const Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return;
  const tsr_device d = dst.device();
  if (dst.is_contiguous() && src.is_contiguous()) {
    DeviceGuard guard(d.index);
    CheckCuda(op, "cudaMemcpyAsync",
              cudaMemcpyAsync(
                  dst.data_ptr(), src.data_ptr(), static_cast<size_t>(dst.numel()) * dst.itemsize(),
                  cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(sdk::current_stream(d))));
    return;
  }
  IndexArgs args;
  std::string error;
  Planned(op, PlanCopy(Spec(dst), Spec(src), &args, &error), error);
  Launch(op, IndexKind::kCopy, dst, args);
}

// IndexChecked: a launch that indexes (gather, index_select, scatter) with an IndexError in
// device memory, read back after it: a bad index fails the call as on the CPU backend (Note
// [GPU index kernels]). The read waits for the stream.
void IndexChecked(const char* op, IndexKind kind, const Tensor& out, IndexArgs args, int64_t dim) {
  if (args.numel == 0) return;
  const tsr_device d = out.device();
  const Tensor flag = Tensor::empty({static_cast<int64_t>(sizeof(IndexError))}, TSR_DTYPE_UINT8, d);
  args.error = static_cast<IndexError*>(flag.data_ptr());
  IndexError found{};
  DeviceGuard guard(d.index);
  const cudaStream_t stream = static_cast<cudaStream_t>(sdk::current_stream(d));
  CheckCuda(op, "cudaMemcpyAsync",
            cudaMemcpyAsync(args.error, &found, sizeof found, cudaMemcpyHostToDevice, stream));
  Check(op, LaunchIndex(kind, out.dtype(), args, stream));
  CheckCuda(op, "cudaMemcpyAsync",
            cudaMemcpyAsync(&found, args.error, sizeof found, cudaMemcpyDeviceToHost, stream));
  CheckCuda(op, "cudaStreamSynchronize", cudaStreamSynchronize(stream));
  if (found.hit != 0) {
    sdk::fail(TSR_INVALID_ARGUMENT, std::string(op) + ": index " + std::to_string(found.value) +
                                        " is out of bounds for dimension " + std::to_string(dim) +
                                        " with size " + std::to_string(args.dim_size));
  }
}

// --- gather, index_select, scatter --------------------------------------------------------

// index_select.out(Tensor self, int dim, Tensor index, *, Tensor(a!) out)
Tensor IndexSelectOut(const Tensor& self_arg, int64_t dim_arg, const Tensor& index_arg,
                      const Tensor& out) {
  const char* op = "index_select.out";
  RequireOnDevice(op, out, "out");
  const Tensor self = OnDevice(op, self_arg, "self", out.device());
  const Tensor index = OnDevice(op, index_arg, "index", out.device());
  const int64_t dim = WrapDim(op, dim_arg, self.dim());
  IndexArgs args;
  std::string error;
  Planned(op,
          PlanIndexSelect(Spec(out), Spec(self), Spec(index), index.dtype(), dim, &args, &error),
          error);
  IndexChecked(op, IndexKind::kIndexSelect, out, args, dim);
  return out;
}

// gather.out(Tensor self, int dim, Tensor index, *, bool sparse_grad=False, Tensor(a!) out)
Tensor GatherOut(const Tensor& self_arg, int64_t dim_arg, const Tensor& index_arg,
                 bool /*sparse_grad*/, const Tensor& out) {
  const char* op = "gather.out";
  RequireOnDevice(op, out, "out");
  const Tensor self = OnDevice(op, self_arg, "self", out.device());
  const Tensor index = OnDevice(op, index_arg, "index", out.device());
  const int64_t dim = WrapDim(op, dim_arg, self.dim());
  if (index.numel() == 0) return out;
  IndexArgs args;
  std::string error;
  Planned(op, PlanGather(Spec(out), Spec(self), Spec(index), dim, &args, &error), error);
  IndexChecked(op, IndexKind::kGather, out, args, dim);
  return out;
}

// ValueBits: a Scalar as scatter.value's raw bytes in `dtype` (index_plan.h's ScalarBits).
uint64_t ValueBits(const Scalar& s, int32_t dtype) {
  const ScalarKind kind = s.c.kind == TSR_SCALAR_DOUBLE ? ScalarKind::kDouble
                          : s.c.kind == TSR_SCALAR_BOOL ? ScalarKind::kBool
                                                        : ScalarKind::kInt;
  return ScalarBits(kind, s.c.i, s.c.d, dtype);
}

// scatter: out = self, then along `dim` out[index] = src (or value), or combined with it.
template <typename Src>
Tensor Scatter(const char* op, const Tensor& self_arg, int64_t dim_arg, const Tensor& index_arg,
               const Src& src, IndexKind kind, const Tensor& out) {
  RequireOnDevice(op, out, "out");
  const Tensor self = OnDevice(op, self_arg, "self", out.device());
  const Tensor index = OnDevice(op, index_arg, "index", out.device());
  RequireDtype(op, out.dtype(), IndexDtypes(kind));
  const int64_t dim = WrapDim(op, dim_arg, self.dim());
  if (self.data_ptr() != out.data_ptr()) CopyInto(op, out, self);
  if (index.numel() == 0) return out;
  IndexArgs args;
  std::string error;
  TensorSpec from;
  Tensor src_on_device;  // keeps a 0-dim CPU src's device copy alive until the launch is done
  if constexpr (std::is_same_v<Src, Tensor>) {
    src_on_device = OnDevice(op, src, "src", out.device());
    from = Spec(src_on_device);
  } else {
    args.value = ValueBits(src, out.dtype());
  }
  Planned(op,
          PlanScatter(Spec(out), Spec(index), std::is_same_v<Src, Tensor> ? &from : nullptr, dim,
                      &args, &error),
          error);
  IndexChecked(op, kind, out, args, dim);
  return out;
}

// scatter.src_out(Tensor self, int dim, Tensor index, Tensor src, *, Tensor(a!) out)
Tensor ScatterSrcOut(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                     const Tensor& out) {
  return Scatter("scatter.src_out", self, dim, index, src, IndexKind::kScatter, out);
}
// scatter.value_out(Tensor self, int dim, Tensor index, Scalar value, *, Tensor(a!) out)
Tensor ScatterValueOut(const Tensor& self, int64_t dim, const Tensor& index, Scalar value,
                       const Tensor& out) {
  return Scatter("scatter.value_out", self, dim, index, value, IndexKind::kScatter, out);
}
// scatter_add.out(Tensor self, int dim, Tensor index, Tensor src, *, Tensor(a!) out)
Tensor ScatterAddOut(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                     const Tensor& out) {
  return Scatter("scatter_add.out", self, dim, index, src, IndexKind::kScatterAdd, out);
}

IndexKind ReduceKindOf(const char* op, std::string_view reduce) {
  if (reduce == "add") return IndexKind::kScatterAdd;
  if (reduce == "multiply") return IndexKind::kScatterMul;
  sdk::fail(TSR_INVALID_ARGUMENT, std::string(op) +
                                      ": reduce argument must be either add or multiply, got '" +
                                      std::string(reduce) + "'");
}

// scatter.reduce_out(Tensor self, int dim, Tensor index, Tensor src, *, str reduce, Tensor(a!)
// out)
Tensor ScatterReduceOut(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                        std::string_view reduce, const Tensor& out) {
  const char* op = "scatter.reduce_out";
  return Scatter(op, self, dim, index, src, ReduceKindOf(op, reduce), out);
}
// scatter.value_reduce_out(Tensor self, int dim, Tensor index, Scalar value, *, str reduce,
// Tensor(a!) out)
Tensor ScatterValueReduceOut(const Tensor& self, int64_t dim, const Tensor& index, Scalar value,
                             std::string_view reduce, const Tensor& out) {
  const char* op = "scatter.value_reduce_out";
  return Scatter(op, self, dim, index, value, ReduceKindOf(op, reduce), out);
}

// --- flip, tril, triu, clone ----------------------------------------------------------------

// flip.out(Tensor self, int[] dims, *, Tensor(a!) out)
Tensor FlipOut(const Tensor& self_arg, sdk::IntSpan dims, const Tensor& out) {
  const char* op = "flip.out";
  RequireOnDevice(op, out, "out");
  const Tensor self = OnDevice(op, self_arg, "self", out.device());
  // A 0-dim tensor takes dims 0 and -1 (its flip is itself): one slot keeps the mark in range.
  std::vector<bool> flipped(std::max<size_t>(static_cast<size_t>(self.dim()), 1), false);
  for (int64_t d : dims.vec()) flipped[static_cast<size_t>(WrapDim(op, d, self.dim()))] = true;
  IndexArgs args;
  std::string error;
  Planned(op, PlanFlip(Spec(out), Spec(self), flipped, &args, &error), error);
  Launch(op, IndexKind::kCopy, out, args);
  return out;
}

// tril.out / triu.out(Tensor self, SymInt diagonal=0, *, Tensor(a!) out): keep element (i, j)
// of each matrix when j - i <= diagonal (tril) or >= diagonal (triu); zero the rest.
template <bool kUpper>
Tensor TriOut(const Tensor& self, int64_t diagonal, const Tensor& out) {
  const char* op = kUpper ? "triu.out" : "tril.out";
  RequireOnDevice(op, self, "self");  // at least 2-D: never a 0-dim CPU tensor
  const int64_t nd = self.dim();
  if (nd < 2) {
    sdk::fail(TSR_INVALID_ARGUMENT, std::string(op) +
                                        ": input tensor must have at least 2 dimensions, got " +
                                        std::to_string(nd) + "D");
  }
  IndexArgs args;
  std::string error;
  Planned(op, PlanTri(Spec(out), Spec(self), diagonal, &args, &error), error);
  Launch(op, kUpper ? IndexKind::kTriu : IndexKind::kTril, out, args);
  return out;
}

// Whether the strides cover the elements densely without overlap, in any dimension order.
bool NonOverlappingAndDense(const Tensor& t) {
  return base::is_non_overlapping_and_dense(t.sizes().data, t.strides().data, t.sizes().size);
}

// clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor: a dense input's strides
// are kept (preserve_format), otherwise the copy is contiguous, as the CPU backend does.
Tensor Clone(const Tensor& self, std::optional<int64_t> memory_format) {
  const char* op = "clone";
  RequireOnDevice(op, self, "self");
  const bool preserve = !memory_format || *memory_format == TSR_MEMORY_FORMAT_PRESERVE;
  Tensor out;
  if (preserve && NonOverlappingAndDense(self)) {
    tsr_tensor* t = nullptr;
    sdk::check(sdk::api().tensor_empty_strided(self.sizes().data, self.strides().data,
                                               self.sizes().size, self.dtype(), self.device(), &t));
    out = Tensor::adopt(t);
  } else {
    out = Tensor::empty(self.sizes().vec(), self.dtype(), self.device());
  }
  if (NonOverlappingAndDense(self) && out.strides().vec() == self.strides().vec()) {
    if (out.numel() > 0) {
      // The same layout: one copy of the elements' span (from the smallest address).
      const tsr_device d = self.device();
      DeviceGuard guard(d.index);
      CheckCuda(op, "cudaMemcpyAsync",
                cudaMemcpyAsync(out.data_ptr(), self.data_ptr(),
                                static_cast<size_t>(out.numel()) * out.itemsize(),
                                cudaMemcpyDeviceToDevice,
                                static_cast<cudaStream_t>(sdk::current_stream(d))));
    }
    return out;
  }
  CopyInto(op, out, self);
  return out;
}

// --- sort and topk --------------------------------------------------------------------------

// The global scratch of one launch of long rows (Note [GPU sort]): at most this many bytes.
constexpr int64_t kSortScratchBytes = int64_t{256} << 20;

// sort_lines: values and int64 indices of each row along `dim` sorted (stable; NaN largest),
// the first `k` of them (k < 0: all).
std::tuple<Tensor, Tensor> SortLines(const char* op, const Tensor& self_arg, int64_t k,
                                     int64_t dim_arg, bool descending, const Tensor& values,
                                     const Tensor& indices, uint32_t supported) {
  RequireOnDevice(op, values, "values");
  RequireOnDevice(op, indices, "indices");
  const Tensor self = OnDevice(op, self_arg, "self", values.device());
  RequireDtype(op, self.dtype(), supported);
  const int64_t dim = WrapDim(op, dim_arg, self.dim());
  if (values.numel() == 0) return {values, indices};
  const int64_t n = SizesOrScalar(self)[dim];
  SortArgs args;
  int64_t rows = 0;
  std::string error;
  Planned(op,
          MakeSortArgs(Spec(self), dim, Spec(values), Spec(indices), k < 0 ? n : k, descending,
                       &args, &rows, &error),
          error);
  const tsr_device d = self.device();
  int64_t per_launch = rows;
  Tensor keys, pos;
  if (args.padded > kSortSharedMax) {
    per_launch =
        std::max<int64_t>(1, std::min<int64_t>(rows, kSortScratchBytes / (args.padded * (8 + 4))));
    keys = Tensor::empty({per_launch * args.padded}, TSR_DTYPE_INT64, d);
    pos = Tensor::empty({per_launch * args.padded}, TSR_DTYPE_INT32, d);
    args.scratch_keys = static_cast<uint64_t*>(keys.data_ptr());
    args.scratch_pos = static_cast<int32_t*>(pos.data_ptr());
  }
  DeviceGuard guard(d.index);
  Check(op, LaunchSort(self.dtype(), args, rows, per_launch, sdk::current_stream(d)));
  return {values, indices};
}

// sort.values(Tensor self, int dim=-1, bool descending=False, *, Tensor(a!) values, Tensor(b!)
// indices)
std::tuple<Tensor, Tensor> SortValuesOut(const Tensor& self, int64_t dim, bool descending,
                                         const Tensor& values, const Tensor& indices) {
  return SortLines("sort.values", self, -1, dim, descending, values, indices, kAllDtypes);
}
// sort.values_stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False,
// Tensor(a!) values, Tensor(b!) indices): always stable (what stable=False allows too).
std::tuple<Tensor, Tensor> SortValuesStableOut(const Tensor& self, std::optional<bool> /*stable*/,
                                               int64_t dim, bool descending, const Tensor& values,
                                               const Tensor& indices) {
  return SortLines("sort.values_stable", self, -1, dim, descending, values, indices, kAllDtypes);
}
// topk.values(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True, *,
// Tensor(a!) values, Tensor(b!) indices): the first k of the sorted row (largest: descending),
// sorted whatever `sorted` says; bool is refused, as PyTorch's and the CPU backend's topk do.
std::tuple<Tensor, Tensor> TopkOut(const Tensor& self, int64_t k, int64_t dim, bool largest,
                                   bool /*sorted*/, const Tensor& values, const Tensor& indices) {
  return SortLines("topk.values", self, k, dim, largest, values, indices, kNumericDtypes);
}

}  // namespace

void RegisterIndexOps(sdk::Library& lib) {
  lib.impl<&IndexSelectOut>(TESSERA_OP("index_select.out"));
  lib.impl<&GatherOut>(TESSERA_OP("gather.out"));
  // Repeated indices (index_plan.h): replace keeps whichever write lands last, add and multiply
  // combine atomically in scheduling order, so these may differ from call to call (Note
  // [Deterministic algorithms]: with deterministic algorithms on they do not run; the CPU
  // fallback does). A Scalar value is the same for every duplicate: whichever lands, and
  // combined in any order (v + v + v, v * v * v), the bits are the same.
  constexpr const char* kLastWriteWins =
      "with repeated indices, which write lands last depends on scheduling";
  constexpr const char* kAtomicOrder =
      "atomic adds and multiplies in scheduling order: floating results may round differently";
  lib.impl<&ScatterSrcOut>(TESSERA_OP("scatter.src_out"), sdk::nondeterministic(kLastWriteWins));
  lib.impl<&ScatterValueOut>(TESSERA_OP("scatter.value_out"));
  lib.impl<&ScatterAddOut>(TESSERA_OP("scatter_add.out"), sdk::nondeterministic(kAtomicOrder));
  lib.impl<&ScatterReduceOut>(TESSERA_OP("scatter.reduce_out"),
                              sdk::nondeterministic(kAtomicOrder));
  lib.impl<&ScatterValueReduceOut>(TESSERA_OP("scatter.value_reduce_out"));
  lib.impl<&SortValuesOut>(TESSERA_OP("sort.values"));
  lib.impl<&SortValuesStableOut>(TESSERA_OP("sort.values_stable"));
  lib.impl<&TopkOut>(TESSERA_OP("topk.values"));
  lib.impl<&FlipOut>(TESSERA_OP("flip.out"));
  lib.impl<&TriOut<false>>(TESSERA_OP("tril.out"));
  lib.impl<&TriOut<true>>(TESSERA_OP("triu.out"));
  lib.impl<&Clone>(TESSERA_OP("clone"));
}

}  // namespace gpu
}  // namespace tessera
