// The typed C calls header, tessera/opset/calls_v<MAJOR>_<MINOR>.h: one `static inline` C
// function per op of an op set, generated from the op's schema, that packs its arguments into
// tsr_values and calls tsr_op_call_values. Header-only: no exported symbol, nothing in abi.lock.
// The parameter mapping is the typed kernels' (tessera/sdk/typed_c.hpp), widened where a caller
// needs more than a kernel does; docs/embedding_guide.md ("Typed calls") documents it.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "dispatcher/schema.h"

namespace tessera::ops_lock {

// kFirstCallsMajor/Minor: the first op set with a calls header. Older op sets keep only their
// schema headers (their ops are all in the newer ones, under the same schemas or compatible ones).
inline constexpr int kFirstCallsMajor = 1;
inline constexpr int kFirstCallsMinor = 2;

// IsKeyword: a C or C++ keyword an argument name could be; a generated parameter of that name
// gets a '_' suffix (here and in the C++ header, cpp_ops_header.h).
bool IsKeyword(std::string_view name);

// CallsFunctionName: "add.Tensor" -> "tsr_aten_add_Tensor".
std::string CallsFunctionName(std::string_view op_name);

// GenerateCallsHeader: the text of calls_v<mangled>.h for op set `version` ("1.2"), whose ops
// (sorted by name) are `ops`. An op whose arguments or returns have no C form (a Generator, a
// list return, ...) gets no function; the header lists those ops by name in a comment. Fails on
// a parameter name that collides with the function's own locals.
absl::StatusOr<std::string> GenerateCallsHeader(
    std::string_view banner, std::string_view version, std::string_view mangled,
    const std::vector<std::pair<std::string, FunctionSchema>>& ops);

}  // namespace tessera::ops_lock
