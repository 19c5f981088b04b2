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

// The entry points decode their arguments into UnboxedArgs (with AddAs and AddDefaults, in
// dispatcher/unboxed_call.h) when each already has its schema argument's kind, as the boxed
// path would keep it without conversion; otherwise (a false return) they take the boxed path.

// DecodeValues: the caller's tsr_values (tsr_op_call_values) as an unboxed call's arguments.
bool DecodeValues(const FunctionSchema& schema, const tsr_value* args, size_t n, UnboxedArgs* out);

// DecodeStack: a caller's stack (tsr_op_call) as an unboxed call's arguments, borrowed from it.
bool DecodeStack(const FunctionSchema& schema, const Stack& stack, UnboxedArgs* out);

}  // namespace capi
}  // namespace tessera
