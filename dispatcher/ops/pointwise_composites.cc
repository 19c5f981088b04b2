// Pointwise overloads that are composites over another overload, so that a backend gets them
// without a kernel of its own: masked_fill.Tensor (a 0-dim value tensor) and its out= and
// in-place forms run masked_fill.Scalar's forms with the value read out as a Scalar. Their
// Meta functions are the pointwise table's rows (pointwise_meta.cc).
#include "absl/strings/str_format.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {
namespace {

using Out = absl::StatusOr<std::vector<Tensor>>;

// ItemOf: the value of a 0-dim tensor on any device as a Scalar of its kind (bool, int64 or
// double), as Tensor.item() gives it: moved to the host in its own dtype (a device need not
// convert), then widened there.
absl::StatusOr<Scalar> ItemOf(const OperatorHandle& op, const Tensor& value) {
  TSR_RETURN_IF_ERROR(CheckMaskedFillValue(op, value));
  const ScalarType wide = value.dtype() == ScalarType::kBool ? ScalarType::kBool
                          : IsFloatingType(value.dtype())    ? ScalarType::kFloat64
                                                             : ScalarType::kInt64;
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Tensor moved, CallOne(r, "_to_copy",
                                             {value, Value(std::nullopt), Value(std::nullopt),
                                              Value(Device(DeviceType::kCPU))}));
  TSR_ASSIGN_OR_RETURN(Tensor host, CallOne(r, "_to_copy", {moved, Value(wide)}));
  switch (wide) {
    case ScalarType::kBool:
      return Scalar(*host.data<bool>());
    case ScalarType::kFloat64:
      return Scalar(*host.data<double>());
    default:
      return Scalar(*host.data<int64_t>());
  }
}

// masked_fill.Tensor(self, mask, value) and masked_fill_.Tensor(self, mask, value).
template <bool kInplace>
Out MaskedFillTensorK(const OperatorHandle& op, const Stack& s) {
  TSR_ASSIGN_OR_RETURN(const Scalar value, ItemOf(op, s[2].tensor()));
  // Named as this op's (masked_fill.Scalar's meta would check it again under its own name).
  TSR_RETURN_IF_ERROR(CheckScalarFits(value, s[0].tensor().dtype(), op.name(), "value"));
  return One(CallOne(op.registry(), kInplace ? "masked_fill_.Scalar" : "masked_fill.Scalar",
                     {s[0], s[1], Value(value)}));
}

// masked_fill.Tensor_out(self, mask, value, *, out)
Out MaskedFillTensorOutK(const OperatorHandle& op, const Stack& s) {
  TSR_ASSIGN_OR_RETURN(const Scalar value, ItemOf(op, s[2].tensor()));
  TSR_RETURN_IF_ERROR(CheckScalarFits(value, s[0].tensor().dtype(), op.name(), "value"));
  return One(CallOne(op.registry(), "masked_fill.Scalar_out", {s[0], s[1], Value(value), s[3]}));
}

}  // namespace

absl::Status DefinePointwiseComposites(OpRegistry& registry) {
  for (auto [name, kernel] : {
           std::pair{"masked_fill.Tensor",
                     MakeKernel<MaskedFillTensorK<false>>("core::masked_fill")},
           std::pair{"masked_fill_.Tensor",
                     MakeKernel<MaskedFillTensorK<true>>("core::masked_fill_")},
           std::pair{"masked_fill.Tensor_out",
                     MakeKernel<MaskedFillTensorOutK>("core::masked_fill_out")},
       }) {
    TSR_ASSIGN_OR_RETURN(RegistrationHandle handle,
                         registry.ImplComposite(name, std::move(kernel)));
    handle.KeepForever();
  }
  return absl::OkStatus();
}

}  // namespace ops
}  // namespace tessera
