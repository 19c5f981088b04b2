// The safetensors layout (https://huggingface.co/docs/safetensors), which a model file is:
//
//   [8 bytes: N, little-endian u64] [N bytes: a JSON header] [the data]
//
// The header maps each tensor's name to {"dtype", "shape", "data_offsets": [begin, end)}, the
// offsets counted from the start of the data, and may hold "__metadata__", a map of strings.
// The reader checks what the format promises before anything is allocated from it: the header
// fits the file and is at most kMaxSafetensorsHeader bytes, each tensor's bytes are exactly its
// shape times its element size, and the tensors tile the data with no hole or overlap.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/dtype.h"
#include "core/shape.h"

namespace tessera {
namespace model {

// Safetensors' own reader refuses headers above 100 MB; so does this one.
inline constexpr uint64_t kMaxSafetensorsHeader = 100'000'000;

struct SafetensorsTensor {
  std::string name;
  ScalarType dtype;
  DimVector shape;
  std::string_view bytes;  // inside the file's bytes
};

struct SafetensorsFile {
  std::vector<std::pair<std::string, std::string>> metadata;  // in file order
  std::vector<SafetensorsTensor> tensors;                     // in header order
};

// ParseSafetensors reads `file` (which must outlive the result: tensors' bytes point into it).
absl::StatusOr<SafetensorsFile> ParseSafetensors(std::string_view file);

}  // namespace model
}  // namespace tessera
