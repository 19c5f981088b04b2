// What the conformance CLI's tests share: running the CLI with a JSON report and reading its
// cases back, paths for scratch files, and filters over the cases' statuses. CONFORMANCE_BIN and
// PLANTED_DIR come from the tests' compile definitions (conformance/tests/CMakeLists.txt).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "conformance/json.h"
#include "conformance/report.h"

namespace tessera {
namespace conformance {

struct CliRun {
  int exit_code = -1;  // -1 when the process died of a signal (term_signal)
  int term_signal = 0;
  std::string output;
  Json json;
  std::vector<CaseResult> cases;
};

inline std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/tessera_conformance_test_" + std::to_string(getpid()) +
         "_" + name;
}

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline CliRun Conformance(const std::string& args) {
  static int counter = 0;
  const std::string json = TempPath("run" + std::to_string(++counter) + ".json");
  const std::string out = json + ".txt";
  const std::string cmd =
      std::string(CONFORMANCE_BIN) + " " + args + " --json " + json + " > " + out + " 2>&1";
  const int status = std::system(cmd.c_str());
  CliRun r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.term_signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  r.output = Slurp(out);
  std::string error;
  if (Json::Parse(Slurp(json), &r.json, &error)) {
    for (const Json& c : r.json["cases"].items()) r.cases.push_back(CaseFromJson(c));
  }
  std::remove(json.c_str());
  std::remove(out.c_str());
  return r;
}

inline std::string Plugin(const std::string& bug) {
  return std::string("--plugin ") + PLANTED_DIR + "/libtsr_planted_" + bug + ".so";
}

// Statuses of the cases matching op, dtype, oracle (and layout unless empty).
inline std::vector<Status> Statuses(const CliRun& r, const std::string& op,
                                    const std::string& dtype, const std::string& oracle,
                                    const std::string& layout = "") {
  std::vector<Status> out;
  for (const CaseResult& c : r.cases) {
    if (c.op == op && c.dtype == dtype && c.oracle == oracle &&
        (layout.empty() || c.layout == layout)) {
      out.push_back(c.status);
    }
  }
  return out;
}

inline bool All(const std::vector<Status>& v, Status s) {
  if (v.empty()) return false;
  for (Status x : v) {
    if (x != s) return false;
  }
  return true;
}
inline bool Any(const std::vector<Status>& v, Status s) {
  for (Status x : v) {
    if (x == s) return true;
  }
  return false;
}

}  // namespace conformance
}  // namespace tessera
