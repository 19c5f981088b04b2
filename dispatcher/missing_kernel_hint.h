// MissingKernelHint: why a dispatch key has no kernel, composite or fallback, for the
// registry's "not implemented" error.
//
// Note [Why a key has nothing]
// The registry knows dispatch keys, not plugins: "no kernel ... is registered for that device
// type" is all it can say. The runtime, which loads plugins, knows more: that the plugin which
// provided that device type was unloaded (or the application released its own device
// interface), so a tensor made on it (a compiled model's constants, an application's tensor)
// now reaches a key with nothing registered. It sets a hint once at
// start-up, and the registry appends what the hint says to its error ("" where the hint knows
// no reason). A function pointer, not a registry member: the registry stays free of plugin
// concepts, and the hint works for every registry (tests make their own).
#pragma once

#include <string>

#include "dispatcher/dispatch_key.h"

namespace tessera {

// Returns why `key` has nothing registered, as a clause to append ("the plugin 'npu' that
// provided npu is no longer loaded"), or "". Called on the error path only, with no registry lock
// held; it must not call ops.
using MissingKernelHint = std::string (*)(DispatchKey key);

// SetMissingKernelHint: the hint (nullptr: none) for every registry's "not implemented" error.
void SetMissingKernelHint(MissingKernelHint hint);

// MissingKernelHintFor: the hint's clause for `key`, or "" when none is set.
std::string MissingKernelHintFor(DispatchKey key);

}  // namespace tessera
