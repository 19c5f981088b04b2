// --isolate: each op runs in a child process, so that a crash or a hang is a case of that op
// rather than the end of the run.
//
// Note [Children load the plugins themselves]: a device runtime may not survive fork (CUDA and
// HIP do not: a child forked after the parent made a context fails every call). So under
// --isolate the parent never loads the plugins under test, the default plugins or the cases
// libraries: a probe child loads them first, to say what the run is (its device, the cases
// libraries' ops) or why it cannot run; then every op's child loads them afresh and runs its
// op. Children are forked from a parent that holds only the runtime.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "conformance/oracles.h"
#include "conformance/report.h"

namespace tessera {
namespace conformance {

// LoadFn loads what the run tests in the calling process: the default plugins, the plugins
// under test and the cases libraries, and checks the device. It returns 0 with `*config`,
// `*device_name` and `*vendor_ops` filled in, or the run's exit code having printed why.
using LoadFn = std::function<int(RunConfig* config, std::string* device_name,
                                 std::vector<OpInfo>* vendor_ops)>;

// What the probe child found: `exit_code` 0 and the run's device and cases libraries' ops, or
// the exit code the run ends with.
struct Probe {
  int exit_code = 0;
  std::string device_name;
  std::vector<std::string> vendor_ops;
};

// ProbeLoad runs `load` in a child process. A child that crashes or outlives `timeout` ends
// the run with exit code 2 and a message naming what it was loading.
Probe ProbeLoad(const LoadFn& load, double timeout, const RunInfo& info);

// RunIsolated runs each op of `ops` (names of the op database or of a cases library) in its
// own child process, `jobs` at a time; each child calls `load`, then runs its op. Cases come
// back through a pipe as JSON lines. A child that dies by a signal or exits with an error is a
// `crash` case of its op, one that outlives `timeout` a `timeout` case, each naming the case
// it was running. `done` is called as each op finishes.
void RunIsolated(const std::vector<std::string>& ops, const LoadFn& load, int jobs, double timeout,
                 const RunInfo& info, std::vector<CaseResult>* cases,
                 const std::function<void(const std::string& op)>& done);

}  // namespace conformance
}  // namespace tessera
