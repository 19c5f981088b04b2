// Model files built byte by byte, for the model tests and benchmarks (docs/model_format.md):
// the safetensors layout around a graph's JSON, without the Python exporter.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tessera_test {

struct FileTensor {
  std::string name;   // "constant/w", "input/x", "expected/out"
  std::string dtype;  // safetensors' name: "F32", ...
  std::vector<int64_t> shape;
  std::string bytes;
};

inline std::string Floats(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

inline std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// SafetensorsFile lays out a file as the format says: the header's size, the header (padded to
// 8 bytes), the tensors' bytes in order.
inline std::string SafetensorsFile(const std::map<std::string, std::string>& metadata,
                                   const std::vector<FileTensor>& tensors) {
  std::string header = "{\"__metadata__\":{";
  bool first = true;
  for (const auto& [k, v] : metadata) {
    header += (first ? "" : ",") + Quote(k) + ":" + Quote(v);
    first = false;
  }
  header += "}";
  std::string data;
  for (const FileTensor& t : tensors) {
    header += "," + Quote(t.name) + ":{\"dtype\":\"" + t.dtype + "\",\"shape\":[";
    for (size_t i = 0; i < t.shape.size(); ++i) {
      header += (i ? "," : "") + std::to_string(t.shape[i]);
    }
    header += "],\"data_offsets\":[" + std::to_string(data.size()) + "," +
              std::to_string(data.size() + t.bytes.size()) + "]}";
    data += t.bytes;
  }
  header += "}";
  while (header.size() % 8) header += ' ';
  std::string file(8, '\0');
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) file[i] = static_cast<char>(n >> (8 * i));
  return file + header + data;
}

// ModelFile: a version-1 model file of `graph` (JSON text) and `tensors`.
inline std::string ModelFile(const std::string& graph, const std::vector<FileTensor>& tensors,
                             const std::string& version = "1") {
  return SafetensorsFile(
      {{"format", "tessera.model"}, {"format_version", version}, {"graph", graph}}, tensors);
}

}  // namespace tessera_test
