// Fuzz target: tsr_op_define through the C ABI with arbitrary schema text, then tsr_op_find of
// the op it defined, a call with no arguments, and tsr_registration_release.
//
// Checked (besides no crash and no sanitizer report): an op that defines is found by its name;
// its canonical schema defines again as the same op; releasing a new definition undefines it
// again.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "tessera/c/tessera.h"

namespace {

tsr_string Str(std::string_view s) { return tsr_string{s.data(), s.size()}; }

[[noreturn]] void Fail(const char* what, std::string_view input, tsr_error* error) {
  tsr_string message = error ? tsr_error_message(error) : tsr_string{"", 0};
  std::fprintf(stderr, "op_define: %s\n  schema: %.*s\n  error: %.*s\n", what,
               static_cast<int>(input.size()), input.data(), static_cast<int>(message.size),
               message.data);
  std::abort();
}

// OpName: the "ns::name.overload" before '(', or "" when the text is not a plain name (the
// parser skips whitespace, which tsr_op_find does not).
std::string OpName(std::string_view text) {
  const size_t paren = text.find('(');
  if (paren == std::string_view::npos) return "";
  std::string name;
  for (char c : text.substr(0, paren)) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != ':' && c != '.') {
      return "";
    }
    name += c;
  }
  return name;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string name = OpName(text);
  const tsr_op* before = nullptr;
  tsr_error* error = name.empty() ? nullptr : tsr_op_find(Str(name), &before);
  const bool existed = !name.empty() && error == nullptr;
  tsr_error_release(error);

  tsr_registration* registration = nullptr;
  error = tsr_op_define(Str(text), &registration);
  if (error != nullptr) {
    tsr_error_release(error);
    return 0;
  }
  if (!name.empty()) {
    const tsr_op* op = nullptr;
    error = tsr_op_find(Str(name), &op);
    if (error != nullptr) Fail("defined, but tsr_op_find does not find it", text, error);
    const tsr_string canonical = tsr_op_schema(op);
    (void)tsr_op_name(op);
    // No arguments: a clean error naming the first missing one (or the op's returns when it
    // takes none; a defined op has no kernel, so that is "not implemented").
    tsr_stack* stack = nullptr;
    if (tsr_stack_create(&stack) == nullptr) {
      tsr_error_release(tsr_op_call(op, stack));
      tsr_stack_release(stack);
    }
    const std::string again(canonical.data, canonical.size);
    tsr_registration* same = nullptr;
    error = tsr_op_define(Str(again), &same);
    if (error != nullptr) Fail("its canonical schema does not define the same op", text, error);
    tsr_registration_release(same);
  }
  tsr_registration_release(registration);
  if (!name.empty() && !existed) {
    const tsr_op* gone = nullptr;
    error = tsr_op_find(Str(name), &gone);
    if (error == nullptr) Fail("still found after its definition was released", text, nullptr);
    tsr_error_release(error);
  }
  return 0;
}
