#include "runtime/model/json_reader.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"

namespace tessera {
namespace model {

const JsonValue* JsonValue::Find(std::string_view key) const {
  if (kind_ != Kind::kObject) return nullptr;
  for (const auto& [name, value] : members_) {
    if (name == key) return &value;
  }
  return nullptr;
}

std::string_view JsonKindName(JsonValue::Kind kind) {
  switch (kind) {
    case JsonValue::Kind::kNull:
      return "null";
    case JsonValue::Kind::kBool:
      return "a boolean";
    case JsonValue::Kind::kInt:
      return "an integer";
    case JsonValue::Kind::kDouble:
      return "a number";
    case JsonValue::Kind::kString:
      return "a string";
    case JsonValue::Kind::kArray:
      return "an array";
    case JsonValue::Kind::kObject:
      return "an object";
  }
  return "?";
}

class JsonParser {
 public:
  JsonParser(std::string_view text, std::string_view what) : text_(text), what_(what) {}

  absl::StatusOr<JsonValue> ParseDocument() {
    JsonValue v;
    if (absl::Status s = Parse(&v, 0); !s.ok()) return s;
    SkipSpace();
    if (pos_ != text_.size()) return Error("expected the end of the text");
    return v;
  }

 private:
  absl::Status Error(std::string_view expected) const {
    std::string found = pos_ >= text_.size()
                            ? std::string("the end of the text")
                            : absl::StrFormat("'%c'", text_[pos_] >= 0x20 && text_[pos_] < 0x7f
                                                          ? text_[pos_]
                                                          : '?');
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: byte %d: %s, found %s", what_, pos_, expected, found));
  }

  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r' || text_[pos_] == '\t')) {
      ++pos_;
    }
  }

  bool Consume(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  absl::Status Parse(JsonValue* out, int depth) {
    SkipSpace();
    out->offset_ = pos_;
    if (++values_ > kMaxJsonValues) {
      return Error(absl::StrFormat("expected at most %d values in all", kMaxJsonValues));
    }
    if (pos_ >= text_.size()) return Error("expected a value");
    const char c = text_[pos_];
    if (c == '{' || c == '[') {
      if (depth >= kMaxJsonDepth) {
        return Error(absl::StrFormat("expected at most %d levels of nesting", kMaxJsonDepth));
      }
      return c == '{' ? ParseObject(out, depth) : ParseArray(out, depth);
    }
    if (c == '"') {
      out->kind_ = JsonValue::Kind::kString;
      return ParseString(&out->string_);
    }
    if (Consume("null")) return absl::OkStatus();
    if (Consume("true") || Consume("false")) {
      out->kind_ = JsonValue::Kind::kBool;
      out->bool_ = text_[out->offset_] == 't';
      return absl::OkStatus();
    }
    if (c == '-' || (c >= '0' && c <= '9')) return ParseNumber(out);
    return Error("expected a value");
  }

  absl::Status ParseObject(JsonValue* out, int depth) {
    out->kind_ = JsonValue::Kind::kObject;
    ++pos_;
    absl::flat_hash_set<std::string> seen;
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      return absl::OkStatus();
    }
    while (true) {
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '"') return Error("expected an object key");
      const size_t key_at = pos_;
      std::string key;
      if (absl::Status s = ParseString(&key); !s.ok()) return s;
      if (!seen.insert(key).second) {
        pos_ = key_at;
        return Error(absl::StrFormat("expected each key once, but \"%s\" is repeated", key));
      }
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != ':') return Error("expected ':' after a key");
      ++pos_;
      JsonValue value;
      if (absl::Status s = Parse(&value, depth + 1); !s.ok()) return s;
      out->members_.emplace_back(std::move(key), std::move(value));
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        return absl::OkStatus();
      }
      return Error("expected ',' or '}' in an object");
    }
  }

  absl::Status ParseArray(JsonValue* out, int depth) {
    out->kind_ = JsonValue::Kind::kArray;
    ++pos_;
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      return absl::OkStatus();
    }
    while (true) {
      JsonValue value;
      if (absl::Status s = Parse(&value, depth + 1); !s.ok()) return s;
      out->items_.push_back(std::move(value));
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        return absl::OkStatus();
      }
      return Error("expected ',' or ']' in an array");
    }
  }

  absl::Status ParseHex4(uint32_t* out) {
    *out = 0;
    for (int i = 0; i < 4; ++i, ++pos_) {
      if (pos_ >= text_.size()) return Error("expected 4 hex digits after \\u");
      const char h = text_[pos_];
      const int digit = h >= '0' && h <= '9'   ? h - '0'
                        : h >= 'a' && h <= 'f' ? h - 'a' + 10
                        : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                               : -1;
      if (digit < 0) return Error("expected 4 hex digits after \\u");
      *out = *out * 16 + static_cast<uint32_t>(digit);
    }
    return absl::OkStatus();
  }

  static void AppendUtf8(uint32_t cp, std::string* out) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  absl::Status ParseString(std::string* out) {
    ++pos_;  // the opening quote
    while (true) {
      if (pos_ >= text_.size()) return Error("expected the closing '\"' of a string");
      const char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        return absl::OkStatus();
      }
      if (static_cast<unsigned char>(c) < 0x20) {
        return Error("expected no control character inside a string");
      }
      if (c != '\\') {
        out->push_back(c);
        ++pos_;
        continue;
      }
      ++pos_;
      if (pos_ >= text_.size()) return Error("expected an escape after '\\'");
      const char e = text_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out->push_back(e);
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          uint32_t cp;
          if (absl::Status s = ParseHex4(&cp); !s.ok()) return s;
          if (cp >= 0xD800 && cp < 0xDC00) {  // a high surrogate: its low half must follow
            uint32_t low;
            if (!Consume("\\u")) return Error("expected the low half of a surrogate pair");
            if (absl::Status s = ParseHex4(&low); !s.ok()) return s;
            if (low < 0xDC00 || low >= 0xE000) {
              return Error("expected the low half of a surrogate pair");
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xDC00 && cp < 0xE000) {
            return Error("expected a code point, not the low half of a surrogate pair");
          }
          AppendUtf8(cp, out);
          break;
        }
        default:
          --pos_;
          return Error("expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u");
      }
    }
  }

  absl::Status ParseNumber(JsonValue* out) {
    const size_t start = pos_;
    auto digits = [&] {
      const size_t from = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
      return pos_ - from;
    };
    if (text_[pos_] == '-') ++pos_;
    const size_t int_start = pos_;
    if (digits() == 0) return Error("expected a digit");
    if (pos_ - int_start > 1 && text_[int_start] == '0') {
      pos_ = int_start + 1;
      return Error("expected no leading zero");
    }
    bool integral = true;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      integral = false;
      if (digits() == 0) return Error("expected a digit after '.'");
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      integral = false;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (digits() == 0) return Error("expected a digit in the exponent");
    }
    const std::string number(text_.substr(start, pos_ - start));
    errno = 0;
    char* end = nullptr;
    if (integral) {
      const long long v = std::strtoll(number.c_str(), &end, 10);
      if (errno == ERANGE) {
        pos_ = start;
        return Error("expected an integer that fits in 64 bits");
      }
      out->kind_ = JsonValue::Kind::kInt;
      out->int_ = v;
      return absl::OkStatus();
    }
    const double d = std::strtod(number.c_str(), &end);
    if (!std::isfinite(d)) {
      pos_ = start;
      return Error("expected a number within a double's range");
    }
    out->kind_ = JsonValue::Kind::kDouble;
    out->double_ = d;
    return absl::OkStatus();
  }

  std::string_view text_;
  std::string_view what_;
  size_t pos_ = 0;
  size_t values_ = 0;
};

absl::StatusOr<JsonValue> ParseJson(std::string_view text, std::string_view what) {
  return JsonParser(text, what).ParseDocument();
}

}  // namespace model
}  // namespace tessera
