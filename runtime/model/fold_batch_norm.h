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
// statistics' outputs for a later node, one whose tensors are not constants, and one with a
// constant that a node writes or that an output hands to the application (which may write it)
// never does. The batch norms are those of every exporter: native_batch_norm and
// _native_batch_norm_legit (make_fx, torch.export training graphs) with training false,
// _native_batch_norm_legit_no_training (torch.export's inference graphs) and batch_norm.
// TESSERA_FOLD_BATCH_NORM=0 turns folding off (docs/embedding_guide.md, "Running a model").
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

// FoldBatchNorms: the folds of `m` (Note [Folding batch norm]), each computed. `written` and
// `shown`: the constants some node writes in place and those an output shows (they never
// fold). A node's arguments are the file's: the caller binds the nodes first, so a malformed
// node has been refused by then.
absl::StatusOr<std::vector<BatchNormFold>> FoldBatchNorms(
    const Model& m, const absl::flat_hash_set<int32_t>& written,
    const absl::flat_hash_set<int32_t>& shown);

// StatisticsWrittenOnlyInTraining: argument `arg` of `node` is a batch norm's running_mean or
// running_var, which its schema marks written (a!) but which it writes only in training, and
// the node's `training` argument is the literal false (native_batch_norm,
// _native_batch_norm_legit). Such a node leaves its statistics as they are, so they may fold
// and the model's runs need not take turns (Note [Compiling a model]).
bool StatisticsWrittenOnlyInTraining(const GraphNode& node, size_t arg);

// BatchNormFoldingEnabled: TESSERA_FOLD_BATCH_NORM is unset or 1 (0 turns folding off; another
// value is logged once and leaves it on). Read at each compile.
bool BatchNormFoldingEnabled();

}  // namespace model
}  // namespace tessera
