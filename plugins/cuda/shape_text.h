// ShapeText: a shape (or strides) as the GPU backends' messages print it, "[2, 3]" ("[]" for a
// 0-dim tensor). Header-only and toolkit-free: the host library (elementwise_plan.cc) and the
// plugin's op files share it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera {
namespace gpu {

inline std::string ShapeText(const std::vector<int64_t>& sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

}  // namespace gpu
}  // namespace tessera
