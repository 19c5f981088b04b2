// The GPU kernels' launchers, callable from host code compiled by g++ (the kernels themselves are
// in kernels*.cu, compiled by nvcc for CUDA and hipcc for HIP from one source).
#pragma once

#include <cstdint>
#include <string>

#include "elementwise_plan.h"
#include "gemm.h"
#include "pointwise_ops.h"
#include "reduce_plan.h"

namespace tessera {
namespace gpu {

enum class BinaryKind { kAdd, kSub, kMul, kDiv };
enum class UnaryKind {
  kIdentity,  // copy_ and fill_: the input converted to the output's dtype
  kNeg,
  kAbs,
  kRelu,
  kExp,
  kLog,
  kSqrt,
  kRsqrt,
  kSin,
  kCos,
  kTanh,
  kSigmoid,
  kReciprocal,
};

// Which compute dtypes (bits 1 << tsr_dtype) each kind has kernels for; the plugin refuses the
// others with UNIMPLEMENTED before launching.
uint32_t BinaryDtypes(BinaryKind kind);
uint32_t UnaryDtypes(UnaryKind kind);

// LaunchBinary / LaunchUnary queue `plan` (binary: output and two inputs; unary: output and
// one) on `stream` (the vendor's stream handle, NULL for the default stream), computing in
// the dtype `compute`. They return "" or the launch's error in the vendor's words. An error of
// the kernel itself surfaces later, at the next synchronizing call.
std::string LaunchBinary(BinaryKind kind, int32_t compute, const ElementwisePlan& plan,
                         const ConstantValue& alpha, void* stream);
std::string LaunchUnary(UnaryKind kind, int32_t compute, const ElementwisePlan& plan, void* stream);

// LaunchPointwise queues an op of pointwise_ops.h (kernels_pointwise.cu): `plan` has the output
// and PointwiseArity(kind) inputs; `compute` is among PointwiseDtypes(kind).
std::string LaunchPointwise(PointwiseKind kind, int32_t compute, const ElementwisePlan& plan,
                            const PointwiseParams& params, void* stream);

// LaunchReduce queues a reduction of reduce.h (kernels_reduce.cu) computing in `compute`
// (among ReduceDtypes(kind)); `param` is var's and std's correction, norm's p; `workspace`:
// plan.workspace_bytes() of device memory for a split plan's accumulators (Note [Split
// reductions]), null otherwise.
std::string LaunchReduce(ReduceKind kind, int32_t compute, const ReducePlan& plan, double param,
                         void* workspace, void* stream);

// LaunchGemm queues C = beta * self + alpha * A @ B (kernels_gemm.cu) in `dtype`, one of the
// four floating dtypes.
std::string LaunchGemm(int32_t dtype, const GemmProblem& problem, void* stream);

}  // namespace gpu
}  // namespace tessera
