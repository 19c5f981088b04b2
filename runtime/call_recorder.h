// Recording the op calls an application makes (TESSERA_RECORD=FILE), so that the conformance
// suite can replay them as cases (`conformance --cases-from FILE`; docs/conformance.md,
// "Cases from recordings"). Note [Recording calls] in call_recorder.cc.
#pragma once

#include "absl/status/status.h"
#include "dispatcher/op_registry.h"
#include "dispatcher/value.h"

namespace tessera {

// g_calls_recorded: TESSERA_RECORD named a file this process records into; set once, when
// libtessera loads. Read on every boxed call of the C ABI and of a compiled model, so it is a
// plain flag, not a function with a guard.
extern bool g_calls_recorded;
inline bool CallsRecorded() { return g_calls_recorded; }

// CallRecorded runs `op` on `stack` as OpRegistry::Call does and, for a call the application
// made (not one a kernel makes while it runs), records it: its arguments' metadata, the values
// of the small tensors among them, and its error if it failed.
absl::Status CallRecorded(const OperatorHandle& op, Stack* stack);

}  // namespace tessera
