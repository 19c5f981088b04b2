// A crash handler for the conformance CLI: when a plugin's kernel kills the process (SIGSEGV,
// SIGBUS, SIGFPE, SIGILL, SIGABRT), say which op and case was running before dying, instead of
// leaving no output at all.
//
// The suite notes each case before running it (NoteRunningCase), which formats the message in
// advance; the handler only write(2)s that buffer, restores the previous disposition and lets
// the signal take its course again (the default action, or a sanitizer's handler), so the
// process still dies of the same signal.
#pragma once

#include <string>

#include "conformance/report.h"

namespace tessera {
namespace conformance {

enum class CrashReport {
  kTerminal,  // a run without --isolate: a message for a person, on stderr
  kPipe,      // an --isolate child: one JSON line {"crashed_in": {...}} on `fd`, for the parent
};

// InstallCrashHandler installs the handler (on an alternate stack, so that a stack overflow is
// reported too); `info` gives the terminal message's repro line. A second call only changes
// the mode and the descriptor.
void InstallCrashHandler(CrashReport mode, int fd, const RunInfo& info);

// NoteRunningOp records the op and dtype being worked on outside any case (samples,
// references, the CPU backend's result for cross_backend); NoteRunningCase the case about to
// run (dtype "*" for whole-op cases), until NoteCaseDone. All three do nothing until
// InstallCrashHandler is called.
void NoteRunningOp(const std::string& op, const std::string& dtype);
void NoteRunningCase(const std::string& op, const std::string& dtype, const std::string& layout,
                     const std::string& oracle, const std::string& sample);
void NoteCaseDone();

// The JSON line's key (kPipe) and its parent-side reading: "case float32 reference
// [contiguous], sample [5] with [5]", or "float32, outside any case (...)", from the object
// under kCrashedInKey.
extern const char kCrashedInKey[];
std::string CrashedInText(const Json& crashed_in);

}  // namespace conformance
}  // namespace tessera
