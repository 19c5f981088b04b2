// Deprecated ops: an op (or overload) the op set will remove, with what to use instead and the
// op set version that removes it (docs/op_schema_policy.md, "Deprecation"). The first call of a
// deprecated op through the C ABI logs a warning, once per op; a plugin registering a kernel for
// one gets a note in its load report; tsr_op_describe reports it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tessera {

struct OpDeprecation {
  std::string replacement;  // the op to use instead; empty when there is none
  std::string removed_in;   // the op set version that removes it ("2.0")

  // Message: "<op> is deprecated: use <replacement> instead; op set <removed_in> removes it".
  std::string Message(std::string_view op) const;
};

struct CoreDeprecation {
  std::string_view op;
  OpDeprecation deprecation;
};

// CoreDeprecations: the ops of the core op set that are deprecated, applied to the global
// registry when it is made. docs/op_schema_policy.md lists each one.
const std::vector<CoreDeprecation>& CoreDeprecations();

}  // namespace tessera
