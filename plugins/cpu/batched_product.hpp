// Batched products read in place in a compiled model: which nodes a run takes and how it runs
// (batched_product.cc); one of the CPU backend's graph compiler's kinds of run
// (graph_compiler.cc).
//
// Note [Batched products in place]
// PyTorch's matmul of two 4-D operands [B, H, M, K] @ [B, H, K, N] (attention's scores and its
// weighted values) reaches an exported graph as its decomposition: each operand expanded to the
// batch shape, cloned contiguous and reshaped to [B*H, M, K], then bmm, then the result reshaped
// back to [B, H, M, N]; the scores are then scaled (div or mul by a Scalar), and the weighted
// values transposed to [B, M, H, N], cloned and reshaped to [B, M, H*N]. Where the operands are
// views of one projection (q, k and v as slices of a [B, M, 3, H, D] result), every clone is a
// copy of a whole tensor: in BERT-base at batch 8, four clones of 3 MB and the scaling's pass
// over 6 MB came to some 4 ms of a 100 ms layer, more than the products themselves. oneDNN's
// matmul reads 4-D operands of any strides and writes any strided result, with the scale as
// its output scale, so the graph compiler claims such a run,
//     [expand -> [clone] -> reshape to 3-D] for one or both operands (a *chain*), bmm,
//     [reshape to 4-D], [div.Scalar | mul.Scalar], [transpose(1, 2) -> clone -> reshape to 3-D]
// (consecutive nodes; reshape is also view or _unsafe_view), and runs it as one matmul over the
// chains' 4-D sources, writing the result where the last node's layout puts it: no clone is
// made. A run is taken only where it removes a clone or a pass (a cloning chain, the scale, or
// the transposition); every value inside it is read by the next node of the run alone (none
// after it, none a model output), each chain's source comes from outside the run, and the bmm
// reads every chain.
// The claim sees neither dtypes nor shapes: each execution checks that the inputs are float32
// on the CPU, that every expand keeps its source's sizes (a broadcast is left to the nodes),
// that each reshape merges or splits exactly the first two dims (B and H, which both operands
// agree on; a literal -1 is not resolved, so such a reshape is left to the nodes) and that no
// size is 0; anything else, or a case oneDNN refuses, makes each node's own call, as without
// the claim. A source of any strides is read in place, an expanded one (stride 0) too. Results: the
// same products, summed by oneDNN's matmul rather than by the kernel bmm picks, and scaled by a
// multiplication (by 1/s for a division: exact for a power of two, within an ulp otherwise);
// conformance compares every claimed run with its nodes one by one.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "claimed_run.hpp"
#include "tessera/c/graph.h"

namespace tessera {
namespace cpu {

// ProductOperand: what bmm reads as one operand: a chain's 4-D source (`chained`, with the
// chain's expand and reshape sizes) or its own 3-D argument.
struct ProductOperand {
  int32_t value = -1;
  bool chained = false;
  std::vector<int64_t> expand, merged;
};

// Product: a claimed run's product and what it absorbs after the bmm.
struct Product {
  ProductOperand lhs, rhs;
  std::vector<int64_t> split;  // the reshape of the product to [B, H, M, N]; empty: none
  double scale = 1;            // the folded div (1 / s) or mul (s); 1: none
  std::vector<int64_t> heads;  // the transposed product's reshape to [B, M, H*N]; empty: none
  int32_t output = -1;         // the run's one output: its last node's result
};

// ClaimProduct: the product of the run that starts at node `first` (none: no run), and the node
// after it in *end.
std::optional<Product> ClaimProduct(const tsr_graph& g, size_t first, size_t* end);

// ProductRun: a claimed run, prepared.
class ProductRun : public FusedRun {
 public:
  ProductRun(Product product, std::vector<sdk::NodeCall> nodes, const tsr_graph_run& run)
      : FusedRun(std::move(nodes), product.output, run), product_(std::move(product)) {}

 private:
  // Fused: the run's output as one matmul over the sources.
  bool Fused(const Values& values, sdk::Tensor* out) const override;

  const Product product_;
};

}  // namespace cpu
}  // namespace tessera
