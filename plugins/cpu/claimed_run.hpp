// ClaimedRun: what the CPU backend's graph compiler prepared for one claimed run of a compiled
// model (graph_compiler.cc): a chain of convolutions (conv_chain.hpp), a batched product read in
// place (batched_product.hpp), a linear layer with its epilogue (linear_epilogue.hpp) or an
// additive mask with its softmax (masked_softmax.hpp). Each runs its fused form where its
// inputs allow and its nodes' own calls otherwise (RunNodes).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tessera/c/graph.h"
#include "tessera/sdk/graph.hpp"
#include "tessera/sdk/tensor.hpp"

namespace tessera {
namespace cpu {

// Values: a run's values by id while it executes.
using Values = std::unordered_map<int32_t, sdk::Tensor>;

class ClaimedRun {
 public:
  explicit ClaimedRun(const tsr_graph_run& run)
      : inputs_(run.inputs, run.inputs + run.num_inputs),
        outputs_(run.outputs, run.outputs + run.num_outputs) {}
  virtual ~ClaimedRun() = default;
  // Execute: the run's outputs (tsr_graph_run's order) for its inputs (likewise).
  virtual std::vector<sdk::Tensor> Execute(const std::vector<sdk::Tensor>& inputs) const = 0;

 protected:
  // Bind: the inputs by value id.
  Values Bind(const std::vector<sdk::Tensor>& inputs) const {
    Values values;
    for (size_t i = 0; i < inputs_.size() && i < inputs.size(); ++i) values[inputs_[i]] = inputs[i];
    return values;
  }

  const std::vector<int32_t> inputs_, outputs_;  // the run's boundary (tsr_graph_run)
};

// FusedRun: a claimed run of one output that a fused form makes (Fused) where the inputs allow
// it, and its nodes otherwise: every kind but the convolution chains (which may have several
// outputs).
class FusedRun : public ClaimedRun {
 public:
  FusedRun(std::vector<sdk::NodeCall> nodes, int32_t output, const tsr_graph_run& run)
      : ClaimedRun(run), nodes_(std::move(nodes)), output_(output) {}

  std::vector<sdk::Tensor> Execute(const std::vector<sdk::Tensor>& inputs) const final;

 protected:
  // Fused: the run's output (value output_) in *out; false (nothing made) where the inputs do
  // not fit the fused form, and the nodes' own calls make it.
  virtual bool Fused(const Values& values, sdk::Tensor* out) const = 0;

  const std::vector<sdk::NodeCall> nodes_;

 private:
  const int32_t output_;
};

// RunNodes: the run's `outputs` made by each node's own call, as without the claim, from
// `values` (its inputs, and what the nodes add to them).
inline std::vector<sdk::Tensor> RunNodes(const std::vector<sdk::NodeCall>& nodes, Values values,
                                         const std::vector<int32_t>& outputs) {
  for (const sdk::NodeCall& node : nodes) {
    node.call([&](int32_t v) -> const sdk::Tensor& { return values.at(v); },
              [&](int32_t v, sdk::Tensor t) { values[v] = std::move(t); });
  }
  std::vector<sdk::Tensor> out;
  for (int32_t v : outputs) out.push_back(values.at(v));
  return out;
}

inline std::vector<sdk::Tensor> FusedRun::Execute(const std::vector<sdk::Tensor>& inputs) const {
  Values values = Bind(inputs);
  sdk::Tensor out;
  // The claims take only runs whose one output is their last node's result.
  if (outputs_.size() == 1 && outputs_[0] == output_ && Fused(values, &out)) return {out};
  return RunNodes(nodes_, std::move(values), outputs_);
}

}  // namespace cpu
}  // namespace tessera
