// What the backward composites of the NN forwards (nn_backward_ops.cc, pooling_backward_ops.cc)
// share: checking their arguments by running the forward on meta tensors (so a refusal is the
// forward's own, in its words), naming an inner op's error after the backward op, and max
// pooling's adjoint (grad_output scattered at the forward's indices).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/shape.h"
#include "core/status_macros.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {

// WithDoing: `result`, or its error with `op`'s name and what it was doing in front (an inner
// op's message alone would name the inner op).
inline absl::StatusOr<Tensor> WithDoing(const OperatorHandle& op, const std::string& doing,
                                        absl::StatusOr<Tensor> result) {
  if (result.ok()) return result;
  return absl::Status(result.status().code(),
                      absl::StrCat(op.name(), ": ", doing, ": ", result.status().message()));
}

// ForwardShape: the shape of the forward op `forward`'s first return for `args`, in which
// every tensor is replaced by a meta tensor of its shape and dtype: the forward's meta function
// makes its checks, and a refusal names the backward op, then the forward's message.
inline absl::StatusOr<DimVector> ForwardShape(const OperatorHandle& op, std::string_view forward,
                                              Stack args) {
  const Device meta(DeviceType::kMeta);
  for (Value& v : args) {
    if (!v.is_tensor()) continue;
    TSR_ASSIGN_OR_RETURN(v, Empty(v.tensor().sizes(), v.tensor().dtype(), meta));
  }
  TSR_ASSIGN_OR_RETURN(const Tensor y, WithDoing(op, "the forward's arguments",
                                                 CallOne(op.registry(), forward, std::move(args))));
  return DimVector(y.sizes().begin(), y.sizes().end());
}

// MaxScatter: max pooling's adjoint: grad_output's values added at their indices into a zero
// input, plane by plane (the last `nd` dims; the indices are flat positions within a plane), in
// float32 for the 16-bit floats. `minus_one_is_nowhere`: an index -1 (a window with no input
// element, which max_pool's forward cannot place) takes no gradient, as in ATen's kernels. Any
// other index outside the plane is the caller's error (ATen's kernels write past the plane),
// named with `plane`, the plane's shape as the op's message spells it.
inline absl::StatusOr<Tensor> MaxScatter(const OperatorHandle& op, const Tensor& grad,
                                         const Tensor& input, const Tensor& indices, int64_t nd,
                                         bool minus_one_is_nowhere, std::string_view plane_name) {
  OpRegistry& r = op.registry();
  int64_t batch = 1, plane = 1, pooled = 1;
  for (int64_t d = 0; d < input.dim(); ++d) {
    (d < input.dim() - nd ? batch : plane) *= input.sizes()[d];
  }
  for (int64_t d = grad.dim() - nd; d < grad.dim(); ++d) pooled *= grad.sizes()[d];
  const Opmath opmath(input.dtype());
  TSR_ASSIGN_OR_RETURN(Tensor acc, Zeros(r, {batch, plane}, opmath.compute, input.device()));
  if (batch * plane * pooled > 0) {
    TSR_ASSIGN_OR_RETURN(const Value g, opmath.In(r, Value(grad)));
    TSR_ASSIGN_OR_RETURN(Tensor src, CallOne(r, "reshape", {g, Value(IntList{batch, pooled})}));
    TSR_ASSIGN_OR_RETURN(Tensor index,
                         CallOne(r, "reshape", {Value(indices), Value(IntList{batch, pooled})}));
    if (minus_one_is_nowhere) {
      TSR_ASSIGN_OR_RETURN(Tensor nowhere,
                           CallOne(r, "eq.Scalar", {Value(index), Value(Scalar(int64_t{-1}))}));
      TSR_ASSIGN_OR_RETURN(
          src, CallOne(r, "masked_fill.Scalar", {Value(src), Value(nowhere), Value(Scalar(0.0))}));
      TSR_ASSIGN_OR_RETURN(index,
                           CallOne(r, "masked_fill.Scalar",
                                   {Value(index), Value(nowhere), Value(Scalar(int64_t{0}))}));
    }
    TSR_ASSIGN_OR_RETURN(
        acc, WithDoing(op,
                       absl::StrFormat("expected indices into the input's %s plane%s", plane_name,
                                       minus_one_is_nowhere ? " (or -1)" : ""),
                       CallOne(r, "scatter_add",
                               {Value(acc), Value(int64_t{1}), Value(index), Value(src)})));
  }
  TSR_ASSIGN_OR_RETURN(Tensor shaped,
                       CallOne(r, "reshape", {Value(acc), Value(ToIntList(input.sizes()))}));
  return opmath.Out(r, std::move(shaped));
}

}  // namespace ops
}  // namespace tessera
