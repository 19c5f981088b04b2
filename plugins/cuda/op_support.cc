// The helpers op_support.h declares: dtype refusals, launch checks, and the planning and
// launch of a reduction (reduce.h; Note [GPU reductions]).
#include "op_support.h"

#include <optional>
#include <string>
#include <vector>

#include "gpu_device.h"
#include "kernels.h"
#include "tessera/sdk/dtypes.hpp"
#include "tessera/sdk/stream.hpp"

namespace tessera {
namespace gpu {
namespace {

namespace sdk = ::tessera::sdk;
using sdk::Tensor;

// The names of the dtypes in `mask` (bits 1 << tsr_dtype).
std::string DtypeNames(uint32_t mask) {
  std::string names;
  for (int32_t d = TSR_DTYPE_BOOL; d <= TSR_DTYPE_FLOAT64; ++d) {
    if ((mask & DtypeBit(d)) == 0) continue;
    names += (names.empty() ? "" : ", ") + std::string(sdk::dtype_name(static_cast<tsr_dtype>(d)));
  }
  return names;
}

// DeviceText: a device as the runtime names it ("cuda:0", "hip:1").
std::string DeviceText(tsr_device d) {
  return sdk::internal::DeviceTypeName(d.type) + ":" + std::to_string(d.index);
}

// OutStrides: `t`'s strides aligned with the input's dimensions (0 for a reduced one), from
// its own (keepdim / write_reduced: of the input's rank; otherwise the kept dimensions only).
std::vector<int64_t> OutStrides(const char* op, const Tensor& t, const char* arg,
                                const std::vector<bool>& reduced, bool full_rank) {
  const std::vector<int64_t> strides = t.strides().vec();
  if (full_rank) {
    if (strides.size() != reduced.size()) {
      sdk::fail(TSR_INVALID_ARGUMENT, std::string(op) + ": expected '" + arg + "' of " +
                                          std::to_string(reduced.size()) + " dimensions, got " +
                                          std::to_string(t.dim()));
    }
    return strides;
  }
  std::vector<int64_t> aligned;
  size_t k = 0;
  for (bool r : reduced) {
    if (r) {
      aligned.push_back(0);
    } else if (k < strides.size()) {
      aligned.push_back(strides[k++]);
    }
  }
  if (aligned.size() != reduced.size() || k != strides.size()) {
    size_t kept = 0;
    for (bool r : reduced) kept += r ? 0 : 1;
    sdk::fail(TSR_INVALID_ARGUMENT, std::string(op) + ": expected '" + arg + "' of " +
                                        std::to_string(kept) + " dimensions (the kept ones), got " +
                                        std::to_string(t.dim()));
  }
  return aligned;
}

}  // namespace

[[noreturn]] void Unsupported(const char* op, int32_t compute, uint32_t supported) {
  sdk::fail(TSR_UNIMPLEMENTED, std::string(op) + ": not implemented on " + TESSERA_GPU_PLUGIN_NAME +
                                   " for dtype " +
                                   sdk::dtype_name(static_cast<tsr_dtype>(compute)) +
                                   " (expected one of " + DtypeNames(supported) + ")");
}

void RequireDtype(const char* op, int32_t compute, uint32_t supported) {
  if ((supported & DtypeBit(compute)) == 0) Unsupported(op, compute, supported);
}

void Check(const char* op, const std::string& launch_error) {
  if (!launch_error.empty()) {
    sdk::fail(TSR_INTERNAL,
              std::string(op) + ": " TESSERA_GPU_VENDOR " kernel launch failed: " + launch_error);
  }
}

// ReducedDims (op_support.h).
std::vector<bool> ReducedDims(const char* op, int64_t ndim, const std::vector<int64_t>& dims) {
  const int64_t wrap = ndim == 0 ? 1 : ndim;  // a 0-dim tensor takes dim 0 and -1
  std::vector<bool> reduced(static_cast<size_t>(ndim), dims.empty());
  std::vector<bool> seen(static_cast<size_t>(wrap), false);
  for (int64_t d : dims) {
    const int64_t w = d < 0 ? d + wrap : d;
    if (w < 0 || w >= wrap) {
      sdk::fail(TSR_INVALID_ARGUMENT, std::string(op) + ": expected dim in [" +
                                          std::to_string(-wrap) + ", " + std::to_string(wrap - 1) +
                                          "], got " + std::to_string(d));
    }
    if (seen[static_cast<size_t>(w)]) {
      sdk::fail(TSR_INVALID_ARGUMENT,
                std::string(op) + ": dim " + std::to_string(w) + " appears multiple times");
    }
    seen[static_cast<size_t>(w)] = true;
    if (ndim > 0) reduced[static_cast<size_t>(w)] = true;
  }
  return reduced;
}

// PlanReduce (op_support.h).
ReducePlan PlanReduce(const char* op, const Tensor& self, const Tensor& out,
                      const std::vector<bool>& reduced, bool keepdim, bool write_reduced,
                      const Tensor* indices) {
  const tsr_device d = self.device(), o = out.device();
  if (d.type != o.type || d.index != o.index) {
    // A 0-dim CPU self may reach a device kernel; its memory is the host's.
    const std::string found =
        d.type == TSR_DEVICE_CPU ? std::string("a CPU tensor") : "a tensor on " + DeviceText(d);
    sdk::fail(TSR_INVALID_ARGUMENT, std::string(op) + ": expected 'self' on the device of 'out' (" +
                                        TESSERA_GPU_PLUGIN_NAME ":" + std::to_string(o.index) +
                                        "), got " + found);
  }
  ReduceSpec spec;
  spec.in = static_cast<const char*>(self.data_ptr());
  spec.in_dtype = self.dtype();
  spec.sizes = self.sizes().vec();
  spec.in_strides = self.strides().vec();
  spec.out = static_cast<char*>(out.data_ptr());
  spec.out_dtype = out.dtype();
  spec.reduced = reduced;
  spec.write_reduced = write_reduced;
  spec.out_strides = OutStrides(op, out, "out", reduced, keepdim || write_reduced);
  if (indices != nullptr) {
    spec.indices = static_cast<char*>(indices->data_ptr());
    spec.indices_strides = OutStrides(op, *indices, "indices", reduced, keepdim);
  }
  ReducePlan plan;
  std::string error;
  if (!MakeReducePlan(spec, &plan, &error)) {
    sdk::fail(TSR_UNIMPLEMENTED, std::string(op) + ": " + error);
  }
  return plan;
}

// RunReduce (op_support.h).
void RunReduce(const char* op, ReduceKind kind, int32_t compute, const Tensor& self,
               const Tensor& out, const std::vector<bool>& reduced, bool keepdim, double param,
               const Tensor* indices) {
  RequireDtype(op, compute, ReduceDtypes(kind));
  const bool softmax = kind == ReduceKind::kSoftmax || kind == ReduceKind::kLogSoftmax;
  const ReducePlan plan = PlanReduce(op, self, out, reduced, keepdim, softmax, indices);
  if (plan.blocks == 0) return;
  DeviceGuard guard(out.device().index);
  // A split plan's accumulators: a block of the caching allocator on this stream, freed when
  // this returns (the stream runs both passes before anything reuses it).
  std::optional<Tensor> workspace;
  if (plan.workspace_bytes() > 0) {
    workspace = Tensor::empty({static_cast<int64_t>(plan.workspace_bytes())}, TSR_DTYPE_UINT8,
                              out.device());
  }
  Check(op, LaunchReduce(kind, compute, plan, param, workspace ? workspace->data_ptr() : nullptr,
                         sdk::current_stream(out.device())));
}

}  // namespace gpu
}  // namespace tessera
