// OperatorEntry: one op's schema and kernel table. Internal to the dispatcher.
#pragma once

#include <atomic>
#include <string>

#include "dispatcher/dispatch_key.h"
#include "dispatcher/kernel.h"
#include "dispatcher/op_registry.h"
#include "dispatcher/schema.h"

namespace tessera {
class OpRegistry;

namespace internal {

class OperatorEntry {
 public:
  OperatorEntry(OpRegistry* registry, FunctionSchema schema, std::string schema_text)
      : registry(registry),
        schema(std::move(schema)),
        name(this->schema.FullName()),
        schema_text(std::move(schema_text)) {}

  OpRegistry* const registry;
  const FunctionSchema schema;  // immutable: a redefinition must be identical
  const std::string name;
  const std::string schema_text;  // canonical (FunctionSchema::ToString)

  // Published with release, read with acquire by calls; written under the registry's mutex.
  std::atomic<bool> defined{true};
  std::atomic<const KernelFunction*> kernels[kNumDispatchKeys] = {};
  std::atomic<const KernelFunction*> composite{nullptr};

  // The op's sibling forms (Note [Variants]); linked once, right after definition.
  VariantKind variant = VariantKind::kNone;
  OutDtypeRule out_dtype_rule = OutDtypeRule::kCastable;
  OperatorEntry* functional = nullptr;
  OperatorEntry* out = nullptr;
  OperatorEntry* inplace = nullptr;
};

// The variant machinery (dispatcher/variants.cc), used by OpRegistry's lookup and dispatch.
// DerivedKernel: the kernel deriving `entry`'s form on `key` from a sibling form that has a
// real kernel there, or NULL.
const KernelFunction* DerivedKernel(const OperatorEntry& entry, int key);
// ValidateCall runs before every backend kernel (Note [Variants]): the op's Meta function
// checks the arguments (shapes, dtypes, dims) so that no backend sees input the op refuses; an
// out= form also gets its outputs checked and resized, an in-place form its self checked.
absl::Status ValidateCall(const OperatorEntry& entry, Stack* stack);

}  // namespace internal
}  // namespace tessera
