#include "runtime/model/fold_batch_norm.h"

#include <atomic>
#include <cmath>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "core/status_macros.h"
#include "runtime/env_switch.h"

namespace tessera {
namespace model {
namespace {

// Argument positions of the ops the fold reads (their schemas in dispatcher/ops.lock).
// convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding,
//             int[] dilation, bool transposed, int[] output_padding, int groups) -> Tensor
constexpr size_t kConvArgs = 9, kConvWeight = 1, kConvBias = 2, kConvTransposed = 6;
// The batch norms: (Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean,
// Tensor? running_var, ...) -> (Tensor out, ...), then as each schema has it:
//   native_batch_norm, _native_batch_norm_legit: bool training, float momentum, float eps
//       -> 3 returns (out, save_mean, save_invstd); the statistics marked (a!), (b!)
//   batch_norm: bool training, float momentum, float eps, bool cudnn_enabled -> 1 return
//   _native_batch_norm_legit_no_training: float momentum, float eps -> 3 returns
constexpr size_t kNormInput = 0, kNormWeight = 1, kNormBias = 2, kNormMean = 3, kNormVar = 4;
struct NormOp {
  const char* name;
  size_t args, outputs;
  int training;  // the training argument's position; -1: inference only
  size_t eps;
  bool writes_statistics;  // in training (its schema marks them written)
};
constexpr NormOp kNormOps[] = {
    {"native_batch_norm", 8, 3, 5, 7, true},
    {"_native_batch_norm_legit", 8, 3, 5, 7, true},
    {"batch_norm", 9, 1, 5, 7, false},
    {"_native_batch_norm_legit_no_training", 7, 3, -1, 6, false},
};

// NormOpOf: the batch norm `node` is, with the argument and output counts of its schema.
const NormOp* NormOpOf(const GraphNode& node) {
  for (const NormOp& op : kNormOps) {
    if (node.op == op.name && node.args.size() == op.args && node.outputs.size() == op.outputs) {
      return &op;
    }
  }
  return nullptr;
}

// Graph: what the fold asks of the model's values.
class Graph {
 public:
  Graph(const Model& m, const absl::flat_hash_set<int32_t>& written,
        const absl::flat_hash_set<int32_t>& shown)
      : written_(written), shown_(shown) {
    readers_.assign(m.value_names.size(), 0);
    producer_.assign(m.value_names.size(), -1);
    for (size_t n = 0; n < m.nodes.size(); ++n) {
      for (const GraphArg& a : m.nodes[n].args) {
        for (int32_t v : a.values) {
          if (v >= 0) ++readers_[v];
        }
      }
      for (int32_t v : m.nodes[n].outputs) producer_[v] = static_cast<int32_t>(n);
    }
    for (const GraphOutput& out : m.outputs) ++readers_[out.value];  // the application reads it
    for (const auto& [id, t] : m.constants) constants_.emplace(id, t);
  }

  int readers(int32_t v) const { return readers_[v]; }
  int32_t producer(int32_t v) const { return producer_[v]; }

  // Constant: the argument's tensor when it is one constant no node writes and no output
  // shows, a float32 or
  // float64 vector of `channels` (a weight: any rank, `channels` rows) of `dtype`; else none.
  std::optional<Tensor> Constant(const GraphArg& a, ScalarType dtype, int64_t channels,
                                 bool vector) const {
    if (a.kind != GraphArg::Kind::kTensor || a.values.size() != 1) return std::nullopt;
    auto it = constants_.find(a.values[0]);
    if (it == constants_.end() || written_.contains(a.values[0]) || shown_.contains(a.values[0])) {
      return std::nullopt;
    }
    const Tensor& t = it->second;
    if (t.dtype() != dtype || !t.is_contiguous() || t.dim() < 1 || t.sizes()[0] != channels ||
        (vector && t.dim() != 1)) {
      return std::nullopt;
    }
    return t;
  }
  // Weight: the convolution weight's constant, if it can fold (float32 or float64).
  std::optional<Tensor> Weight(const GraphArg& a) const {
    if (a.kind != GraphArg::Kind::kTensor || a.values.size() != 1) return std::nullopt;
    auto it = constants_.find(a.values[0]);
    if (it == constants_.end()) return std::nullopt;
    const ScalarType dt = it->second.dtype();
    if (dt != ScalarType::kFloat32 && dt != ScalarType::kFloat64) return std::nullopt;
    if (it->second.dim() < 3) return std::nullopt;  // [out, in / groups, kernel...]
    return Constant(a, dt, it->second.sizes()[0], false);
  }

 private:
  const absl::flat_hash_set<int32_t>& written_;
  const absl::flat_hash_set<int32_t>& shown_;
  std::vector<int> readers_;
  std::vector<int32_t> producer_;
  absl::flat_hash_map<int32_t, Tensor> constants_;
};

bool IsFalse(const GraphArg& a) { return a.kind == GraphArg::Kind::kBool && !a.b; }

// Optional: `a`'s constant; an absent tensor (None) is `absent`, a tensor that is not a foldable
// constant is none.
std::optional<std::optional<Tensor>> Optional(const Graph& g, const GraphArg& a, ScalarType dtype,
                                              int64_t channels) {
  if (a.kind == GraphArg::Kind::kNone) return std::optional<Tensor>();
  std::optional<Tensor> t = g.Constant(a, dtype, channels, true);
  if (!t) return std::nullopt;
  return t;
}

template <typename T>
double At(const std::optional<Tensor>& t, int64_t c, double absent) {
  return t ? static_cast<double>(t->data<T>()[c]) : absent;
}

// Fold computes the folded weight and bias (Note [Folding batch norm]).
template <typename T>
absl::Status Fold(const Tensor& w, const std::optional<Tensor>& b,
                  const std::optional<Tensor>& gamma, const std::optional<Tensor>& beta,
                  const Tensor& mean, const Tensor& var, double eps, BatchNormFold* fold) {
  const int64_t channels = w.sizes()[0];
  const int64_t per_channel = channels == 0 ? 0 : w.numel() / channels;
  const Device cpu(DeviceType::kCPU);
  TSR_ASSIGN_OR_RETURN(fold->weight, Empty(w.sizes(), w.dtype(), cpu));
  TSR_ASSIGN_OR_RETURN(fold->bias, Empty({channels}, w.dtype(), cpu));
  const T* src = w.data<T>();
  T* dst = fold->weight.data<T>();
  T* bias = fold->bias.data<T>();
  for (int64_t c = 0; c < channels; ++c) {
    const double scale =
        At<T>(gamma, c, 1.0) / std::sqrt(static_cast<double>(var.data<T>()[c]) + eps);
    const double shift = At<T>(beta, c, 0.0) - static_cast<double>(mean.data<T>()[c]) * scale;
    for (int64_t i = c * per_channel; i < (c + 1) * per_channel; ++i) {
      dst[i] = static_cast<T>(static_cast<double>(src[i]) * scale);
    }
    bias[c] = static_cast<T>(At<T>(b, c, 0.0) * scale + shift);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<BatchNormFold>> FoldBatchNorms(
    const Model& m, const absl::flat_hash_set<int32_t>& written,
    const absl::flat_hash_set<int32_t>& shown) {
  const Graph g(m, written, shown);
  std::vector<BatchNormFold> folds;
  for (size_t n = 0; n < m.nodes.size(); ++n) {
    const GraphNode& norm = m.nodes[n];
    const NormOp* op = NormOpOf(norm);
    if (op == nullptr) continue;
    // The statistics outputs (1 and 2) must be read by nothing: the folded node makes no
    // tensor for them.
    if (op->outputs == 3 && (g.readers(norm.outputs[1]) != 0 || g.readers(norm.outputs[2]) != 0)) {
      continue;
    }
    const GraphArg& input = norm.args[kNormInput];
    const GraphArg& eps_arg = norm.args[op->eps];
    if (input.kind != GraphArg::Kind::kTensor ||
        (op->training >= 0 && !IsFalse(norm.args[static_cast<size_t>(op->training)])) ||
        (eps_arg.kind != GraphArg::Kind::kFloat && eps_arg.kind != GraphArg::Kind::kInt)) {
      continue;
    }
    const int32_t x = input.values[0];
    if (g.readers(x) != 1 || g.producer(x) < 0) continue;  // only the norm reads the conv's output
    const size_t c = static_cast<size_t>(g.producer(x));
    const GraphNode& conv = m.nodes[c];
    if (conv.op != "convolution" || conv.args.size() != kConvArgs || conv.outputs.size() != 1 ||
        !IsFalse(conv.args[kConvTransposed])) {
      continue;
    }
    const std::optional<Tensor> w = g.Weight(conv.args[kConvWeight]);
    if (!w) continue;
    const ScalarType dt = w->dtype();
    const int64_t channels = w->sizes()[0];
    const auto b = Optional(g, conv.args[kConvBias], dt, channels);
    const auto gamma = Optional(g, norm.args[kNormWeight], dt, channels);
    const auto beta = Optional(g, norm.args[kNormBias], dt, channels);
    const auto mean = Optional(g, norm.args[kNormMean], dt, channels);
    const auto var = Optional(g, norm.args[kNormVar], dt, channels);
    if (!b || !gamma || !beta || !mean || !var || !*mean || !*var) continue;
    const double eps =
        eps_arg.kind == GraphArg::Kind::kFloat ? eps_arg.d : static_cast<double>(eps_arg.i);
    BatchNormFold fold{c, n, Tensor(), Tensor()};
    TSR_RETURN_IF_ERROR(dt == ScalarType::kFloat32
                            ? Fold<float>(*w, *b, *gamma, *beta, **mean, **var, eps, &fold)
                            : Fold<double>(*w, *b, *gamma, *beta, **mean, **var, eps, &fold));
    folds.push_back(std::move(fold));
  }
  return folds;
}

bool StatisticsWrittenOnlyInTraining(const GraphNode& node, size_t arg) {
  const NormOp* op = NormOpOf(node);
  return op != nullptr && op->writes_statistics && (arg == kNormMean || arg == kNormVar) &&
         IsFalse(node.args[static_cast<size_t>(op->training)]);
}

bool BatchNormFoldingEnabled() {
  static std::atomic<bool> warned{false};
  return EnvSwitchOn("TESSERA_FOLD_BATCH_NORM", warned, "folding stays on");
}

}  // namespace model
}  // namespace tessera
