#include "runtime/env_switch.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/str_format.h"
#include "runtime/runtime_state.h"

namespace tessera {

bool EnvSwitchOn(const char* name, std::atomic<bool>& warned, const char* stays_on) {
  const char* value = std::getenv(name);
  if (value == nullptr || std::strcmp(value, "1") == 0) return true;
  if (std::strcmp(value, "0") == 0) return false;
  if (!warned.exchange(true)) {
    const std::string message =
        absl::StrFormat("%s: expected 0 or 1, got '%s'; %s", name, value, stays_on);
    capi::RuntimeApi().log(TSR_LOG_WARNING, tsr_string{message.data(), message.size()});
  }
  return true;
}

}  // namespace tessera
