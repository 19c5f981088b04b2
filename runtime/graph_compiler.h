// GraphCompiler: a registered tsr_graph_compiler (tessera/c/graph.h), one per device type, and
// the executables of the runs it claimed. Internal to runtime/; compiled models
// (runtime/model/claimed_runs.cc) are its one user.
//
// Every call into the plugin passes its gate (plugin_gate.h): unregistering the compiler (the
// plugin's unload) waits for claims, prepares and executes in flight, and an execute after it is
// an UNAVAILABLE error naming the plugin. An execute runs inside a CallScope, as an op call does,
// so that plugin code it reaches cannot unload the plugin under itself (the unload is refused,
// not left to wait for its own caller). Executables hold the plugin's record (`owner`), which
// keeps its code mapped until the last one is released, as a tensor's memory does.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/device.h"
#include "core/tensor.h"
#include "runtime/plugin_gate.h"
#include "tessera/c/graph.h"

namespace tessera {
namespace capi {

class GraphExecutable;

class GraphCompiler : public std::enable_shared_from_this<GraphCompiler> {
 public:
  GraphCompiler(const tsr_graph_compiler& c, std::shared_ptr<PluginGate> gate,
                std::shared_ptr<const void> owner)
      : c_(c), gate_(std::move(gate)), owner_(std::move(owner)) {}

  const std::string& plugin_name() const { return gate_->plugin_name(); }
  // Claim: how many nodes from `first` on the compiler takes (0: none); checked against the
  // graph's end.
  absl::StatusOr<size_t> Claim(const tsr_graph& graph, size_t first) const;
  // Prepare: the executable of a claimed run.
  absl::StatusOr<std::unique_ptr<GraphExecutable>> Prepare(const tsr_graph& graph,
                                                           const tsr_graph_run& run) const;
  // Unregister closes the gate: calls inside are waited for, later ones refused.
  void Unregister() { gate_->Close(); }

 private:
  friend class GraphExecutable;
  // Call runs `body` (a call into the plugin) inside the gate; `what` names it in errors.
  template <typename F>
  absl::Status Call(const char* what, F&& body) const;

  const tsr_graph_compiler c_;
  std::shared_ptr<PluginGate> gate_;
  // The plugin's record (NULL: the application registered it): its code stays mapped while the
  // compiler lives, and every executable holds the compiler.
  const std::shared_ptr<const void> owner_;
};

// GraphExecutable: what prepare made for one claimed run; released (the plugin's release) when
// destroyed.
class GraphExecutable {
 public:
  GraphExecutable(std::shared_ptr<const GraphCompiler> compiler, void* handle, size_t num_outputs)
      : compiler_(std::move(compiler)), handle_(handle), num_outputs_(num_outputs) {}
  ~GraphExecutable();
  GraphExecutable(const GraphExecutable&) = delete;
  GraphExecutable& operator=(const GraphExecutable&) = delete;

  // Execute runs the run: `inputs` in the run's input order, its outputs stored in `outputs`
  // (run's output order, one per output; each checked to be a tensor on `device`).
  absl::Status Execute(absl::Span<const Tensor> inputs, absl::Span<Tensor> outputs,
                       Device device) const;
  const std::string& plugin_name() const { return compiler_->plugin_name(); }

 private:
  std::shared_ptr<const GraphCompiler> compiler_;  // and so the plugin's code
  void* handle_;
  size_t num_outputs_;
};

// GraphCompilerFor: the graph compiler registered for `type` now, or NULL.
std::shared_ptr<const GraphCompiler> GraphCompilerFor(DeviceType type);

}  // namespace capi
}  // namespace tessera
