// Model checks (--models): each model file of the zoo (docs/model_format.md) compiled for the
// device under test and run on its example inputs, as TorchBench's accuracy checks do for a
// backend: its outputs against PyTorch's (stored in the file) and against the CPU plugin's,
// how many of its nodes run natively, and its time against the CPU plugin's.
#pragma once

#include <string>
#include <vector>

#include "conformance/json.h"
#include "tessera/sdk/runtime.hpp"

namespace tessera {
namespace conformance {

struct ModelResult {
  std::string model;     // the file's name without .tsrm
  std::string status;    // "pass", "fail" (an output disagrees), "error" (could not run)
  std::string message;   // why, for fail and error
  // folded: nodes folded at compile time into an earlier node (TSR_NODE_FOLDED), which run no
  // call of their own.
  // claimed: nodes in runs the device's graph compiler claimed (TSR_NODE_CLAIMED).
  size_t nodes = 0, native = 0, composite = 0, fallback = 0, folded = 0, claimed = 0;
  bool agrees_pytorch = false;  // every output within its dtype's tolerance of PyTorch's
  bool agrees_cpu = false;      // ... and of the CPU plugin's (true when the device is the CPU)
  // ... and of the same device's with nothing claimed, node by node (true when none claimed).
  bool agrees_nodes = false;
  double ms = 0, cpu_ms = 0;    // median time of a run on the device, on the CPU (0: not run)
};

// ModelFiles: `path` itself when it is a file, else the *.tsrm files in it, sorted.
std::vector<std::string> ModelFiles(const std::string& path, std::string* error);

// CheckModel runs one model file on `device` (and on the CPU when `cpu_available` and the
// device is not the CPU), `runs` timed runs each.
ModelResult CheckModel(const std::string& file, tsr_device device, bool cpu_available, int runs);

bool ModelFailed(const ModelResult& r);

// The models' part of each report.
Json ModelsJson(const std::vector<ModelResult>& results);
std::string ModelsJUnitSuite(const std::string& device, const std::vector<ModelResult>& results);
std::string ModelsMarkdown(const std::vector<ModelResult>& results);
std::string ModelsTerminal(const std::vector<ModelResult>& results);

}  // namespace conformance
}  // namespace tessera
