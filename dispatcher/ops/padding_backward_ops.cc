// The backward ops of reflection and replication padding (op set 1.10):
// `reflection_pad{1,2,3}d_backward` and `replication_pad{1,2,3}d_backward`, each with its
// `.grad_input` form, as composites every backend gets without a kernel.
//
// The forward (padding_ops.cc) reads, along each padded dim, self's element i(k) for output
// position k: reflected (size - 1) - |(size - 1) - |k - before||, or replicated clamp(k - before,
// 0, size - 1); a negative padding crops (k - before starts inside self). Its adjoint adds each
// output position's gradient into the element it read: per padded dim, an index_add of
// grad_output along that dim at i(k) into zeros of self's size there. The dims are separable, so
// the order does not matter; the edges' elements, read several times, get several gradients.
//
// Checks and messages are ATen's (ReflectionPad.cpp, ReplicationPadding.cpp: the padding list's
// length, a reflection's padding below the dim's size, grad_output's padded sizes, each op with
// its own spelling of "grad_output width unexpected"); beyond them grad_output must have self's
// rank, dtype and its other sizes (ATen's kernels read it unchecked). Floating dtypes; the 16-bit
// ones are added up in float32 and rounded once (Opmath).
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"
#include "dispatcher/ops/padding_support.h"

namespace tessera {
namespace ops {
namespace {

// How each op spells its grad_output size message (ATen's, as they are).
struct Spelling {
  const char* grad;   // "grad_output" or "gradOutput"
  const char* comma;  // ", " or " " before "Got:"
};
Spelling SpellingOf(int64_t dims, PadKind kind) {
  if (kind == PadKind::kReflect) {
    return dims == 2 ? Spelling{"gradOutput", ", "} : Spelling{"grad_output", ", "};
  }
  return dims == 1 ? Spelling{"gradOutput", " "} : Spelling{"gradOutput", ", "};
}

// CheckPadBackward: the arguments of `<kind>_pad<dims>d_backward(grad_output, self, padding)`.
absl::Status CheckPadBackward(const OperatorHandle& op, const Tensor& grad, const Tensor& self,
                              const IntList& pad, int64_t dims, PadKind kind) {
  TSR_RETURN_IF_ERROR(CheckPadLength(op, pad, dims));
  const int64_t nd = self.dim();
  if (nd != dims + 1 && nd != dims + 2) {
    return Invalid(op, absl::StrFormat("Expected %dD or %dD (batch mode) tensor for self, but "
                                       "got: %s",
                                       dims + 1, dims + 2, ShapeToString(self.sizes())));
  }
  if (!IsFloatingType(self.dtype())) return NotFloating(op, self.dtype());
  if (grad.dtype() != self.dtype()) {
    return Invalid(op, absl::StrFormat("expected scalar type %s but found %s (grad_output's dtype "
                                       "must be self's)",
                                       ScalarTypeName(self.dtype()), ScalarTypeName(grad.dtype())));
  }
  const IntArrayRef sizes = self.sizes();
  if (kind == PadKind::kReflect) TSR_RETURN_IF_ERROR(CheckReflectPadding(op, sizes, pad, dims));
  if (grad.dim() != nd) {
    return Invalid(op, absl::StrFormat("expected grad_output of %d dimensions (self's), got %d "
                                       "(shape %s)",
                                       nd, grad.dim(), ShapeToString(grad.sizes())));
  }
  const Spelling spell = SpellingOf(dims, kind);
  const char* const kNames[3] = {"width", "height", "depth"};
  DimVector expected(sizes.begin(), sizes.end());
  for (int64_t i = 0; i < dims; ++i) {
    const int64_t d = nd - 1 - i;
    const PadPair p = PairOf(pad, i);
    TSR_ASSIGN_OR_RETURN(const int64_t out, PaddedSize(op, sizes[d], p, d));
    if (out != grad.sizes()[d]) {
      return Invalid(op, absl::StrFormat("%s %s unexpected. Expected: %d%sGot: %d", spell.grad,
                                         kNames[i], out, spell.comma, grad.sizes()[d]));
    }
    expected[d] = out;
  }
  if (!SameDims(grad.sizes(), expected)) {
    return Invalid(op, absl::StrFormat("expected grad_output of shape %s (the padded self), got %s",
                                       ShapeToString(expected), ShapeToString(grad.sizes())));
  }
  return absl::OkStatus();
}

template <int64_t kDims, PadKind kKind>
absl::StatusOr<Tensor> PadBackwardOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& grad = s[0].tensor();
  const Tensor& self = s[1].tensor();
  const IntList& pad = s[2].int_list();
  TSR_RETURN_IF_ERROR(CheckPadBackward(op, grad, self, pad, kDims, kKind));
  if (self.numel() == 0 || grad.numel() == 0) {
    return Zeros(r, self.sizes(), self.dtype(), self.device());
  }
  const Opmath opmath(self.dtype());
  TSR_ASSIGN_OR_RETURN(const Value g_in, opmath.In(r, s[0]));
  Tensor g = g_in.tensor();
  bool added = false;
  for (int64_t i = 0; i < kDims; ++i) {
    const PadPair p = PairOf(pad, i);
    if (p.before == 0 && p.after == 0) continue;
    const int64_t d = self.dim() - 1 - i;
    const int64_t size = self.sizes()[d];
    TSR_ASSIGN_OR_RETURN(const Tensor index, PadIndex(op, size, d, p, kKind, self.device()));
    DimVector shape(g.sizes().begin(), g.sizes().end());
    shape[d] = size;
    TSR_ASSIGN_OR_RETURN(const Tensor zeros, Zeros(r, shape, g.dtype(), g.device()));
    TSR_ASSIGN_OR_RETURN(
        g, CallOne(r, "index_add",
                   {Value(zeros), Value(d), Value(index), Value(g), Value(Scalar(int64_t{1}))}));
    added = true;
  }
  // No padding at all: a new tensor all the same, as ATen's kernels write one.
  if (!added) return CallOne(r, "clone", {s[0], kMemoryFormatContiguous});
  return opmath.Out(r, std::move(g));
}

}  // namespace

absl::Status DefinePaddingBackwardOps(OpRegistry& registry) {
  constexpr PadKind kReflect = PadKind::kReflect, kReplicate = PadKind::kReplicate;
  return DefineAll(
      registry,
      {
          {"reflection_pad1d_backward(Tensor grad_output, Tensor self, int[2] padding) -> Tensor",
           MakeKernel<Named<ComputeOne<PadBackwardOf<1, kReflect>>>>(
               "core::reflection_pad1d_backward")},
          {"reflection_pad1d_backward.grad_input(Tensor grad_output, Tensor self, int[2] "
           "padding, *, Tensor(a!) grad_input) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<PadBackwardOf<1, kReflect>, 3>>>(
               "core::reflection_pad1d_backward_grad_input")},
          {"reflection_pad2d_backward(Tensor grad_output, Tensor self, int[4] padding) -> Tensor",
           MakeKernel<Named<ComputeOne<PadBackwardOf<2, kReflect>>>>(
               "core::reflection_pad2d_backward")},
          {"reflection_pad2d_backward.grad_input(Tensor grad_output, Tensor self, int[4] "
           "padding, *, Tensor(a!) grad_input) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<PadBackwardOf<2, kReflect>, 3>>>(
               "core::reflection_pad2d_backward_grad_input")},
          {"reflection_pad3d_backward(Tensor grad_output, Tensor self, int[6] padding) -> Tensor",
           MakeKernel<Named<ComputeOne<PadBackwardOf<3, kReflect>>>>(
               "core::reflection_pad3d_backward")},
          {"reflection_pad3d_backward.grad_input(Tensor grad_output, Tensor self, int[6] "
           "padding, *, Tensor(a!) grad_input) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<PadBackwardOf<3, kReflect>, 3>>>(
               "core::reflection_pad3d_backward_grad_input")},
          {"replication_pad1d_backward(Tensor grad_output, Tensor self, int[2] padding) -> Tensor",
           MakeKernel<Named<ComputeOne<PadBackwardOf<1, kReplicate>>>>(
               "core::replication_pad1d_backward")},
          {"replication_pad1d_backward.grad_input(Tensor grad_output, Tensor self, int[2] "
           "padding, *, Tensor(a!) grad_input) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<PadBackwardOf<1, kReplicate>, 3>>>(
               "core::replication_pad1d_backward_grad_input")},
          {"replication_pad2d_backward(Tensor grad_output, Tensor self, int[4] padding) -> Tensor",
           MakeKernel<Named<ComputeOne<PadBackwardOf<2, kReplicate>>>>(
               "core::replication_pad2d_backward")},
          {"replication_pad2d_backward.grad_input(Tensor grad_output, Tensor self, int[4] "
           "padding, *, Tensor(a!) grad_input) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<PadBackwardOf<2, kReplicate>, 3>>>(
               "core::replication_pad2d_backward_grad_input")},
          {"replication_pad3d_backward(Tensor grad_output, Tensor self, int[6] padding) -> Tensor",
           MakeKernel<Named<ComputeOne<PadBackwardOf<3, kReplicate>>>>(
               "core::replication_pad3d_backward")},
          {"replication_pad3d_backward.grad_input(Tensor grad_output, Tensor self, int[6] "
           "padding, *, Tensor(a!) grad_input) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<PadBackwardOf<3, kReplicate>, 3>>>(
               "core::replication_pad3d_backward_grad_input")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera
