// Binding named and defaulted arguments: a caller's stack with ArgumentName and
// DefaultArgument markers (dispatcher/value.h) rewritten into plain schema order.
//
// OpRegistry::Call does this before it checks argument types, and only when the plain
// positional reading of the stack has failed, so a positional call pays nothing for it (Note
// [Binding named and defaulted arguments] in argument_binding.cc).
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "dispatcher/schema.h"
#include "dispatcher/value.h"

namespace tessera {

// HasBindingMarkers: whether some value of `stack` is a marker.
bool HasBindingMarkers(const Stack& stack);

// BindArguments replaces `stack` with one value per argument of `schema`, in order: the
// positional values first, then the named ones where their names say, and each argument's
// default where a placeholder stands or nothing was given. The values are not type-checked
// here (NormalizeArgumentValue does that next). On error the stack is left as it was; the
// message starts with `op` and says what is wrong: an unknown name (listing the argument
// names), an argument given twice, a positional value after a named one, a name without a
// value, too many values, a missing argument without a default, or a placeholder for one.
absl::Status BindArguments(const FunctionSchema& schema, std::string_view op, Stack* stack);

}  // namespace tessera
