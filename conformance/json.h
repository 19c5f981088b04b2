// A small JSON value with a writer and a parser: the conformance reports (--json) and what reads
// them back (--baseline, the suite's own tests).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {
namespace conformance {

class Json {
 public:
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };

  Json() = default;
  Json(bool b) : kind_(Kind::kBool), bool_(b) {}                              // NOLINT
  Json(double d) : kind_(Kind::kNumber), number_(d) {}                        // NOLINT
  Json(int64_t i) : kind_(Kind::kNumber), number_(static_cast<double>(i)) {}  // NOLINT
  Json(int i) : Json(static_cast<int64_t>(i)) {}                              // NOLINT
  Json(std::string s) : kind_(Kind::kString), string_(std::move(s)) {}        // NOLINT
  Json(const char* s) : Json(std::string(s)) {}                               // NOLINT
  static Json Array() {
    Json j;
    j.kind_ = Kind::kArray;
    return j;
  }
  static Json Object() {
    Json j;
    j.kind_ = Kind::kObject;
    return j;
  }

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::kNull; }
  bool as_bool() const { return bool_; }
  double as_number() const { return number_; }
  const std::string& as_string() const { return string_; }
  const std::vector<Json>& items() const { return items_; }
  const std::vector<std::pair<std::string, Json>>& members() const { return members_; }

  // Arrays.
  Json& push(Json v) {
    items_.push_back(std::move(v));
    return items_.back();
  }
  // Objects keep insertion order (reports read top-down).
  Json& set(const std::string& key, Json v);
  const Json* find(std::string_view key) const;
  // operator[] on a missing key returns a null value.
  const Json& operator[](std::string_view key) const;

  std::string Dump(int indent = -1) const;
  // Parse returns false (and the reason in *error) on malformed text.
  static bool Parse(std::string_view text, Json* out, std::string* error);

 private:
  void DumpTo(std::string& out, int indent, int depth) const;

  Kind kind_ = Kind::kNull;
  bool bool_ = false;
  double number_ = 0;
  std::string string_;
  std::vector<Json> items_;
  std::vector<std::pair<std::string, Json>> members_;
};

// Quote escapes a string for JSON (and for JUnit's XML through XmlEscape).
std::string JsonQuote(std::string_view s);
std::string XmlEscape(std::string_view s);

}  // namespace conformance
}  // namespace tessera
