// The embedding-bag ops (op set 1.10, family "linalg_nn"): _embedding_bag_forward_only,
// _embedding_bag (each with its out= form), embedding_bag, embedding_bag.padding_idx,
// _embedding_bag_dense_backward and _embedding_bag_per_sample_weights_backward (with their out=
// forms and the gradient oracle's links to _embedding_bag), and op set 1.11's
// _embedding_bag_backward (the forward's returns as they are: an empty offset2bag rebuilt from
// the offsets; sparse=True refused, UNIMPLEMENTED). The references walk the bags element by
// element, from our reading of ATen's EmbeddingBag.cpp (see Note [embedding_bag's four returns] in
// dispatcher/ops/embedding_bag_ops.cc): the sum, mean or max of each bag's non-padding rows,
// offset2bag (empty on ATen's sum fast path: float32 and 16-bit weights without padding_idx),
// bag_size and max_indices as ATen's CPU kernel leaves them. The samples are PyTorch's OpInfo
// nn.functional.embedding_bag's at the ATen level (its 2-D indices as F.embedding_bag passes
// them: flattened, a bag per row), plus empty bags, empty indices, int32 and mixed index
// dtypes and [n, 1] indices. Not sampled: include_last_offset with a last offset short of the
// end, where ATen's CPU paths disagree (its sum fast path drops the tail; the others, and the
// composite, fold it into the last bag). Checked against PyTorch 1.13's
// _embedding_bag_forward_only and _embedding_bag (except bfloat16, which 1.13 refuses).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "conformance/op_db.h"
#include "conformance/op_db_helpers.h"

namespace tessera {
namespace conformance {
namespace {

constexpr int64_t kSum = 0, kMean = 1, kMax = 2;
constexpr int64_t kS = 5, kM = 10;  // OpInfo's S and M

// A forward call at the ATen level: _embedding_bag's arguments.
struct Bag {
  HostTensor weight, indices, offsets;
  int64_t mode = kSum;
  std::optional<HostTensor> psw;
  bool include_last_offset = false;
  int64_t padding_idx = -1;  // as embedding_bag.padding_idx takes it (negative wraps there)
  std::string desc;
};

HostTensor Ints(tsr_dtype dtype, std::vector<int64_t> shape, const std::vector<int64_t>& v) {
  return Values(dtype, std::move(shape), std::vector<double>(v.begin(), v.end()));
}

HostTensor RandomIndices(std::vector<int64_t> shape, int64_t high, Rng& rng,
                         tsr_dtype dtype = TSR_DTYPE_INT64) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  std::uniform_int_distribution<int64_t> pick(0, high - 1);
  for (int64_t i = 0; i < t.numel(); ++i) t.values.push_back(static_cast<double>(pick(rng)));
  return t;
}

// The cases, in `dtype`: OpInfo's samples for each mode (per_sample_weights with sum only).
std::vector<Bag> BagCases(tsr_dtype dtype, Rng& rng) {
  auto w = [&](int64_t rows, int64_t cols) { return MakeTensor({rows, cols}, dtype, rng); };
  const tsr_dtype i64 = TSR_DTYPE_INT64, i32 = TSR_DTYPE_INT32;
  std::vector<Bag> cases;
  for (const bool weighted : {true, false}) {
    for (const int64_t mode : {kSum, kMean, kMax}) {
      if (weighted && mode != kSum) continue;
      const std::string tag = std::string(mode == kSum    ? "sum"
                                          : mode == kMean ? "mean"
                                                          : "max") +
                              (weighted ? " per_sample_weights" : "");
      auto add = [&](Bag b) {
        b.mode = mode;
        if (weighted) b.psw = MakeTensor({b.indices.numel()}, dtype, rng);
        b.desc = tag + ": " + b.desc;
        cases.push_back(std::move(b));
      };
      add({w(kM, kS),
           RandomIndices({kS}, kM, rng),
           Ints(i64, {2}, {0, 3}),
           0,
           {},
           false,
           -1,
           "bags [0, 3)"});
      add({w(kM, kS),
           RandomIndices({kS}, kM, rng),
           Ints(i64, {3}, {0, 0, 3}),
           0,
           {},
           false,
           -1,
           "an empty bag"});
      {  // a 2-D [S, S] input: a bag per row
        std::vector<int64_t> starts;
        for (int64_t k = 0; k < kS; ++k) starts.push_back(k * kS);
        add({w(kM, kS),
             RandomIndices({kS * kS}, kM, rng),
             Ints(i64, {kS}, starts),
             0,
             {},
             false,
             -1,
             "2-D input, flattened"});
      }
      {  // padding_idx -1 (wrapped to S - 1)
        HostTensor idx = RandomIndices({6}, kS, rng);
        idx.values[0] = idx.values[4] = 4;
        add({w(kS, kS), idx, Ints(i64, {2}, {0, 3}), 0, {}, false, 4, "padding_idx 4"});
      }
      {  // a 2-D [3, 3] input with padding_idx 2
        HostTensor idx = RandomIndices({9}, kS, rng);
        idx.values[0] = idx.values[4] = 2;
        add({w(kS, kS),
             idx,
             Ints(i64, {3}, {0, 3, 6}),
             0,
             {},
             false,
             2,
             "2-D input, padding_idx 2"});
      }
      {  // a bag of padding only
        HostTensor idx = Ints(i64, {5}, {1, 1, 3, 0, 1});
        add({w(kS, 3), idx, Ints(i64, {3}, {0, 2, 3}), 0, {}, false, 1, "a bag of padding only"});
      }
      add({w(kS, kS),
           RandomIndices({6}, kS, rng),
           Ints(i64, {3}, {0, 3, 6}),
           0,
           {},
           true,
           -1,
           "include_last_offset"});
      add({w(kS, 4),
           Ints(i64, {0}, {}),
           Ints(i64, {2}, {0, 0}),
           0,
           {},
           false,
           -1,
           "no indices, two empty bags"});
      add({w(kS, 4),
           RandomIndices({7}, kS, rng, i32),
           Ints(i32, {3}, {0, 4, 4}),
           0,
           {},
           false,
           -1,
           "int32 indices and offsets"});
      add({w(kS, 4),
           RandomIndices({7}, kS, rng, i32),
           Ints(i64, {2}, {0, 1}),
           0,
           {},
           false,
           -1,
           "int32 indices, int64 offsets"});
      add({w(kS, 3),
           RandomIndices({3, 1}, kS, rng),
           Ints(i64, {2}, {0, 2}),
           0,
           {},
           false,
           -1,
           "[3, 1] indices"});
      add({w(1, 6),
           Ints(i64, {4}, {0, 0, 0, 0}),
           Ints(i64, {2}, {0, 1}),
           0,
           {},
           false,
           -1,
           "one row, repeated (ties)"});
    }
  }
  return cases;
}

tsr_dtype IndexDtype(const Sample& s) {
  return s.args[1].tensor.dtype == TSR_DTYPE_INT64 || s.args[2].tensor.dtype == TSR_DTYPE_INT64
             ? TSR_DTYPE_INT64
             : TSR_DTYPE_INT32;
}

// BagForward: the four returns of _embedding_bag (requires_grad) or
// _embedding_bag_forward_only from the sample's first 9 arguments (ATen's order), with
// `padding_idx` already wrapped.
std::vector<HostTensor> BagForward(const Sample& s, int64_t padding_idx, bool requires_grad) {
  const HostTensor& weight = s.args[0].tensor;
  const HostTensor& indices = s.args[1].tensor;
  const HostTensor& offsets = s.args[2].tensor;
  const int64_t mode = s.args[4].integer;
  const bool has_psw = Given(s, 6);
  const bool ilo = s.args[7].boolean;
  const tsr_dtype index_dtype = IndexDtype(s);
  const int64_t n = indices.numel(), D = weight.shape[1];
  const int64_t num_offsets = offsets.numel();
  const int64_t bags = num_offsets - (ilo ? 1 : 0);
  std::vector<int64_t> bag_of(static_cast<size_t>(n), 0);
  std::vector<int64_t> sizes(static_cast<size_t>(std::max<int64_t>(bags, 0)), 0);
  for (int64_t b = 0; b < bags; ++b) {
    const int64_t start = static_cast<int64_t>(offsets.values[b]);
    const int64_t end = b + 1 < bags ? static_cast<int64_t>(offsets.values[b + 1]) : n;
    sizes[b] = end - start;
    for (int64_t i = start; i < end; ++i) bag_of[i] = b;
  }
  std::vector<double> out(static_cast<size_t>(bags * D), 0.0);
  std::vector<double> arg(static_cast<size_t>(bags * D), 0.0);
  std::vector<bool> seen(static_cast<size_t>(bags), false);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t idx = static_cast<int64_t>(indices.values[i]), b = bag_of[i];
    if (idx == padding_idx) {
      --sizes[b];
      continue;
    }
    for (int64_t d = 0; d < D; ++d) {
      const double v = weight.values[idx * D + d];
      double& o = out[b * D + d];
      if (mode == kMax) {
        if (!seen[b] || v > o) {
          o = v;
          arg[b * D + d] = static_cast<double>(idx);
        }
      } else {
        o += v * (has_psw ? s.args[6].tensor.values[i] : 1.0);
      }
    }
    seen[b] = true;
  }
  if (mode == kMean) {
    for (int64_t b = 0; b < bags; ++b) {
      for (int64_t d = 0; d < D; ++d) out[b * D + d] /= std::max<int64_t>(sizes[b], 1);
    }
  }
  const bool fast_sum = mode == kSum && padding_idx < 0 && weight.dtype != TSR_DTYPE_FLOAT64;
  HostTensor offset2bag = fast_sum ? Ints(index_dtype, {0}, {}) : Ints(index_dtype, {n}, bag_of);
  HostTensor bag_size = mode == kSum
                            ? Ints(index_dtype, {requires_grad ? bags : num_offsets},
                                   std::vector<int64_t>(requires_grad ? bags : num_offsets, 0))
                            : Ints(index_dtype, {bags}, sizes);
  HostTensor max_indices = mode == kMax ? Values(index_dtype, {bags, D}, arg) : bag_size;
  return {Values(weight.dtype, {bags, D}, out), offset2bag, bag_size, max_indices};
}

std::vector<Arg> BagArgs(const Bag& b) {
  return {Arg::Tensor(b.weight),
          Arg::Tensor(b.indices),
          Arg::Tensor(b.offsets),
          Arg::Bool(false),
          Arg::Int(b.mode),
          Arg::Bool(false),
          b.psw ? Arg::Tensor(*b.psw) : Arg::None(),
          Arg::Bool(b.include_last_offset),
          Arg::Int(b.padding_idx)};
}

// The error inputs every form shares (ATen's check_arguments and its kernel's), as the first 8
// arguments; `tail` completes them.
std::vector<ErrorInput> BagErrors(Rng& rng, const std::vector<Arg>& tail) {
  auto f = [&rng](std::vector<int64_t> shape, tsr_dtype dtype = TSR_DTYPE_FLOAT32) {
    return Arg::Tensor(MakeTensor(std::move(shape), dtype, rng));
  };
  const tsr_dtype i64 = TSR_DTYPE_INT64;
  auto idx = [](std::vector<int64_t> shape, std::vector<int64_t> v) {
    return Arg::Tensor(Ints(TSR_DTYPE_INT64, std::move(shape), v));
  };
  auto call = [&](Arg w, Arg i, Arg o, int64_t mode, Arg psw, bool ilo) {
    std::vector<Arg> args{
        w, i, o, Arg::Bool(false), Arg::Int(mode), Arg::Bool(false), psw, Arg::Bool(ilo)};
    args.insert(args.end(), tail.begin(), tail.end());
    return args;
  };
  const Arg w = f({4, 3});
  const Arg i = idx({5}, {0, 2, 1, 3, 3});
  const Arg o = idx({3}, {0, 2, 2});
  const tsr_code bad = TSR_INVALID_ARGUMENT;
  return {
      RefusedSaying(call(w, f({5}), o, 0, Arg::None(), false), bad,
                    "Expected tensor for argument #1 'indices' to have one of the following scalar "
                    "types: Long, Int"),
      // ATen promotes indices and offsets together, then checks the result as 'indices'.
      Saying(Refused(call(w, i, f({3}), 0, Arg::None(), false), bad, "float32 offsets"),
             "Expected tensor for argument #1 'indices' to have one of the following scalar "
             "types: Long, Int"),
      RefusedSaying(call(f({4, 3}, i64), i, o, 0, Arg::None(), false), bad,
                    "Expected tensor for argument #1 'weight' to have one of the following scalar "
                    "types"),
      RefusedSaying(
          call(w, i, idx({2}, {1, 2}), 0, Arg::None(), false), bad,
          "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
          "from position 0. However, got 1"),
      RefusedSaying(
          call(w, i, idx({2}, {0, 6}), 0, Arg::None(), false), bad,
          "offsets[-1] can not be greater than input's length 5 but got offsets[-1] of 6"),
      RefusedSaying(call(w, i, o, 1, f({5}), false), bad,
                    "embedding_bag: per_sample_weights only supported with mode='sum'"),
      RefusedSaying(call(w, i, o, 0, f({5}, TSR_DTYPE_FLOAT64), false), bad,
                    "Expected tensor for argument #1 'weight' to have the same type as tensor for "
                    "argument #1 'per_sample_weights'"),
      RefusedSaying(call(w, i, o, 0, f({5, 1}), false), bad,
                    "Expected per_sample_weights.value().dim() == 1 to be true, but got false."),
      RefusedSaying(call(w, i, o, 0, f({4}), false), bad,
                    "Expected per_sample_weights.value().numel() == indices.numel() to be true"),
      RefusedSaying(call(w, i, idx({0}, {}), 0, Arg::None(), true), bad,
                    "include_last_offset: number of offset should be at least 1"),
      RefusedSaying(
          call(w, idx({3}, {0, 4, 1}), o, 0, Arg::None(), false), bad,
          "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be 4"),
      RefusedSaying(
          call(w, idx({3}, {0, -1, 1}), o, 2, Arg::None(), false), bad,
          "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be -1"),
      RefusedSaying(call(w, idx({1, 1, 5}, {0, 2, 1, 3, 3}), o, 0, Arg::None(), false), bad,
                    "input has to be a 1D or 2D Tensor, but got Tensor of dimension 3"),
      RefusedSaying(call(w, i, idx({1, 3}, {0, 2, 2}), 0, Arg::None(), false), bad,
                    "offsets has to be a 1D Tensor, but got Tensor of dimension 2"),
  };
}

// The float64 forward samples of the gradient oracle (_embedding_bag): sum (with and without
// per_sample_weights and padding), mean and max.
std::vector<Sample> GradientSamples(Rng& rng) {
  std::vector<Sample> samples;
  for (const Bag& b : BagCases(TSR_DTYPE_FLOAT64, rng)) {
    if (b.indices.numel() == 0 || b.desc.find("ties") != std::string::npos) continue;
    samples.push_back({BagArgs(b), b.desc});
  }
  return samples;
}

void AddForward(std::vector<OpInfo>& db, const std::string& name, bool requires_grad) {
  OpInfo op;
  op.name = name;
  op.out = name + ".out";
  op.dtypes = kFloatingMask;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    for (const Bag& b : BagCases(dtype, rng)) s.push_back({BagArgs(b), b.desc});
    return s;
  };
  op.reference = [requires_grad](const Sample& s) {
    return BagForward(s, s.args[8].integer, requires_grad);
  };
  op.errors = [](Rng& rng) { return BagErrors(rng, {Arg::Int(-1)}); };
  db.push_back(std::move(op));
}

// embedding_bag and embedding_bag.padding_idx: padding_idx in [-num, num) (wrapped), or None.
void AddPublic(std::vector<OpInfo>& db, bool with_padding) {
  OpInfo op;
  op.name = with_padding ? "embedding_bag.padding_idx" : "embedding_bag";
  op.dtypes = kFloatingMask;
  op.samples = [with_padding](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    for (const Bag& b : BagCases(dtype, rng)) {
      std::vector<Arg> args = BagArgs(b);
      args.pop_back();
      if (!with_padding) {
        if (b.padding_idx >= 0) continue;
        s.push_back(Described(std::move(args), " (" + b.desc + ")"));
        continue;
      }
      const int64_t num = b.weight.shape[0];
      if (b.padding_idx < 0) {
        args.push_back(Arg::None());
      } else {
        // The last row's index given negative, as nn.EmbeddingBag(padding_idx=-1) passes it.
        args.push_back(Arg::Int(b.padding_idx == num - 1 ? -1 : b.padding_idx));
      }
      s.push_back(Described(std::move(args), " (" + b.desc + ")"));
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    int64_t padding_idx = -1;
    if (Given(s, 8)) {
      padding_idx = s.args[8].integer;
      if (padding_idx < 0) padding_idx += s.args[0].tensor.shape[0];
    }
    return BagForward(s, padding_idx, false);
  };
  op.errors = [with_padding](Rng& rng) {
    if (!with_padding) return BagErrors(rng, {});
    std::vector<ErrorInput> errors = BagErrors(rng, {Arg::None()});
    for (const int64_t p : {4, -5}) {
      errors.push_back(RefusedSaying(
          {Arg::Tensor(MakeTensor({4, 3}, TSR_DTYPE_FLOAT32, rng)),
           Arg::Tensor(Ints(TSR_DTYPE_INT64, {3}, {0, 1, 2})),
           Arg::Tensor(Ints(TSR_DTYPE_INT64, {1}, {0})), Arg::Bool(false), Arg::Int(1),
           Arg::Bool(false), Arg::None(), Arg::Bool(false), Arg::Int(p)},
          TSR_INVALID_ARGUMENT,
          "padding_idx must be within the number of embeddings, -4 through 3, but got " +
              std::to_string(p)));
    }
    return errors;
  };
  db.push_back(std::move(op));
}

// _embedding_bag_dense_backward(grad, indices, offset2bag, bag_size, maximum_indices,
// num_weights, scale_grad_by_freq, mode, per_sample_weights, padding_idx): from a forward
// case, its _embedding_bag returns (offset2bag always whole, as _embedding_bag_backward
// rebuilds it from an empty one) and an incoming gradient.
std::vector<Arg> DenseBackwardArgs(const Sample& forward, const std::vector<HostTensor>& r,
                                   const HostTensor& grad, bool by_freq) {
  HostTensor offset2bag = r[1];
  const HostTensor& indices = forward.args[1].tensor;
  if (offset2bag.numel() != indices.numel()) {  // the sum fast path's empty one
    const HostTensor& offsets = forward.args[2].tensor;
    const int64_t bags = grad.shape[0], n = indices.numel();
    std::vector<int64_t> bag_of(static_cast<size_t>(n), 0);
    for (int64_t b = 0; b < bags; ++b) {
      const int64_t end = b + 1 < bags ? static_cast<int64_t>(offsets.values[b + 1]) : n;
      for (int64_t i = static_cast<int64_t>(offsets.values[b]); i < end; ++i) bag_of[i] = b;
    }
    offset2bag = Ints(offset2bag.dtype, {n}, bag_of);
  }
  HostTensor flat = indices;
  flat.shape = {indices.numel()};
  return {Arg::Tensor(grad),  Arg::Tensor(flat), Arg::Tensor(offset2bag),
          Arg::Tensor(r[2]),  Arg::Tensor(r[3]), Arg::Int(forward.args[0].tensor.shape[0]),
          Arg::Bool(by_freq), forward.args[4],   forward.args[6],
          forward.args[8]};
}

// DenseBackwardReference: ATen's _embedding_bag_dense_backward_cpu, element by element: mode 2
// adds each non-empty bag's gradient at the row its max came from; modes 0 and 1 add each
// non-padding entry's bag gradient at its row, scaled by its per_sample_weight (`psw`, or none),
// by 1 / its bag's size (mode 1, a non-empty bag) and by 1 / its index's count
// (scale_grad_by_freq).
HostTensor DenseBackwardReference(const HostTensor& grad, const HostTensor& indices,
                                  const HostTensor& offset2bag, const HostTensor& bag_size,
                                  const HostTensor& max_indices, int64_t num_weights, bool by_freq,
                                  int64_t mode, const HostTensor* psw, int64_t padding_idx) {
  const int64_t bags = grad.shape[0], D = grad.shape[1], n = indices.numel();
  std::vector<long double> gw(static_cast<size_t>(num_weights * D), 0);
  if (mode == kMax) {
    for (int64_t b = 0; b < bags; ++b) {
      if (bag_size.values[b] == 0) continue;
      for (int64_t d = 0; d < D; ++d) {
        const int64_t row = static_cast<int64_t>(max_indices.values[b * D + d]);
        gw[row * D + d] += grad.values[b * D + d];
      }
    }
  } else {
    std::vector<int64_t> count(static_cast<size_t>(num_weights), 0);
    for (int64_t i = 0; i < n; ++i) ++count[static_cast<int64_t>(indices.values[i])];
    for (int64_t i = 0; i < n; ++i) {
      const int64_t row = static_cast<int64_t>(indices.values[i]);
      if (row == padding_idx) continue;
      const int64_t b = static_cast<int64_t>(offset2bag.values[i]);
      long double scale = 1;
      if (by_freq) scale /= count[row];
      if (mode == kMean && bag_size.values[b] != 0) scale /= bag_size.values[b];
      if (psw != nullptr) scale *= psw->values[i];
      for (int64_t d = 0; d < D; ++d) gw[row * D + d] += scale * grad.values[b * D + d];
    }
  }
  return Values(grad.dtype, {num_weights, D}, std::vector<double>(gw.begin(), gw.end()));
}

void AddDenseBackward(std::vector<OpInfo>& db) {
  OpInfo op;
  op.name = "_embedding_bag_dense_backward";
  op.out = "_embedding_bag_dense_backward.out";
  op.dtypes = kFloatingMask;
  op.tolerance_scale = 4;  // sums of several scaled rows
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    bool by_freq = false;
    for (const Bag& b : BagCases(dtype, rng)) {
      const Sample forward{BagArgs(b), b.desc};
      const std::vector<HostTensor> r = BagForward(forward, b.padding_idx, true);
      const HostTensor grad = MakeTensor(r[0].shape, dtype, rng);
      // scale_grad_by_freq on every other sum and mean case (ATen refuses none of the modes,
      // and ignores it in max mode's backward).
      if (b.mode != kMax) by_freq = !by_freq;
      s.push_back({DenseBackwardArgs(forward, r, grad, b.mode != kMax && by_freq),
                   b.desc + (b.mode != kMax && by_freq ? ", scale_grad_by_freq" : "")});
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    return std::vector<HostTensor>{DenseBackwardReference(
        s.args[0].tensor, s.args[1].tensor, s.args[2].tensor, s.args[3].tensor, s.args[4].tensor,
        s.args[5].integer, s.args[6].boolean, s.args[7].integer,
        Given(s, 8) ? &s.args[8].tensor : nullptr, s.args[9].integer)};
  };
  op.errors = [](Rng& rng) {
    auto ints = [](std::vector<int64_t> shape, std::vector<int64_t> v) {
      return Arg::Tensor(Ints(TSR_DTYPE_INT64, std::move(shape), v));
    };
    auto call = [&](tsr_dtype grad_dtype, Arg indices, int64_t mode, Arg psw) {
      return std::vector<Arg>{Arg::Tensor(MakeTensor({2, 3}, grad_dtype, rng)),
                              indices,
                              ints({3}, {0, 0, 1}),
                              ints({2}, {2, 1}),
                              ints({2}, {2, 1}),
                              Arg::Int(4),
                              Arg::Bool(false),
                              Arg::Int(mode),
                              psw,
                              Arg::Int(-1)};
    };
    const Arg indices = ints({3}, {0, 2, 3});
    return std::vector<ErrorInput>{
        RefusedSaying(call(TSR_DTYPE_INT64, indices, 0, Arg::None()), TSR_INVALID_ARGUMENT,
                      "Expected tensor for argument #1 'grad_' to have one of the following "
                      "scalar types: Half, BFloat16, Float, Double"),
        RefusedSaying(
            call(TSR_DTYPE_FLOAT32, Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT32, rng)), 0,
                 Arg::None()),
            TSR_INVALID_ARGUMENT,
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            "types: Long, Int"),
        RefusedSaying(call(TSR_DTYPE_FLOAT32, indices, 1,
                           Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT32, rng))),
                      TSR_INVALID_ARGUMENT,
                      "embedding_bag: per_sample_weights only supported with mode='sum'"),
        RefusedSaying(call(TSR_DTYPE_FLOAT32, ints({3}, {0, 2, 4}), 0, Arg::None()),
                      TSR_INVALID_ARGUMENT,
                      "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to "
                      "be 4"),
    };
  };
  // derivatives.yaml: _embedding_bag's weight: _embedding_bag_backward(grad, indices, offsets,
  // result1, result2, result3, weight.size(0), scale_grad_by_freq, mode, sparse,
  // per_sample_weights, padding_idx), which for a dense weight is this op.
  GradientSpec spec;
  spec.forward = "_embedding_bag";
  spec.samples = GradientSamples;
  spec.wrt = {0};
  spec.output = 0;
  spec.backward_args = [](const Sample& s, const std::vector<HostTensor>& r, const HostTensor& g) {
    return DenseBackwardArgs(s, r, g, /*by_freq=*/false);
  };
  op.gradient = std::move(spec);
  db.push_back(std::move(op));
}

// _embedding_bag_per_sample_weights_backward(grad, weight, indices, offsets, offset2bag, mode,
// padding_idx): from a sum-mode forward case, its _embedding_bag offset2bag as returned (empty
// on the fast path, which the op rebuilds from the offsets) and an incoming gradient.
std::vector<Arg> PerSampleBackwardArgs(const Sample& forward, const std::vector<HostTensor>& r,
                                       const HostTensor& grad) {
  HostTensor flat = forward.args[1].tensor;
  flat.shape = {flat.numel()};
  return {Arg::Tensor(grad), forward.args[0], Arg::Tensor(flat), forward.args[2],
          Arg::Tensor(r[1]), forward.args[4], forward.args[8]};
}

void AddPerSampleWeightsBackward(std::vector<OpInfo>& db) {
  OpInfo op;
  op.name = "_embedding_bag_per_sample_weights_backward";
  op.out = "_embedding_bag_per_sample_weights_backward.out";
  op.dtypes = kFloatingMask;
  op.tolerance_scale = 4;  // dot products of rows
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    for (const Bag& b : BagCases(dtype, rng)) {
      if (b.mode != kSum) continue;
      const Sample forward{BagArgs(b), b.desc};
      const std::vector<HostTensor> r = BagForward(forward, b.padding_idx, true);
      s.push_back({PerSampleBackwardArgs(forward, r, MakeTensor(r[0].shape, dtype, rng)), b.desc});
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& grad = s.args[0].tensor;
    const HostTensor& weight = s.args[1].tensor;
    const HostTensor& indices = s.args[2].tensor;
    const HostTensor& offsets = s.args[3].tensor;
    const HostTensor& offset2bag = s.args[4].tensor;
    const int64_t padding_idx = s.args[6].integer;
    const int64_t n = indices.numel(), D = grad.shape[1];
    // The bag of each entry: offset2bag, or from the offsets where it is empty.
    std::vector<int64_t> bag_of(static_cast<size_t>(n), 0);
    if (offset2bag.numel() == n) {
      for (int64_t i = 0; i < n; ++i) bag_of[i] = static_cast<int64_t>(offset2bag.values[i]);
    } else {
      for (int64_t k = 1; k < offsets.numel(); ++k) {
        for (int64_t i = static_cast<int64_t>(offsets.values[k]); i < n; ++i) ++bag_of[i];
      }
    }
    std::vector<double> out(static_cast<size_t>(n), 0.0);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t row = static_cast<int64_t>(indices.values[i]);
      if (row == padding_idx) continue;
      long double dot = 0;
      for (int64_t d = 0; d < D; ++d)
        dot +=
            static_cast<long double>(grad.values[bag_of[i] * D + d]) * weight.values[row * D + d];
      out[i] = static_cast<double>(dot);
    }
    return std::vector<HostTensor>{Values(grad.dtype, {n}, out)};
  };
  op.errors = [](Rng& rng) {
    auto f = [&rng](std::vector<int64_t> shape, tsr_dtype dtype = TSR_DTYPE_FLOAT32) {
      return Arg::Tensor(MakeTensor(std::move(shape), dtype, rng));
    };
    auto ints = [](std::vector<int64_t> shape, std::vector<int64_t> v) {
      return Arg::Tensor(Ints(TSR_DTYPE_INT64, std::move(shape), v));
    };
    return std::vector<ErrorInput>{
        RefusedSaying({f({2, 3}), f({4, 3}), ints({3}, {0, 2, 3}), ints({2}, {0, 2}),
                       ints({3}, {0, 0, 1}), Arg::Int(1), Arg::Int(-1)},
                      TSR_INVALID_ARGUMENT,
                      "embedding_bag_backward: per_sample_weights only supported for mode='sum'"),
        RefusedSaying(
            {f({2, 3}), f({4, 3}), f({3}), ints({2}, {0, 2}), ints({3}, {0, 0, 1}), Arg::Int(0),
             Arg::Int(-1)},
            TSR_INVALID_ARGUMENT,
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            "types: Long, Int"),
        RefusedSaying({f({2, 3}), f({4, 2}), ints({3}, {0, 2, 3}), ints({2}, {0, 2}),
                       ints({3}, {0, 0, 1}), Arg::Int(0), Arg::Int(-1)},
                      TSR_INVALID_ARGUMENT,
                      "expected a 2-D grad and a 2-D weight of grad's dtype and embedding size"),
    };
  };
  // derivatives.yaml: _embedding_bag's per_sample_weights:
  // _embedding_bag_per_sample_weights_backward(grad, weight, indices, offsets, result1, mode,
  // padding_idx).
  GradientSpec spec;
  spec.forward = "_embedding_bag";
  spec.samples = [](Rng& rng) {
    std::vector<Sample> samples;
    for (const Sample& s : GradientSamples(rng)) {
      if (Given(s, 6)) samples.push_back(s);
    }
    return samples;
  };
  spec.wrt = {6};
  spec.output = 0;
  spec.backward_args = [](const Sample& s, const std::vector<HostTensor>& r, const HostTensor& g) {
    return PerSampleBackwardArgs(s, r, g);
  };
  op.gradient = std::move(spec);
  db.push_back(std::move(op));
}

// _embedding_bag_backward(grad, indices, offsets, offset2bag, bag_size, maximum_indices,
// num_weights, scale_grad_by_freq, mode, sparse, per_sample_weights, padding_idx): from a forward
// case, its _embedding_bag returns as they are (offset2bag empty on the sum fast path) and an
// incoming gradient; [n, 1] indices flattened, as DenseBackwardArgs does (ATen's dense backward
// takes 1-D ones only).
std::vector<Arg> BackwardArgs(const Sample& forward, const std::vector<HostTensor>& r,
                              const HostTensor& grad, bool by_freq, bool sparse) {
  HostTensor flat = forward.args[1].tensor;
  flat.shape = {flat.numel()};
  return {Arg::Tensor(grad),
          Arg::Tensor(flat),
          forward.args[2],
          Arg::Tensor(r[1]),
          Arg::Tensor(r[2]),
          Arg::Tensor(r[3]),
          Arg::Int(forward.args[0].tensor.shape[0]),
          Arg::Bool(by_freq),
          forward.args[4],
          Arg::Bool(sparse),
          forward.args[6],
          forward.args[8]};
}

void AddBackward(std::vector<OpInfo>& db) {
  OpInfo op;
  op.name = "_embedding_bag_backward";  // no out= form in ATen
  op.dtypes = kFloatingMask;
  op.tolerance_scale = 4;  // sums of several scaled rows
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    bool by_freq = false;
    for (const Bag& b : BagCases(dtype, rng)) {
      const Sample forward{BagArgs(b), b.desc};
      const std::vector<HostTensor> r = BagForward(forward, b.padding_idx, true);
      const HostTensor grad = MakeTensor(r[0].shape, dtype, rng);
      if (b.mode != kMax) by_freq = !by_freq;
      const bool freq = b.mode != kMax && by_freq;
      const bool rebuilt = r[1].numel() == 0 && b.indices.numel() != 0;
      s.push_back({BackwardArgs(forward, r, grad, freq, /*sparse=*/false),
                   b.desc + (freq ? ", scale_grad_by_freq" : "") +
                       (rebuilt ? ", empty offset2bag (the sum fast path's)" : "")});
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& indices = s.args[1].tensor;
    const HostTensor& offsets = s.args[2].tensor;
    const int64_t n = indices.numel();
    HostTensor offset2bag = s.args[3].tensor;
    if (n != 0 && offset2bag.numel() == 0) {
      // ATen's make_offset2bag: an index's bag is the count of offsets at or before it, less 1
      // (every offset counts, include_last_offset's last one too).
      std::vector<int64_t> bag_of(static_cast<size_t>(n), -1);
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t k = 0; k < offsets.numel(); ++k) {
          if (static_cast<int64_t>(offsets.values[k]) <= i) ++bag_of[i];
        }
      }
      offset2bag = Ints(offsets.dtype, {n}, bag_of);
    }
    return std::vector<HostTensor>{DenseBackwardReference(
        s.args[0].tensor, indices, offset2bag, s.args[4].tensor, s.args[5].tensor,
        s.args[6].integer, s.args[7].boolean, s.args[8].integer,
        Given(s, 10) ? &s.args[10].tensor : nullptr, s.args[11].integer)};
  };
  op.errors = [](Rng& rng) {
    auto ints = [](std::vector<int64_t> shape, std::vector<int64_t> v) {
      return Arg::Tensor(Ints(TSR_DTYPE_INT64, std::move(shape), v));
    };
    auto f = [&rng](std::vector<int64_t> shape, tsr_dtype dtype = TSR_DTYPE_FLOAT32) {
      return Arg::Tensor(MakeTensor(std::move(shape), dtype, rng));
    };
    // Two bags over 3 indices into 5 rows: grad [2, 3], offsets [0, 2], offset2bag [0, 0, 1]
    // (or empty), bag_size [2, 1].
    struct Call {
      Arg grad, indices, offsets, offset2bag;
      int64_t mode = 0;
      bool sparse = false;
      Arg psw = Arg::None();
    };
    auto args = [&](const Call& c) {
      return std::vector<Arg>{c.grad,
                              c.indices,
                              c.offsets,
                              c.offset2bag,
                              ints({2}, {2, 1}),
                              ints({2}, {2, 1}),
                              Arg::Int(5),
                              Arg::Bool(false),
                              Arg::Int(c.mode),
                              Arg::Bool(c.sparse),
                              c.psw,
                              Arg::Int(-1)};
    };
    const Arg grad = f({2, 3}), indices = ints({3}, {1, 2, 4}), offsets = ints({2}, {0, 2});
    const Arg whole = ints({3}, {0, 0, 1}), none = ints({0}, {});
    const tsr_code bad = TSR_INVALID_ARGUMENT;
    return std::vector<ErrorInput>{
        RefusedSaying(args({grad, indices, offsets, none, 0, true}), TSR_UNIMPLEMENTED,
                      "sparse gradients (sparse=True) are not supported"),
        Saying(Refused(args({grad, indices, offsets, whole, 1, true}), TSR_UNIMPLEMENTED,
                       "sparse=True in mean mode"),
               "pass sparse=False"),
        Saying(Refused(args({grad, f({3}), offsets, none}), bad, "float32 indices"),
               "Expected tensor for argument #1 'indices' to have one of the following scalar "
               "types: Long, Int"),
        // ATen promotes indices and offsets together, then checks the result as 'indices'.
        Saying(Refused(args({grad, indices, f({2}), none}), bad, "float32 offsets"),
               "Expected tensor for argument #1 'indices' to have one of the following scalar "
               "types: Long, Int"),
        Saying(Refused(args({grad, indices, offsets, f({3})}), bad, "float32 offset2bag"),
               "Expected tensor for argument #1 'offset2bag' to have one of the following scalar "
               "types: Long, Int"),
        Saying(Refused(args({f({2, 3}, TSR_DTYPE_INT64), indices, offsets, none}), bad,
                       "an int64 grad"),
               "Expected tensor for argument #1 'grad_' to have one of the following scalar "
               "types: Half, BFloat16, Float, Double"),
        Saying(Refused(args({f({6}), indices, offsets, whole, 1}), bad, "a 1-D grad"),
               "grad has to be a 2D Tensor, but got Tensor of dimension 1"),
        Saying(Refused(args({grad, indices, offsets, ints({2}, {0, 1}), 1}), bad,
                       "an offset2bag of 2 elements for 3 indices"),
               "expected offset2bag with an index dtype and 3 elements (one per index)"),
        Saying(Refused(args({grad, indices, offsets, whole, 0, false, f({2})}), bad,
                       "per_sample_weights of 2 elements for 3 indices"),
               "expected per_sample_weights of grad's dtype float32 with 3 elements"),
        Saying(Refused(args({grad, indices, offsets, whole, 1, false, f({3})}), bad,
                       "per_sample_weights in mean mode"),
               "embedding_bag: per_sample_weights only supported with mode='sum'"),
        Saying(Refused(args({grad, ints({3}, {1, 2, 7}), offsets, none}), bad, "index 7 of 5 rows"),
               "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be 7"),
        Saying(Refused(args({grad, indices, ints({1, 2}, {0, 2}), none}), TSR_OUT_OF_RANGE,
                       "2-D offsets to rebuild offset2bag from"),
               "Index is supposed to be a vector"),
    };
  };
  // derivatives.yaml: _embedding_bag's weight: _embedding_bag_backward_symint(grad, indices,
  // offsets, result1, result2, result3, weight.sym_size(0), scale_grad_by_freq, mode, sparse,
  // per_sample_weights, padding_idx).
  GradientSpec spec;
  spec.forward = "_embedding_bag";
  spec.samples = GradientSamples;
  spec.wrt = {0};
  spec.output = 0;
  spec.backward_args = [](const Sample& s, const std::vector<HostTensor>& r, const HostTensor& g) {
    return BackwardArgs(s, r, g, /*by_freq=*/false, /*sparse=*/false);
  };
  op.gradient = std::move(spec);
  db.push_back(std::move(op));
}

}  // namespace

void AddEmbeddingBagOps(std::vector<OpInfo>& db) {
  AddForward(db, "_embedding_bag_forward_only", /*requires_grad=*/false);
  AddForward(db, "_embedding_bag", /*requires_grad=*/true);
  AddPublic(db, /*with_padding=*/false);
  AddPublic(db, /*with_padding=*/true);
  AddDenseBackward(db);
  AddPerSampleWeightsBackward(db);
  AddBackward(db);
}

}  // namespace conformance
}  // namespace tessera
