// CompareSchemas classifies how an op's schema changed, as PyTorch classifies it
// (c10::FunctionSchema::isBackwardCompatibleWith / isForwardCompatibleWith): what ops.lock
// checks (docs/op_schema_policy.md), and what decides whether a kernel built against an older
// schema can still be called.
#pragma once

#include <string>
#include <vector>

#include "dispatcher/schema.h"

namespace tessera {

// SchemaChangeClass, from harmless to harmful; a change has the class of its worst finding.
enum class SchemaChangeClass {
  kNone,                // the same schema
  kBackwardCompatible,  // old callers and kernels keep working: a trailing argument with a
                        // default (before the out= arguments), a default added, a keyword-only
                        // argument made positional
  kBreaking,            // anything else: removed, renamed, reordered or retyped argument,
                        // removed or changed default, changed returns or alias annotations
};

std::string_view SchemaChangeClassName(SchemaChangeClass c);

struct SchemaChange {
  SchemaChangeClass change_class = SchemaChangeClass::kNone;
  // forward_compatible: a caller written against the new schema still works with the old one
  // (PyTorch's FC). False for every added argument or default.
  bool forward_compatible = true;
  // findings: one sentence per difference, naming the argument, what the old schema had
  // (expected) and what the new one has (found).
  std::vector<std::string> findings;
  // added_arguments: the positions, in the new schema's arguments, of the arguments it added
  // with defaults (before the out arguments): what an old kernel lacks (Note [Kernels built
  // against another schema] in runtime/kernel_schema.cc).
  std::vector<size_t> added_arguments;
};

// CompareSchemas compares two schemas of the same op (old: the recorded one; new: today's).
// Out arguments (keyword-only written aliases, `Tensor(a!) out`) are compared apart from the
// others, so an out= form may gain a defaulted argument before them, as PyTorch allows.
SchemaChange CompareSchemas(const FunctionSchema& old_schema, const FunctionSchema& new_schema);

}  // namespace tessera
