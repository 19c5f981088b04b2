// On/off settings read from environment variables (TESSERA_PACKED_KERNELS,
// TESSERA_FOLD_BATCH_NORM): unset or "1" is on, "0" is off; another value is logged once, as a
// warning naming the variable, the value and what stays on, and leaves the setting on.
#pragma once

#include <atomic>

namespace tessera {

// EnvSwitchOn: the setting of variable `name`, read now. `warned` is the caller's flag (one per
// variable, static), so each variable's bad value is logged once; `stays_on` ends the warning
// ("packed kernel entries stay on").
bool EnvSwitchOn(const char* name, std::atomic<bool>& warned, const char* stays_on);

}  // namespace tessera
