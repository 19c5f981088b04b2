// The conformance CLI's exit codes (docs/conformance.md), for main.cc and the processes of
// --isolate (isolate.cc).
#pragma once

namespace tessera {
namespace conformance {

constexpr int kExitOk = 0, kExitFailures = 1, kExitUsage = 2;
// The device to test is not present on this machine (a GPU plugin without a GPU): nothing was
// tested, which is neither a pass nor a failure. 77 is the "skipped" status of Automake and
// CTest's SKIP_RETURN_CODE convention.
constexpr int kExitNoDevice = 77;

}  // namespace conformance
}  // namespace tessera
