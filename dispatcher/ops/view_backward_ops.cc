// The backward ops of views (op set 1.10), which traced training graphs carry for x[:, 0],
// x[..., 1:3], torch.diagonal, Tensor.unfold and index_select: `select_backward`,
// `slice_backward`, `diagonal_backward`, `unfold_backward` (each with its out= form) and
// `index_select_backward`, as composites every backend gets without a kernel. Each is a tensor
// of zeros of the input's sizes (grad's dtype and device) with the gradient written where the
// forward read:
//
//   select, slice, diagonal, non-overlapping unfold: the same view taken of the zeros, and grad
//     copied into it (copy_ broadcasts grad to the view's shape, as ATen's backward's copy_ does).
//   unfold with overlapping windows (step < size): every window's elements added at the input
//     positions they came from: grad's window dim moved next to `dim` and flattened with it, then
//     one index_add with the position of each (window, offset), w * step + k.
//   index_select: index_add of grad along dim at the indices (ATen's new_zeros + index_add_).
//
// The forward's checks run first, on a meta tensor of input_sizes (the view op's own messages:
// dim out of range, select's index out of range, slice's step, unfold's size and step), and
// grad must then fit the view's shape. Every dtype; the adds of overlapping windows and of
// repeated indices are made in grad's dtype, as ATen's kernels add.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "core/shape.h"
#include "core/status_macros.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {
namespace {

const Device kMetaDevice(DeviceType::kMeta);

// MetaBase: a meta tensor of input_sizes (grad's dtype), for the forward view's checks and
// shape; negative sizes are refused as zeros refuses them.
absl::StatusOr<Tensor> MetaBase(const OperatorHandle& op, const Tensor& grad, IntArrayRef sizes) {
  for (int64_t s : sizes) {
    if (s < 0) {
      return Invalid(
          op, absl::StrFormat("input_sizes must be non-negative, got %s", ShapeToString(sizes)));
    }
  }
  return Empty(sizes, grad.dtype(), kMetaDevice);
}

// ViewOf: the forward view of `base`, as the view op `forward` takes it with `params` after
// self: on a meta base it checks the arguments and gives the view's shape, on the zeros it is
// where grad goes.
absl::StatusOr<Tensor> ViewOf(const OperatorHandle& op, const char* forward, const Tensor& base,
                              const Stack& params) {
  Stack args{Value(base)};
  args.insert(args.end(), params.begin(), params.end());
  return CallOne(op.registry(), forward, std::move(args));
}

// CopyIntoView: zeros of input_sizes with grad copied into their view `forward(params)`, of
// `view_shape` (the meta view's), grad broadcast to it first (as ATen's copy_ broadcasts src).
absl::StatusOr<Tensor> CopyIntoView(const OperatorHandle& op, const Tensor& grad,
                                    IntArrayRef input_sizes, const char* forward,
                                    const Stack& params, IntArrayRef view_shape) {
  OpRegistry& r = op.registry();
  TSR_RETURN_IF_ERROR(
      CheckBroadcastsTo(op, "grad_output", grad.sizes(), view_shape, "the view's shape"));
  TSR_ASSIGN_OR_RETURN(Tensor result, Zeros(r, input_sizes, grad.dtype(), grad.device()));
  if (std::find(view_shape.begin(), view_shape.end(), 0) != view_shape.end()) return result;
  TSR_ASSIGN_OR_RETURN(const Tensor view, ViewOf(op, forward, result, params));
  TSR_ASSIGN_OR_RETURN(const Tensor src, Expand(grad, view_shape));
  TSR_RETURN_IF_ERROR(CallOne(r, "copy_", {Value(view), Value(src), Value(false)}).status());
  return result;
}

// CopiedIntoView: CopyIntoView after the forward's checks on a meta tensor of input_sizes.
absl::StatusOr<Tensor> CopiedIntoView(const OperatorHandle& op, const Tensor& grad,
                                      IntArrayRef input_sizes, const char* forward,
                                      const Stack& params) {
  TSR_ASSIGN_OR_RETURN(const Tensor meta, MetaBase(op, grad, input_sizes));
  TSR_ASSIGN_OR_RETURN(const Tensor meta_view, ViewOf(op, forward, meta, params));
  return CopyIntoView(op, grad, input_sizes, forward, params, meta_view.sizes());
}

// select_backward(grad_output, input_sizes, dim, index)
absl::StatusOr<Tensor> SelectBackwardOf(const OperatorHandle& op, const Stack& s) {
  return CopiedIntoView(op, s[0].tensor(), s[1].int_list(), "select.int", {s[2], s[3]});
}

// slice_backward(grad_output, input_sizes, dim, start, end, step)
absl::StatusOr<Tensor> SliceBackwardOf(const OperatorHandle& op, const Stack& s) {
  return CopiedIntoView(op, s[0].tensor(), s[1].int_list(), "slice.Tensor",
                        {s[2], s[3], s[4], s[5]});
}

// diagonal_backward(grad_output, input_sizes, offset, dim1, dim2)
absl::StatusOr<Tensor> DiagonalBackwardOf(const OperatorHandle& op, const Stack& s) {
  return CopiedIntoView(op, s[0].tensor(), s[1].int_list(), "diagonal", {s[2], s[3], s[4]});
}

// unfold_backward(grad_in, input_sizes, dim, size, step): see the file's comment. grad_in must
// have exactly unfold's shape (ATen reads it unchecked, past its end where it is smaller).
absl::StatusOr<Tensor> UnfoldBackwardOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& grad = s[0].tensor();
  const IntList& input_sizes = s[1].int_list();
  const int64_t size = s[3].to_int(), step = s[4].to_int();
  // Current ATen's own check (ValueError), before unfold's; 1.13 divided by the step.
  if (step <= 0) return Invalid(op, absl::StrFormat("step is %d but must be > 0", step));
  TSR_ASSIGN_OR_RETURN(const Tensor meta, MetaBase(op, grad, input_sizes));
  TSR_ASSIGN_OR_RETURN(const Tensor meta_view, ViewOf(op, "unfold", meta, {s[2], s[3], s[4]}));
  if (!SameDims(grad.sizes(), meta_view.sizes())) {
    return Invalid(op, absl::StrFormat("expected grad_in of shape %s (unfold's output for "
                                       "input_sizes %s), got %s",
                                       ShapeToString(meta_view.sizes()), ShapeToString(input_sizes),
                                       ShapeToString(grad.sizes())));
  }
  if (step >= size || input_sizes.empty()) {  // windows that never overlap: a plain copy
    return CopyIntoView(op, grad, input_sizes, "unfold", {s[2], s[3], s[4]}, meta_view.sizes());
  }
  TSR_ASSIGN_OR_RETURN(Tensor result, Zeros(r, input_sizes, grad.dtype(), grad.device()));
  if (grad.numel() == 0) return result;
  TSR_ASSIGN_OR_RETURN(const int64_t dim,
                       WrapDim(s[2].to_int(), static_cast<int64_t>(input_sizes.size()), op.name()));
  const int64_t windows = grad.sizes()[dim];
  // grad [..., windows, ..., size] -> [..., windows, size, ...] -> [..., windows * size, ...]
  DimVector perm;
  for (int64_t d = 0; d < grad.dim() - 1; ++d) {
    perm.push_back(d);
    if (d == dim) perm.push_back(grad.dim() - 1);
  }
  TSR_ASSIGN_OR_RETURN(const Tensor moved, Permute(grad, perm));
  IntList flat = input_sizes;
  flat[dim] = windows * size;
  TSR_ASSIGN_OR_RETURN(const Tensor source, CallOne(r, "reshape", {Value(moved), Value(flat)}));
  // position[w * size + k] = w * step + k
  const Value long_dtype(ScalarType::kInt64), none(std::nullopt), device(grad.device());
  TSR_ASSIGN_OR_RETURN(Tensor starts,
                       CallOne(r, "arange.start_step",
                               {Value(Scalar(int64_t{0})), Value(Scalar(windows * step)),
                                Value(Scalar(step)), long_dtype, none, device, none}));
  TSR_ASSIGN_OR_RETURN(Tensor offsets, CallOne(r, "arange.start",
                                               {Value(Scalar(int64_t{0})), Value(Scalar(size)),
                                                long_dtype, none, device, none}));
  TSR_ASSIGN_OR_RETURN(starts, View(starts, {windows, 1}));
  TSR_ASSIGN_OR_RETURN(
      Tensor positions,
      CallOne(r, "add.Tensor", {Value(starts), Value(offsets), Value(Scalar(int64_t{1}))}));
  TSR_ASSIGN_OR_RETURN(positions, View(positions, {windows * size}));
  return CallOne(
      r, "index_add",
      {Value(result), Value(dim), Value(positions), Value(source), Value(Scalar(int64_t{1}))});
}

// index_select_backward(grad, self_sizes, dim, index): index_add's checks are the ones that
// apply (index's dtype and length, grad's shape outside dim, an index out of range).
absl::StatusOr<Tensor> IndexSelectBackwardOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& grad = s[0].tensor();
  TSR_RETURN_IF_ERROR(MetaBase(op, grad, s[1].int_list()).status());
  TSR_ASSIGN_OR_RETURN(Tensor zeros, Zeros(r, s[1].int_list(), grad.dtype(), grad.device()));
  return CallOne(r, "index_add",
                 {Value(zeros), s[2], s[3], Value(grad), Value(Scalar(int64_t{1}))});
}

}  // namespace

// The out= forms are ATen's generated ones (autogen), which copy_ the result into out: out may
// have any dtype the result casts to.
absl::Status DefineViewBackwardOps(OpRegistry& registry) {
  return DefineAll(
      registry,
      {
          {"select_backward(Tensor grad_output, int[] input_sizes, int dim, int index) -> Tensor",
           MakeKernel<Named<ComputeOne<SelectBackwardOf>>>("core::select_backward")},
          {"select_backward.out(Tensor grad_output, int[] input_sizes, int dim, int index, *, "
           "Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<SelectBackwardOf, 4, /*kCastable=*/true>>>(
               "core::select_backward_out")},
          {"slice_backward(Tensor grad_output, int[] input_sizes, int dim, int start, int end, "
           "int step) -> Tensor",
           MakeKernel<Named<ComputeOne<SliceBackwardOf>>>("core::slice_backward")},
          {"slice_backward.out(Tensor grad_output, int[] input_sizes, int dim, int start, int "
           "end, int step, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<SliceBackwardOf, 6, /*kCastable=*/true>>>(
               "core::slice_backward_out")},
          {"diagonal_backward(Tensor grad_output, int[] input_sizes, int offset, int dim1, int "
           "dim2) -> Tensor",
           MakeKernel<Named<ComputeOne<DiagonalBackwardOf>>>("core::diagonal_backward")},
          {"diagonal_backward.out(Tensor grad_output, int[] input_sizes, int offset, int dim1, "
           "int dim2, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<DiagonalBackwardOf, 5, /*kCastable=*/true>>>(
               "core::diagonal_backward_out")},
          {"unfold_backward(Tensor grad_in, int[] input_sizes, int dim, int size, int step) -> "
           "Tensor",
           MakeKernel<Named<ComputeOne<UnfoldBackwardOf>>>("core::unfold_backward")},
          {"unfold_backward.out(Tensor grad_in, int[] input_sizes, int dim, int size, int step, "
           "*, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<UnfoldBackwardOf, 5, /*kCastable=*/true>>>(
               "core::unfold_backward_out")},
          {"index_select_backward(Tensor grad, int[] self_sizes, int dim, Tensor index) -> "
           "Tensor",
           MakeKernel<Named<ComputeOne<IndexSelectBackwardOf>>>("core::index_select_backward")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera
