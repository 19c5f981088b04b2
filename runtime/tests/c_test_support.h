// What the GoogleTest files of the C ABI share: an error as text, a C string from a literal.
#pragma once

#include <cstring>
#include <string>

#include "tessera/c/tessera.h"

namespace tessera_test {

// Consume takes ownership of an error and returns "CODE: message" ("" for success).
inline std::string Consume(tsr_error* error) {
  if (error == nullptr) return "";
  tsr_string m = tsr_error_message(error);
  std::string text = std::to_string(tsr_error_code(error)) + ": " + std::string(m.data, m.size);
  tsr_error_release(error);
  return text;
}

// S: a tsr_string over a NUL-terminated string (borrowed).
inline tsr_string S(const char* s) { return tsr_string{s, std::strlen(s)}; }

}  // namespace tessera_test
