#include "dispatcher/ops/boxing.h"

#include "absl/strings/str_format.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "core/type_promotion.h"

namespace tessera {
namespace ops {

absl::Status CheckBroadcastsTo(const OperatorHandle& op, std::string_view arg, IntArrayRef from,
                               IntArrayRef to, std::string_view target) {
  // BroadcastShapes(from, to) == to, without building the shape: `from` has no more dims than
  // `to`, and each of its dims (aligned at the right) is 1 or `to`'s.
  bool broadcasts = from.size() <= to.size();
  for (size_t i = 0; broadcasts && i < from.size(); ++i) {
    const int64_t f = from[from.size() - 1 - i], t = to[to.size() - 1 - i];
    broadcasts = f == 1 || f == t;
  }
  if (broadcasts) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s of shape %s must broadcast to %s %s",
                                                    op.name(), arg, ShapeToString(from), target,
                                                    ShapeToString(to)));
}

absl::Status Invalid(const OperatorHandle& op, const std::string& message) {
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s", op.name(), message));
}

absl::StatusOr<std::array<bool, 3>> OutputMask(const OperatorHandle& op, const Value& v) {
  const BoolList& mask = v.bool_list();
  if (mask.size() != 3) {
    return Invalid(op, absl::StrFormat("expected output_mask of 3 bools, got %d", mask.size()));
  }
  return std::array<bool, 3>{mask[0] != 0, mask[1] != 0, mask[2] != 0};
}

absl::StatusOr<Tensor> Zeros(OpRegistry& registry, IntArrayRef shape, ScalarType dtype,
                             Device device) {
  return CallOne(
      registry, "zeros",
      {Value(IntList(shape.begin(), shape.end())), Value(dtype), Value(), Value(device), Value()});
}

absl::Status CheckOutputFits(OpRegistry& registry, const Tensor& like, IntArrayRef shape) {
  TSR_RETURN_IF_ERROR(ComputeNumel(shape).status());
  return EmptyOf(registry, like, shape).status();
}

absl::StatusOr<Scalar> ReadScalar(OpRegistry& r, const Tensor& value) {
  const ScalarType wide = value.dtype() == ScalarType::kBool ? ScalarType::kBool
                          : IsFloatingType(value.dtype())    ? ScalarType::kFloat64
                                                             : ScalarType::kInt64;
  TSR_ASSIGN_OR_RETURN(Tensor moved,
                       CallOne(r, "_to_copy",
                               {Value(value), Value(std::nullopt), Value(std::nullopt),
                                Value(Device(DeviceType::kCPU))}));
  TSR_ASSIGN_OR_RETURN(Tensor host, CallOne(r, "_to_copy", {Value(moved), Value(wide)}));
  switch (wide) {
    case ScalarType::kBool:
      return Scalar(*host.data<bool>());
    case ScalarType::kFloat64:
      return Scalar(*host.data<double>());
    default:
      return Scalar(*host.data<int64_t>());
  }
}

absl::Status OutOfRange(const OperatorHandle& op, const std::string& message) {
  return absl::OutOfRangeError(absl::StrCat(op.name(), ": ", message));
}

absl::StatusOr<Tensor> EmptyOf(OpRegistry& registry, const Tensor& like, IntArrayRef shape) {
  return CallOne(registry, "empty.memory_format",
                 {Value(IntList(shape.begin(), shape.end())), Value(like.dtype()), Value(),
                  Value(like.device())});
}

absl::Status NotFloating(const OperatorHandle& op, ScalarType dtype) {
  return absl::UnimplementedError(
      absl::StrFormat("%s: not implemented for dtype %s (expected a floating dtype)", op.name(),
                      ScalarTypeName(dtype)));
}

absl::StatusOr<Tensor> CallOne(OpRegistry& registry, std::string_view name, Stack args) {
  TSR_ASSIGN_OR_RETURN(OperatorHandle op, registry.Find(name));
  TSR_RETURN_IF_ERROR(registry.Call(op, &args));
  return args[0].tensor();
}

absl::Status CopyIntoOut(const OperatorHandle& op, size_t arg, const Tensor& result,
                         const Tensor& out, bool castable) {
  const std::string& name = op.schema().arguments[arg].name;
  if (castable && out.dtype() != result.dtype() && !CanCast(result.dtype(), out.dtype())) {
    return Invalid(
        op, absl::StrFormat("result type %s can't be cast to the desired output type "
                            "%s of '%s'",
                            ScalarTypeName(result.dtype()), ScalarTypeName(out.dtype()), name));
  }
  if (!castable && out.dtype() != result.dtype()) {
    return Invalid(op,
                   absl::StrFormat("expected %s to have dtype %s, got %s", name,
                                   ScalarTypeName(result.dtype()), ScalarTypeName(out.dtype())));
  }
  TSR_RETURN_IF_ERROR(out.impl()->ResizeOutput(op.name(), result.sizes()));
  TSR_ASSIGN_OR_RETURN(Tensor copied, CallOne(op.registry(), "copy_", {out, result}));
  return absl::OkStatus();
}

absl::Status CopyIntoSelf(const OperatorHandle& op, const Tensor& result, const Tensor& self) {
  if (!SameDims(self.sizes(), result.sizes())) {
    return Invalid(op, absl::StrFormat("output with shape %s doesn't match the broadcast shape %s",
                                       ShapeToString(self.sizes()), ShapeToString(result.sizes())));
  }
  if (self.dtype() != result.dtype() && !CanCast(result.dtype(), self.dtype())) {
    return Invalid(op,
                   absl::StrFormat("result type %s can't be cast to the desired output type %s",
                                   ScalarTypeName(result.dtype()), ScalarTypeName(self.dtype())));
  }
  return CallOne(op.registry(), "copy_", {self, result}).status();
}

absl::StatusOr<Value> Opmath::In(OpRegistry& r, const Value& v) const {
  if (v.tensor().dtype() == compute) return v;
  TSR_ASSIGN_OR_RETURN(Tensor t, CallOne(r, "_to_copy", {v, Value(compute)}));
  return Value(std::move(t));
}

absl::StatusOr<Tensor> Opmath::Out(OpRegistry& r, Tensor t) const {
  if (t.dtype() == result) return t;
  return CallOne(r, "_to_copy", {Value(std::move(t)), Value(result)});
}

absl::Status DefineAll(OpRegistry& registry, std::vector<OpDefinition> defs, KernelSlot slot) {
  for (OpDefinition& def : defs) {
    TSR_ASSIGN_OR_RETURN(RegistrationHandle defined, registry.Define(def.schema));
    TSR_ASSIGN_OR_RETURN(FunctionSchema schema, ParseSchema(def.schema));
    absl::StatusOr<RegistrationHandle> impl =
        slot == KernelSlot::kComposite
            ? registry.ImplComposite(schema.FullName(), std::move(def.kernel))
            : registry.Impl(schema.FullName(), DispatchKey::kMeta, std::move(def.kernel));
    if (!impl.ok()) return impl.status();
    defined.KeepForever();
    impl->KeepForever();
  }
  return absl::OkStatus();
}

}  // namespace ops
}  // namespace tessera
