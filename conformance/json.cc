#include "conformance/json.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tessera {
namespace conformance {

Json& Json::set(const std::string& key, Json v) {
  for (auto& [k, value] : members_) {
    if (k == key) return value = std::move(v);
  }
  members_.emplace_back(key, std::move(v));
  return members_.back().second;
}

const Json* Json::find(std::string_view key) const {
  for (const auto& [k, value] : members_) {
    if (k == key) return &value;
  }
  return nullptr;
}

const Json& Json::operator[](std::string_view key) const {
  static const Json kNull;
  const Json* v = find(key);
  return v ? *v : kNull;
}

std::string JsonQuote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string XmlEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

void Json::DumpTo(std::string& out, int indent, int depth) const {
  auto newline = [&](int d) {
    if (indent < 0) return;
    out += '\n';
    out.append(static_cast<size_t>(indent * d), ' ');
  };
  switch (kind_) {
    case Kind::kNull:
      out += "null";
      return;
    case Kind::kBool:
      out += bool_ ? "true" : "false";
      return;
    case Kind::kNumber: {
      if (!std::isfinite(number_)) {  // JSON has no NaN or Inf: write them as strings
        out += std::isnan(number_) ? "\"nan\"" : number_ > 0 ? "\"inf\"" : "\"-inf\"";
        return;
      }
      // The shortest form that parses back to the same double: tools that read values back
      // (conformance/tools/) must see the very inputs the suite used, and short numbers such
      // as 1e-05 stay short.
      char buf[32];
      if (number_ == std::floor(number_) && std::fabs(number_) < 1e15) {
        std::snprintf(buf, sizeof buf, "%.0f", number_);
      } else {
        for (int precision = 6; precision <= 17; ++precision) {
          std::snprintf(buf, sizeof buf, "%.*g", precision, number_);
          if (std::strtod(buf, nullptr) == number_) break;
        }
      }
      out += buf;
      return;
    }
    case Kind::kString:
      out += JsonQuote(string_);
      return;
    case Kind::kArray:
      out += '[';
      for (size_t i = 0; i < items_.size(); ++i) {
        if (i) out += ',';
        newline(depth + 1);
        items_[i].DumpTo(out, indent, depth + 1);
      }
      if (!items_.empty()) newline(depth);
      out += ']';
      return;
    case Kind::kObject:
      out += '{';
      for (size_t i = 0; i < members_.size(); ++i) {
        if (i) out += ',';
        newline(depth + 1);
        out += JsonQuote(members_[i].first);
        out += indent < 0 ? ":" : ": ";
        members_[i].second.DumpTo(out, indent, depth + 1);
      }
      if (!members_.empty()) newline(depth);
      out += '}';
      return;
  }
}

std::string Json::Dump(int indent) const {
  std::string out;
  DumpTo(out, indent, 0);
  return out;
}

namespace {

struct Parser {
  std::string_view s;
  size_t i = 0;
  std::string error;

  void Skip() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r')) ++i;
  }
  bool Fail(const std::string& what) {
    if (error.empty()) error = what + " at offset " + std::to_string(i);
    return false;
  }
  bool Literal(std::string_view word) {
    if (s.substr(i, word.size()) != word) return Fail("expected " + std::string(word));
    i += word.size();
    return true;
  }
  bool String(std::string* out) {
    if (i >= s.size() || s[i] != '"') return Fail("expected a string");
    ++i;
    while (i < s.size() && s[i] != '"') {
      char c = s[i++];
      if (c == '\\') {
        if (i >= s.size()) return Fail("unterminated escape");
        const char e = s[i++];
        switch (e) {
          case 'n':
            c = '\n';
            break;
          case 't':
            c = '\t';
            break;
          case 'r':
            c = '\r';
            break;
          case 'u': {
            if (i + 4 > s.size()) return Fail("short \\u escape");
            c = static_cast<char>(std::strtol(std::string(s.substr(i, 4)).c_str(), nullptr, 16));
            i += 4;
            break;
          }
          default:
            c = e;
        }
      }
      out->push_back(c);
    }
    if (i >= s.size()) return Fail("unterminated string");
    ++i;
    return true;
  }
  bool Value(Json* out, int depth) {
    if (depth > 64) return Fail("nesting too deep");
    Skip();
    if (i >= s.size()) return Fail("unexpected end");
    const char c = s[i];
    if (c == 'n') {
      *out = Json();
      return Literal("null");
    }
    if (c == 't') {
      *out = Json(true);
      return Literal("true");
    }
    if (c == 'f') {
      *out = Json(false);
      return Literal("false");
    }
    if (c == '"') {
      std::string str;
      if (!String(&str)) return false;
      *out = Json(std::move(str));
      return true;
    }
    if (c == '[') {
      ++i;
      *out = Json::Array();
      Skip();
      if (i < s.size() && s[i] == ']') {
        ++i;
        return true;
      }
      while (true) {
        Json item;
        if (!Value(&item, depth + 1)) return false;
        out->push(std::move(item));
        Skip();
        if (i < s.size() && s[i] == ',') {
          ++i;
          continue;
        }
        if (i < s.size() && s[i] == ']') {
          ++i;
          return true;
        }
        return Fail("expected ',' or ']'");
      }
    }
    if (c == '{') {
      ++i;
      *out = Json::Object();
      Skip();
      if (i < s.size() && s[i] == '}') {
        ++i;
        return true;
      }
      while (true) {
        Skip();
        std::string key;
        if (!String(&key)) return false;
        Skip();
        if (i >= s.size() || s[i] != ':') return Fail("expected ':'");
        ++i;
        Json value;
        if (!Value(&value, depth + 1)) return false;
        out->set(key, std::move(value));
        Skip();
        if (i < s.size() && s[i] == ',') {
          ++i;
          continue;
        }
        if (i < s.size() && s[i] == '}') {
          ++i;
          return true;
        }
        return Fail("expected ',' or '}'");
      }
    }
    const std::string number(s.substr(i, 64));
    char* end = nullptr;
    const double d = std::strtod(number.c_str(), &end);
    const size_t used = static_cast<size_t>(end - number.c_str());
    if (used == 0) return Fail("unexpected character");
    i += used;
    *out = Json(d);
    return true;
  }
};

}  // namespace

bool Json::Parse(std::string_view text, Json* out, std::string* error) {
  Parser p;
  p.s = text;
  if (!p.Value(out, 0)) {
    if (error) *error = p.error;
    return false;
  }
  p.Skip();
  if (p.i != text.size()) {
    if (error) *error = "trailing characters at offset " + std::to_string(p.i);
    return false;
  }
  return true;
}

}  // namespace conformance
}  // namespace tessera
