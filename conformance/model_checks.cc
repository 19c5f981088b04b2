#include "conformance/model_checks.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>

#include "conformance/compare.h"
#include "conformance/host_tensor.h"
#include "tessera/sdk/model.hpp"

namespace tessera {
namespace conformance {
namespace {

std::string Stem(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  const std::string ext = ".tsrm";
  if (name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0) {
    name.resize(name.size() - ext.size());
  }
  return name;
}

bool IsCpu(tsr_device d) { return d.type == TSR_DEVICE_CPU; }

// Run: the model's outputs for its example inputs on `compiled`'s device, and the median time
// of `runs` more runs in ms.
std::vector<Tensor> Run(const Model& model, const CompiledModel& compiled, tsr_device device,
                        int runs, double* ms) {
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < model.num_inputs(); ++i) {
    inputs.push_back(tessera::to(model.example_input(i), device));
  }
  std::vector<Tensor> outputs = compiled.run(inputs);
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    compiled.run(inputs);
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::sort(times.begin(), times.end());
  *ms = times.empty() ? 0 : times[times.size() / 2];
  return outputs;
}

// Agree: every output within its dtype's tolerance of `want` (assert_close's defaults, as the
// op cases use); the first disagreement in *message.
bool Agree(const Model& model, const std::vector<Tensor>& got, const std::vector<HostTensor>& want,
           const std::string& against, std::string* message) {
  for (size_t i = 0; i < got.size(); ++i) {
    const Comparison c = Compare(FromDevice(got[i]), want[i], ToleranceFor(want[i].dtype, 1),
                                 "output '" + model.output_name(i) + "'");
    if (!c.ok) {
      *message = "against " + against + ": " + c.message;
      return false;
    }
  }
  return true;
}

}  // namespace

std::vector<std::string> ModelFiles(const std::string& path, std::string* error) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) {
    *error = "--models " + path + ": no such file or directory";
    return {};
  }
  if (!S_ISDIR(info.st_mode)) return {path};
  std::vector<std::string> files;
  if (DIR* dir = opendir(path.c_str())) {
    while (const dirent* e = readdir(dir)) {
      const std::string name = e->d_name;
      if (name.size() > 5 && name.compare(name.size() - 5, 5, ".tsrm") == 0) {
        files.push_back(path + "/" + name);
      }
    }
    closedir(dir);
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) *error = "--models " + path + ": no .tsrm model files in it";
  return files;
}

ModelResult CheckModel(const std::string& file, tsr_device device, bool cpu_available, int runs) {
  ModelResult r;
  r.model = Stem(file);
  try {
    const Model model = Model::load(file);
    std::vector<HostTensor> expected;
    for (size_t i = 0; i < model.num_outputs(); ++i) {
      expected.push_back(FromDevice(model.expected_output(i)));
    }
    const CompiledModel compiled = model.compile(device);
    r.nodes = compiled.num_nodes();
    for (size_t i = 0; i < r.nodes; ++i) {
      const tsr_node_route route = compiled.node_route(i);
      (route == TSR_NODE_NATIVE      ? r.native
       : route == TSR_NODE_COMPOSITE ? r.composite
       : route == TSR_NODE_FOLDED    ? r.folded
       : route == TSR_NODE_CLAIMED   ? r.claimed
                                     : r.fallback)++;
    }
    const std::vector<Tensor> outputs = Run(model, compiled, device, runs, &r.ms);
    r.agrees_pytorch = Agree(model, outputs, expected, "PyTorch's outputs", &r.message);
    r.agrees_cpu = true;
    r.agrees_nodes = true;
    if (r.claimed > 0) {  // the plugin's claimed runs against its nodes one by one
      const CompiledModel node_by_node = model.compile(device, TSR_COMPILE_NO_CLAIMS);
      double ms = 0;
      std::vector<HostTensor> node_outputs;
      for (const Tensor& t : Run(model, node_by_node, device, 1, &ms)) {
        node_outputs.push_back(FromDevice(t));
      }
      std::string message;
      r.agrees_nodes = Agree(model, outputs, node_outputs,
                             "the outputs of its nodes run one by one (nothing claimed)", &message);
      if (r.message.empty()) r.message = message;
    }
    if (!IsCpu(device) && cpu_available) {
      const tsr_device cpu{TSR_DEVICE_CPU, 0};
      const CompiledModel on_cpu = model.compile(cpu);
      std::vector<HostTensor> cpu_outputs;
      for (const Tensor& t : Run(model, on_cpu, cpu, runs, &r.cpu_ms)) {
        cpu_outputs.push_back(FromDevice(t));
      }
      std::string message;
      r.agrees_cpu = Agree(model, outputs, cpu_outputs, "the CPU plugin's outputs", &message);
      if (r.message.empty()) r.message = message;
    }
    r.status = r.agrees_pytorch && r.agrees_cpu && r.agrees_nodes ? "pass" : "fail";
  } catch (const sdk::Error& e) {
    r.status = "error";
    r.message = e.what();
  }
  return r;
}

bool ModelFailed(const ModelResult& r) { return r.status != "pass"; }

Json ModelsJson(const std::vector<ModelResult>& results) {
  Json models = Json::Array();
  for (const ModelResult& r : results) {
    Json m = Json::Object();
    m.set("model", r.model);
    m.set("status", r.status);
    m.set("message", r.message);
    m.set("nodes", static_cast<int64_t>(r.nodes));
    m.set("native", static_cast<int64_t>(r.native));
    m.set("composite", static_cast<int64_t>(r.composite));
    m.set("fallback", static_cast<int64_t>(r.fallback));
    m.set("folded", static_cast<int64_t>(r.folded));
    m.set("claimed", static_cast<int64_t>(r.claimed));
    m.set("agrees_pytorch", r.agrees_pytorch);
    m.set("agrees_cpu", r.agrees_cpu);
    m.set("agrees_node_by_node", r.agrees_nodes);
    m.set("ms", r.ms);
    m.set("cpu_ms", r.cpu_ms);
    models.push(m);
  }
  return models;
}

namespace {

// Native share: of the nodes that make a call (not the folded ones), those that run on the
// device's own kernels, as composites of its ops or in runs its graph compiler claimed.
std::string NativeShare(const ModelResult& r) {
  if (r.nodes <= r.folded) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%",
                100.0 * (r.native + r.composite + r.claimed) / (r.nodes - r.folded));
  return buf;
}

std::string VsCpu(const ModelResult& r) {
  if (r.cpu_ms <= 0 || r.ms <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", r.ms / r.cpu_ms);
  return buf;
}

}  // namespace

std::string ModelsJUnitSuite(const std::string& device, const std::vector<ModelResult>& results) {
  int failures = 0;
  for (const ModelResult& r : results) failures += ModelFailed(r);
  std::ostringstream out;
  out << "  <testsuite name=\"models\" tests=\"" << results.size() << "\" failures=\"" << failures
      << "\" skipped=\"0\">\n";
  for (const ModelResult& r : results) {
    out << "    <testcase classname=\"" << XmlEscape(device + ".models") << "\" name=\""
        << XmlEscape(r.model) << "\">";
    if (ModelFailed(r)) {
      out << "<failure message=\"" << XmlEscape(r.status + ": " + r.message) << "\"/>";
    }
    out << "</testcase>\n";
  }
  out << "  </testsuite>\n";
  return out.str();
}

std::string ModelsMarkdown(const std::vector<ModelResult>& results) {
  std::ostringstream out;
  out << "\n## Models\n\nEach model's outputs on its example inputs against PyTorch's (stored in "
         "the file) and the CPU plugin's; native share: of the nodes that make a call (not those "
         "folded at compile time), those that run on the device's own kernels, as composites "
         "of its ops or in runs its graph compiler claimed (each model with claimed runs is "
         "also run node by node, and must agree), the rest through the fallback.\n\n"
      << "| model | status | PyTorch | CPU plugin | nodes | folded | claimed | native share | "
         "fallback | time | vs CPU |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const ModelResult& r : results) {
    char time[32];
    std::snprintf(time, sizeof time, "%.2f ms", r.ms);
    out << "| " << r.model << " | " << r.status << (r.message.empty() ? "" : ": " + r.message)
        << " | " << (r.agrees_pytorch ? "✓" : "✗") << " | " << (r.agrees_cpu ? "✓" : "✗") << " | "
        << r.nodes << " | " << r.folded << " | " << r.claimed << " | " << NativeShare(r) << " | "
        << r.fallback << " | " << (r.ms > 0 ? time : "-") << " | " << VsCpu(r) << " |\n";
  }
  return out.str();
}

std::string ModelsTerminal(const std::vector<ModelResult>& results) {
  std::ostringstream out;
  char line[512];
  // The model column as wide as its longest name (at least 16), up to what a line holds.
  int width = 16;
  for (const ModelResult& r : results) width = std::max(width, static_cast<int>(r.model.size()));
  width = std::min(width, 200);
  std::snprintf(line, sizeof line, "\n%-*s %-6s %8s %6s %7s %8s %10s %7s\n", width, "model",
                "status", "pytorch", "cpu", "native", "fallback", "time", "vs cpu");
  out << line;
  for (const ModelResult& r : results) {
    char time[32];
    std::snprintf(time, sizeof time, "%.2f ms", r.ms);
    std::snprintf(line, sizeof line, "%-*s %-6s %8s %6s %7s %8zu %10s %7s\n", width,
                  r.model.c_str(), r.status.c_str(), r.agrees_pytorch ? "agrees" : "DIFFERS",
                  r.agrees_cpu ? "agrees" : "DIFFERS", NativeShare(r).c_str(), r.fallback,
                  r.ms > 0 ? time : "-", VsCpu(r).c_str());
    out << line;
    if (!r.message.empty()) out << "  " << r.model << ": " << r.message << "\n";
  }
  return out.str();
}

}  // namespace conformance
}  // namespace tessera
