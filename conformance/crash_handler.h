// A crash handler for the conformance CLI: when a plugin's kernel kills the process (SIGSEGV,
// SIGBUS, SIGFPE, SIGILL, SIGABRT), say which op and case was running before dying, instead of
// leaving no output at all.
//
// The suite notes each case before running it (NoteRunningCase), and each plugin or cases
// library before loading it (NoteLoading), which formats the message in advance; the handler
// only write(2)s that buffer, restores the previous disposition and lets the signal take its
// course again (the default action, or a sanitizer's handler), so the process still dies of the
// same signal.
//
// The notes may live in memory shared with a parent process (RunningNotes, --isolate): a child
// that runs past --timeout is killed with SIGKILL, which no handler sees, and the parent reads
// what the child was running from the notes instead.
#pragma once

#include <string>

#include "conformance/report.h"

namespace tessera {
namespace conformance {

enum class CrashReport {
  kTerminal,  // a run without --isolate: a message for a person, on stderr
  kPipe,      // an --isolate child: one JSON line {"crashed_in": {...}} on `fd`, for the parent
};

// RunningNotes: what the process is running, preformatted for the handler. The handler keeps
// its own; CreateSharedNotes makes one in memory shared with children forked afterwards
// (MAP_SHARED), which a parent reads after the child died or was killed (ReadNotes).
struct RunningNotes;
RunningNotes* CreateSharedNotes();  // aborts the run (exit 2) when mmap fails
void ReleaseSharedNotes(RunningNotes* notes);
// ReadNotes: the JSON line a kPipe handler would write ({"crashed_in": {...}}), or "" when
// nothing was noted.
std::string ReadNotes(const RunningNotes* notes);

// InstallCrashHandler installs the handler (on an alternate stack, so that a stack overflow is
// reported too); `info` gives the terminal message's repro line; `notes` (optional) is where
// the notes go: shared memory a parent reads (--isolate), else the handler's own. A second call
// changes the mode, the descriptor, the info and the notes.
void InstallCrashHandler(CrashReport mode, int fd, const RunInfo& info,
                         RunningNotes* notes = nullptr);

// NoteLoading records that a plugin or a cases library is being loaded (`what`: "plugin",
// "cases library", or "the default plugins" with an empty path), until the next note;
// NoteIdle that nothing in particular runs.
void NoteLoading(const std::string& what, const std::string& path);
void NoteIdle();

// NoteRunningOp records the op and dtype being worked on outside any case (samples,
// references, the CPU backend's result for cross_backend); NoteRunningCase the case about to
// run (dtype "*" for whole-op cases), until NoteCaseDone. All three do nothing until
// InstallCrashHandler is called.
void NoteRunningOp(const std::string& op, const std::string& dtype);
void NoteRunningCase(const std::string& op, const std::string& dtype, const std::string& layout,
                     const std::string& oracle, const std::string& sample);
void NoteCaseDone();

// The JSON line's key (kPipe) and its parent-side reading: "case float32 reference
// [contiguous], sample [5] with [5]", "float32, outside any case (...)", or "loading plugin
// 'libx.so'", from the object under kCrashedInKey; CrashedInDtype: the dtype it names ("*" for
// whole-op cases, "" when it names none).
extern const char kCrashedInKey[];
std::string CrashedInText(const Json& crashed_in);
std::string CrashedInDtype(const Json& crashed_in);

}  // namespace conformance
}  // namespace tessera
