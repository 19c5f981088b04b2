// Errors as exceptions on the C++ side, tsr_error* at the C boundary, and check() between.
#pragma once

#include <stdexcept>
#include <string>

#include "tessera/sdk/api.hpp"

namespace tessera {
namespace sdk {

// Error carries a tsr_code; kernels may throw it to return that code to the caller.
class Error : public std::runtime_error {
 public:
  Error(tsr_code code, const std::string& message) : std::runtime_error(message), code_(code) {}
  tsr_code code() const { return code_; }

  // to_c makes the equivalent tsr_error (new; the receiver releases it).
  tsr_error* to_c() const { return api().error_create(code_, to_c_string(what())); }

 private:
  static tsr_string to_c_string(const char* s) {
    return tsr_string{s, std::char_traits<char>::length(s)};
  }
  tsr_code code_;
};

// check turns a returned tsr_error into an exception (and releases it); NULL passes.
inline void check(tsr_error* error) {
  if (error == nullptr) return;
  const tsr_code code = api().error_code(error);
  std::string message(from_c(api().error_message(error)));
  api().error_release(error);
  throw Error(code, message);
}

// fail throws an Error; the usual way for a kernel to refuse its input.
[[noreturn]] inline void fail(tsr_code code, const std::string& message) {
  throw Error(code, message);
}

}  // namespace sdk
}  // namespace tessera
