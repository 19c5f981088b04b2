// The GPU backends' elementwise ops (elementwise_ops.cc): binary, unary and the other pointwise
// ops, copy_ and fill_, as out= kernels on the elementwise iterator.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "elementwise_plan.h"
#include "pointwise_ops.h"
#include "tessera/sdk/plugin.hpp"

namespace tessera {
namespace gpu {

// RegisterElementwiseOps registers the elementwise ops' kernels with `lib` (gpu_plugin.cc's
// registration block, before its cpu_fallback()).
void RegisterElementwiseOps(sdk::Library& lib);
// RegisterActivationOps: the activations and their backward ops (activation_ops.cc).
void RegisterActivationOps(sdk::Library& lib);

// CopyOnDevice is copy_ on one device (self <- src, any dtypes, src broadcast to self), for the
// other op files (a product computed into a scratch tensor and copied into a strided out).
sdk::Tensor CopyOnDevice(const sdk::Tensor& self, const sdk::Tensor& src, bool non_blocking);

// --- for the other pointwise op files (activation_ops.cc) ---

// Compute: the dtype the call computes in, as the call plan says (every op here has a plan
// function, and the plugin needs a 1.1 runtime, which plans every call: nothing to promote).
int32_t Compute(const sdk::KernelContext& ctx);

// ValueOf: a Scalar as a launch's constant.
ConstantValue ValueOf(const sdk::Scalar& s);

// TensorOperand: an operand from a tensor argument: memory of the call's device, or a 0-dim CPU
// tensor, which PyTorch lets join any device's op and which travels as a constant.
OperandSpec TensorOperand(const char* op, const sdk::TensorView& t, const char* arg);

// ScalarOperand: a Scalar operand, a constant in the compute dtype.
OperandSpec ScalarOperand(const sdk::Scalar& s, int32_t compute);

// RunPointwise checks the compute dtype against `supported` (by default the kind's own set),
// plans `inputs` against `out` and launches the kind's kernel (kernels_pointwise.cu).
void RunPointwise(const char* op, PointwiseKind kind, int32_t compute, const sdk::TensorView& out,
                  std::vector<OperandSpec> inputs, const PointwiseParams& params = {},
                  uint32_t supported = 0);

// Clamp: clamp with at most two bounds: both as ClampOp, one as maximum (min) or minimum
// (max), whose NaN rule is clamp's; computed in clamp's dtypes (no bool).
void Clamp(const char* op, int32_t compute, const sdk::TensorView& out, OperandSpec self,
           std::optional<OperandSpec> lo, std::optional<OperandSpec> hi);

}  // namespace gpu
}  // namespace tessera
