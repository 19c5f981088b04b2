// C values (tsr_value) to and from the dispatcher's Values: what packed calls
// (tsr_op_call_values, packed kernels) and the stack entry points share. Internal to
// runtime/.
#pragma once

#include "absl/status/statusor.h"
#include "dispatcher/value.h"
#include "tessera/c/op.h"

namespace tessera {
namespace capi {

// AppendFromC appends the Value a caller's tsr_value stands for to `stack` (lists copied into
// it, tensors with a reference of their own), or returns INVALID_ARGUMENT naming `fn`, the
// value's place ("argument 2"; none for index -1, a stack push) and what was expected and found,
// appending nothing. TSR_VALUE_NAME is refused: packed calls are positional.
absl::Status AppendFromC(const tsr_value& value, const char* fn, int64_t index, Stack* stack);

// ValueToC: `value` as a tsr_value that borrows from it (tensors, lists, strings): valid while
// `value` is. Binding markers never reach it (a kernel's stack is bound).
tsr_value ValueToC(const Value& value);

}  // namespace capi
}  // namespace tessera
