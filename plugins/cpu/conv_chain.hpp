// Runs of convolutions in a compiled model: which nodes a run takes (conv_chain_claim.cc) and
// how it runs in oneDNN's layouts (conv_chain_run.cc); one of the CPU backend's graph
// compiler's kinds of run (graph_compiler.cc).
//
// Note [Convolution chains]
// Node by node, every oneDNN convolution reorders its input from plain NCHW into the blocked
// layout its fast kernels read (nChw16c, ...) and its result back (Note [Convolution layouts] in
// onednn_conv.cc), and the batch norm's shift, the residual add and the activation after it
// each make another pass over the result: in ResNet-18 at batch 8, 40 reorders per run (some
// 19 % of its time) and 25 elementwise passes. A compiled model shows the whole sequence, so the
// graph compiler claims runs of convolution *units*, each
//     convolution, [its folded batch norm], [add of one other value, alpha 1], [relu | hardswish]
// (the add and the activation as oneDNN post-ops in the convolution's own pass) and keeps every
// value inside the run in the layout the primitive that made it chose: a unit reads its input,
// and its residual, without a reorder when the layouts agree (they do between oneDNN's
// convolutions of one machine), and only the run's inputs and outputs change layout. A run is
// taken when it has two or more units, or one with a post-op that is not a 1x1 stride-1
// convolution (conv_gemm.hpp runs a lone one of those without reorders, its post-op after).
//
// Values inside a run: an in-place op on the unit's result (add_(result, other), relu_,
// hardswish_) writes its tensor, so its output is one more name of that result; an out-of-place
// one (add, relu, hardswish) makes a new tensor, so it joins a unit only where nothing after it
// reads the result as it was before it. add_(other, result) writes the other operand, which may
// be named elsewhere: it does not join. Outputs of the run (what later nodes or the model's
// outputs read, tsr_graph_run) are reordered into new plain tensors, one per tensor (two names
// of one result give one tensor, as node by node).
// The claim sees neither dtypes nor shapes (a model's dims may be dynamic): each run checks its
// inputs. Float32 on the CPU with oneDNN's support runs as a chain, its primitives made once per
// input shape (and thread: count and caller) and kept; anything else makes each node's own call
// (sdk::NodeCall), as without the claim. Results: the shift is the folded bias, relu is exact,
// the sum adds the float result to the residual as add does, oneDNN's hardswish may differ from
// ours in the last bit; conformance compares every claimed run with its nodes one by one.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "claimed_run.hpp"
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
class ChainRun : public ClaimedRun {
 public:
  ChainRun(std::vector<Unit> units, std::vector<sdk::NodeCall> nodes, const tsr_graph_run& run);
  ~ChainRun() override;

  // Execute: the run's outputs for `inputs` (the run's order), as a chain where it can be, else
  // node by node.
  std::vector<sdk::Tensor> Execute(const std::vector<sdk::Tensor>& inputs) const override;

 private:
  struct Plan;  // what runs for one set of input shapes (conv_chain_run.cc)
  bool Chained(const Values& values, std::vector<sdk::Tensor>* out) const;
  std::shared_ptr<const Plan> PlanFor(const std::vector<int64_t>& key, const Values& values) const;
  void Run(const Plan& plan, const Values& values, std::vector<sdk::Tensor>* out) const;

  // Plans are per thread (onednn.hpp: a thread's primitives are its own) and input shapes.
  static constexpr size_t kMaxPlans = 256;
  const std::vector<Unit> units_;
  const std::vector<sdk::NodeCall> nodes_;
  std::vector<std::vector<size_t>> drop_after_;  // per unit: the units whose results go after it
  mutable std::mutex mu_;
  mutable std::map<std::vector<int64_t>, std::shared_ptr<const Plan>> plans_;
};

}  // namespace cpu
}  // namespace tessera
