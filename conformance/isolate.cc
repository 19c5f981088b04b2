// --isolate's processes; see Note [Children load the plugins themselves] in isolate.h.
#include "conformance/isolate.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "conformance/crash_handler.h"
#include "conformance/exit_codes.h"
#include "conformance/json.h"

namespace tessera {
namespace conformance {
namespace {

// WriteAll writes `line` to `fd` whole, or ends the child (its parent sees the crash).
void WriteAll(int fd, const std::string& line) {
  for (size_t off = 0; off < line.size();) {
    const ssize_t w = write(fd, line.data() + off, line.size() - off);
    if (w <= 0) _exit(3);
    off += static_cast<size_t>(w);
  }
}

[[noreturn]] void Fail(const char* what) {
  std::perror(what);
  std::exit(kExitUsage);
}

// Lines collects what a child writes to its pipe and hands back whole lines.
struct Lines {
  Lines() = default;
  explicit Lines(int f) : fd(f) {}
  int fd = -1;
  std::string buffer;
  bool eof = false;
  // Read reads what is there (after poll said so); false at end of file.
  bool Read() {
    char buf[65536];
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) return !(eof = true);
    buffer.append(buf, static_cast<size_t>(n));
    return true;
  }
  bool Next(std::string* line) {
    const size_t nl = buffer.find('\n');
    if (nl == std::string::npos) return false;
    *line = buffer.substr(0, nl);
    buffer.erase(0, nl + 1);
    return true;
  }
};

// FindOp: the op database's entry named `name`, else the cases libraries' (loaded by `load`).
const OpInfo* FindOp(const std::string& name, const std::vector<OpInfo>& vendor_ops) {
  for (const OpInfo& op : OpDatabase()) {
    if (op.name == name) return &op;
  }
  for (const OpInfo& op : vendor_ops) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

}  // namespace

Probe ProbeLoad(const LoadFn& load, double timeout, const RunInfo& info) {
  int fds[2];
  if (pipe(fds) != 0) Fail("conformance: pipe");
  RunningNotes* notes = CreateSharedNotes();
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) Fail("conformance: fork");
  if (pid == 0) {
    close(fds[0]);
    InstallCrashHandler(CrashReport::kPipe, -1, info, notes);
    RunConfig config;
    std::string device_name;
    std::vector<OpInfo> vendor_ops;
    const int code = load(&config, &device_name, &vendor_ops);
    NoteIdle();
    Json j = Json::Object();
    j.set("exit_code", static_cast<double>(code));
    j.set("device", device_name);
    Json names = Json::Array();
    for (const OpInfo& op : vendor_ops) names.push(Json(op.name));
    j.set("vendor_ops", names);
    std::fflush(stdout);
    std::fflush(stderr);
    WriteAll(fds[1], j.Dump() + "\n");
    _exit(0);
  }
  close(fds[1]);
  // What the child was loading, from the notes: ", while loading plugin 'x.so'".
  auto loading = [&]() -> std::string {
    Json line;
    const std::string noted = ReadNotes(notes);
    if (noted.empty() || !Json::Parse(noted, &line, nullptr) || !line.find(kCrashedInKey))
      return "";
    return ", while " + CrashedInText(line[kCrashedInKey]);
  };
  Lines out{fds[0]};
  const auto start = std::chrono::steady_clock::now();
  while (!out.eof) {
    pollfd p{out.fd, POLLIN, 0};
    if (poll(&p, 1, 10) > 0) out.Read();
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > timeout) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      std::fprintf(stderr,
                   "conformance: loading the plugins ran past --timeout %g s and was killed%s (a "
                   "plugin hangs in tsr_plugin_init or register_fn, or a cases library in "
                   "tsr_conformance_cases)\n",
                   timeout, loading().c_str());
      std::exit(kExitUsage);
    }
  }
  close(out.fd);
  int status = 0;
  waitpid(pid, &status, 0);
  // The child exits 0 on every path it controls; anything else is a crash: a signal, or a
  // sanitizer's report of one, which exits with its own status.
  std::string line;
  Json j;
  if (WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0) || !out.Next(&line) ||
      !Json::Parse(line, &j, nullptr)) {
    const std::string how = WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status)) +
                                                      " (" + strsignal(WTERMSIG(status)) + ")"
                                                : "the process exiting with status " +
                                                      std::to_string(WEXITSTATUS(status));
    std::fprintf(stderr,
                 "conformance: loading the plugins crashed, with %s%s: a plugin crashes in "
                 "tsr_plugin_init or register_fn, or a cases library in tsr_conformance_cases\n",
                 how.c_str(), loading().c_str());
    std::exit(kExitUsage);
  }
  ReleaseSharedNotes(notes);
  Probe probe;
  probe.exit_code = static_cast<int>(j["exit_code"].as_number());
  probe.device_name = j["device"].as_string();
  for (const Json& name : j["vendor_ops"].items()) probe.vendor_ops.push_back(name.as_string());
  return probe;
}

void RunIsolated(const std::vector<std::string>& ops, const LoadFn& load, int jobs, double timeout,
                 const RunInfo& info, std::vector<CaseResult>* cases,
                 const std::function<void(const std::string& op)>& done) {
  struct Child {
    std::string op;
    Lines out;
    std::chrono::steady_clock::time_point start;
    std::string crashed_in;     // what the child was running when it died, if it said
    std::string running_dtype;  // and its dtype
    RunningNotes* notes;        // what it is running, in memory shared with it
  };
  std::map<pid_t, Child> children;
  size_t next = 0;
  std::fflush(stdout);
  std::fflush(stderr);
  // finish reaps a child that closed its pipe (forced: kPass) or ran past the timeout (forced:
  // kTimeout, already killed). A crash or timeout names the case the child was running: from
  // the line its crash handler wrote, else from the notes it shares with us (a SIGKILL, or a
  // death before the line got out).
  auto finish = [&](pid_t pid, Child& c, Status forced) {
    close(c.out.fd);
    int status = 0;
    waitpid(pid, &status, 0);
    if (c.crashed_in.empty()) {
      Json line;
      const std::string noted = ReadNotes(c.notes);
      if (!noted.empty() && Json::Parse(noted, &line, nullptr)) {
        if (const Json* crashed_in = line.find(kCrashedInKey)) {
          c.crashed_in = CrashedInText(*crashed_in);
          c.running_dtype = CrashedInDtype(*crashed_in);
        }
      }
    }
    ReleaseSharedNotes(c.notes);
    CaseResult r;
    r.op = c.op;
    r.dtype = "*";
    r.layout = "-";
    r.oracle = "process";
    if (forced == Status::kTimeout) {
      r.status = Status::kTimeout;
      char why[128];
      std::snprintf(why, sizeof why, "the op ran past --timeout %g s and was killed", timeout);
      r.message = why;
    } else if (WIFSIGNALED(status)) {
      r.status = Status::kCrash;
      r.message = std::string("the op's process died of signal ") +
                  std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
    } else if (WEXITSTATUS(status) != 0) {
      r.status = Status::kCrash;
      r.message = "the op's process exited with status " + std::to_string(WEXITSTATUS(status));
    }
    if (r.status != Status::kPass && !c.crashed_in.empty()) {
      r.message += " while running " + c.crashed_in;
      r.running_dtype = c.running_dtype;
    }
    if (r.status != Status::kPass) cases->push_back(r);
    done(c.op);
  };
  while (next < ops.size() || !children.empty()) {
    while (next < ops.size() && static_cast<int>(children.size()) < jobs) {
      int fds[2];
      if (pipe(fds) != 0) Fail("conformance: pipe");
      const std::string& name = ops[next++];
      RunningNotes* notes = CreateSharedNotes();
      const pid_t pid = fork();
      if (pid < 0) Fail("conformance: fork");
      if (pid == 0) {
        close(fds[0]);
        for (auto& [sibling, c] : children) close(c.out.fd);  // the running siblings' pipes
        InstallCrashHandler(CrashReport::kPipe, fds[1], info, notes);
        RunConfig config;
        std::string device_name;
        std::vector<OpInfo> vendor_ops;
        // The probe child loaded the same: a failure here (said on stderr or stdout) is this
        // op's crash.
        if (const int code = load(&config, &device_name, &vendor_ops); code != 0) {
          std::fflush(stdout);
          std::fflush(stderr);
          _exit(code);
        }
        NoteIdle();
        const OpInfo* op = FindOp(name, vendor_ops);
        if (op == nullptr) {
          std::fprintf(stderr, "conformance: op '%s' is not in the op database here\n",
                       name.c_str());
          _exit(kExitUsage);
        }
        RunOp(*op, config,
              [&](const CaseResult& c) { WriteAll(fds[1], CaseToJson(c).Dump() + "\n"); });
        _exit(0);
      }
      close(fds[1]);
      children[pid] = Child{name, Lines{fds[0]}, std::chrono::steady_clock::now(), "", "", notes};
    }
    std::vector<pollfd> polls;
    std::vector<pid_t> pids;
    for (auto& [pid, c] : children) {
      polls.push_back({c.out.fd, POLLIN, 0});
      pids.push_back(pid);
    }
    poll(polls.data(), polls.size(), 100);
    for (size_t i = 0; i < polls.size(); ++i) {
      Child& c = children[pids[i]];
      if (polls[i].revents & (POLLIN | POLLHUP)) {
        c.out.Read();
        std::string text;
        while (c.out.Next(&text)) {
          Json j;
          if (!Json::Parse(text, &j, nullptr)) {
            // not a line of ours (cannot happen): ignored
          } else if (const Json* crashed_in = j.find(kCrashedInKey)) {
            c.crashed_in = CrashedInText(*crashed_in);
            c.running_dtype = CrashedInDtype(*crashed_in);
          } else {
            cases->push_back(CaseFromJson(j));
          }
        }
      }
      const double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - c.start).count();
      if (c.out.eof) {
        finish(pids[i], c, Status::kPass);
        children.erase(pids[i]);
      } else if (elapsed > timeout) {
        kill(pids[i], SIGKILL);
        finish(pids[i], c, Status::kTimeout);
        children.erase(pids[i]);
      }
    }
  }
}

}  // namespace conformance
}  // namespace tessera
