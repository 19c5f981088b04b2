#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {

absl::Status DefineAll(OpRegistry& registry, std::vector<OpDefinition> defs, KernelSlot slot) {
  for (OpDefinition& def : defs) {
    TSR_ASSIGN_OR_RETURN(RegistrationHandle defined, registry.Define(def.schema));
    TSR_ASSIGN_OR_RETURN(FunctionSchema schema, ParseSchema(def.schema));
    absl::StatusOr<RegistrationHandle> impl =
        slot == KernelSlot::kComposite
            ? registry.ImplComposite(schema.FullName(), std::move(def.kernel))
            : registry.Impl(schema.FullName(), DispatchKey::kMeta, std::move(def.kernel));
    if (!impl.ok()) return impl.status();
    defined.Release();
    impl->Release();
  }
  return absl::OkStatus();
}

}  // namespace ops
}  // namespace tessera
