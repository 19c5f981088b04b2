// Decoding a call's arguments into an unboxed call's (Note [The unboxed fast path] in
// dispatcher/unboxed_call.cc), for the C entry points (runtime/op.cc) and compiled models'
// nodes (runtime/model/compiled_model.cc).
#pragma once

#include <cstddef>
#include <vector>

#include "dispatcher/schema.h"
#include "dispatcher/unboxed_call.h"
#include "dispatcher/value.h"
#include "tessera/c/kernel_call.h"

namespace tessera {
namespace capi {

// The entry points decode their arguments into UnboxedArgs when each already has its schema
// argument's kind, as the boxed path would keep it without conversion; otherwise (a false
// return) they take the boxed path.

// Inline: they run on every fast-path call.
// AddAs appends argument `param`'s value when it is one an unboxed call takes: a tensor for a
// Tensor, a Scalar for a Scalar, None where the type is optional.
inline bool AddAs(const Argument& param, TensorImpl* tensor, const Scalar* scalar, bool none,
                  UnboxedArgs* out) {
  const SchemaType& type = param.type;
  if (type.is_list) return false;
  if (none) return type.optional && out->AddNone();
  switch (type.base) {
    case BaseType::kTensor:
      return tensor != nullptr && out->AddTensor(tensor);
    case BaseType::kScalar:
      return scalar != nullptr && out->AddScalar(*scalar);
    default:
      return false;
  }
}

// AddDefaults appends the defaults of the parameters from `first` on (none: not unboxed).
inline bool AddDefaults(const std::vector<Argument>& params, size_t first, UnboxedArgs* out) {
  for (size_t i = first; i < params.size(); ++i) {
    const std::optional<Value>& d = params[i].default_value;
    if (!d) return false;
    const bool ok = d->is_scalar() ? AddAs(params[i], nullptr, &d->scalar(), false, out)
                    : d->is_none() ? AddAs(params[i], nullptr, nullptr, true, out)
                                   : false;
    if (!ok) return false;
  }
  return true;
}

// DecodeValues: the caller's tsr_values (tsr_op_call_values) as an unboxed call's arguments.
bool DecodeValues(const FunctionSchema& schema, const tsr_value* args, size_t n, UnboxedArgs* out);

// DecodeStack: a caller's stack (tsr_op_call) as an unboxed call's arguments, borrowed from it.
bool DecodeStack(const FunctionSchema& schema, const Stack& stack, UnboxedArgs* out);

}  // namespace capi
}  // namespace tessera
