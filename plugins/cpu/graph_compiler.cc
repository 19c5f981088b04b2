// The CPU backend's graph compiler (graph_compiler.hpp): its kinds of run, tried in order at
// each node a compiled model shows it, the first that takes the node making the run:
//  - chains of convolutions in oneDNN's layouts (Note [Convolution chains] in conv_chain.hpp);
//  - batched products read in place (Note [Batched products in place] in batched_product.hpp);
//  - linear layers with their epilogue (Note [Linear layers with their epilogue] in
//    linear_epilogue.hpp);
//  - an additive mask and its softmax (Note [Masked softmax] in masked_softmax.hpp).
#include "graph_compiler.hpp"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "batched_product.hpp"
#include "conv_chain.hpp"
#include "linear_epilogue.hpp"
#include "masked_softmax.hpp"
#include "tessera/sdk/graph.hpp"

namespace tessera {
namespace cpu {
namespace {

using sdk::Tensor;

constexpr char kWho[] = "cpu graph compiler";

std::vector<sdk::NodeCall> NodeCalls(const tsr_graph& g, size_t first, size_t end) {
  std::vector<sdk::NodeCall> nodes;
  for (size_t n = first; n < end; ++n) nodes.emplace_back(g.nodes[n]);
  return nodes;
}

// ClaimAt: the run that starts at node `first` (its node count; 0: none), prepared into *run
// where `run` is not NULL.
size_t ClaimAt(const tsr_graph& g, size_t first, const tsr_graph_run* claimed,
               std::unique_ptr<ClaimedRun>* run) {
  size_t end = first;
  if (std::vector<Unit> units = ClaimChain(g, first, &end); !units.empty()) {
    if (run)
      *run = std::make_unique<ChainRun>(std::move(units), NodeCalls(g, first, end), *claimed);
    return end - first;
  }
  if (std::optional<Product> p = ClaimProduct(g, first, &end)) {
    if (run) *run = std::make_unique<ProductRun>(std::move(*p), NodeCalls(g, first, end), *claimed);
    return end - first;
  }
  if (std::optional<Linear> l = ClaimLinear(g, first, &end)) {
    if (run) *run = std::make_unique<LinearRun>(std::move(*l), NodeCalls(g, first, end), *claimed);
    return end - first;
  }
  if (std::optional<MaskedSoftmax> m = ClaimMaskedSoftmax(g, first, &end)) {
    if (run) *run = std::make_unique<MaskedSoftmaxRun>(*m, NodeCalls(g, first, end), *claimed);
    return end - first;
  }
  return 0;
}

tsr_error* Claim(void*, const tsr_graph* graph, size_t first, size_t* count) noexcept {
  return sdk::guarded(kWho, "claim", [&] { *count = ClaimAt(*graph, first, nullptr, nullptr); });
}

tsr_error* Prepare(void*, const tsr_graph* graph, const tsr_graph_run* run,
                   void** executable) noexcept {
  return sdk::guarded(kWho, "prepare", [&] {
    std::unique_ptr<ClaimedRun> prepared;
    const size_t count = ClaimAt(*graph, run->first, run, &prepared);
    if (count == 0 || count != run->count) {
      throw sdk::Error(TSR_INTERNAL, "prepare: expected the run claimed at node " +
                                         std::to_string(run->first) + ", of " +
                                         std::to_string(count) + " nodes; got one of " +
                                         std::to_string(run->count));
    }
    *executable = prepared.release();
  });
}

tsr_error* Execute(void*, void* executable, tsr_tensor* const* inputs, size_t num_inputs,
                   tsr_tensor** outputs, size_t num_outputs) noexcept {
  return sdk::guarded(kWho, "execute", [&] {
    std::vector<Tensor> in;
    for (size_t i = 0; i < num_inputs; ++i) in.push_back(Tensor::borrow(inputs[i]));
    std::vector<Tensor> out = static_cast<const ClaimedRun*>(executable)->Execute(in);
    for (size_t k = 0; k < num_outputs && k < out.size(); ++k) outputs[k] = out[k].release();
  });
}

void Release(void*, void* executable) noexcept { delete static_cast<ClaimedRun*>(executable); }

}  // namespace

void register_graph_compiler(sdk::Library& lib) {
  // TESSERA_CPU_FUSION=0: no graph compiler (docs/build.md); unset, empty or 1: one.
  const char* setting = std::getenv("TESSERA_CPU_FUSION");
  if (setting != nullptr && std::strcmp(setting, "0") == 0) return;
  if (setting != nullptr && *setting != '\0' && std::strcmp(setting, "1") != 0) {
    sdk::api().log(TSR_LOG_WARNING,
                   sdk::to_c(std::string("TESSERA_CPU_FUSION=") + setting +
                             ": expected 0 or 1; the CPU backend's graph compiler stays on"));
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
