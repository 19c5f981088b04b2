// Runs of convolutions in a compiled model (Note [Convolution chains] in conv_fusion.cc): which
// nodes a run takes (conv_chain_claim.cc) and how it runs in oneDNN's layouts
// (conv_chain_run.cc).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "onednn_conv.hpp"
#include "tessera/c/graph.h"
#include "tessera/sdk/graph.hpp"
#include "tessera/sdk/tensor.hpp"

namespace tessera {
namespace cpu {

enum class Act { kNone, kRelu, kHardswish };

// Unit: a convolution and what it absorbs (value ids of the run's graph).
struct Unit {
  int32_t input = -1, weight = -1, bias = -1, residual = -1;
  ConvParams params{};
  Act act = Act::kNone;
  std::vector<int32_t> names;  // every value that names its result (in-place aliases)
  bool pointwise = false;      // 1x1, stride 1, groups 1
  bool post() const { return residual >= 0 || act != Act::kNone; }
};

// ClaimChain: the units of the run that starts at node `first` (none: no run), and the node
// after it in *end.
std::vector<Unit> ClaimChain(const tsr_graph& g, size_t first, size_t* end);

// ChainRun: a claimed run, prepared: its units, each node's own call, and its boundary.
class ChainRun {
 public:
  ChainRun(std::vector<Unit> units, std::vector<sdk::NodeCall> nodes, const tsr_graph_run& run);
  ~ChainRun();

  // Execute: the run's outputs for `inputs` (the run's order), as a chain where it can be, else
  // node by node.
  std::vector<sdk::Tensor> Execute(const std::vector<sdk::Tensor>& inputs) const;

 private:
  struct Plan;  // what runs for one set of input shapes (conv_chain_run.cc)
  using Values = std::unordered_map<int32_t, sdk::Tensor>;
  bool Chained(const Values& values, std::vector<sdk::Tensor>* out) const;
  std::shared_ptr<const Plan> PlanFor(const std::vector<int64_t>& key, const Values& values) const;
  void Run(const Plan& plan, const Values& values, std::vector<sdk::Tensor>* out) const;

  // Plans are per thread (onednn.hpp: a thread's primitives are its own) and input shapes.
  static constexpr size_t kMaxPlans = 256;
  const std::vector<Unit> units_;
  const std::vector<sdk::NodeCall> nodes_;
  const std::vector<int32_t> inputs_, outputs_;
  std::vector<std::vector<size_t>> drop_after_;  // per unit: the units whose results go after it
  mutable std::mutex mu_;
  mutable std::map<std::vector<int64_t>, std::shared_ptr<const Plan>> plans_;
};

}  // namespace cpu
}  // namespace tessera
