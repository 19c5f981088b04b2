#include "dispatcher/argument_binding.h"

#include <cstddef>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace tessera {

// Note [Binding named and defaulted arguments]
// A kernel reads its arguments by position, so a stack must reach it in schema order with
// every argument present. Callers that do not want to spell out every argument (an embedder
// calling `_to_copy(self, memory_format=...)` through the C ABI) may push two markers instead:
// DefaultArgument ("this argument's default") and ArgumentName ("the next value is the argument
// called ..."), with Python's rules: positional values first, then named ones, each argument
// once. BindArguments turns such a stack into the plain one before anything else looks at it.
//
// It runs only when needed, and finding out costs the positional path nothing: a marker never
// passes NormalizeArgumentValue (no schema type accepts its kind), so a stack with markers
// either has more values than the op has arguments or fails the type check at the first marker.
// OpRegistry::NormalizeArguments looks for markers on those two error paths only, binds, and
// checks the bound stack from the start (re-normalizing a value already normalized leaves it
// as it is).

bool HasBindingMarkers(const Stack& stack) {
  for (const Value& v : stack) {
    if (v.is_binding_marker()) return true;
  }
  return false;
}

namespace {

constexpr size_t kUnset = static_cast<size_t>(-1);

std::string ArgumentNames(const FunctionSchema& schema) {
  return absl::StrJoin(schema.arguments, ", ",
                       [](std::string* out, const Argument& a) { out->append(a.name); });
}

}  // namespace

absl::Status BindArguments(const FunctionSchema& schema, std::string_view op, Stack* stack) {
  const std::vector<Argument>& args = schema.arguments;
  Stack& s = *stack;
  // from[a]: the stack index of argument a's value (or placeholder), kUnset when not given.
  absl::InlinedVector<size_t, 16> from(args.size(), kUnset);
  absl::InlinedVector<bool, 16> named(args.size(), false);
  size_t positional = 0;
  std::string first_name;  // empty until a named argument was seen
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i].kind() == Value::Kind::kName) {
      const std::string& name = s[i].argument_name();
      if (i + 1 == s.size() || s[i + 1].kind() == Value::Kind::kName) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: argument name '%s' (stack index %d) has no value after it", op, name, i));
      }
      size_t a = 0;
      while (a < args.size() && args[a].name != name) ++a;
      if (a == args.size()) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: unknown argument name '%s' (the op's arguments: %s)", op, name,
                            ArgumentNames(schema)));
      }
      if (from[a] != kUnset) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: argument '%s' given twice (%s)", op, name,
                            named[a] ? std::string("by name, twice")
                                     : absl::StrFormat("at position %d and by name", a)));
      }
      from[a] = ++i;  // the value follows its name
      named[a] = true;
      if (first_name.empty()) first_name = name;
      continue;
    }
    if (!first_name.empty()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: expected only named arguments after the named argument '%s', got a positional "
          "value (%s, stack index %d); push positional values first",
          op, first_name, ValueKindName(s[i].kind()), i));
    }
    if (positional == args.size()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: expected at most %d positional arguments, got more (stack index %d)",
                          op, args.size(), i));
    }
    from[positional++] = i;
  }
  auto takes_default = [&](size_t a) {
    return from[a] == kUnset || s[from[a]].kind() == Value::Kind::kDefault;
  };
  for (size_t a = 0; a < args.size(); ++a) {
    if (takes_default(a) && !args[a].default_value) {
      if (from[a] != kUnset) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: argument '%s' (position %d) has no default, but a default placeholder was "
            "pushed for it (tsr_stack_push_default)",
            op, args[a].name, a));
      }
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: missing value for argument '%s' (position %d), which has no default",
                          op, args[a].name, a));
    }
  }
  // Only now that nothing can fail are the values moved.
  Stack bound;
  bound.reserve(args.size());
  for (size_t a = 0; a < args.size(); ++a) {
    if (takes_default(a)) {
      bound.push_back(*args[a].default_value);
    } else {
      bound.push_back(std::move(s[from[a]]));
    }
  }
  *stack = std::move(bound);
  return absl::OkStatus();
}

}  // namespace tessera
