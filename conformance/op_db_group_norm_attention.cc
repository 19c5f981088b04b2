// Op set 1.9's group normalization (native_group_norm, group_norm), scaled dot-product
// attention and the Core ATen batch-norm variants (_native_batch_norm_legit, its .no_stats
// overload, _native_batch_norm_legit_no_training): composites,
// dispatcher/ops/group_norm_attention_ops.cc.
//
// Semantics are current PyTorch's, read in aten/src/ATen/native: group_norm.cpp (and its CPU
// kernel's mixed-type rules), transformers/attention.cpp (_scaled_dot_product_attention_math,
// validate_sdpa_input, _safe_softmax) and torch/_decomp/decompositions.py for the batch-norm
// variants. Samples follow common_methods_invocations.py (sample_inputs_group_norm,
// error_inputs_group_norm, sample_inputs_scaled_dot_product_attention,
// sample_inputs__native_batch_norm_legit). The attention samples use dropout_p = 0 only: with
// dropout_p > 0 the op draws from the default generator, which no reference can repeat.
// The references are direct loops in long double.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "conformance/op_db.h"
#include "conformance/op_db_helpers.h"

namespace tessera {
namespace conformance {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

MakeOptions Range(double low, double high) {
  MakeOptions o;
  o.low = low;
  o.high = high;
  return o;
}

// ---- group norm ----

// GroupNormReference: (out, mean, rstd) of an input read as [N, C, HxW] in `group` groups; mean
// and rstd [N, group] in `stat_dtype`. An empty input gives mean 0 and rstd NaN, as ATen's.
std::vector<HostTensor> GroupNormReference(const HostTensor& x, const Arg& weight, const Arg& bias,
                                           int64_t N, int64_t C, int64_t HxW, int64_t group,
                                           double eps, tsr_dtype stat_dtype) {
  HostTensor out = Values(x.dtype, x.shape, {});
  out.values.resize(x.values.size());
  HostTensor mean = Values(stat_dtype, {N, group}, {});
  HostTensor rstd = mean;
  if (x.numel() == 0) {
    mean.values.assign(static_cast<size_t>(N * group), 0.0);
    rstd.values.assign(static_cast<size_t>(N * group), kNaN);
    return {out, mean, rstd};
  }
  const int64_t D = C / group, count = D * HxW;
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t g = 0; g < group; ++g) {
      const int64_t first = (n * C + g * D) * HxW;  // the group's elements are contiguous
      long double sum = 0;
      for (int64_t i = 0; i < count; ++i) sum += x.values[static_cast<size_t>(first + i)];
      const long double m = sum / count;
      long double sq = 0;
      for (int64_t i = 0; i < count; ++i) {
        const long double d = x.values[static_cast<size_t>(first + i)] - m;
        sq += d * d;
      }
      const long double r = 1 / std::sqrt(static_cast<double>(sq / count) + eps);
      mean.values.push_back(RoundTo(stat_dtype, static_cast<double>(m)));
      rstd.values.push_back(RoundTo(stat_dtype, static_cast<double>(r)));
      for (int64_t i = 0; i < count; ++i) {
        const int64_t c = g * D + i / HxW;
        long double y = (x.values[static_cast<size_t>(first + i)] - m) * r;
        if (weight.kind == Arg::Kind::kTensor) y *= weight.tensor.values[static_cast<size_t>(c)];
        if (bias.kind == Arg::Kind::kTensor) y += bias.tensor.values[static_cast<size_t>(c)];
        out.values[static_cast<size_t>(first + i)] = RoundTo(x.dtype, static_cast<double>(y));
      }
    }
  }
  return {out, mean, rstd};
}

// A case of sample_inputs_group_norm (and ours): input shape, groups, eps.
struct GroupNormCase {
  std::vector<int64_t> shape;
  int64_t groups;
  double eps;
};

const std::vector<GroupNormCase>& GroupNormCases() {
  static const std::vector<GroupNormCase> cases{
      // sample_inputs_group_norm's (its eps -0.5 is safe: every group's variance is larger).
      {{1, 6, 3}, 1, 0.5},
      {{2, 6, 3}, 2, -0.5},
      {{1, 3}, 1, 1e-5},
      {{0, 2}, 1, 1e-5},
      {{5, 5, 5}, 1, 0.5},
      // Ours: 4-D and 5-D inputs, one channel per group, no positions (HxW = 0: mean 0 and
      // rstd NaN for each group), no channels.
      {{2, 6, 2, 2}, 3, 1e-5},
      {{3, 4, 2, 1, 3}, 4, 1e-3},
      {{2, 4, 0}, 2, 1e-5},
      {{2, 0, 3}, 2, 1e-5}};
  return cases;
}

// The weight and bias of each case: both, either, neither (sample_inputs_group_norm's product).
constexpr bool kAffine[4][2] = {{true, true}, {true, false}, {false, true}, {false, false}};

tsr_dtype StatDtype(const Sample& s, size_t weight_arg, size_t bias_arg) {
  const tsr_dtype x = s.args[0].tensor.dtype;
  for (size_t i : {weight_arg, bias_arg}) {
    if (Given(s, i) && s.args[i].tensor.dtype != x) return TSR_DTYPE_FLOAT32;  // mixed type
  }
  return x;
}

bool Is16Bit(tsr_dtype d) { return d == TSR_DTYPE_FLOAT16 || d == TSR_DTYPE_BFLOAT16; }

// GroupNormSamples: (input, weight, bias, groups, eps) of each case; for the 16-bit dtypes also
// float32 weight and bias (ATen's mixed type: float32 statistics).
struct GroupNormSample {
  HostTensor x;
  Arg weight, bias;
  int64_t groups;
  double eps;
  std::string note;
};

std::vector<GroupNormSample> GroupNormSamples(tsr_dtype dtype, Rng& rng) {
  std::vector<GroupNormSample> out;
  for (const GroupNormCase& c : GroupNormCases()) {
    const std::vector<int64_t> ch{c.shape[1]};
    for (const auto& affine : kAffine) {
      GroupNormSample g{
          MakeTensor(c.shape, dtype, rng), Arg::None(), Arg::None(), c.groups, c.eps, ""};
      if (affine[0]) g.weight = Arg::Tensor(MakeTensor(ch, dtype, rng));
      if (affine[1]) g.bias = Arg::Tensor(MakeTensor(ch, dtype, rng));
      out.push_back(std::move(g));
    }
    if (Is16Bit(dtype)) {
      out.push_back({MakeTensor(c.shape, dtype, rng),
                     Arg::Tensor(MakeTensor(ch, TSR_DTYPE_FLOAT32, rng)),
                     Arg::Tensor(MakeTensor(ch, TSR_DTYPE_FLOAT32, rng)), c.groups, c.eps,
                     " (float32 weight and bias)"});
      out.push_back({MakeTensor(c.shape, dtype, rng), Arg::None(),
                     Arg::Tensor(MakeTensor(ch, TSR_DTYPE_FLOAT32, rng)), c.groups, c.eps,
                     " (float32 bias)"});
    }
  }
  // A constant group: variance 0, rstd 1/sqrt(eps).
  out.push_back({Values(dtype, {1, 2, 3}, {2, 2, 2, 2, 2, 2}), Arg::None(), Arg::None(), 2, 1e-5,
                 " (constant groups)"});
  return out;
}

OpInfo NativeGroupNorm() {
  OpInfo op;
  op.name = "native_group_norm";
  op.out = "native_group_norm.out";
  op.dtypes = kFloatingMask;
  op.tolerance_scale = 10;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    for (GroupNormSample& g : GroupNormSamples(dtype, rng)) {
      const std::vector<int64_t>& shape = g.x.shape;
      int64_t HxW = 1;
      for (size_t d = 2; d < shape.size(); ++d) HxW *= shape[d];
      const int64_t N = shape[0], C = shape[1];
      s.push_back(Described({Arg::Tensor(std::move(g.x)), g.weight, g.bias, Arg::Int(N),
                             Arg::Int(C), Arg::Int(HxW), Arg::Int(g.groups), Arg::Double(g.eps)},
                            g.note));
    }
    // N, C and HxW need only agree with the element count (ATen reads the input as
    // [N, C, HxW]): a [6, 4] input as N = 2, C = 3, HxW = 4.
    s.push_back(Described(
        {Arg::Tensor(MakeTensor({6, 4}, dtype, rng)), Arg::Tensor(MakeTensor({3}, dtype, rng)),
         Arg::None(), Arg::Int(2), Arg::Int(3), Arg::Int(4), Arg::Int(3), Arg::Double(1e-5)},
        " (an input read as [2, 3, 4])"));
    return s;
  };
  op.reference = [](const Sample& s) {
    return GroupNormReference(s.args[0].tensor, s.args[1], s.args[2], s.args[3].integer,
                              s.args[4].integer, s.args[5].integer, s.args[6].integer,
                              s.args[7].number, StatDtype(s, 1, 2));
  };
  op.errors = [](Rng& rng) {
    const tsr_dtype f32 = TSR_DTYPE_FLOAT32;
    const auto call = [&rng](std::vector<int64_t> shape, tsr_dtype dtype, Arg weight, Arg bias,
                             int64_t N, int64_t C, int64_t HxW, int64_t group, tsr_code code,
                             const std::string& what) {
      return RefusedSaying({Arg::Tensor(MakeTensor(std::move(shape), dtype, rng)),
                            std::move(weight), std::move(bias), Arg::Int(N), Arg::Int(C),
                            Arg::Int(HxW), Arg::Int(group), Arg::Double(1e-5)},
                           code, what);
    };
    return std::vector<ErrorInput>{
        call({2, 7, 4}, f32, Arg::None(), Arg::None(), 2, 7, 4, 2, TSR_INVALID_ARGUMENT,
             "Expected number of channels in input to be divisible by num_groups"),
        call({2, 6, 3}, f32, Arg::None(), Arg::None(), 2, 6, 3, 0, TSR_INVALID_ARGUMENT,
             "Expected num groups to be greater than 0"),
        call({2, 6, 3}, f32, Arg::Tensor(MakeTensor({5}, f32, rng)), Arg::None(), 2, 6, 3, 2,
             TSR_INVALID_ARGUMENT,
             "Expected weight to be a vector of size equal to the number "
             "of channels"),
        call({2, 6, 3}, f32, Arg::None(), Arg::Tensor(MakeTensor({6, 1}, f32, rng)), 2, 6, 3, 2,
             TSR_INVALID_ARGUMENT,
             "Expected bias to be a vector of size equal to the number of "
             "channels"),
        call({2, 6, 3}, f32, Arg::None(), Arg::None(), 2, 6, 4, 2, TSR_INVALID_ARGUMENT,
             "Expected X.numel() == N * C * HxW"),
        call({2, 6, 3}, f32, Arg::None(), Arg::None(), 3, 6, 3, 2, TSR_INVALID_ARGUMENT,
             "Expected X.numel() == N * C * HxW"),
        Saying(call({2, 6, 3}, f32, Arg::Tensor(MakeTensor({6}, TSR_DTYPE_FLOAT64, rng)),
                    Arg::None(), 2, 6, 3, 2, TSR_INVALID_ARGUMENT,
                    "mixed dtype (CPU): all inputs must share same datatype. (float64 weight)"),
               "mixed dtype (CPU): all inputs must share same datatype."),
        call({2, 6, 3}, TSR_DTYPE_BFLOAT16, Arg::Tensor(MakeTensor({6}, TSR_DTYPE_FLOAT16, rng)),
             Arg::None(), 2, 6, 3, 2, TSR_INVALID_ARGUMENT,
             "mixed dtype (CPU): expect parameter to have scalar type of Float"),
        Saying(
            call(
                {2, 6, 3}, TSR_DTYPE_BFLOAT16, Arg::Tensor(MakeTensor({6}, f32, rng)),
                Arg::Tensor(MakeTensor({6}, TSR_DTYPE_BFLOAT16, rng)), 2, 6, 3, 2,
                TSR_INVALID_ARGUMENT,
                "mixed dtype (CPU): all inputs must share same datatype. (weight and bias differ)"),
            "mixed dtype (CPU): all inputs must share same datatype.")};
  };
  return op;
}

OpInfo GroupNorm() {
  OpInfo op;
  op.name = "group_norm";
  op.dtypes = kFloatingMask;
  op.tolerance_scale = 10;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    for (GroupNormSample& g : GroupNormSamples(dtype, rng)) {
      s.push_back(Described({Arg::Tensor(std::move(g.x)), Arg::Int(g.groups), g.weight, g.bias,
                             Arg::Double(g.eps), Arg::Bool(false)},
                            g.note));
    }
    // Without the optional arguments (eps 1e-5).
    s.push_back(Described({Arg::Tensor(MakeTensor({1, 2}, dtype, rng)), Arg::Int(1)}));
    s.push_back(Described({Arg::Tensor(MakeTensor({3, 4, 5}, dtype, rng)), Arg::Int(2)}));
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& x = s.args[0].tensor;
    int64_t HxW = 1;
    for (size_t d = 2; d < x.shape.size(); ++d) HxW *= x.shape[d];
    const Arg none = Arg::None();
    const Arg& weight = Given(s, 2) ? s.args[2] : none;
    const Arg& bias = Given(s, 3) ? s.args[3] : none;
    const double eps = Given(s, 4) ? s.args[4].number : 1e-5;
    std::vector<HostTensor> r = GroupNormReference(x, weight, bias, x.shape[0], x.shape[1], HxW,
                                                   s.args[1].integer, eps, StatDtype(s, 2, 3));
    r.resize(1);
    return r;
  };
  op.errors = [](Rng& rng) {
    const tsr_dtype f32 = TSR_DTYPE_FLOAT32;
    const auto call = [&rng](std::vector<int64_t> shape, tsr_dtype dtype, int64_t groups,
                             Arg weight, Arg bias, tsr_code code, const std::string& what) {
      return RefusedSaying({Arg::Tensor(MakeTensor(std::move(shape), dtype, rng)),
                            Arg::Int(groups), std::move(weight), std::move(bias)},
                           code, what);
    };
    return std::vector<ErrorInput>{
        // error_inputs_group_norm's two. A 1-D input is ATen's IndexError (size(1));
        // torch.nn.functional.group_norm refuses it first in Python with a RuntimeError.
        Saying(call({5}, f32, 1, Arg::None(), Arg::None(), TSR_OUT_OF_RANGE,
                    "Dimension out of range (a 1-D input has no channel dim)"),
               "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
        call({2, 7, 4}, f32, 2, Arg::None(), Arg::None(), TSR_INVALID_ARGUMENT,
             "Expected number of channels in input to be divisible by num_groups"),
        call({}, f32, 1, Arg::None(), Arg::None(), TSR_OUT_OF_RANGE,
             "Dimension specified as 0 but tensor has no dimensions"),
        call({2, 6, 2}, f32, -1, Arg::None(), Arg::None(), TSR_INVALID_ARGUMENT,
             "Expected num groups to be greater than 0"),
        Saying(call({2, 6, 2, 2, 2}, f32, 3, Arg::Tensor(MakeTensor({6, 1}, f32, rng)), Arg::None(),
                    TSR_INVALID_ARGUMENT,
                    "Expected weight to be a vector of size equal to the number "
                    "of channels (a [6, 1] weight)"),
               "Expected weight to be a vector of size equal to the number of channels in input, "
               "but got weight of shape [6, 1]"),
        call({2, 6, 2}, f32, 3, Arg::None(), Arg::Tensor(MakeTensor({3}, f32, rng)),
             TSR_INVALID_ARGUMENT,
             "Expected bias to be a vector of size equal to the number of "
             "channels"),
        call({2, 6, 2}, f32, 3, Arg::Tensor(MakeTensor({6}, TSR_DTYPE_FLOAT16, rng)), Arg::None(),
             TSR_INVALID_ARGUMENT, "mixed dtype (CPU): all inputs must share same datatype.")};
  };
  return op;
}

// ---- scaled dot-product attention ----

// BroadcastFlat: the row-major index into `shape` of the element that broadcasting maps
// `index` (of a shape `shape` broadcasts to, right-aligned) to.
int64_t BroadcastFlat(const std::vector<int64_t>& index, const std::vector<int64_t>& shape) {
  int64_t flat = 0;
  const size_t offset = index.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d) {
    flat = flat * shape[d] + (shape[d] == 1 ? 0 : index[offset + d]);
  }
  return flat;
}

// AttentionReference: softmax(q k^T * scale + mask) v, from the formula, every batch index
// mapped to q's, k's, v's and the mask's by broadcasting (and, with enable_gqa, query head h
// to key head h / (Hq / Hk)). A row with no score above -inf gives zeros (_safe_softmax).
HostTensor AttentionReference(const Sample& s) {
  const HostTensor& q = s.args[0].tensor;
  const HostTensor& k = s.args[1].tensor;
  const HostTensor& v = s.args[2].tensor;
  const bool has_mask = Given(s, 3);
  const bool is_causal = Given(s, 5) && s.args[5].boolean;
  const bool gqa = Given(s, 7) && s.args[7].boolean;
  const int64_t L = q.shape[q.dim() - 2], E = q.shape[q.dim() - 1];
  const int64_t S = k.shape[k.dim() - 2], Ev = v.shape[v.dim() - 1];
  const double scale = Given(s, 6) ? s.args[6].number : 1 / std::sqrt(static_cast<double>(E));
  // Batch shapes, key's and value's with their heads repeated to query's under enable_gqa.
  std::vector<int64_t> qb(q.shape.begin(), q.shape.end() - 2);
  std::vector<int64_t> kb(k.shape.begin(), k.shape.end() - 2);
  std::vector<int64_t> vb(v.shape.begin(), v.shape.end() - 2);
  int64_t k_rep = 1, v_rep = 1;
  std::vector<int64_t> kb_rep = kb, vb_rep = vb;
  if (gqa) {  // the samples' enable_gqa inputs are 4-D
    k_rep = qb.back() / kb.back();
    v_rep = qb.back() / vb.back();
    kb_rep.back() *= k_rep;
    vb_rep.back() *= v_rep;
  }
  const std::vector<int64_t> batch = BroadcastShape({qb, kb_rep, vb_rep});
  int64_t batches = 1;
  for (int64_t b : batch) batches *= b;
  // The index into a repeated-heads batch shape, back in the tensor's own batch shape.
  const auto source = [](std::vector<int64_t> index, const std::vector<int64_t>& own, int64_t rep) {
    if (rep > 1) index.back() /= rep;  // the heads are the batch's last dim
    return BroadcastFlat(index, own);
  };
  std::vector<int64_t> out_shape = batch;
  out_shape.push_back(L);
  out_shape.push_back(Ev);
  HostTensor out = Values(q.dtype, out_shape, {});
  for (int64_t b = 0; b < batches; ++b) {
    const std::vector<int64_t> index = Unravel(b, batch);
    const int64_t qi = BroadcastFlat(index, qb);
    const int64_t ki = source(index, kb, k_rep);
    const int64_t vi = source(index, vb, v_rep);
    for (int64_t l = 0; l < L; ++l) {
      std::vector<long double> scores(static_cast<size_t>(S));
      long double top = -kInf;
      for (int64_t j = 0; j < S; ++j) {
        long double dot = 0;
        for (int64_t e = 0; e < E; ++e) {
          dot += static_cast<long double>(q.values[static_cast<size_t>((qi * L + l) * E + e)]) *
                 k.values[static_cast<size_t>((ki * S + j) * E + e)] * scale;
        }
        if (is_causal && j > l) dot = -kInf;
        if (has_mask) {
          const HostTensor& m = s.args[3].tensor;
          std::vector<int64_t> at = index;
          at.push_back(l);
          at.push_back(j);
          const double mv = m.values[static_cast<size_t>(BroadcastFlat(at, m.shape))];
          if (m.dtype == TSR_DTYPE_BOOL) {
            if (mv == 0) dot = -kInf;
          } else {
            dot += mv;
          }
        }
        scores[static_cast<size_t>(j)] = dot;
        if (dot > top) top = dot;
      }
      std::vector<long double> acc(static_cast<size_t>(Ev), 0);
      if (top != -kInf) {  // else every weight is 0 (a fully masked row, or S = 0)
        long double total = 0;
        for (long double& sc : scores) total += (sc = std::exp(sc - top));
        for (int64_t j = 0; j < S; ++j) {
          const long double w = scores[static_cast<size_t>(j)] / total;
          for (int64_t e = 0; e < Ev; ++e) {
            acc[static_cast<size_t>(e)] += w * v.values[static_cast<size_t>((vi * S + j) * Ev + e)];
          }
        }
      }
      for (long double a : acc) out.values.push_back(RoundTo(q.dtype, static_cast<double>(a)));
    }
  }
  return out;
}

OpInfo ScaledDotProductAttention() {
  OpInfo op;
  op.name = "scaled_dot_product_attention";
  op.dtypes = kFloatingMask;
  op.tolerance_scale = 10;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    const MakeOptions unit = Range(-1, 1);
    const auto make = [&](std::vector<int64_t> shape) {
      return Arg::Tensor(MakeTensor(std::move(shape), dtype, rng, unit));
    };
    const auto add = [&](std::vector<Arg> args, const std::string& note = "") {
      s.push_back(Described(std::move(args), note));
    };
    // sample_inputs_scaled_dot_product_attention's shapes (dropout_p 0 only), causal or not.
    const int64_t B = 4, L = 3, S = 6, H = 4, E = 8;
    const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
        {{B, L, E}, {B, S, E}}, {{B, H, L, E}, {B, H, S, E}}, {{H, L, E}, {B, H, S, E}}};
    for (const auto& [qs, kvs] : shapes) {
      for (bool causal : {false, true}) {
        add({make(qs), make(kvs), make(kvs), Arg::None(), Arg::Double(0.0), Arg::Bool(causal)});
      }
    }
    // A float mask (its own dtype, and float32, which ATen takes for every dtype), a bool one,
    // each broadcast to [B, H, L, S].
    add({make({B, H, L, E}), make({B, H, S, E}), make({B, H, S, E}), make({L, S})}, " (mask)");
    add({make({2, 3, L, E}), make({2, 3, S, E}), make({2, 3, S, E}),
         Arg::Tensor(MakeTensor({3, 1, S}, TSR_DTYPE_FLOAT32, rng, unit))},
        " (float32 mask)");
    add({make({2, 3, L, E}), make({2, 3, S, E}), make({2, 3, S, 5}),
         Arg::Tensor(MakeTensor({2, 1, L, S}, TSR_DTYPE_BOOL, rng))},
        " (bool mask)");
    // A bool mask with a row of False only: that row gives zeros (current ATen's
    // _safe_softmax), and an additive -inf row the same.
    add({make({2, 3, 4}), make({2, 5, 4}), make({2, 5, 3}),
         Arg::Tensor(
             Values(TSR_DTYPE_BOOL, {3, 5}, {1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1}))},
        " (a fully masked row)");
    add({make({1, 2, 4}), make({1, 3, 4}), make({1, 3, 2}),
         Arg::Tensor(Values(dtype, {2, 3}, {0, -kInf, 0.5, -kInf, -kInf, -kInf}))},
        " (a row of -inf)");
    // enable_gqa: 8 query heads over 4 (and, for value, 2) key heads; equal heads.
    add({make({B, 2 * H, L, E}), make({B, H, S, E}), make({B, H, S, E}), Arg::None(),
         Arg::Double(0.0), Arg::Bool(false), Arg::None(), Arg::Bool(true)},
        " (enable_gqa)");
    add({make({2, 4, L, E}), make({2, 4, S, E}), make({2, 2, S, 3}), Arg::None(), Arg::Double(0.0),
         Arg::Bool(true), Arg::None(), Arg::Bool(true)},
        " (enable_gqa, causal)");
    add({make({2, 4, L, E}), make({2, 4, S, E}), make({2, 4, S, E}), Arg::None(), Arg::Double(0.0),
         Arg::Bool(false), Arg::None(), Arg::Bool(true)},
        " (enable_gqa, equal heads)");
    // scale given, negative, 0.
    for (double scale : {0.5, -0.3, 0.0}) {
      add({make({2, L, E}), make({2, S, E}), make({2, S, E}), Arg::None(), Arg::Double(0.0),
           Arg::Bool(false), Arg::Double(scale)});
    }
    // A value head dim other than query's; 2-D inputs; L > S causal; the OpInfo's default
    // range ([-9, 9]).
    add({make({B, H, L, E}), make({B, H, S, E}), make({B, H, S, E + 8})});
    add({make({5, 3}), make({4, 3}), make({4, 2})});
    add({make({7, 4}), make({3, 4}), make({3, 4}), Arg::None(), Arg::Double(0.0), Arg::Bool(true)},
        " (causal, L > S)");
    add({Arg::Tensor(MakeTensor({2, 3, 4}, dtype, rng)),
         Arg::Tensor(MakeTensor({2, 5, 4}, dtype, rng)),
         Arg::Tensor(MakeTensor({2, 5, 4}, dtype, rng))},
        " (range [-9, 9])");
    // Empty: no queries, no keys (every weight 0: zeros), no batch, E = 0 (uniform weights).
    add({make({2, 0, 4}), make({2, 5, 4}), make({2, 5, 3})});
    add({make({2, 3, 4}), make({2, 0, 4}), make({2, 0, 3})});
    add({make({0, 3, 4}), make({0, 5, 4}), make({0, 5, 3})});
    add({make({2, 3, 0}), make({2, 5, 0}), make({2, 5, 3})});
    return s;
  };
  op.reference = [](const Sample& s) { return std::vector<HostTensor>{AttentionReference(s)}; };
  op.errors = [](Rng& rng) {
    const auto t = [&rng](std::vector<int64_t> shape, tsr_dtype dtype = TSR_DTYPE_FLOAT32) {
      return Arg::Tensor(MakeTensor(std::move(shape), dtype, rng));
    };
    return std::vector<ErrorInput>{
        RefusedSaying({t({2, 3, 4}), t({2, 5, 4}, TSR_DTYPE_FLOAT64), t({2, 5, 4})},
                      TSR_INVALID_ARGUMENT,
                      "Expected query, key, and value to have the same dtype"),
        RefusedSaying({t({4}), t({5, 4}), t({5, 4})}, TSR_INVALID_ARGUMENT,
                      "Expected query, key, and value to all be at least 2 dimensional"),
        RefusedSaying({t({2, 3, 4}), t({2, 5, 4}), t({2, 5, 4}), t({3, 5}, TSR_DTYPE_INT64)},
                      TSR_INVALID_ARGUMENT,
                      "Expected attn_mask dtype to be bool or float or to match query dtype"),
        Saying(
            Refused(
                {t({2, 3, 4}, TSR_DTYPE_FLOAT64), t({2, 5, 4}, TSR_DTYPE_FLOAT64),
                 t({2, 5, 4}, TSR_DTYPE_FLOAT64), t({3, 5}, TSR_DTYPE_FLOAT16)},
                TSR_INVALID_ARGUMENT,
                "Expected attn_mask dtype to be bool or float or to match query dtype (float16)"),
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
            "attn_mask.dtype: float16"),
        RefusedSaying({t({2, 3, 4}), t({2, 5, 4}), t({2, 5, 4}), t({3, 5}, TSR_DTYPE_BOOL),
                       Arg::Double(0.0), Arg::Bool(true)},
                      TSR_INVALID_ARGUMENT,
                      "Explicit attn_mask should not be set when is_causal=True"),
        RefusedSaying({t({2, 3, 3, 4}), t({2, 2, 5, 4}), t({2, 2, 5, 4}), Arg::None(),
                       Arg::Double(0.0), Arg::Bool(false), Arg::None(), Arg::Bool(true)},
                      TSR_INVALID_ARGUMENT,
                      "Number of heads in key and value must divide the number of heads in query"),
        Saying(Refused({t({3, 4}), t({5, 4}), t({5, 4}), Arg::None(), Arg::Double(0.0),
                        Arg::Bool(false), Arg::None(), Arg::Bool(true)},
                       TSR_OUT_OF_RANGE, "enable_gqa reads dim -3 of a 2-D input"),
               "Dimension out of range (expected to be in range of [-2, 1], but got -3)"),
        Saying(Refused({t({2, 3, 4}), t({2, 5, 6}), t({2, 5, 4})}, TSR_INVALID_ARGUMENT,
                       "key's head dim other than query's (matmul)"),
               "Expected query and key to have the same last dim"),
        Saying(
            Refused({t({2, 3, 4}), t({2, 5, 4}), t({2, 5, 4}), t({4, 5})}, TSR_INVALID_ARGUMENT,
                    "a mask that does not broadcast to [2, 3, 5]"),
            "attn_mask of shape [4, 5] must broadcast to the attention weights' shape [2, 3, 5]"),
        Saying(
            Refused({t({2, 3, 4}), t({2, 5, 4}), t({2, 5, 4}), t({2, 2, 3, 5})},
                    TSR_INVALID_ARGUMENT, "a mask larger than the weights (ATen adds it in place)"),
            "attn_mask of shape [2, 2, 3, 5] must broadcast to the attention weights' shape "
            "[2, 3, 5]")};
  };
  return op;
}

// ---- the Core ATen batch-norm variants ----

// After sample_inputs__native_batch_norm_legit (sample_inputs_batch_norm's, rearranged):
// inference and training, with and without weight, bias; the running statistics given or not
// decide the overload.
struct LegitCase {
  std::vector<int64_t> shape;
  bool weight, bias, training;
  double momentum, eps;
};

const std::vector<LegitCase>& LegitCases() {
  static const std::vector<LegitCase> cases{
      {{4, 3, 5, 5}, true, true, false, 0.1, 1e-5}, {{6, 3}, true, true, false, 0.1, 1e-5},
      {{3, 2, 4}, false, false, false, 0.5, 1e-5},  {{4, 3, 5, 5}, true, true, true, 0.1, 1e-5},
      {{6, 3}, true, false, true, 0.3, 1e-5},       {{2, 3, 2, 3, 2}, false, true, true, 1.0, 1e-3},
      {{1, 2, 7}, true, true, true, 0.0, 0.5},      {{5, 4}, false, false, true, 0.5, 1e-5},
      {{2, 3, 3, 3}, true, true, true, 0.1, 1e-5}};
  return cases;
}

// LegitReference: (out, save_mean, save_invstd), then the running statistics as updated (when
// `running` gives them; `update` says whether the op writes them back). Not training,
// save_mean and save_invstd are empty ([0]), as ATen's CPU kernel returns them.
std::vector<HostTensor> LegitReference(const HostTensor& x, const Arg& weight, const Arg& bias,
                                       const HostTensor* running_mean,
                                       const HostTensor* running_var, bool training,
                                       double momentum, double eps, bool update) {
  const int64_t N = x.shape[0], C = x.shape[1];
  const int64_t inner = x.numel() / (N * C), n = N * inner;
  HostTensor out = x;
  HostTensor save_mean = Values(x.dtype, {training ? C : 0}, {});
  HostTensor save_invstd = save_mean;
  HostTensor rm = running_mean ? *running_mean : HostTensor{};
  HostTensor rv = running_var ? *running_var : HostTensor{};
  for (int64_t c = 0; c < C; ++c) {
    long double mean, var;
    if (training) {
      long double sum = 0, sq = 0;
      for (int64_t b = 0; b < N; ++b) {
        for (int64_t i = 0; i < inner; ++i)
          sum += x.values[static_cast<size_t>((b * C + c) * inner + i)];
      }
      mean = sum / n;
      for (int64_t b = 0; b < N; ++b) {
        for (int64_t i = 0; i < inner; ++i) {
          const long double d = x.values[static_cast<size_t>((b * C + c) * inner + i)] - mean;
          sq += d * d;
        }
      }
      var = sq / n;
      save_mean.values.push_back(RoundTo(x.dtype, static_cast<double>(mean)));
      save_invstd.values.push_back(RoundTo(x.dtype, 1 / std::sqrt(static_cast<double>(var) + eps)));
      if (running_mean != nullptr) {
        rm.values[static_cast<size_t>(c)] = RoundTo(
            rm.dtype, static_cast<double>(momentum * mean +
                                          (1 - momentum) * rm.values[static_cast<size_t>(c)]));
        rv.values[static_cast<size_t>(c)] = RoundTo(
            rv.dtype, static_cast<double>(momentum * (sq / (n - 1)) +
                                          (1 - momentum) * rv.values[static_cast<size_t>(c)]));
      }
    } else {
      mean = running_mean->values[static_cast<size_t>(c)];
      var = running_var->values[static_cast<size_t>(c)];
    }
    const long double inv = 1 / std::sqrt(static_cast<double>(var) + eps);
    for (int64_t b = 0; b < N; ++b) {
      for (int64_t i = 0; i < inner; ++i) {
        const size_t k = static_cast<size_t>((b * C + c) * inner + i);
        long double v = (x.values[k] - mean) * inv;
        if (weight.kind == Arg::Kind::kTensor) v *= weight.tensor.values[static_cast<size_t>(c)];
        if (bias.kind == Arg::Kind::kTensor) v += bias.tensor.values[static_cast<size_t>(c)];
        out.values[k] = RoundTo(x.dtype, static_cast<double>(v));
      }
    }
  }
  std::vector<HostTensor> r{out, save_mean, save_invstd};
  if (update && running_mean != nullptr) {
    r.push_back(rm);
    r.push_back(rv);
  }
  return r;
}

enum class Legit { kStats, kNoStats, kNoTraining };

OpInfo BatchNormLegit(Legit form) {
  OpInfo op;
  switch (form) {
    case Legit::kStats:
      op.name = "_native_batch_norm_legit";
      op.out = "_native_batch_norm_legit.out";
      op.mutated_args = {3, 4};
      break;
    case Legit::kNoStats:
      op.name = "_native_batch_norm_legit.no_stats";
      op.out = "_native_batch_norm_legit.no_stats_out";
      break;
    case Legit::kNoTraining:
      op.name = "_native_batch_norm_legit_no_training";
      op.out = "_native_batch_norm_legit_no_training.out";
      break;
  }
  op.dtypes = kFloatingMask;
  op.tolerance_scale = 10;
  op.samples = [form](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    MakeOptions positive;
    positive.positive = true;
    for (const LegitCase& c : LegitCases()) {
      // no_stats trains (without running statistics ATen cannot infer); no_training infers.
      if (form == Legit::kNoStats && !c.training) continue;
      if (form == Legit::kNoTraining && c.training) continue;
      const std::vector<int64_t> ch{c.shape[1]};
      std::vector<Arg> args{Arg::Tensor(MakeTensor(c.shape, dtype, rng)),
                            c.weight ? Arg::Tensor(MakeTensor(ch, dtype, rng)) : Arg::None(),
                            c.bias ? Arg::Tensor(MakeTensor(ch, dtype, rng)) : Arg::None()};
      if (form != Legit::kNoStats) {
        args.push_back(Arg::Tensor(MakeTensor(ch, dtype, rng)));
        args.push_back(Arg::Tensor(MakeTensor(ch, dtype, rng, positive)));
      }
      if (form != Legit::kNoTraining) args.push_back(Arg::Bool(c.training));
      args.push_back(Arg::Double(c.momentum));
      args.push_back(Arg::Double(c.eps));
      s.push_back(Described(std::move(args), c.training ? " (training)" : " (inference)"));
    }
    return s;
  };
  op.reference = [form](const Sample& s) {
    const HostTensor& x = s.args[0].tensor;
    switch (form) {
      case Legit::kStats:
        return LegitReference(x, s.args[1], s.args[2], &s.args[3].tensor, &s.args[4].tensor,
                              s.args[5].boolean, s.args[6].number, s.args[7].number, true);
      case Legit::kNoStats:
        return LegitReference(x, s.args[1], s.args[2], nullptr, nullptr, s.args[3].boolean,
                              s.args[4].number, s.args[5].number, false);
      case Legit::kNoTraining:
        break;
    }
    return LegitReference(x, s.args[1], s.args[2], &s.args[3].tensor, &s.args[4].tensor, false,
                          s.args[5].number, s.args[6].number, false);
  };
  op.errors = [form](Rng& rng) {
    const auto t = [&rng](std::vector<int64_t> shape, tsr_dtype dtype = TSR_DTYPE_FLOAT32) {
      return Arg::Tensor(MakeTensor(std::move(shape), dtype, rng));
    };
    // The arguments after input, weight and bias, per overload.
    const auto rest = [form, &t](bool training) {
      std::vector<Arg> a;
      if (form != Legit::kNoStats) {
        a.push_back(t({3}));
        a.push_back(Arg::Tensor(Values(TSR_DTYPE_FLOAT32, {3}, {1, 2, 3})));
      }
      if (form != Legit::kNoTraining) a.push_back(Arg::Bool(training));
      a.push_back(Arg::Double(0.1));
      a.push_back(Arg::Double(1e-5));
      return a;
    };
    const auto call = [&rest](Arg x, Arg w, bool training, const std::string& what) {
      std::vector<Arg> args{std::move(x), std::move(w), Arg::None()};
      for (Arg& a : rest(training)) args.push_back(std::move(a));
      return Refused(std::move(args), TSR_INVALID_ARGUMENT, what);
    };
    std::vector<ErrorInput> e{
        Saying(call(t({2, 3}), t({4}), true, "a weight that does not match the channels"),
               "expected weight of shape [3] (the input's channels), got [4]"),
        Saying(call(t({2, 3}, TSR_DTYPE_INT64), Arg::None(), true, "an integer input"),
               "expected 'input' to be a floating point tensor, got int64")};
    if (form == Legit::kNoStats) {
      e.push_back(Saying(
          call(t({2, 3}), Arg::None(), false, "running_mean must be defined in evaluation mode"),
          "running_mean must be defined in evaluation mode"));
    }
    return e;
  };
  return op;
}

}  // namespace

void AddGroupNormAttentionOps(std::vector<OpInfo>& db) {
  db.push_back(NativeGroupNorm());
  db.push_back(GroupNorm());
  db.push_back(ScaledDotProductAttention());
  db.push_back(BatchNormLegit(Legit::kStats));
  db.push_back(BatchNormLegit(Legit::kNoStats));
  db.push_back(BatchNormLegit(Legit::kNoTraining));
}

}  // namespace conformance
}  // namespace tessera
