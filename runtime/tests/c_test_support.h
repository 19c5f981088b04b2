// What the GoogleTest files of the C ABI share: an error as text, a C string from a literal, a
// model file loaded and compiled.
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

// LoadAndCompile: the model in `file`'s bytes in *model and its form compiled for `device`
// with `flags` (TSR_COMPILE_*) in *compiled, or the first error ("" for success; on error the
// caller releases what was made, NULL otherwise).
inline std::string LoadAndCompile(const std::string& file, tsr_device device, uint32_t flags,
                                  tsr_model** model, tsr_compiled_model** compiled) {
  *model = nullptr;
  *compiled = nullptr;
  const std::string loaded = Consume(tsr_model_load_from_memory(file.data(), file.size(), model));
  if (!loaded.empty()) return loaded;
  tsr_compile_options options = {};
  options.struct_size = sizeof options;
  options.flags = flags;
  return Consume(tsr_model_compile_with_options(*model, device, &options, compiled));
}

}  // namespace tessera_test
