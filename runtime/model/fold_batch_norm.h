// Folding an inference batch norm into the convolution before it, at compile time.
//
// Note [Folding batch norm]
// An inference batch norm (training = false) is, per channel c, y = x * scale[c] + shift[c]
// with scale = weight / sqrt(running_var + eps) and shift = bias - running_mean * scale. When x
// is a convolution's output that nothing else reads, and every one of those tensors is a
// constant of the model that no node writes, the pair is one convolution with its weight's
// output channel c multiplied by scale[c] and its bias b[c] (0 without one) replaced by
// b[c] * scale[c] + shift[c]. Compiling makes those two constants once, runs the convolution
// with them, and the batch norm's node only hands the convolution's output on
// (NodeRoute::kFolded): one pass over the activations less per pair (MobileNetV3-small at
// batch 8 spent 18 % of its time in its 34 batch norms, at 1 thread).
//
// The folded convolution rounds differently from the pair: its weights are scaled in double
// and rounded once to the weight's dtype, so outputs differ from the unfolded program's by about
// one rounding of each weight (PyTorch's own freezing passes, torch.fx's fuse, do the same
// fold). Only float32 and float64 fold; a batch norm in training mode, one that keeps its
// statistics' outputs for a later node, or one whose tensors are not constants never does.
// TESSERA_FOLD_BATCH_NORM=0 turns folding off (docs/embedding_guide.md, "Models").
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "core/tensor.h"
#include "runtime/model/model.h"

namespace tessera {
namespace model {

struct BatchNormFold {
  size_t conv;    // the convolution node
  size_t norm;    // the batch norm node it absorbs
  Tensor weight;  // host: the convolution's weight, output channel c times scale[c]
  Tensor bias;    // host: b[c] * scale[c] + shift[c]
};

// FoldBatchNorms: the folds of `m` (Note [Folding batch norm]), each computed. `written`: the
// constants some node writes in place (they never fold). A node's arguments are the file's:
// the caller binds the nodes first, so a malformed node has been refused by then.
absl::StatusOr<std::vector<BatchNormFold>> FoldBatchNorms(
    const Model& m, const absl::flat_hash_set<int32_t>& written);

// BatchNormFoldingEnabled: TESSERA_FOLD_BATCH_NORM is unset or 1 (0 turns folding off; another
// value is logged once and leaves it on). Read at each compile.
bool BatchNormFoldingEnabled();

}  // namespace model
}  // namespace tessera
