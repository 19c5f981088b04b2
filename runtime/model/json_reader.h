// A bounded JSON reader for the model format (docs/model_format.md): the safetensors header and
// the graph are JSON. Integers are kept exactly (int64), nesting is capped, duplicate keys are
// refused, and every error names the byte offset where the text stopped making sense: a model
// file is input from outside the process and is never trusted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace tessera {
namespace model {

class JsonValue {
 public:
  enum class Kind { kNull, kBool, kInt, kDouble, kString, kArray, kObject };

  Kind kind() const { return kind_; }
  // offset: where the value starts in the text it was read from (for error messages).
  size_t offset() const { return offset_; }
  bool is_null() const { return kind_ == Kind::kNull; }
  bool is_number() const { return kind_ == Kind::kInt || kind_ == Kind::kDouble; }
  bool as_bool() const { return bool_; }
  int64_t as_int() const { return int_; }
  // as_double: the number, exact for a kDouble and converted for a kInt.
  double as_double() const { return kind_ == Kind::kInt ? static_cast<double>(int_) : double_; }
  const std::string& as_string() const { return string_; }
  const std::vector<JsonValue>& items() const { return items_; }
  const std::vector<std::pair<std::string, JsonValue>>& members() const { return members_; }
  // Find: the member `key` of an object; NULL when absent or not an object.
  const JsonValue* Find(std::string_view key) const;

 private:
  friend class JsonParser;
  Kind kind_ = Kind::kNull;
  size_t offset_ = 0;
  bool bool_ = false;
  int64_t int_ = 0;
  double double_ = 0;
  std::string string_;
  std::vector<JsonValue> items_;
  std::vector<std::pair<std::string, JsonValue>> members_;
};

// KindName: "an object", "a string", ... for messages ("expected an array, found a string").
std::string_view JsonKindName(JsonValue::Kind kind);

inline constexpr int kMaxJsonDepth = 64;
// kMaxJsonValues: the most values (numbers, strings, arrays, ...) one text may hold. A value
// costs far more memory than its text (`0,` is two bytes), so the count, not the text's size,
// bounds what reading allocates: a million values is some hundred MB at worst, and a
// ResNet-50's graph and header hold a few ten thousand.
inline constexpr size_t kMaxJsonValues = 1'000'000;

// ParseJson reads one JSON value that spans all of `text` (whitespace aside), of at most
// kMaxJsonValues values. `what` names the text in errors: "<what>: byte 17: expected ':' after
// an object key, found '}'".
absl::StatusOr<JsonValue> ParseJson(std::string_view text, std::string_view what);

}  // namespace model
}  // namespace tessera
