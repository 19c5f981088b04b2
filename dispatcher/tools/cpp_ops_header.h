// The C++ SDK's ops as functions, generated from the lock: tessera/sdk/ops.hpp, one inline
// function per functional and in-place op of the newest op set, in namespace tessera::ops,
// named as ATen's C++ API names them (`softmax(x, 1)`, `conv2d(x, w, {}, {2, 2})`,
// `relu_(x)`): overloads resolved by the arguments' C++ types, the schema's defaults as C++
// default arguments, `{}` or std::nullopt for None, brace lists for int[].
#pragma once

#include <set>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "dispatcher/tools/ops_lock.h"

namespace tessera::ops_lock {

// kCppOpsHeader: where the header lives in the source tree (and, under include/, installed).
inline constexpr char kCppOpsHeader[] = "sdk/include/tessera/sdk/ops.hpp";

// kTensorMethodsList: the ops that are Tensor methods (as ATen's are; written by
// dispatcher/tools/tensor_methods.py), beside the lock. kTensorMethodsInc: their declarations,
// included inside sdk::Tensor (tensor.hpp); ops.hpp defines them.
inline constexpr char kTensorMethodsList[] = "tensor_methods.txt";
inline constexpr char kTensorMethodsInc[] = "tensor_methods.inc";

// ParseTensorMethods: the op names of a tensor_methods.txt (one a line; '#' starts a comment
// line), or an error naming `name` and the line.
absl::StatusOr<std::set<std::string>> ParseTensorMethods(std::string_view text,
                                                         std::string_view name);

struct CppOps {
  std::string ops_hpp;             // tessera/sdk/ops.hpp
  std::string tensor_methods_inc;  // tessera/sdk/tensor_methods.inc
};

// GenerateCppOps: the text of tessera/sdk/ops.hpp for the lock's newest op set, and of the
// Tensor methods' declarations for `methods` (op names of the lock). `lock_name` is quoted in
// the "generated from" comments. A method that names no op of the lock, whose op has no
// `Tensor self`, or whose name is one of Tensor's own members, is an error.
absl::StatusOr<CppOps> GenerateCppOps(const Lock& lock, std::string_view lock_name,
                                      const std::set<std::string>& methods);

}  // namespace tessera::ops_lock
