// An additive mask and the softmax after it in a compiled model: which nodes a run takes and how
// it runs (masked_softmax.cc); one of the CPU backend's graph compiler's kinds of run
// (graph_compiler.cc).
//
// Note [Masked softmax]
// Attention adds its mask to the scaled scores, then takes their softmax over the last dim:
// add.Tensor(scores, mask) -> _softmax. Node by node the add writes a whole new tensor (BERT-base
// at batch 8: 6 MB, [8, 12, 128, 128], from a [8, 1, 1, 128] mask) that the softmax then reads
// again. The graph compiler claims
//     add.Tensor(x, mask, alpha 1) (either operand the scores) -> _softmax(., last dim, false)
// (consecutive nodes; the sum read by the softmax alone) and runs it as one pass over the rows
// of the result: each row is x's row plus the mask's (broadcast), then its softmax in place, by
// the softmax kernel's own row function (vector_math::softmax_row, as scans.cc's softmax_rows),
// so the values are the nodes'. (The scores' own run, Note [Batched products in place], cannot
// take the add: in an exported BERT the mask's nodes come between the scale and the add.)
// The claim sees neither dtypes nor shapes: each execution takes as the scores the operand the
// other (the mask) broadcasts to, and checks that both are float32 on the CPU, of one rank (at
// most 16), not empty, the scores contiguous and each of the mask's sizes theirs or 1 (so the
// sum has the scores' sizes); anything else makes each node's own call, as without the claim.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "claimed_run.hpp"
#include "tessera/c/graph.h"

namespace tessera {
namespace cpu {

// MaskedSoftmax: a claimed run's operands and its output.
struct MaskedSoftmax {
  int32_t self = -1, other = -1;  // the add's operands: the scores and the mask, either way
  int64_t dim = -1;               // the softmax's dim, as written
  int32_t output = -1;            // the softmax's result
};

// ClaimMaskedSoftmax: the run that starts at node `first` (none: no run), and the node after
// it in *end.
std::optional<MaskedSoftmax> ClaimMaskedSoftmax(const tsr_graph& g, size_t first, size_t* end);

// MaskedSoftmaxRun: a claimed run, prepared.
class MaskedSoftmaxRun : public FusedRun {
 public:
  MaskedSoftmaxRun(MaskedSoftmax run_values, std::vector<sdk::NodeCall> nodes,
                   const tsr_graph_run& run)
      : FusedRun(std::move(nodes), run_values.output, run), values_(run_values) {}

 private:
  // Fused: the sum and its softmax in one pass over the rows.
  bool Fused(const Values& values, sdk::Tensor* out) const override;

  const MaskedSoftmax values_;
};

}  // namespace cpu
}  // namespace tessera
