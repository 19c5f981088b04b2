// The C++ SDK's ops as functions, generated from the lock: tessera/sdk/ops.hpp, one inline
// function per functional and in-place op of the newest op set, in namespace tessera::ops,
// named as ATen's C++ API names them (`softmax(x, 1)`, `conv2d(x, w, {}, {2, 2})`,
// `relu_(x)`): overloads resolved by the arguments' C++ types, the schema's defaults as C++
// default arguments, `{}` or std::nullopt for None, brace lists for int[].
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "dispatcher/tools/ops_lock.h"

namespace tessera::ops_lock {

// kCppOpsHeader: where the header lives in the source tree (and, under include/, installed).
inline constexpr char kCppOpsHeader[] = "sdk/include/tessera/sdk/ops.hpp";

// GenerateCppOps: the text of tessera/sdk/ops.hpp for the lock's newest op set. `lock_name` is
// quoted in the "generated from" comment.
absl::StatusOr<std::string> GenerateCppOps(const Lock& lock, std::string_view lock_name);

}  // namespace tessera::ops_lock
