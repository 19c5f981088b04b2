// The CPU backend's graph compiler: runs of convolutions in a compiled model (conv_fusion.hpp).
//
// Note [Convolution chains]
// Node by node, every oneDNN convolution reorders its input from plain NCHW into the blocked
// layout its fast kernels read (nChw16c, ...) and its result back (Note [Convolution layouts] in
// onednn_conv.cc), and the batch norm's shift, the residual add and the activation after it
// each make another pass over the result: in ResNet-18 at batch 8, 40 reorders per run (some
// 19 % of its time) and 25 elementwise passes. A compiled model shows the whole sequence, so the
// graph compiler below claims runs of convolution *units*, each
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
#include "conv_fusion.hpp"

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "conv_chain.hpp"
#include "tessera/sdk/graph.hpp"

namespace tessera {
namespace cpu {
namespace {

using sdk::Tensor;

constexpr char kWho[] = "cpu convolution chains";

tsr_error* Claim(void*, const tsr_graph* graph, size_t first, size_t* count) noexcept {
  return sdk::guarded(kWho, "claim", [&] {
    size_t end = first;
    *count = ClaimChain(*graph, first, &end).empty() ? 0 : end - first;
  });
}

tsr_error* Prepare(void*, const tsr_graph* graph, const tsr_graph_run* run,
                   void** executable) noexcept {
  return sdk::guarded(kWho, "prepare", [&] {
    size_t end = run->first;
    std::vector<Unit> units = ClaimChain(*graph, run->first, &end);
    if (units.empty() || end != run->first + run->count) {
      throw sdk::Error(TSR_INTERNAL, "prepare: expected the run claimed at node " +
                                         std::to_string(run->first) + ", of " +
                                         std::to_string(end - run->first) + " nodes; got one of " +
                                         std::to_string(run->count));
    }
    std::vector<sdk::NodeCall> nodes;
    for (size_t n = run->first; n < end; ++n) nodes.emplace_back(graph->nodes[n]);
    *executable = new ChainRun(std::move(units), std::move(nodes), *run);
  });
}

tsr_error* Execute(void*, void* executable, tsr_tensor* const* inputs, size_t num_inputs,
                   tsr_tensor** outputs, size_t num_outputs) noexcept {
  return sdk::guarded(kWho, "execute", [&] {
    std::vector<Tensor> in;
    for (size_t i = 0; i < num_inputs; ++i) in.push_back(Tensor::borrow(inputs[i]));
    std::vector<Tensor> out = static_cast<const ChainRun*>(executable)->Execute(in);
    for (size_t k = 0; k < num_outputs && k < out.size(); ++k) outputs[k] = out[k].release();
  });
}

void Release(void*, void* executable) noexcept { delete static_cast<ChainRun*>(executable); }

}  // namespace

void register_conv_fusion(sdk::Library& lib) {
  // TESSERA_CPU_FUSION=0: no graph compiler (docs/build.md); unset, empty or 1: one.
  const char* setting = std::getenv("TESSERA_CPU_FUSION");
  if (setting != nullptr && std::strcmp(setting, "0") == 0) return;
  if (setting != nullptr && *setting != '\0' && std::strcmp(setting, "1") != 0) {
    sdk::api().log(TSR_LOG_WARNING,
                   sdk::to_c(std::string("TESSERA_CPU_FUSION=") + setting +
                             ": expected 0 or 1; the CPU backend's convolution chains stay on"));
  }
  tsr_graph_compiler c = {};
  c.struct_size = sizeof c;
  c.device_type = TSR_DEVICE_CPU;
  c.claim = &Claim;
  c.prepare = &Prepare;
  c.execute = &Execute;
  c.release = &Release;
  lib.graph_compiler(c);
}

}  // namespace cpu
}  // namespace tessera
