// The C entry points of deterministic algorithms (tessera/c/determinism.h); the switch itself
// is the dispatcher's (Note [Deterministic algorithms] in dispatcher/deterministic.h).
#include "dispatcher/deterministic.h"

#include "runtime/handles.h"
#include "runtime/runtime_state.h"
#include "tessera/c/determinism.h"

using namespace tessera;        // NOLINT: this file only implements the C entry points
using namespace tessera::capi;  // NOLINT

namespace {

// Warn mode's warnings go to the runtime's log (TESSERA_LOG_LEVEL), as every other warning.
void WarnThroughLog(std::string_view message) {
  RuntimeApi().log(TSR_LOG_WARNING, tsr_string{message.data(), message.size()});
}
// ... installed when libtessera loads, which also reads TESSERA_DETERMINISTIC then (a value it
// does not know is said on stderr at start, not at the first op call).
[[maybe_unused]] const bool g_sink_installed =
    (SetDeterminismWarningSink(&WarnThroughLog), GetDeterministicMode(), true);

}  // namespace

extern "C" {

tsr_error* tsr_set_deterministic_algorithms(int32_t mode) {
  return Guard(__func__, [&]() -> tsr_error* {
    absl::Status s = SetDeterministicMode(mode);
    if (!s.ok())
      return MakeError(s.code(), "tsr_set_deterministic_algorithms: " + std::string(s.message()));
    return nullptr;
  });
}

int32_t tsr_deterministic_algorithms(void) { return static_cast<int32_t>(GetDeterministicMode()); }

}  // extern "C"
