#include "dispatcher/op_deprecation.h"

#include "absl/strings/str_format.h"

namespace tessera {

std::string OpDeprecation::Message(std::string_view op) const {
  return absl::StrFormat("%s is deprecated: %s; op set %s removes it", op,
                         replacement.empty() ? std::string("it has no replacement")
                                             : absl::StrFormat("use %s instead", replacement),
                         removed_in.empty() ? std::string("(version not set)") : removed_in);
}

const std::vector<CoreDeprecation>& CoreDeprecations() {
  // Op set 1.0 deprecates nothing. An entry: {"op.overload", {"replacement", "2.0"}}, and a row in
  // docs/op_schema_policy.md's table.
  static const auto* deprecations = new std::vector<CoreDeprecation>{};
  return *deprecations;
}

}  // namespace tessera
