// What the GPU plugin's op files (elementwise_ops.cc, linalg_ops.cc, scan_reduce_ops.cc,
// nn_ops.cc, index_ops.cc) share: the refusal of an unsupported dtype, the check of a launch, and
// the planning and launch of a reduction (reduce.h; Note [GPU reductions]). Defined in
// op_support.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reduce_plan.h"
#include "tessera/sdk/plugin.hpp"

namespace tessera {
namespace gpu {

// Unsupported fails with UNIMPLEMENTED: `op` has no kernel for dtype `compute` on this device;
// `supported` (bits 1 << tsr_dtype) lists those it has.
[[noreturn]] void Unsupported(const char* op, int32_t compute, uint32_t supported);

// RequireDtype: Unsupported unless `supported` (bits 1 << tsr_dtype) has `compute`; every op
// checks its compute dtype with it before planning or launching.
void RequireDtype(const char* op, int32_t compute, uint32_t supported);

// Check fails with INTERNAL when a launcher returned an error.
void Check(const char* op, const std::string& launch_error);

// ReducedDims: which of `ndim` dimensions `dims` names (none named: all), negative ones
// counted from the end; a dim out of range or named twice fails with INVALID_ARGUMENT.
std::vector<bool> ReducedDims(const char* op, int64_t ndim, const std::vector<int64_t>& dims);

// PlanReduce plans `self` reduced over `reduced` into `out` (keepdim: of self's rank;
// write_reduced: softmax's and the scans' output of self's shape) and, for max.dim / min.dim,
// `indices` (laid out as `out`). A shape it cannot launch fails with UNIMPLEMENTED.
ReducePlan PlanReduce(const char* op, const ::tessera::sdk::Tensor& self,
                      const ::tessera::sdk::Tensor& out, const std::vector<bool>& reduced,
                      bool keepdim, bool write_reduced,
                      const ::tessera::sdk::Tensor* indices = nullptr);

// RunReduce checks `compute` against ReduceDtypes(kind), plans (PlanReduce) and launches `kind`
// on the current stream of out's device; `param` is var's and std's correction, norm's p.
void RunReduce(const char* op, ReduceKind kind, int32_t compute, const ::tessera::sdk::Tensor& self,
               const ::tessera::sdk::Tensor& out, const std::vector<bool>& reduced, bool keepdim,
               double param = 1, const ::tessera::sdk::Tensor* indices = nullptr);

}  // namespace gpu
}  // namespace tessera
