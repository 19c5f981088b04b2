// Helpers for the dispatcher's own kernels (view composites, meta functions): turn a function
// of the argument stack into a boxed KernelFunction.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "dispatcher/kernel.h"
#include "dispatcher/op_registry.h"

namespace tessera {
namespace ops {

using TensorsFn = absl::StatusOr<std::vector<Tensor>> (*)(const OperatorHandle& op,
                                                          const Stack& args);

// BoxTensors wraps F, which returns the op's tensor returns in order.
template <TensorsFn F>
absl::Status BoxedTensors(void*, const OperatorHandle& op, Stack* stack) {
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> outs, F(op, *stack));
  stack->clear();
  for (Tensor& t : outs) stack->push_back(std::move(t));
  return absl::OkStatus();
}

template <TensorsFn F>
KernelFunction MakeKernel(std::string name) {
  KernelFunction k;
  k.fn = &BoxedTensors<F>;
  k.name = std::move(name);
  return k;
}

using TensorsOr = absl::StatusOr<std::vector<Tensor>>;

// BoxedTensorList / MakeListKernel: the same for an op that returns one Tensor[] (split,
// unbind): F's tensors go on the stack as one list value.
// kMaxListReturn: the most tensors such a list holds. Views of an expanded or empty tensor
// cost no memory, so a split of one into 2^40 pieces would otherwise be asked for; beyond this
// an op refuses (RESOURCE_EXHAUSTED) instead of building the vector.
inline constexpr int64_t kMaxListReturn = int64_t{1} << 24;
template <TensorsFn F>
absl::Status BoxedTensorList(void*, const OperatorHandle& op, Stack* stack) {
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> list, F(op, *stack));
  stack->clear();
  stack->push_back(Value(std::move(list)));
  return absl::OkStatus();
}

template <TensorsFn F>
KernelFunction MakeListKernel(std::string name) {
  KernelFunction k;
  k.fn = &BoxedTensorList<F>;
  k.name = std::move(name);
  return k;
}

// One: a single tensor (or its error) as a kernel's returns.
inline TensorsOr One(absl::StatusOr<Tensor> t) {
  if (!t.ok()) return t.status();
  return std::vector<Tensor>{*std::move(t)};
}

// Named: F's errors begin with the op called. A composite's inner op's refusal ("div.out_mode:
// ZeroDivisionError" under floor_divide, the sample NPU's "npu neg: not implemented for dtype
// float64" under exponential_) would otherwise not name the op the application called.
template <TensorsFn F>
TensorsOr Named(const OperatorHandle& op, const Stack& s) {
  TensorsOr result = F(op, s);
  if (result.ok() || absl::StartsWith(result.status().message(), op.name())) return result;
  return absl::Status(result.status().code(),
                      absl::StrCat(op.name(), ": ", result.status().message()));
}

// Invalid: INVALID_ARGUMENT with the op's name in front, as every message here starts.
absl::Status Invalid(const OperatorHandle& op, const std::string& message);
// NotFloating: UNIMPLEMENTED for a composite that computes floating dtypes only, given `dtype`.
absl::Status NotFloating(const OperatorHandle& op, ScalarType dtype);

inline std::optional<int64_t> OptionalInt(const Value& v) {
  if (v.is_none()) return std::nullopt;
  return v.to_int();
}

// OutputMask: a backward op's output_mask (bool[3]): which of its three gradients to compute.
absl::StatusOr<std::array<bool, 3>> OutputMask(const OperatorHandle& op, const Value& v);

// Zeros: a zero-filled tensor (the `zeros` op, so every backend makes it).
absl::StatusOr<Tensor> Zeros(OpRegistry& registry, IntArrayRef shape, ScalarType dtype,
                             Device device);
// EmptyOf: an uninitialized tensor of `shape` with `like`'s dtype and device (`empty`).
absl::StatusOr<Tensor> EmptyOf(OpRegistry& registry, const Tensor& like, IntArrayRef shape);

// CheckOutputFits: refuses an output of `shape` (`like`'s dtype and device) that the device
// cannot hold (a numel past int64, or its allocator's refusal, through `empty`, freed at once),
// so that a composite building host tables as long as the output's dims (upsampling's taps,
// adaptive pooling's windows) fails with that error instead of exhausting host memory first.
absl::Status CheckOutputFits(OpRegistry& registry, const Tensor& like, IntArrayRef shape);

// ReadScalar: the value of a 0-dim tensor on any device but meta as a Scalar of its kind (bool,
// int64 or double), as Tensor.item() gives it: moved to the host in its own dtype (a device
// need not convert), then widened there. One synchronization.
absl::StatusOr<Scalar> ReadScalar(OpRegistry& registry, const Tensor& value);

// OutOfRange: OUT_OF_RANGE (PyTorch's IndexError) with the op's name in front, as Invalid.
absl::Status OutOfRange(const OperatorHandle& op, const std::string& message);

// ToIntList: a shape as an int[] argument.
inline IntList ToIntList(IntArrayRef shape) { return IntList(shape.begin(), shape.end()); }

// CheckBroadcastsTo: `from` (argument `arg`) must broadcast to exactly `to` (`target` names
// it in the error, e.g. "self's shape").
absl::Status CheckBroadcastsTo(const OperatorHandle& op, std::string_view arg, IntArrayRef from,
                               IntArrayRef to, std::string_view target);

// CallOne calls the op named `name` with `args` and returns its first return (composites).
absl::StatusOr<Tensor> CallOne(OpRegistry& registry, std::string_view name, Stack args);

// CopyIntoOut resizes the out argument `out` (argument `arg` of `op`) to `result` and copies
// it in: `out` must have the result's dtype, or one it casts to where `castable` (the out=
// forms of ATen's pointwise ops and losses; its other ops take the exact dtype).
absl::Status CopyIntoOut(const OperatorHandle& op, size_t arg, const Tensor& result,
                         const Tensor& out, bool castable);
// CopyIntoSelf writes `result` into the in-place form's `self`, which must already have its shape
// (an in-place op does not resize self) and a dtype it casts to, as ATen's in-place ops.
absl::Status CopyIntoSelf(const OperatorHandle& op, const Tensor& result, const Tensor& self);
// ComputeIntoOut: an out= form written as a composite: F computes the result, then it goes into
// the out argument kOut (CopyIntoOut).
template <absl::StatusOr<Tensor> (*F)(const OperatorHandle&, const Stack&), int kOut,
          bool kCastable = false>
TensorsOr ComputeIntoOut(const OperatorHandle& op, const Stack& s) {
  TSR_ASSIGN_OR_RETURN(Tensor result, F(op, s));
  const Tensor& out = s[kOut].tensor();
  TSR_RETURN_IF_ERROR(CopyIntoOut(op, kOut, result, out, kCastable));
  return std::vector<Tensor>{out};
}

// IntoSelf: the in-place form of an op F computes functionally: the result written into self
// (CopyIntoSelf).
template <absl::StatusOr<Tensor> (*F)(const OperatorHandle&, const Stack&)>
TensorsOr IntoSelf(const OperatorHandle& op, const Stack& s) {
  TSR_ASSIGN_OR_RETURN(Tensor result, F(op, s));
  TSR_RETURN_IF_ERROR(CopyIntoSelf(op, result, s[0].tensor()));
  return std::vector<Tensor>{s[0].tensor()};
}

// ComputeOne: the functional form of an op F computes (F returns its one result).
template <absl::StatusOr<Tensor> (*F)(const OperatorHandle&, const Stack&)>
TensorsOr ComputeOne(const OperatorHandle& op, const Stack& s) {
  return One(F(op, s));
}

// ComputeIntoOuts: the out= form of an op with kCount returns, written as a composite: F
// computes the results, and each goes into the out argument kFirst + i. An undefined result (a
// gradient that output_mask leaves out) leaves its out argument unwritten, as ATen's do.
template <TensorsFn F, int kFirst, int kCount>
TensorsOr ComputeIntoOuts(const OperatorHandle& op, const Stack& s) {
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> results, F(op, s));
  std::vector<Tensor> outs;
  for (int i = 0; i < kCount; ++i) {
    const Tensor& out = s[kFirst + i].tensor();
    if (results[i].defined()) {
      TSR_RETURN_IF_ERROR(CopyIntoOut(op, kFirst + i, results[i], out, /*castable=*/false));
    }
    outs.push_back(out);
  }
  return outs;
}

// Opmath: how a composite over pointwise ops computes: every operand converted to one compute
// dtype (float32 for the 16-bit floats, as a fused kernel and PyTorch's opmath compute them),
// and the result rounded once, at the end, to the op's result dtype.
struct Opmath {
  // `dtype`: the operands' promoted dtype; `result`: the op's (by default the same).
  explicit Opmath(ScalarType dtype) : Opmath(dtype, dtype) {}
  Opmath(ScalarType dtype, ScalarType result)
      : compute(dtype == ScalarType::kFloat16 || dtype == ScalarType::kBFloat16
                    ? ScalarType::kFloat32
                    : dtype),
        result(result) {}
  // In: `v` (a tensor) in the compute dtype.
  absl::StatusOr<Value> In(OpRegistry& r, const Value& v) const;
  // Out: the computed `t` in the result dtype.
  absl::StatusOr<Tensor> Out(OpRegistry& r, Tensor t) const;
  ScalarType compute;
  ScalarType result;
};

// DefineAll defines each schema and registers its kernel (composite or Meta) permanently.
struct OpDefinition {
  const char* schema;
  KernelFunction kernel;
};
enum class KernelSlot { kComposite, kMeta };
absl::Status DefineAll(OpRegistry& registry, std::vector<OpDefinition> defs, KernelSlot slot);

}  // namespace ops
}  // namespace tessera
