// Linear layers with what follows them in a compiled model: which nodes a run takes and how it
// runs (linear_epilogue.cc); one of the CPU backend's graph compiler's kinds of run
// (graph_compiler.cc).
//
// Note [Linear layers with their epilogue]
// A linear layer reaches an exported graph as addmm(bias, x, weight^T) (beta = alpha = 1), and
// node by node its bias costs a pass of its own wherever dnnl_sgemm runs the product (the bias
// is copied into every row of out, which sgemm then adds to; Note [Prepacked matrix products]
// in prepacked_gemm.cc says where): then the node after it makes another pass over the result.
// In a transformer that node is, after the feed-forward's first layer, gelu (BERT-base at batch
// 8: 12.6 MB written by the bias copy, read and written again by gelu) and, after the attention's
// output and the feed-forward's second layer, the residual add. The graph compiler claims
//     addmm(bias, a, b, beta 1, alpha 1) -> [reshape] -> gelu | add.Tensor(., other, alpha 1)
// (consecutive nodes; the add with the result as either operand; reshape is also view or
// _unsafe_view; each value inside read by the next node alone) and runs it with the bias in the
// epilogue's own pass:
//  - gelu: the product into out (beta 0), then each row of out, still in cache, gets its bias
//    and gelu in one pass; where the prepacked matmul runs the product, it adds the bias itself
//    and the row pass is gelu alone;
//  - add: out = other + bias in one pass, then the product accumulates into it (beta 1).
// The claim sees neither dtypes nor shapes: each execution checks that every input is float32
// on the CPU, that a, b are matrices, the bias is N contiguous elements (a [N] or [1, N]), the
// other operand has the result's sizes and is contiguous, and that no size is 0; anything else,
// or a product no library path takes (linalg.hpp), makes each node's own call, as without the
// claim. Results: the product and gelu are the kernels' own; the sums are the same three terms
// added in another order (the bias and the other operand first), so they may differ in the last
// bit; conformance compares every claimed run with its nodes one by one.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "claimed_run.hpp"
#include "tessera/c/graph.h"

namespace tessera {
namespace cpu {

// Linear: a claimed run's values and its epilogue.
struct Linear {
  enum class Epilogue { kGelu, kGeluTanh, kAdd };
  int32_t bias = -1, a = -1, b = -1;
  Epilogue epilogue = Epilogue::kGelu;
  int32_t other = -1;          // the add's other operand
  int32_t output = -1;         // the run's one output: its last node's result
  bool reshaped = false;       // a reshape between the product and the epilogue
};

// ClaimLinear: the run that starts at node `first` (none: no run), and the node after it in
// *end.
std::optional<Linear> ClaimLinear(const tsr_graph& g, size_t first, size_t* end);

// LinearRun: a claimed run, prepared.
class LinearRun : public ClaimedRun {
 public:
  LinearRun(Linear linear, std::vector<sdk::NodeCall> nodes, const tsr_graph_run& run);

  std::vector<sdk::Tensor> Execute(const std::vector<sdk::Tensor>& inputs) const override;

 private:
  // Fused: the run's output with the bias in the epilogue's pass; false (nothing made) where the
  // inputs do not fit it.
  bool Fused(const Values& values, sdk::Tensor* out) const;

  const Linear linear_;
  const std::vector<sdk::NodeCall> nodes_;
  const std::vector<int32_t> inputs_, outputs_;
};

}  // namespace cpu
}  // namespace tessera
