// OperatorEntry: one op's schema and kernel table. Internal to the dispatcher.
#pragma once

#include <atomic>
#include <string>

#include "dispatcher/dispatch_key.h"
#include "dispatcher/kernel.h"
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
};

}  // namespace internal
}  // namespace tessera
