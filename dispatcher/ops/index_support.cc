#include "dispatcher/ops/index_support.h"

#include "absl/strings/str_format.h"
#include "core/host_copy.h"
#include "core/views.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {

absl::StatusOr<std::optional<Range>> IndexRange(OpRegistry& r, const Tensor& index) {
  if (index.device().type == DeviceType::kMeta) return std::optional<Range>();
  TSR_ASSIGN_OR_RETURN(OperatorHandle aminmax, r.Find("aminmax"));
  Stack s{Value(index), Value(std::nullopt), Value(false)};
  TSR_RETURN_IF_ERROR(r.Call(aminmax, &s));
  TSR_ASSIGN_OR_RETURN(Tensor lo, AsLong(r, s[0].tensor()));
  TSR_ASSIGN_OR_RETURN(Tensor hi, AsLong(r, s[1].tensor()));
  // One read back for both.
  TSR_ASSIGN_OR_RETURN(
      Tensor both, CallOne(r, "stack", {Value(std::vector<Tensor>{lo, hi}), Value(int64_t{0})}));
  int64_t values[2] = {0, 0};
  TSR_RETURN_IF_ERROR(CopyTensorToHost(both, values));
  return std::optional<Range>(Range{values[0], values[1]});
}

absl::StatusOr<Tensor> AtLeast1d(const Tensor& t) {
  if (t.dim() > 0) return t;
  return View(t, {1});
}

absl::Status RefuseMeta(const OperatorHandle& op, const Tensor& t) {
  if (t.device().type != DeviceType::kMeta) return absl::OkStatus();
  return absl::UnimplementedError(
      absl::StrFormat("%s: the result's shape depends on the values of a tensor, which a meta "
                      "tensor does not have",
                      op.name()));
}

absl::StatusOr<Tensor> AsLong(OpRegistry& r, const Tensor& index) {
  if (index.dtype() == ScalarType::kInt64) return index;
  return CallOne(r, "_to_copy", {Value(index), Value(ScalarType::kInt64)});
}

absl::StatusOr<Tensor> WrapNegative(OpRegistry& r, const Tensor& index, int64_t size) {
  // remainder's result takes the divisor's sign: [-size, size) -> [0, size).
  if (size == 0) return index;
  return CallOne(r, "remainder.Scalar", {Value(index), Value(Scalar(size))});
}

absl::StatusOr<Tensor> AlongDim(const Tensor& index, int64_t dim, IntArrayRef shape) {
  DimVector lone(shape.size(), 1);
  lone[dim] = index.numel();
  TSR_ASSIGN_OR_RETURN(Tensor laid, View(index, lone));
  DimVector full(shape.begin(), shape.end());
  full[dim] = index.numel();
  return Expand(laid, full);
}

absl::StatusOr<Tensor> FlatNonzero(const OperatorHandle& op, const Tensor& mask) {
  OpRegistry& r = op.registry();
  TSR_RETURN_IF_ERROR(RefuseMeta(op, mask));
  TSR_ASSIGN_OR_RETURN(Tensor flat, CallOne(r, "reshape", {Value(mask), Value(IntList{-1})}));
  // rank[i]: how many true elements up to and including i.
  TSR_ASSIGN_OR_RETURN(
      Tensor rank,
      CallOne(r, "cumsum", {Value(flat), Value(int64_t{0}), Value(ScalarType::kInt64)}));
  int64_t count = 0;
  if (flat.numel() > 0) {
    TSR_ASSIGN_OR_RETURN(Tensor last, Select(rank, 0, flat.numel() - 1));
    TSR_RETURN_IF_ERROR(CopyTensorToHost(last, &count));
  }
  const Device device = mask.device();
  if (count == 0) return Zeros(r, {0}, ScalarType::kInt64, device);
  // slot[i] = rank[i] - 1 for a true element, count (the spare slot) for a false one.
  TSR_ASSIGN_OR_RETURN(
      Tensor before, CallOne(r, "sub.Scalar",
                             {Value(rank), Value(Scalar(int64_t{1})), Value(Scalar(int64_t{1}))}));
  TSR_ASSIGN_OR_RETURN(
      Tensor spare, CallOne(r, "scalar_tensor",
                            {Value(Scalar(count)), Value(ScalarType::kInt64), Value(std::nullopt),
                             Value(device), Value(std::nullopt)}));
  TSR_ASSIGN_OR_RETURN(Tensor slot,
                       CallOne(r, "where.self", {Value(flat), Value(before), Value(spare)}));
  TSR_ASSIGN_OR_RETURN(Tensor positions,
                       CallOne(r, "arange",
                               {Value(Scalar(flat.numel())), Value(ScalarType::kInt64),
                                Value(std::nullopt), Value(device), Value(std::nullopt)}));
  TSR_ASSIGN_OR_RETURN(Tensor slots, Zeros(r, {count + 1}, ScalarType::kInt64, device));
  TSR_ASSIGN_OR_RETURN(
      Tensor placed,
      CallOne(r, "scatter.src", {Value(slots), Value(int64_t{0}), Value(slot), Value(positions)}));
  return Narrow(placed, 0, 0, count);
}

}  // namespace ops
}  // namespace tessera
