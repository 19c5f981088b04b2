#include "tessera/c/error.h"

#include <new>

#include "runtime/handles.h"

namespace tessera {
namespace capi {
namespace {

// Returned when not even an error can be allocated; never freed.
tsr_error g_out_of_memory{TSR_RESOURCE_EXHAUSTED, "out of memory while creating an error"};

}  // namespace

tsr_error* MakeError(absl::StatusCode code, std::string message) {
  tsr_error* error = new (std::nothrow) tsr_error{static_cast<tsr_code>(code), std::string()};
  if (error == nullptr) return &g_out_of_memory;
  error->message = std::move(message);  // a move: cannot throw
  return error;
}

void ReleaseError(tsr_error* error) {
  if (error != &g_out_of_memory) delete error;
}

absl::Status StatusFrom(tsr_error* error) {
  if (error == nullptr) return absl::OkStatus();
  const int32_t code = RawEnum(error->code);
  absl::Status status(code > 0 && code <= TSR_UNAUTHENTICATED ? static_cast<absl::StatusCode>(code)
                                                              : absl::StatusCode::kUnknown,
                      error->message);
  ReleaseError(error);
  return status;
}

}  // namespace capi
}  // namespace tessera

extern "C" {

tsr_error* tsr_error_create(tsr_code code, tsr_string message) {
  return tessera::capi::Guard("tsr_error_create", [&] {
    const int32_t value = tessera::capi::RawEnum(code);
    const bool known = value > TSR_OK && value <= TSR_UNAUTHENTICATED;
    // A message of a wrong size still makes an error of the caller's code, saying so.
    absl::StatusOr<std::string_view> text =
        tessera::capi::ReadString(message, "tsr_error_create", "the message");
    return tessera::capi::MakeError(
        known ? static_cast<absl::StatusCode>(value) : absl::StatusCode::kUnknown,
        text.ok() ? std::string(*text) : std::string(text.status().message()));
  });
}

tsr_code tsr_error_code(const tsr_error* error) { return error ? error->code : TSR_OK; }

tsr_string tsr_error_message(const tsr_error* error) {
  if (error == nullptr) return tsr_string{"", 0};
  return tsr_string{error->message.data(), error->message.size()};
}

void tsr_error_release(tsr_error* error) { tessera::capi::ReleaseError(error); }

}  // extern "C"
