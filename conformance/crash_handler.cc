#include "conformance/crash_handler.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

// TESSERA_SANITIZER_RUNTIME: built with a sanitizer whose runtime has death callbacks
// (GCC defines __SANITIZE_*; clang answers __has_feature).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TESSERA_SANITIZER_RUNTIME 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TESSERA_SANITIZER_RUNTIME 1
#endif
#endif
#ifndef TESSERA_SANITIZER_RUNTIME
#define TESSERA_SANITIZER_RUNTIME 0
#endif
#if TESSERA_SANITIZER_RUNTIME
#include <sanitizer/common_interface_defs.h>
#endif

namespace tessera {
namespace conformance {

const char kCrashedInKey[] = "crashed_in";

namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
constexpr size_t kBufferSize = 4096;  // at most PIPE_BUF: one write(2) to a pipe is atomic

// A preformatted message: the text is written before the length, so a reader on another
// thread sees at worst a mix of two messages' bytes, never past the end.
struct Message {
  char text[kBufferSize];
  std::atomic<size_t> length{0};
  void Set(const std::string& s) {
    const size_t n = std::min(s.size(), kBufferSize);
    length.store(0, std::memory_order_release);
    std::memcpy(text, s.data(), n);
    length.store(n, std::memory_order_release);
  }
};

// Lock-free atomics work across processes in shared memory, as RunningNotes needs.
static_assert(std::atomic<size_t>::is_always_lock_free && std::atomic<bool>::is_always_lock_free,
              "RunningNotes lives in memory shared between processes");

}  // namespace

struct RunningNotes {
  Message op_message, case_message;  // outside any case (or loading) / the case running
  std::atomic<bool> in_case{false};
};

namespace {

struct State {
  std::atomic<bool> installed{false};
  std::atomic<int> mode{static_cast<int>(CrashReport::kTerminal)};
  std::atomic<int> fd{STDERR_FILENO};
  RunningNotes own;
  std::atomic<RunningNotes*> notes{&own};
  struct sigaction previous[NSIG];
  RunInfo info;
};

State& state() {
  static State* s = new State;  // never destroyed: a crash may come during exit
  return *s;
}

void WriteAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void WriteText(int fd, const char* s) { WriteAll(fd, s, std::strlen(s)); }

const char* SignalName(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV (segmentation fault)";
    case SIGBUS:
      return "SIGBUS (bus error)";
    case SIGFPE:
      return "SIGFPE (arithmetic exception)";
    case SIGILL:
      return "SIGILL (illegal instruction)";
    case SIGABRT:
      return "SIGABRT (abort)";
  }
  return "a signal";
}

// WriteReport writes what was running: the JSON line for the parent under --isolate, else
// "\nconformance: <what> while running op ...". Async-signal-safe: write(2) and strlen only.
void WriteReport(const char* what, const char* detail) {
  State& s = state();
  const int fd = s.fd.load();
  const RunningNotes& notes = *s.notes.load();
  const Message& m = notes.in_case.load() ? notes.case_message : notes.op_message;
  const size_t n = m.length.load(std::memory_order_acquire);
  if (s.mode.load() == static_cast<int>(CrashReport::kPipe)) {
    if (n > 0) WriteAll(fd, m.text, n);
  } else {
    WriteText(fd, "\nconformance: ");
    WriteText(fd, what);
    WriteText(fd, detail);
    WriteAll(fd, m.text, n);
  }
}

#if TESSERA_SANITIZER_RUNTIME
// A sanitizer that finds an error (UBSan's null store, ASan's overflow) ends the process itself,
// before any signal: its death callback says what was running, as OnCrash does for a signal.
void OnSanitizerDeath() { WriteReport("a sanitizer stopped the process", ""); }
#endif

// Async-signal-safe throughout: write(2), strlen, sigaction, raise.
void OnCrash(int sig, siginfo_t* info, void*) {
  const int saved_errno = errno;
  State& s = state();
  WriteReport("the process died of ", SignalName(sig));
  // Let the signal take its course with the previous disposition (the default, or a
  // sanitizer's handler, which then prints its own report): a fault comes back when this
  // returns; a signal sent by kill, raise or abort is sent again.
  struct sigaction previous = s.previous[sig];
  if (previous.sa_handler == SIG_IGN) previous.sa_handler = SIG_DFL;
  sigaction(sig, &previous, nullptr);
  if (info == nullptr || info->si_code <= 0) raise(sig);
  errno = saved_errno;
}

std::string CaseText(const std::string& dtype, const std::string& layout, const std::string& oracle,
                     const std::string& sample) {
  return dtype + " " + oracle + " [" + layout + "], sample " + sample;
}

// The hint every terminal message ends with.
constexpr char kIsolateHint[] =
    "  --isolate runs each op in a child process: a crash becomes a `crash` case of that op and "
    "the run continues\n";
constexpr char kIsolateLoadHint[] =
    "  --isolate loads the plugins and cases libraries in a child process first: a crash there "
    "ends the run with exit status 2 and a message naming what was loading\n";

bool PipeMode() { return state().mode.load() == static_cast<int>(CrashReport::kPipe); }

std::string PipeLine(Json what) {
  Json line = Json::Object();
  line.set(kCrashedInKey, std::move(what));
  return line.Dump() + "\n";
}

}  // namespace

RunningNotes* CreateSharedNotes() {
  void* p = mmap(nullptr, sizeof(RunningNotes), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                 -1, 0);
  if (p == MAP_FAILED) {
    std::perror("conformance: mmap (the notes of a child process)");
    std::exit(2);
  }
  return new (p) RunningNotes;
}

void ReleaseSharedNotes(RunningNotes* notes) {
  if (notes == nullptr) return;
  notes->~RunningNotes();
  munmap(notes, sizeof(RunningNotes));
}

std::string ReadNotes(const RunningNotes* notes) {
  const Message& m = notes->in_case.load() ? notes->case_message : notes->op_message;
  const size_t n = m.length.load(std::memory_order_acquire);
  return std::string(m.text, n);
}

void InstallCrashHandler(CrashReport mode, int fd, const RunInfo& info, RunningNotes* notes) {
  State& s = state();
  s.mode = static_cast<int>(mode);
  s.fd = fd;
  s.info = info;
  s.notes = notes != nullptr ? notes : &s.own;
  if (s.installed.exchange(true)) return;
  // An alternate stack, so that a stack overflow in a kernel is reported too.
  static char alternate[1 << 16];
  stack_t stack{};
  stack.ss_sp = alternate;
  stack.ss_size = sizeof alternate;
  sigaltstack(&stack, nullptr);
#if TESSERA_SANITIZER_RUNTIME
  __sanitizer_set_death_callback(&OnSanitizerDeath);
  // GCC links UBSan as a runtime of its own (libubsan beside libasan), with its own death
  // callback: the symbol above resolves to the first runtime only.
  if (void* ubsan = dlopen("libubsan.so.1", RTLD_NOW | RTLD_NOLOAD)) {
    using SetDeathCallback = void (*)(void (*)(void));
    if (auto set =
            reinterpret_cast<SetDeathCallback>(dlsym(ubsan, "__sanitizer_set_death_callback"))) {
      set(&OnSanitizerDeath);
    }
    dlclose(ubsan);  // NOLOAD only counted a reference; the runtime stays
  }
#endif
  for (int sig : kSignals) {
    struct sigaction action {};
    action.sa_sigaction = &OnCrash;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    sigaction(sig, &action, &s.previous[sig]);
  }
  NoteIdle();
}

void NoteLoading(const std::string& what, const std::string& path) {
  State& s = state();
  if (!s.installed.load()) return;
  RunningNotes& notes = *s.notes.load();
  notes.in_case = false;
  if (PipeMode()) {
    Json loading = Json::Object();
    loading.set("loading", what);
    loading.set("path", path);
    notes.op_message.Set(PipeLine(std::move(loading)));
    return;
  }
  notes.op_message.Set(" while loading " + what + (path.empty() ? "" : " '" + path + "'") +
                       (what == "cases library" ? " (in its tsr_conformance_cases)"
                                                : " (in its tsr_plugin_init or register_fn)") +
                       "\n" + kIsolateLoadHint);
}

void NoteIdle() {
  State& s = state();
  if (!s.installed.load()) return;
  RunningNotes& notes = *s.notes.load();
  notes.in_case = false;
  notes.op_message.Set(PipeMode() ? std::string() : std::string(", outside any op\n"));
}

void NoteRunningOp(const std::string& op, const std::string& dtype) {
  State& s = state();
  if (!s.installed.load()) return;
  RunningNotes& notes = *s.notes.load();
  notes.in_case = false;
  if (PipeMode()) {
    Json what = Json::Object();
    what.set("dtype", dtype);
    what.set("outside_cases", true);
    notes.op_message.Set(PipeLine(std::move(what)));
    return;
  }
  CaseResult c;
  c.op = op;
  c.dtype = dtype;
  notes.op_message.Set(" while running op '" + op + "'" +
                       (dtype == "*" ? std::string() : " (dtype " + dtype + ")") +
                       ", outside any case (making samples or references, or running the CPU "
                       "backend)\n  repro: " +
                       ReproCommand(s.info, c) + "\n" + kIsolateHint);
}

void NoteRunningCase(const std::string& op, const std::string& dtype, const std::string& layout,
                     const std::string& oracle, const std::string& sample) {
  State& s = state();
  if (!s.installed.load()) return;
  RunningNotes& notes = *s.notes.load();
  // Long sample descriptions are cut, so that the message fits its buffer (and one write).
  const std::string cut = sample.size() > 1024 ? sample.substr(0, 1024) + "..." : sample;
  if (PipeMode()) {
    Json what = Json::Object();
    what.set("dtype", dtype);
    what.set("layout", layout);
    what.set("oracle", oracle);
    what.set("sample", cut);
    notes.case_message.Set(PipeLine(std::move(what)));
  } else {
    CaseResult c;
    c.op = op;
    c.dtype = dtype;
    notes.case_message.Set(" while running op '" + op + "', case " +
                           CaseText(dtype, layout, oracle, cut) +
                           "\n  repro: " + ReproCommand(s.info, c) + "\n" + kIsolateHint);
  }
  notes.in_case = true;
}

void NoteCaseDone() { state().notes.load()->in_case = false; }

std::string CrashedInText(const Json& crashed_in) {
  if (const Json* loading = crashed_in.find("loading")) {
    const std::string& path = crashed_in["path"].as_string();
    return "loading " + loading->as_string() + (path.empty() ? "" : " '" + path + "'");
  }
  if (crashed_in["outside_cases"].as_bool()) {
    const std::string& dtype = crashed_in["dtype"].as_string();
    return (dtype == "*" ? std::string() : dtype + ", ") +
           "outside any case (making samples or references, or running the CPU backend)";
  }
  return "case " + CaseText(crashed_in["dtype"].as_string(), crashed_in["layout"].as_string(),
                            crashed_in["oracle"].as_string(), crashed_in["sample"].as_string());
}

std::string CrashedInDtype(const Json& crashed_in) {
  return crashed_in.find("loading") ? std::string() : crashed_in["dtype"].as_string();
}

}  // namespace conformance
}  // namespace tessera
