// OperatorEntry: one op's schema and kernel table. Internal to the dispatcher.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "absl/container/inlined_vector.h"
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
        schema_text(std::move(schema_text)),
        written(WrittenArguments(this->schema)) {}

  OpRegistry* const registry;
  const FunctionSchema schema;  // immutable: a redefinition must be identical
  const std::string name;
  const std::string schema_text;  // canonical (FunctionSchema::ToString)
  // The arguments the op writes (alias annotation with '!'): out= outputs, in-place selfs.
  const absl::InlinedVector<size_t, 2> written;

  // Published with release, read with acquire by calls; written under the registry's mutex.
  std::atomic<bool> defined{true};
  // The live definitions of the op, under the registry's mutex; `defined` is owners > 0 (Note
  // [Op definitions are reference-counted] in dispatcher/op_registry.cc).
  int64_t owners = 1;
  // The entry of an earlier definition with another schema that this one replaced, kept alive
  // for the handles, kernels and registrations that still point into it.
  std::unique_ptr<OperatorEntry> replaced;
  std::atomic<const KernelFunction*> kernels[kNumDispatchKeys] = {};
  std::atomic<const KernelFunction*> composite{nullptr};
  std::atomic<const KernelFunction*> cross_device{nullptr};  // OpRegistry::ImplCrossDevice

  // The op's sibling forms (Note [Variants]); linked once, right after definition.
  VariantKind variant = VariantKind::kNone;
  OutDtypeRule out_dtype_rule = OutDtypeRule::kCastable;
  OutputAliasing output_aliasing = OutputAliasing::kDisjoint;
  OperatorEntry* functional = nullptr;
  OperatorEntry* out = nullptr;
  OperatorEntry* inplace = nullptr;

 private:
  static absl::InlinedVector<size_t, 2> WrittenArguments(const FunctionSchema& schema) {
    absl::InlinedVector<size_t, 2> written;
    for (size_t i = 0; i < schema.arguments.size(); ++i) {
      if (schema.arguments[i].alias && schema.arguments[i].alias->is_write) written.push_back(i);
    }
    return written;
  }
};

// The variant machinery (dispatcher/variants.cc), used by OpRegistry's lookup and dispatch.
// DerivedKernel: the kernel deriving `entry`'s form on `key` from a sibling form that has a
// real kernel there, or NULL.
const KernelFunction* DerivedKernel(const OperatorEntry& entry, int key);
// ValidateCall runs before every backend kernel (Note [Variants]): the op's Meta function
// checks the arguments (shapes, dtypes, dims) so that no backend sees input the op refuses; an
// out= form also gets its outputs checked and resized, an in-place form its self checked.
absl::Status ValidateCall(const OperatorEntry& entry, Stack* stack);
// CheckWrittenMemory refuses a call whose written tensors overlap themselves or its inputs
// (Note [Memory overlap], dispatcher/memory_overlap_check.cc).
absl::Status CheckWrittenMemory(const OperatorEntry& entry, const Stack& stack);

}  // namespace internal
}  // namespace tessera
