// Linear layers with what follows them in a compiled model: which nodes a run takes and how it
// runs (linear_epilogue.cc); one of the CPU backend's graph compiler's kinds of run
// (graph_compiler.cc).
//
// Note [Linear layers with their epilogue]
// A linear layer reaches an exported graph as addmm(bias, x, weight^T) (beta = alpha = 1), and
// node by node its bias costs a pass of its own wherever dnnl_sgemm runs the product (the bias
// is copied into every row of out, which sgemm then adds to; Note [Prepacked matrix products]
// in prepacked_gemm.cc says where); then the node after it makes another pass over the result.
// In a transformer that node is gelu after the feed-forward's first layer (BERT-base at batch 8:
// 12.6 MB written by the bias copy, read and written again by gelu) and the residual add after
// the attention's output and the feed-forward's second layer. The graph compiler claims
//     addmm(bias, a, b, beta 1, alpha 1) -> [reshape] -> gelu | add.Tensor(., other, alpha 1)
//         -> [native_layer_norm over the last dim, after the add]
// (consecutive nodes; the add with the result as either operand; reshape is also view or
// _unsafe_view; each value inside read by the next node alone, the norm's mean and rstd by
// none) and runs it as the product with beta 0, then one pass over its rows, each still in
// cache after its own sums:
//     the add:   row = (row + bias) + other, then the row's layer norm where the run has one
//     gelu:      row = gelu(row + bias)
// the sums in the nodes' order (addmm's, then the add's), the norm by the native_layer_norm
// kernel's own row function (layer_norm_rows.hpp). Where the prepacked matmul runs the product
// it adds the bias itself, as it does node by node, and the pass does the rest: the same passes
// and the same results as node by node, the epilogue's in place. Where sgemm runs it, one pass
// over the result fewer; node by node sgemm takes the bias as beta * out and may add it to its
// running sum before the last blocks of k, so the sums may differ in the last bit there, and a
// norm scales that difference by the row's 1 / std (conformance compares every claimed run with
// its nodes one by one). A transformer block's residual add and the norm after it (BERT's "add
// & norm") are one pass.
// The claim sees neither dtypes nor shapes: each execution checks that every input is float32
// on the CPU, that a, b are matrices, the bias and the norm's weight and bias are N contiguous
// elements (the bias a [N] or [1, N]), the norm is over the result's last dim, of N elements,
// the other operand has the result's sizes and is contiguous, that no size is 0 and that the
// reshape takes the product's sizes; anything else, or a product no library path takes
// (linalg.hpp), makes each node's own call, as without the claim.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
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
  int32_t other = -1;  // the add's other operand
  // The layer norm of the add's result over its last dim (norm), its weight and bias (-1:
  // None) and eps.
  bool norm = false;
  int32_t norm_weight = -1, norm_bias = -1;
  int64_t norm_size = 0;
  double eps = 0;
  int32_t output = -1;    // the run's one output: its last node's result
  bool reshaped = false;  // a reshape between the product and the epilogue
};

// ClaimLinear: the run that starts at node `first` (none: no run), and the node after it in
// *end.
std::optional<Linear> ClaimLinear(const tsr_graph& g, size_t first, size_t* end);

// LinearRun: a claimed run, prepared.
class LinearRun : public FusedRun {
 public:
  LinearRun(Linear linear, std::vector<sdk::NodeCall> nodes, const tsr_graph_run& run)
      : FusedRun(std::move(nodes), linear.output, run), linear_(std::move(linear)) {}

 private:
  // Fused: the run's output with the bias in the epilogue's pass.
  bool Fused(const Values& values, sdk::Tensor* out) const override;

  const Linear linear_;
};

}  // namespace cpu
}  // namespace tessera
