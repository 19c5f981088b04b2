// Op set 1.9's counting and bucketing ops (composites): _unique2, unique_consecutive, unique_dim,
// bincount, histc, searchsorted (Tensor and Scalar), bucketize (Tensor and Scalar), tril_indices
// and triu_indices.
//
// Semantics are current PyTorch's CPU kernels in aten/src/ATen/native: Unique.cpp (_unique2 sorts
// whatever `sorted` says; unique_consecutive's flat path; _unique_dim_cpu_template, which always
// computes inverse and counts), SummaryOps.cpp (bincount), Histogram.cpp and
// cpu/HistogramKernel.cpp (histc: histc_select_outer_bin_edges and the LINEAR_INTERPOLATION bin,
// computed in the input's dtype), Bucketization.cpp and BucketizationUtils.h (searchsorted's
// checks, its own lower and upper bound, which the references replay step by step because NaN makes
// the answer depend on the path), TensorFactories.cpp/.h (tril_indices, triu_indices). Samples
// follow the OpInfos' sample_inputs_unique, sample_inputs_unique_consecutive,
// sample_inputs_bincount, sample_inputs_histc, sample_inputs_searchsorted, sample_inputs_bucketize
// and sample_inputs_trilu_indices (common_methods_invocations.py), rotated through their flags
// instead of taking every product, plus the edge cases below. The references index elements
// directly.
//
// Where PyTorch 1.13 (/usr/bin/python3) differs, the current behaviour is the expected one:
// _unique2 with sorted=False returns sorted values on the CPU (1.13: hash-set order) and gives
// each NaN a value of its own (1.13 merged them wrongly); the unique ops and histc take float16
// (1.13: not implemented for Half); searchsorted refuses a sorter with an index out of range.
//
// Error codes: PyTorch's RuntimeError is TSR_INVALID_ARGUMENT, its IndexError (a dim out of
// range) TSR_OUT_OF_RANGE, and a dtype the kernels do not take ("... not implemented for") is
// TSR_UNIMPLEMENTED, as in the other op set 1.9 families.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "conformance/op_db.h"
#include "conformance/op_db_helpers.h"

namespace tessera {
namespace conformance {
namespace {

using Shape = std::vector<int64_t>;

constexpr tsr_dtype kLong = TSR_DTYPE_INT64;
constexpr tsr_dtype kInt = TSR_DTYPE_INT32;
constexpr tsr_code kInvalid = TSR_INVALID_ARGUMENT;
constexpr tsr_code kOutOfRange = TSR_OUT_OF_RANGE;
constexpr tsr_code kUnimplemented = TSR_UNIMPLEMENTED;
// The OpInfo samples' sizes: S, M and L of common_methods_invocations.py.
constexpr int64_t S = 5, M = 10, L = 20;

HostTensor Longs(Shape shape, const std::vector<int64_t>& v, tsr_dtype dtype = kLong) {
  HostTensor t = Values(dtype, std::move(shape), {});
  for (int64_t x : v) t.values.push_back(static_cast<double>(x));
  return t;
}

// ScalarOf: a Scalar of the kind a Python number of `dtype` would be (what .item() gives).
Arg ScalarOf(tsr_dtype dtype, double v) {
  if (dtype == TSR_DTYPE_BOOL) return Arg::ScalarBool(v != 0);
  if (IsIntegral(dtype, false)) return Arg::ScalarInt(static_cast<int64_t>(v));
  return Arg::ScalarDouble(v);
}

// Pooled: values drawn from a few that every dtype holds (uint8's included), so that repeats and
// runs occur; floating dtypes add a fraction.
HostTensor Pooled(Shape shape, tsr_dtype dtype, Rng& rng) {
  std::vector<double> pool = {0, 1, 2, 5};
  if (IsFloating(dtype)) pool.push_back(-1.5);
  std::uniform_int_distribution<size_t> pick(0, pool.size() - 1);
  HostTensor t = Values(dtype, std::move(shape), {});
  for (int64_t i = 0; i < t.numel(); ++i) t.values.push_back(RoundTo(dtype, pool[pick(rng)]));
  return t;
}

// ZerosAndOnes: the OpInfo's "mixed 0s and 1s" input: a random bool tensor in `dtype`.
HostTensor ZerosAndOnes(Shape shape, tsr_dtype dtype, Rng& rng) {
  return CastTo(MakeTensor(std::move(shape), TSR_DTYPE_BOOL, rng), dtype);
}

// RepeatedSlices: slices along `dim` that are copies of two random ones, so that unique_dim
// merges some and unique_consecutive finds runs.
HostTensor RepeatedSlices(const Shape& shape, int64_t dim, tsr_dtype dtype, Rng& rng) {
  const LinesAlong lines(shape, dim);
  Shape slice_shape = {lines.outer * lines.inner};
  const HostTensor a = MakeTensor(slice_shape, dtype, rng), b = MakeTensor(slice_shape, dtype, rng);
  std::bernoulli_distribution first(0.5);
  HostTensor t = Values(dtype, shape, {});
  t.values.resize(static_cast<size_t>(t.numel()));
  for (int64_t k = 0; k < lines.len; ++k) {
    const HostTensor& from = first(rng) ? a : b;
    for (int64_t o = 0; o < lines.outer; ++o) {
      for (int64_t i = 0; i < lines.inner; ++i) {
        t.values[static_cast<size_t>(lines.index(o, i, k))] =
            from.values[static_cast<size_t>(o * lines.inner + i)];
      }
    }
  }
  return t;
}

// kNoDim: dim=None in the unique samples.
constexpr int64_t kNoDim = std::numeric_limits<int64_t>::min();

// The input kinds of sample_inputs_unique (zeros: one value; zeros and ones; random) and ours
// with repeats.
HostTensor UniqueInput(int kind, const Shape& shape, int64_t dim, tsr_dtype dtype, Rng& rng) {
  switch (kind) {
    case 0:
      return Full(shape, dtype, 0);
    case 1:
      return ZerosAndOnes(shape, dtype, rng);
    case 2:
      return MakeTensor(shape, dtype, rng);
    default:
      return shape.empty() || dim == kNoDim ? Pooled(shape, dtype, rng)
                                            : RepeatedSlices(shape, dim, dtype, rng);
  }
}
constexpr int kUniqueInputKinds = 4;

// ---------------------------------------------------------------------------------------------
// unique

// Uniques: the distinct values of a sequence, for each element the index of its value, and each
// value's count.
struct Uniques {
  std::vector<double> values;
  std::vector<int64_t> inverse;
  std::vector<int64_t> counts;
};

// Runs: `v` taken in `order`, a new value wherever one differs (!=) from the one before it: so a
// NaN is always a value of its own, and -0.0 and 0.0 are one value (the first one met).
Uniques Runs(const std::vector<double>& v, const std::vector<size_t>& order) {
  Uniques u;
  u.inverse.resize(v.size());
  for (size_t k = 0; k < order.size(); ++k) {
    const double x = v[order[k]];
    if (k == 0 || x != v[order[k - 1]]) {
      u.values.push_back(x);
      u.counts.push_back(0);
    }
    ++u.counts.back();
    u.inverse[order[k]] = static_cast<int64_t>(u.values.size()) - 1;
  }
  return u;
}

// SortedUniques: unique_cpu_sorted_template (and the bool kernel, which agrees): the flattened
// values sorted ascending with NaN last, then Runs. Samples have at most one NaN where the
// inverse is asked for, so the order among NaNs (the sort is not stable) never shows.
Uniques SortedUniques(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (std::isnan(v[a]) || std::isnan(v[b])) return !std::isnan(v[a]) && std::isnan(v[b]);
    return v[a] < v[b];
  });
  return Runs(v, order);
}

Uniques ConsecutiveUniques(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  return Runs(v, order);
}

// FlatReturns: (values, inverse, counts) of the flat unique ops: values 1-D; inverse of self's
// shape if asked for, else an empty [0] int64 tensor; counts [n] if asked for, else [0].
std::vector<HostTensor> FlatReturns(const HostTensor& self, const Uniques& u, bool inverse,
                                    bool counts) {
  const int64_t n = static_cast<int64_t>(u.values.size());
  return {Values(self.dtype, {n}, u.values),
          inverse ? Longs(self.shape, u.inverse) : Longs({0}, {}),
          counts ? Longs({n}, u.counts) : Longs({0}, {})};
}

// UniqueAlongDim: _unique_dim_cpu_template. The slices along `dim` (each read in the row-major
// order of the other dims), sorted lexicographically unless `consecutive`, equal neighbours
// merged; returns the distinct slices stacked along `dim`, for each slice of self the index of
// its distinct slice ([size(dim)]) and each distinct slice's count, both always (whatever
// return_inverse and return_counts say). A zero-size `dim` gives self's (empty) shape and [0]
// inverse and counts. Samples hold no NaN here (PyTorch's comparator is no ordering then).
std::vector<HostTensor> UniqueAlongDim(const HostTensor& self, int64_t dim, bool consecutive) {
  const int64_t d = dim < 0 ? dim + self.dim() : dim;
  if (self.shape[static_cast<size_t>(d)] == 0) {
    return {Values(self.dtype, self.shape, {}), Longs({0}, {}), Longs({0}, {})};
  }
  const LinesAlong lines(self.shape, d);
  std::vector<std::vector<double>> slices(static_cast<size_t>(lines.len));
  for (int64_t k = 0; k < lines.len; ++k) {
    for (int64_t o = 0; o < lines.outer; ++o) {
      for (int64_t i = 0; i < lines.inner; ++i) {
        slices[static_cast<size_t>(k)].push_back(
            self.values[static_cast<size_t>(lines.index(o, i, k))]);
      }
    }
  }
  std::vector<size_t> order(slices.size());
  std::iota(order.begin(), order.end(), 0);
  if (!consecutive) {
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return std::lexicographical_compare(slices[a].begin(), slices[a].end(), slices[b].begin(),
                                          slices[b].end());
    });
  }
  std::vector<size_t> distinct;
  std::vector<int64_t> inverse(slices.size()), counts;
  for (size_t p = 0; p < order.size(); ++p) {
    if (p == 0 || slices[order[p]] != slices[distinct.back()]) {
      distinct.push_back(order[p]);
      counts.push_back(0);
    }
    ++counts.back();
    inverse[order[p]] = static_cast<int64_t>(distinct.size()) - 1;
  }
  const int64_t n = static_cast<int64_t>(distinct.size());
  Shape shape = self.shape;
  shape[static_cast<size_t>(d)] = n;
  HostTensor out = Values(self.dtype, shape, {});
  out.values.resize(static_cast<size_t>(out.numel()));
  for (int64_t g = 0; g < n; ++g) {
    for (int64_t o = 0; o < lines.outer; ++o) {
      for (int64_t i = 0; i < lines.inner; ++i) {
        out.values[static_cast<size_t>((o * n + g) * lines.inner + i)] =
            slices[distinct[static_cast<size_t>(g)]][static_cast<size_t>(o * lines.inner + i)];
      }
    }
  }
  return {out, Longs({lines.len}, inverse), Longs({n}, counts)};
}

// The shapes and dims of sample_inputs_unique: a shape with a zero-size dim only with that dim
// selected, dims in range only; kNoDim stands for dim=None.
std::vector<std::pair<Shape, int64_t>> UniqueShapesAndDims(bool with_none) {
  const std::vector<Shape> sizes = {{}, {S}, {S, S}, {S, S, S}, {S, 1, S}, {S, 0, S}};
  std::vector<std::pair<Shape, int64_t>> out;
  for (const Shape& shape : sizes) {
    const int64_t nd = static_cast<int64_t>(shape.size());
    const auto zero = std::find(shape.begin(), shape.end(), 0);
    for (int64_t dim : {kNoDim, int64_t{-2}, int64_t{-1}, int64_t{0}, int64_t{1}, int64_t{2}}) {
      if (dim == kNoDim && !with_none) continue;
      if (zero != shape.end() && dim != zero - shape.begin()) continue;
      if (dim != kNoDim && (dim < -nd || dim >= nd)) continue;
      out.push_back({shape, dim});
    }
  }
  return out;
}

// The errors the dim path of unique_dim and unique_consecutive shares; `call` builds the
// arguments for (self, dim).
std::vector<ErrorInput> UniqueDimErrors(
    Rng& rng, const std::function<std::vector<Arg>(HostTensor, int64_t)>& call) {
  const tsr_dtype f32 = TSR_DTYPE_FLOAT32;
  return {
      Saying(Refused(call(MakeTensor({3, 0}, f32, rng), 0), kInvalid,
                     "a zero-size dim that is not the one selected (ATen: There are 0 sized "
                     "dimensions, and they aren't selected, so unique cannot be applied)"),
             "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied"),
      Saying(Refused(call(MakeTensor({0, 0}, f32, rng), 1), kInvalid,
                     "two zero-size dims (ATen: Number of zero sized dimensions is more than one, "
                     "so unique cannot be applied)"),
             "Number of zero sized dimensions is more than one, so unique cannot be applied"),
      Saying(
          Refused(call(MakeTensor({}, f32, rng), 0), kOutOfRange,
                  "a dim of a 0-dim self (IndexError: Dimension specified as 0 but tensor has no "
                  "dimensions)"),
          "Dimension specified as 0 but tensor has no dimensions"),
      Saying(Refused(call(MakeTensor({2, 3}, f32, rng), 2), kOutOfRange,
                     "dim 2 of a 2-D self (IndexError: Dimension out of range)"),
             "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
      Saying(Refused(call(MakeTensor({2, 3}, f32, rng), -3), kOutOfRange,
                     "dim -3 of a 2-D self (IndexError: Dimension out of range)"),
             "Dimension out of range (expected to be in range of [-2, 1], but got -3)")};
}

// _unique2(self, sorted=True, return_inverse=False, return_counts=False) -> (Tensor, Tensor,
// Tensor): the flattened distinct values, sorted ascending (NaN last, each NaN apart) whatever
// `sorted` says; inverse of self's shape (a 0-dim self gives [1] values and a 0-dim inverse) or
// [0] int64 when not asked for; counts [n] or [0] int64.
OpInfo Unique2() {
  OpInfo op;
  op.name = "_unique2";
  op.dtypes = kAllMask;
  op.shape_from_values = true;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    const auto add = [&](HostTensor self, int flags, const std::string& note = "") {
      s.push_back(Described({Arg::Tensor(std::move(self)), Arg::Bool((flags & 4) != 0),
                             Arg::Bool((flags & 1) != 0), Arg::Bool((flags & 2) != 0)},
                            note));
    };
    int turn = 0;
    for (const auto& [shape, dim] : UniqueShapesAndDims(true)) {
      if (dim != kNoDim) continue;
      for (int kind = 0; kind < kUniqueInputKinds; ++kind) {
        add(UniqueInput(kind, shape, kNoDim, dtype, rng), turn++ % 8);
      }
    }
    // Empty selves: [0] values, an inverse of self's (empty) shape.
    add(MakeTensor({0}, dtype, rng), 7);
    add(MakeTensor({S, 0, S}, dtype, rng), 3);
    add(MakeTensor({2, 0}, dtype, rng), 0);
    // Every default.
    s.push_back(Described({Arg::Tensor(Pooled({4, 3}, dtype, rng))}, " (defaults)"));
    if (IsFloating(dtype)) {
      add(Values(dtype, {7}, {NAN, 1, NAN, 2, 1, NAN, -0.0}), 6,
          " (each NaN a value of its own, last)");
      add(Values(dtype, {2, 3}, {3, NAN, 1, 3, -2, 1}), 7, " (one NaN, with the inverse)");
      add(Values(dtype, {5}, {INFINITY, -INFINITY, 0, INFINITY, -1}), 3, " (infinities)");
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& self = s.args[0].tensor;
    return FlatReturns(self, SortedUniques(self.values), Given(s, 2) && s.args[2].boolean,
                       Given(s, 3) && s.args[3].boolean);
  };
  return op;
}

// unique_consecutive(self, return_inverse=False, return_counts=False, dim=None): with dim None,
// or dim 0 of a 1-D self, the flat path (runs of the flattened values; the unrequested returns
// [0] int64); any other dim (-1 of a 1-D self included) takes the dim path, which returns inverse
// and counts always.
OpInfo UniqueConsecutive() {
  OpInfo op;
  op.name = "unique_consecutive";
  op.dtypes = kAllMask;
  op.shape_from_values = true;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    const auto add = [&](HostTensor self, int flags, int64_t dim, const std::string& note = "") {
      s.push_back(
          Described({Arg::Tensor(std::move(self)), Arg::Bool((flags & 1) != 0),
                     Arg::Bool((flags & 2) != 0), dim == kNoDim ? Arg::None() : Arg::Int(dim)},
                    note));
    };
    int turn = 0;
    for (const auto& [shape, dim] : UniqueShapesAndDims(true)) {
      for (int k = 0; k < 2; ++k, ++turn) {
        // Every shape and dim meets two kinds of input; the flags go round.
        add(UniqueInput((turn + 3 * k) % kUniqueInputKinds, shape, dim, dtype, rng), turn % 4, dim);
      }
    }
    add(MakeTensor({0}, dtype, rng), 3, kNoDim, " (empty)");
    add(MakeTensor({3, 0}, dtype, rng), 3, kNoDim, " (empty, the inverse [3, 0])");
    add(Pooled({8}, dtype, rng), 0, 0, " (dim 0 of a 1-D self: the flat path)");
    add(Pooled({8}, dtype, rng), 0, -1, " (dim -1 of a 1-D self: the dim path)");
    s.push_back(Described({Arg::Tensor(Pooled({12}, dtype, rng))}, " (defaults)"));
    if (IsFloating(dtype)) {
      add(Values(dtype, {7}, {NAN, NAN, 1, 1, -0.0, 0, NAN}), 3, kNoDim,
          " (NaNs never equal; -0.0 and 0.0 one run)");
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& self = s.args[0].tensor;
    const bool inverse = Given(s, 1) && s.args[1].boolean;
    const bool counts = Given(s, 2) && s.args[2].boolean;
    if (!Given(s, 3) || (s.args[3].integer == 0 && self.dim() == 1)) {
      return FlatReturns(self, ConsecutiveUniques(self.values), inverse, counts);
    }
    return UniqueAlongDim(self, s.args[3].integer, /*consecutive=*/true);
  };
  op.errors = [](Rng& rng) {
    return UniqueDimErrors(rng, [](HostTensor t, int64_t dim) {
      return std::vector<Arg>{Arg::Tensor(std::move(t)), Arg::Bool(false), Arg::Bool(false),
                              Arg::Int(dim)};
    });
  };
  return op;
}

// unique_dim(self, dim, sorted=True, return_inverse=False, return_counts=False): distinct slices
// along dim in lexicographic order; inverse ([size(dim)]) and counts always returned.
OpInfo UniqueDim() {
  OpInfo op;
  op.name = "unique_dim";
  op.dtypes = kAllMask;
  op.shape_from_values = true;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    const auto add = [&](HostTensor self, int64_t dim, int flags, const std::string& note = "") {
      s.push_back(
          Described({Arg::Tensor(std::move(self)), Arg::Int(dim), Arg::Bool((flags & 4) != 0),
                     Arg::Bool((flags & 1) != 0), Arg::Bool((flags & 2) != 0)},
                    note));
    };
    int turn = 0;
    for (const auto& [shape, dim] : UniqueShapesAndDims(false)) {
      for (int k = 0; k < 2; ++k, ++turn) {
        add(UniqueInput((turn + 3 * k) % kUniqueInputKinds, shape, dim, dtype, rng), dim, turn % 8);
      }
    }
    add(MakeTensor({0, 3}, dtype, rng), 0, 7, " (a zero-size dim selected)");
    s.push_back(Described({Arg::Tensor(RepeatedSlices({6, 2}, 0, dtype, rng)), Arg::Int(0)},
                          " (defaults)"));
    if (IsFloating(dtype)) {
      add(Values(dtype, {3, 2}, {1, 0, -0.0, 1, 1, -0.0}), 0, 7, " (-0.0 equals 0.0)");
      add(Values(dtype, {2, 3}, {INFINITY, 2, -INFINITY, INFINITY, 2, INFINITY}), 1, 7,
          " (infinities)");
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    return UniqueAlongDim(s.args[0].tensor, s.args[1].integer, /*consecutive=*/false);
  };
  op.errors = [](Rng& rng) {
    return UniqueDimErrors(rng, [](HostTensor t, int64_t dim) {
      return std::vector<Arg>{Arg::Tensor(std::move(t)), Arg::Int(dim)};
    });
  };
  return op;
}

// ---------------------------------------------------------------------------------------------
// bincount(self, weights=None, minlength=0): self 1-D of non-negative integers; max(self) + 1
// (at least minlength) bins. The result is int64 without weights, float32 for float32 weights and
// float64 for weights of any other dtype (converted to double first); an empty 1-D self gives
// int64 zeros(minlength) whatever the weights (their length is not checked then).
OpInfo Bincount() {
  OpInfo op;
  op.name = "bincount";
  op.dtypes = kIntegralMask;
  op.shape_from_values = true;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    const auto add = [&](HostTensor self, Arg weights, std::optional<int64_t> minlength,
                         const std::string& note = "") {
      std::vector<Arg> args = {Arg::Tensor(std::move(self)), std::move(weights)};
      if (minlength) args.push_back(Arg::Int(*minlength));
      s.push_back(Described(std::move(args), note));
    };
    const auto indices = [&](int64_t n) {
      MakeOptions o;
      o.low = 0;
      o.high = static_cast<double>(n);
      return MakeTensor({n}, dtype, rng, o);
    };
    // sample_inputs_bincount: [S] and [M] of values in [0, size), weights of self's dtype or
    // none, minlength 0, max/2, max and 2 max.
    for (int64_t size : {S, M}) {
      for (bool weighted : {false, true}) {
        const HostTensor self = indices(size);
        const int64_t max_val =
            static_cast<int64_t>(*std::max_element(self.values.begin(), self.values.end()));
        for (int64_t minlength : {int64_t{0}, max_val / 2, max_val, 2 * max_val}) {
          add(self, weighted ? Arg::Tensor(MakeTensor({size}, dtype, rng)) : Arg::None(),
              minlength);
        }
      }
    }
    // Weights of the floating dtypes: float32 stays, the others become float64.
    for (tsr_dtype w : {TSR_DTYPE_FLOAT32, TSR_DTYPE_FLOAT64, TSR_DTYPE_FLOAT16, TSR_DTYPE_BFLOAT16,
                        TSR_DTYPE_BOOL}) {
      add(indices(7), Arg::Tensor(MakeTensor({7}, w, rng)), 3);
    }
    add(indices(6), Arg::None(), std::nullopt, " (minlength left to its default)");
    add(Values(dtype, {4}, {0, 0, 0, 0}), Arg::None(), 0, " (all zeros: one bin)");
    // Empty selves: int64 zeros(minlength), weights or not, of any length.
    add(Values(dtype, {0}, {}), Arg::None(), 0);
    add(Values(dtype, {0}, {}), Arg::None(), 3);
    add(Values(dtype, {0}, {}), Arg::Tensor(MakeTensor({0}, TSR_DTYPE_FLOAT32, rng)), 2);
    add(Values(dtype, {0}, {}), Arg::Tensor(MakeTensor({5}, TSR_DTYPE_FLOAT64, rng)), 4,
        " (weights of another length are not looked at)");
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& self = s.args[0].tensor;
    const int64_t minlength = Given(s, 2) ? s.args[2].integer : 0;
    if (self.numel() == 0) return std::vector<HostTensor>{Full({minlength}, kLong, 0)};
    const int64_t bins = std::max(
        static_cast<int64_t>(*std::max_element(self.values.begin(), self.values.end())) + 1,
        minlength);
    const bool weighted = Given(s, 1);
    const tsr_dtype dtype = !weighted                                     ? kLong
                            : s.args[1].tensor.dtype == TSR_DTYPE_FLOAT32 ? TSR_DTYPE_FLOAT32
                                                                          : TSR_DTYPE_FLOAT64;
    std::vector<long double> sums(static_cast<size_t>(bins), 0);
    for (int64_t i = 0; i < self.numel(); ++i) {
      sums[static_cast<size_t>(self.values[static_cast<size_t>(i)])] +=
          weighted ? s.args[1].tensor.values[static_cast<size_t>(i)] : 1;
    }
    return std::vector<HostTensor>{FromLong({bins}, dtype, sums)};
  };
  op.errors = [](Rng& rng) {
    const auto call = [](HostTensor self, Arg weights, int64_t minlength) {
      return std::vector<Arg>{Arg::Tensor(std::move(self)), std::move(weights),
                              Arg::Int(minlength)};
    };
    const HostTensor ok = Values(kLong, {4}, {0, 3, 1, 3});
    const std::string not_1d_nonnegative =
        " (ATen: bincount only supports 1-d non-negative integral inputs.)";
    const std::string weights_shape =
        " (ATen: weights should be 1-d and have the same length as input)";
    return std::vector<ErrorInput>{
        Saying(Refused(call(ok, Arg::None(), -1), kInvalid,
                       "a negative minlength (ATen: minlength should be >= 0)"),
               "minlength should be >= 0"),
        Saying(Refused(call(Values(kLong, {0}, {}), Arg::None(), -2), kInvalid,
                       "a negative minlength with an empty self"),
               "minlength should be >= 0"),
        Saying(Refused(call(Values(kLong, {2}, {1, -1}), Arg::None(), 0), kInvalid,
                       "a negative value" + not_1d_nonnegative),
               "bincount only supports 1-d non-negative integral inputs."),
        Saying(Refused(call(Values(kLong, {}, {2}), Arg::None(), 0), kInvalid,
                       "a 0-dim self" + not_1d_nonnegative),
               "bincount only supports 1-d non-negative integral inputs."),
        Saying(Refused(call(Values(kLong, {2, 2}, {0, 1, 2, 3}), Arg::None(), 0), kInvalid,
                       "a 2-D self" + not_1d_nonnegative),
               "bincount only supports 1-d non-negative integral inputs."),
        Saying(Refused(call(Values(kLong, {0, 2}, {}), Arg::None(), 0), kInvalid,
                       "an empty 2-D self" + not_1d_nonnegative),
               "bincount only supports 1-d non-negative integral inputs."),
        Saying(Refused(call(ok, Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT32, rng)), 0), kInvalid,
                       "weights of another length" + weights_shape),
               "weights should be 1-d and have the same length as input"),
        Saying(Refused(call(ok, Arg::Tensor(MakeTensor({4, 1}, TSR_DTYPE_FLOAT32, rng)), 0),
                       kInvalid, "2-D weights" + weights_shape),
               "weights should be 1-d and have the same length as input"),
        Saying(Refused(call(ok, Arg::Tensor(MakeTensor({}, TSR_DTYPE_FLOAT32, rng)), 0), kInvalid,
                       "0-dim weights" + weights_shape),
               "weights should be 1-d and have the same length as input"),
        Saying(Refused(call(CastTo(ok, TSR_DTYPE_FLOAT32), Arg::None(), 0), kUnimplemented,
                       "a float32 self (ATen: \"bincount_cpu\" not implemented for 'Float')"),
               "not implemented for dtype float32 (expected an integral dtype)"),
        Saying(Refused(call(CastTo(ok, TSR_DTYPE_BOOL), Arg::None(), 0), kUnimplemented,
                       "a bool self (ATen: \"bincount_cpu\" not implemented for 'Bool')"),
               "not implemented for dtype bool (expected an integral dtype)")};
  };
  return op;
}

// ---------------------------------------------------------------------------------------------
// histc(self, bins=100, min=0, max=0) -> self's dtype, [bins].

// InDtype: an arithmetic result as the kernel's scalar_t leaves it: float32 rounds each
// operation; float16 and bfloat16 compute in float and round to themselves (c10::Half and
// c10::BFloat16's operators, RoundTo goes through float).
double InDtype(tsr_dtype dtype, double exact) {
  return dtype == TSR_DTYPE_FLOAT64 ? exact : RoundTo(dtype, exact);
}

// HistcRange: histc_select_outer_bin_edges: [min, max] as doubles; min == max with a non-empty
// self takes self's min and max (NaN if it has one); still equal, widened to [x - 1, x + 1]
// (bins_edges_correction: for float32 and float64 the smaller of that and the next
// representable value, which is x - 1 for every sample here).
std::pair<double, double> HistcRange(const HostTensor& self, double lo, double hi) {
  if (lo == hi && self.numel() > 0) {
    lo = INFINITY;
    hi = -INFINITY;
    bool nan = false;
    for (double v : self.values) {
      nan = nan || std::isnan(v);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    if (nan) lo = hi = NAN;
  }
  if (lo == hi) {
    if (self.dtype == TSR_DTYPE_FLOAT32) {
      lo = std::min<double>(std::nexttoward(static_cast<float>(lo), -HUGE_VALL), lo - 1);
      hi = std::max<double>(std::nexttoward(static_cast<float>(hi), HUGE_VALL), hi + 1);
    } else if (self.dtype == TSR_DTYPE_FLOAT64) {
      lo = std::min<double>(std::nexttoward(lo, -HUGE_VALL), lo - 1);
      hi = std::max<double>(std::nexttoward(hi, HUGE_VALL), hi + 1);
    } else {
      lo -= 1;
      hi += 1;
    }
  }
  return {lo, hi};
}

// HistcReference: the edges are linspace(lo, hi, bins + 1) in self's dtype, so the outer ones are
// lo and hi rounded to it; an element outside [left, right] (NaN included) is skipped, any other
// goes to bin trunc((x - left) * bins / (right - left)), each operation in self's dtype
// (InDtype), x == right (bin `bins`) into the last bin.
std::vector<HostTensor> HistcReference(const Sample& s) {
  const HostTensor& self = s.args[0].tensor;
  const tsr_dtype dtype = self.dtype;
  const int64_t bins = Given(s, 1) ? s.args[1].integer : 100;
  const auto [lo, hi] =
      HistcRange(self, Given(s, 2) ? s.args[2].number : 0, Given(s, 3) ? s.args[3].number : 0);
  const double left = RoundTo(dtype, lo), right = RoundTo(dtype, hi);
  const double width = InDtype(dtype, right - left);
  const double nbins = InDtype(dtype, static_cast<double>(bins));
  std::vector<long double> hist(static_cast<size_t>(bins), 0);
  for (double x : self.values) {
    if (!(x >= left && x <= right)) continue;
    const double offset = InDtype(dtype, x - left);
    const double scaled = InDtype(dtype, offset * nbins);
    int64_t pos = static_cast<int64_t>(InDtype(dtype, scaled / width));
    if (pos == bins) pos = bins - 1;
    hist[static_cast<size_t>(pos)] += 1;
  }
  return {FromLong({bins}, dtype, hist)};
}

OpInfo Histc() {
  OpInfo op;
  op.name = "histc";
  op.out = "histc.out";
  op.dtypes = kFloatingMask;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    const auto add = [&](HostTensor self, std::optional<int64_t> bins, Arg lo, Arg hi,
                         const std::string& note = "") {
      std::vector<Arg> args = {Arg::Tensor(std::move(self))};
      args.push_back(Arg::Int(bins.value_or(100)));
      args.push_back(std::move(lo));
      args.push_back(std::move(hi));
      s.push_back(Described(std::move(args), note));
    };
    // sample_inputs_histc: its sizes, min in {0, -10}, max in {0, 10}, bins 100 (left out there),
    // 1, 3 and 10 in turn.
    const std::vector<Shape> sizes = {{S, S}, {}, {S}, {S, S, S}, {S, 1, S}, {S, 0, S}};
    const std::vector<int64_t> bin_counts = {100, 1, 3, 10};
    size_t turn = 0;
    for (const Shape& size : sizes) {
      for (int64_t lo : {0, -10}) {
        for (int64_t hi : {0, 10}) {
          add(MakeTensor(size, dtype, rng), bin_counts[turn++ % bin_counts.size()],
              Arg::ScalarInt(lo), Arg::ScalarInt(hi));
        }
      }
    }
    // Every default (bins 100, the data's range).
    s.push_back(Described({Arg::Tensor(MakeTensor({4, 6}, dtype, rng))}, " (defaults)"));
    // Elements on the edges: [0, 6] in 3 bins; -1 and 7 outside; 6 into the last bin.
    add(Values(dtype, {9}, {0, 1, 2, 3, 4, 5, 6, -1, 7}), 3, Arg::ScalarInt(0), Arg::ScalarInt(6),
        " (edges, outside, the right edge)");
    add(Values(dtype, {6}, {-2.5, 7.25, 0, 1.5, -3, 8}), 4, Arg::ScalarDouble(-2.5),
        Arg::ScalarDouble(7.25), " (fractional bounds)");
    // min == max: the data's range, even when they are not 0.
    add(Values(dtype, {4}, {1, 2, 1, 4}), 4, Arg::ScalarInt(2), Arg::ScalarInt(2),
        " (min == max != 0: the data's range)");
    // One distinct value (and a 0-dim self): widened by 1 each way.
    add(Values(dtype, {3}, {2, 2, 2}), 4, Arg::ScalarInt(0), Arg::ScalarInt(0),
        " (one value: [x - 1, x + 1])");
    add(Values(dtype, {}, {-3}), 5, Arg::ScalarInt(0), Arg::ScalarInt(0), " (0-dim)");
    add(Values(dtype, {0}, {}), 4, Arg::ScalarInt(0), Arg::ScalarInt(0), " (empty: [-1, 1])");
    add(Values(dtype, {3}, {0, 0, 0}), 1, Arg::ScalarInt(0), Arg::ScalarInt(0),
        " (zeros, one bin)");
    // NaN and infinities are outside every finite range.
    add(Values(dtype, {6}, {1, NAN, 3, INFINITY, -INFINITY, 4.5}), 5, Arg::ScalarInt(0),
        Arg::ScalarInt(5), " (NaN and infinities skipped)");
    // A fine grid: where the division in the dtype's own precision decides the bin.
    add(MakeTensor({40}, dtype, rng), 7, Arg::ScalarDouble(-8.3), Arg::ScalarDouble(8.9),
        " (7 bins of an odd width)");
    return s;
  };
  op.reference = HistcReference;
  op.errors = [](Rng& rng) {
    const auto call = [&rng](Shape shape, int64_t bins, Arg lo, Arg hi) {
      return std::vector<Arg>{Arg::Tensor(MakeTensor(std::move(shape), TSR_DTYPE_FLOAT32, rng)),
                              Arg::Int(bins), std::move(lo), std::move(hi)};
    };
    const Arg zero = Arg::ScalarInt(0);
    const std::string not_finite = " (ATen: torch.histc: range of [..] is not finite)";
    return std::vector<ErrorInput>{
        Saying(Refused(
                   call({4}, 0, zero, zero), kInvalid,
                   "bins 0 (ATen: torch.histogram(): bins must be > 0, but got 0 for dimension 0)"),
               "bins must be > 0, but got 0"),
        Saying(Refused(call({4}, -1, zero, zero), kInvalid, "bins -1"),
               "bins must be > 0, but got -1"),
        Saying(Refused(call({4}, 4, Arg::ScalarInt(3), Arg::ScalarInt(1)), kInvalid,
                       "min > max (ATen: torch.histc: max must be larger than min)"),
               "torch.histc: max must be larger than min"),
        Saying(Refused(call({4}, 4, zero, Arg::ScalarDouble(INFINITY)), kInvalid,
                       "an infinite max" + not_finite),
               "torch.histc: range of [0, inf] is not finite"),
        Saying(Refused(call({4}, 4, Arg::ScalarDouble(NAN), Arg::ScalarInt(3)), kInvalid,
                       "a NaN min" + not_finite),
               "torch.histc: range of [nan, 3] is not finite"),
        Saying(Refused({Arg::Tensor(Values(TSR_DTYPE_FLOAT32, {2}, {1, INFINITY})), Arg::Int(4),
                        zero, zero},
                       kInvalid, "the data's range, infinite" + not_finite),
               "torch.histc: range of [1, inf] is not finite"),
        Saying(Refused(
                   {Arg::Tensor(Values(TSR_DTYPE_FLOAT32, {2}, {1, NAN})), Arg::Int(4), zero, zero},
                   kInvalid, "the data's range, NaN" + not_finite),
               "torch.histc: range of [nan, nan] is not finite"),
        Saying(
            Refused({Arg::Tensor(Values(TSR_DTYPE_INT32, {3}, {1, 2, 3})), Arg::Int(4), zero, zero},
                    kUnimplemented,
                    "an int32 self (ATen: \"histogram_cpu\" not implemented for 'Int')"),
            "not implemented for dtype int32 (expected a floating dtype)")};
  };
  return op;
}

// ---------------------------------------------------------------------------------------------
// searchsorted and bucketize.

// Bound: cus_lower_bound / cus_upper_bound of Bucketization.cpp, step by step: in [start, end)
// (of the flattened boundaries, through `sorter` when given, whose entries count from `start`),
// go right while !(b >= v) (lower) or !(b > v) (upper). A NaN value always goes right; a NaN
// boundary sends every value right when the search meets it, so the answer depends on the path.
int64_t Bound(const std::vector<double>& bd, int64_t start, int64_t end, double v,
              const HostTensor* sorter, bool upper) {
  const int64_t first = start;
  while (start < end) {
    const int64_t mid = start + ((end - start) >> 1);
    const double b = sorter ? bd[static_cast<size_t>(sorter->values[static_cast<size_t>(mid)]) +
                                 static_cast<size_t>(first)]
                            : bd[static_cast<size_t>(mid)];
    if (upper ? !(b > v) : !(b >= v)) {
      start = mid + 1;
    } else {
      end = mid;
    }
  }
  return start - first;
}

// SearchsortedOf: the result for boundaries `bd` and values `in` (a Tensor or a Scalar), both
// converted to their result_type (a Scalar as a wrapped number), a 1-D `bd` searched whole for
// every value, else row by row (the leading dims match); int32 or int64, of the values' shape.
HostTensor SearchsortedOf(const Arg& bd, const Arg& in, bool out_int32, bool upper,
                          const HostTensor* sorter) {
  const tsr_dtype common = ResultDtype({&bd, &in});
  std::vector<double> boundaries = bd.tensor.values;
  for (double& b : boundaries) b = RoundTo(common, b);
  const bool scalar = in.kind != Arg::Kind::kTensor;
  const Shape shape = scalar ? Shape{} : in.tensor.shape;
  std::vector<double> values = scalar ? std::vector<double>{in.number} : in.tensor.values;
  for (double& v : values) v = RoundTo(common, v);
  const int64_t row_in = shape.empty() ? 1 : shape.back();
  const int64_t row_bd = bd.tensor.shape.back();
  const bool one_row = bd.tensor.dim() == 1;
  HostTensor out = Values(out_int32 ? kInt : kLong, shape, {});
  for (size_t i = 0; i < values.size(); ++i) {
    const int64_t start = one_row ? 0 : static_cast<int64_t>(i) / row_in * row_bd;
    out.values.push_back(
        static_cast<double>(Bound(boundaries, start, start + row_bd, values[i], sorter, upper)));
  }
  return out;
}

// SortLines: each line along the last dim sorted ascending (NaN last), and the argsort that
// sorts the unsorted lines (indices within the line): torch.sort's values and indices.
std::pair<HostTensor, HostTensor> SortLines(const HostTensor& t) {
  HostTensor sorted = t, sorter = Values(kLong, t.shape, {});
  sorter.values.resize(t.values.size());
  const int64_t len = t.shape.empty() ? 1 : t.shape.back();
  for (int64_t row = 0; len > 0 && row < t.numel() / len; ++row) {
    std::vector<size_t> order(static_cast<size_t>(len));
    std::iota(order.begin(), order.end(), 0);
    const double* v = t.values.data() + row * len;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (std::isnan(v[a]) || std::isnan(v[b])) return !std::isnan(v[a]) && std::isnan(v[b]);
      return v[a] < v[b];
    });
    for (int64_t k = 0; k < len; ++k) {
      sorted.values[static_cast<size_t>(row * len + k)] = v[order[static_cast<size_t>(k)]];
      sorter.values[static_cast<size_t>(row * len + k)] =
          static_cast<double>(order[static_cast<size_t>(k)]);
    }
  }
  return {sorted, sorter};
}

// The forms of sample_inputs_searchsorted: right=, side=, and either with a sorter (over the
// unsorted boundaries).
enum class Form { kRight, kSide, kSorterRight, kSorterSide };

// SearchArgs: searchsorted's arguments (sorted_sequence, self, out_int32, right, side, sorter).
std::vector<Arg> SearchArgs(const HostTensor& unsorted, Arg value, bool out_int32, bool right,
                            Form form) {
  const auto [sorted, sorter] = SortLines(unsorted);
  const bool with_sorter = form == Form::kSorterRight || form == Form::kSorterSide;
  const bool with_side = form == Form::kSide || form == Form::kSorterSide;
  std::vector<Arg> args = {Arg::Tensor(with_sorter ? unsorted : sorted), std::move(value),
                           Arg::Bool(out_int32), Arg::Bool(with_side ? false : right)};
  if (with_side || with_sorter) {
    args.push_back(with_side ? Arg::String(right ? "right" : "left") : Arg::None());
  }
  if (with_sorter) args.push_back(Arg::Tensor(sorter));
  return args;
}

std::vector<HostTensor> SearchsortedReference(const Sample& s) {
  const bool side = Given(s, 4);
  const bool upper = side ? s.args[4].string == "right" : Given(s, 3) && s.args[3].boolean;
  return {SearchsortedOf(s.args[0], s.args[1], Given(s, 2) && s.args[2].boolean, upper,
                         Given(s, 5) ? &s.args[5].tensor : nullptr)};
}

// The checks searchsorted_pre_check makes (in its order), for either overload: `value` is the
// self argument to use with 1-D boundaries.
std::vector<ErrorInput> SearchsortedErrors(Rng& rng, const Arg& value, bool tensor_overload) {
  const tsr_dtype f32 = TSR_DTYPE_FLOAT32;
  const HostTensor bd = Values(f32, {3}, {1, 3, 5});
  const auto call = [&](HostTensor boundaries, Arg v, Arg side, Arg sorter, bool right = false) {
    return std::vector<Arg>{Arg::Tensor(std::move(boundaries)),
                            std::move(v),
                            Arg::Bool(false),
                            Arg::Bool(right),
                            std::move(side),
                            std::move(sorter)};
  };
  const Arg none = Arg::None();
  std::vector<ErrorInput> e = {
      Saying(
          Refused(
              call(bd, value, Arg::String("middle"), none), kInvalid,
              "side 'middle' (ATen: torch.searchsorted(): side can only be 'left' or 'right' but "
              "got middle)"),
          "side can only be 'left' or 'right' but got middle"),
      Saying(Refused(
                 call(bd, value, Arg::String("left"), none, true), kInvalid,
                 "right=True with side='left' (ATen: torch.searchsorted(): side and right can't be "
                 "set to opposites, got side of left while right was True)"),
             "side and right can't be set to opposites, got side of left while right was True"),
      Saying(
          Refused(call(bd, value, none, Arg::Tensor(Longs({2}, {0, 1}))), kInvalid,
                  "a sorter of another size (ATen: torch.searchsorted(): boundary and sorter must "
                  "have the same size)"),
          "boundary and sorter must have the same size"),
      Saying(Refused(call(bd, value, none, Arg::Tensor(Longs({3}, {0, 1, 2}, kInt))), kInvalid,
                     "an int32 sorter (ATen: torch.searchsorted(): sorter must be a tensor of long "
                     "dtype)"),
             "sorter must be a tensor of long dtype"),
      Saying(Refused(call(bd, value, none, Arg::Tensor(Longs({3}, {0, 1, 3}))), kInvalid,
                     "a sorter index past the end (ATen: torch.searchsorted(): sorter index out of "
                     "range; PyTorch 1.13 did not check)"),
             "sorter index out of range"),
      Saying(Refused(call(bd, value, none, Arg::Tensor(Longs({3}, {0, -1, 2}))), kInvalid,
                     "a negative sorter index"),
             "sorter index out of range"),
      Saying(
          Refused(
              call(MakeTensor({2, 2}, f32, rng),
                   tensor_overload ? Arg::Tensor(MakeTensor({}, f32, rng)) : Arg::ScalarDouble(2),
                   none, none),
              kInvalid,
              "a 0-dim value with 2-D boundaries (ATen: torch.searchsorted(): input value can be "
              "a scalar only when boundaries tensor dimension is 1)"),
          "input value can be a scalar only when boundaries tensor dimension is 1")};
  // The Scalar overload's value is 0-dim, which only 1-D boundaries take: it cannot reach the
  // 0-dim boundaries check (the check above refuses first, in ATen as here).
  if (tensor_overload) {
    e.push_back(Saying(
        Refused(call(MakeTensor({}, f32, rng), value, none, none), kInvalid,
                "0-dim boundaries (ATen: torch.searchsorted(): boundaries tensor should have "
                "positive dimension, but got 0 dimension)"),
        "boundaries tensor should have positive dimension"));
    const std::string mismatch =
        " (ATen: torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
        "dimensions of boundaries tensor and input value tensor must match)";
    const std::string mismatch_msg =
        "boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor "
        "and input value tensor must match";
    e.push_back(Saying(Refused(call(MakeTensor({2, 2}, f32, rng),
                                    Arg::Tensor(MakeTensor({1, 3}, f32, rng)), none, none),
                               kInvalid, "leading dims that differ" + mismatch),
                       mismatch_msg));
    e.push_back(Saying(Refused(call(MakeTensor({2, 2}, f32, rng),
                                    Arg::Tensor(MakeTensor({2}, f32, rng)), none, none),
                               kInvalid, "values of fewer dims than 2-D boundaries" + mismatch),
                       mismatch_msg));
    e.push_back(Saying(Refused(call(MakeTensor({2, 3}, f32, rng),
                                    Arg::Tensor(MakeTensor({2, 1, 3}, f32, rng)), none, none),
                               kInvalid, "values of more dims than 2-D boundaries" + mismatch),
                       mismatch_msg));
    e.push_back(
        Saying(Refused(call(Values(TSR_DTYPE_BOOL, {2}, {0, 1}),
                            Arg::Tensor(Values(TSR_DTYPE_BOOL, {3}, {1, 0, 1})), none, none),
                       kUnimplemented,
                       "bool boundaries and values (ATen: \"searchsorted_out_cpu\" not "
                       "implemented for 'Bool')"),
               "not implemented for dtype bool"));
  } else {
    e.push_back(
        Saying(Refused(call(Values(TSR_DTYPE_BOOL, {2}, {0, 1}), Arg::ScalarBool(true), none, none),
                       kUnimplemented, "bool boundaries and a bool value"),
               "not implemented for dtype bool"));
  }
  return e;
}

// searchsorted.Tensor(sorted_sequence, self, *, out_int32=False, right=False, side=None,
// sorter=None) and searchsorted.Scalar (self a Scalar; boundaries 1-D).
OpInfo Searchsorted(bool scalar) {
  OpInfo op;
  op.name = scalar ? "searchsorted.Scalar" : "searchsorted.Tensor";
  op.out = scalar ? "" : "searchsorted.Tensor_out";
  op.dtypes = kNumericMask;
  op.samples = [scalar](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    const auto make = [&](Shape shape) { return MakeTensor(std::move(shape), dtype, rng); };
    const auto add = [&](std::vector<Arg> args, const std::string& note = "") {
      s.push_back(Described(std::move(args), note));
    };
    const auto value = [&](const Shape& shape) {
      if (!scalar) return Arg::Tensor(make(shape));
      return ScalarOf(dtype, make({}).values[0]);
    };
    // sample_inputs_searchsorted's (boundaries, values) sizes (the Scalar overload: [L] with a
    // number); each pair in the four forms, out_int32 and right going round. The first sample
    // is one a dtype without a kernel (bool) must be refused on: values to search.
    const std::vector<std::pair<Shape, std::vector<Shape>>> sizes =
        scalar ? std::vector<std::pair<Shape, std::vector<Shape>>>{{{L}, {{}}}}
               : std::vector<std::pair<Shape, std::vector<Shape>>>{
                     {{M}, {{M}, {}, {M, M}}}, {{0}, {{0}}},
                     {{0, 0}, {{0, 0}}},       {{M, M}, {{M, M}}},
                     {{0, 0, 0}, {{0, 0, 0}}}, {{M, M, M}, {{M, M, M}}}};
    int pair = 0;
    for (const auto& [size, value_sizes] : sizes) {
      for (const Shape& value_size : value_sizes) {
        for (int f = 0; f < 4; ++f) {
          const int turn = scalar ? f : pair + f;
          add(SearchArgs(make(size), value(value_size), turn % 2 != 0, (turn / 2) % 2 != 0,
                         static_cast<Form>(f)));
          if (scalar) {  // every flag with every form: one number is cheap
            add(SearchArgs(make(size), value(value_size), turn % 2 == 0, (turn / 2) % 2 == 0,
                           static_cast<Form>(f)));
          }
        }
        ++pair;
      }
    }
    // Values equal to the boundaries: left gives the first equal one, right the one past the last.
    const HostTensor ties = SortLines(Pooled({8}, dtype, rng)).first;
    for (bool right : {false, true}) {
      add({Arg::Tensor(ties), scalar ? ScalarOf(dtype, ties.values[3]) : Arg::Tensor(ties),
           Arg::Bool(false), Arg::Bool(right)},
          " (values on the boundaries)");
    }
    // side='right' agrees with right=True; side overrides right=False.
    add({Arg::Tensor(ties), value({6}), Arg::Bool(true), Arg::Bool(true), Arg::String("right")});
    // Empty 1-D boundaries: every value at 0.
    add({Arg::Tensor(make({0})), value({3}), Arg::Bool(false), Arg::Bool(true)});
    // Defaults.
    add({Arg::Tensor(SortLines(make({7})).first), value({4})}, " (defaults)");
    // result_type: the comparison is in the promoted dtype (a number is a wrapped number).
    const bool floating = IsFloating(dtype);
    const HostTensor small = Values(dtype, {4}, {0, 2, 3, 7});
    if (scalar) {
      add({Arg::Tensor(small), floating ? Arg::ScalarInt(3) : Arg::ScalarDouble(2.5)},
          floating ? " (an int number)" : " (a float number: float32 comparison)");
      if (floating) {
        // 3 - 2^-10: 3 in float16 and bfloat16 (past the boundary 3 with right=True), not in
        // float32 and float64.
        add({Arg::Tensor(small), Arg::ScalarDouble(2.9990234375), Arg::Bool(false),
             Arg::Bool(true)},
            " (a number rounded to the boundaries' dtype first)");
      }
    } else {
      const tsr_dtype other = floating ? TSR_DTYPE_INT64 : TSR_DTYPE_FLOAT32;
      add({Arg::Tensor(small), Arg::Tensor(Values(other, {5}, {-1, 2, 2.5, 3, 9}))},
          " (values of another category)");
      add({Arg::Tensor(Values(other, {4}, {0, 2, 3, 7})), Arg::Tensor(small), Arg::Bool(true)},
          " (boundaries of another category)");
      add({Arg::Tensor(small), Arg::Tensor(Values(floating ? TSR_DTYPE_FLOAT64 : kLong, {}, {2})),
           Arg::Bool(false), Arg::Bool(true)},
          " (a 0-dim value tensor: the boundaries' dtype wins)");
      // Rows of 2-D boundaries, one row each.
      add(SearchArgs(make({3, 4}), Arg::Tensor(make({3, 2})), false, true, Form::kSorterSide));
    }
    if (floating) {
      // NaN: a NaN value goes past every boundary; NaN boundaries (sorted last) turn the search
      // right wherever it meets them, so right=True finds 4 for every value of the second.
      const HostTensor nan_bd = Values(dtype, {3}, {1, 3, NAN});
      const HostTensor nan_bd2 = Values(dtype, {4}, {1, 3, NAN, NAN});
      for (bool right : {false, true}) {
        for (const HostTensor* bd : {&nan_bd, &nan_bd2}) {
          if (scalar) {
            for (double v : {0.0, 2.0, 4.0, double{NAN}}) {
              add({Arg::Tensor(*bd), Arg::ScalarDouble(v), Arg::Bool(false), Arg::Bool(right)},
                  " (NaN)");
            }
          } else {
            add({Arg::Tensor(*bd), Arg::Tensor(Values(dtype, {5}, {0, 2, 4, NAN, 3})),
                 Arg::Bool(false), Arg::Bool(right)},
                " (NaN)");
          }
        }
      }
      add({Arg::Tensor(Values(dtype, {3}, {NAN, 3, 1})),
           scalar ? Arg::ScalarDouble(2) : Arg::Tensor(Values(dtype, {3}, {2, 5, NAN})),
           Arg::Bool(false), Arg::Bool(false), Arg::None(), Arg::Tensor(Longs({3}, {2, 1, 0}))},
          " (NaN through a sorter)");
      add({Arg::Tensor(Values(dtype, {4}, {-INFINITY, -1, 2, INFINITY})),
           scalar ? Arg::ScalarDouble(INFINITY)
                  : Arg::Tensor(Values(dtype, {4}, {-INFINITY, 0, INFINITY, 5})),
           Arg::Bool(false), Arg::Bool(true)},
          " (infinities)");
    }
    return s;
  };
  op.reference = SearchsortedReference;
  op.errors = [scalar](Rng& rng) {
    return SearchsortedErrors(
        rng, scalar ? Arg::ScalarDouble(2) : Arg::Tensor(MakeTensor({4}, TSR_DTYPE_FLOAT32, rng)),
        !scalar);
  };
  return op;
}

// bucketize.Tensor(self, boundaries, *, out_int32=False, right=False) and bucketize.Scalar (self
// a Scalar): searchsorted(boundaries, self) with 1-D boundaries only.
OpInfo Bucketize(bool scalar) {
  OpInfo op;
  op.name = scalar ? "bucketize.Scalar" : "bucketize.Tensor";
  op.out = scalar ? "" : "bucketize.Tensor_out";
  op.dtypes = kNumericMask;
  op.samples = [scalar](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    const auto add = [&](Arg self, HostTensor boundaries, std::optional<bool> out_int32,
                         std::optional<bool> right, const std::string& note = "") {
      std::vector<Arg> args = {std::move(self), Arg::Tensor(std::move(boundaries))};
      if (out_int32) args.push_back(Arg::Bool(*out_int32));
      if (right) args.push_back(Arg::Bool(*right));
      s.push_back(Described(std::move(args), note));
    };
    const auto value = [&](const Shape& shape) {
      return scalar ? ScalarOf(dtype, MakeTensor({}, dtype, rng).values[0])
                    : Arg::Tensor(MakeTensor(shape, dtype, rng));
    };
    const auto sorted = [&](int64_t n) { return SortLines(MakeTensor({n}, dtype, rng)).first; };
    // sample_inputs_bucketize: its sizes (a number for the Scalar overload) with [S] boundaries,
    // every out_int32 and right.
    const std::vector<Shape> sizes =
        scalar ? std::vector<Shape>{{}}
               : std::vector<Shape>{{S}, {}, {S, S}, {S, S, S}, {S, 1, S}, {S, 0, S}};
    for (const Shape& size : sizes) {
      for (bool out_int32 : {false, true}) {
        for (bool right : {false, true}) add(value(size), sorted(S), out_int32, right);
      }
    }
    // Ties with the boundaries, defaults, empty boundaries.
    const HostTensor ties = SortLines(Pooled({8}, dtype, rng)).first;
    for (bool right : {false, true}) {
      add(scalar ? ScalarOf(dtype, ties.values[4]) : Arg::Tensor(ties), ties, false, right,
          " (values on the boundaries)");
    }
    add(value({6}), sorted(4), std::nullopt, std::nullopt, " (defaults)");
    add(value({3}), Values(dtype, {0}, {}), true, false, " (empty boundaries)");
    const bool floating = IsFloating(dtype);
    const HostTensor small = Values(dtype, {4}, {0, 2, 3, 7});
    if (scalar) {
      add(floating ? Arg::ScalarInt(3) : Arg::ScalarDouble(2.5), small, false, false,
          floating ? " (an int number)" : " (a float number: float32 comparison)");
    } else {
      const tsr_dtype other = floating ? TSR_DTYPE_INT64 : TSR_DTYPE_FLOAT32;
      add(Arg::Tensor(Values(other, {5}, {-1, 2, 2.5, 3, 9})), small, false, true,
          " (values of another category)");
    }
    if (floating) {
      add(scalar ? Arg::ScalarDouble(NAN) : Arg::Tensor(Values(dtype, {5}, {0, 2, 4, NAN, 3})),
          Values(dtype, {4}, {1, 3, NAN, NAN}), false, true, " (NaN)");
      add(scalar ? Arg::ScalarDouble(2) : Arg::Tensor(Values(dtype, {4}, {0, 2, 4, NAN})),
          Values(dtype, {3}, {1, 3, NAN}), false, false, " (NaN)");
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    return std::vector<HostTensor>{SearchsortedOf(s.args[1], s.args[0],
                                                  Given(s, 2) && s.args[2].boolean,
                                                  Given(s, 3) && s.args[3].boolean, nullptr)};
  };
  op.errors = [scalar](Rng& rng) {
    const tsr_dtype f32 = TSR_DTYPE_FLOAT32;
    const Arg self = scalar ? Arg::ScalarDouble(2) : Arg::Tensor(MakeTensor({4}, f32, rng));
    std::vector<ErrorInput> e = {
        Saying(
            Refused({self, Arg::Tensor(MakeTensor({2, 2}, f32, rng))}, kInvalid,
                    "2-D boundaries (ATen: boundaries tensor must be 1 dimension, but got dim(2))"),
            "boundaries tensor must be 1 dimension, but got dim(2)"),
        Saying(
            Refused(
                {self, Arg::Tensor(MakeTensor({}, f32, rng))}, kInvalid,
                "0-dim boundaries (ATen: boundaries tensor must be 1 dimension, but got dim(0))"),
            "boundaries tensor must be 1 dimension, but got dim(0)")};
    e.push_back(Saying(
        Refused({scalar ? Arg::ScalarBool(true) : Arg::Tensor(Values(TSR_DTYPE_BOOL, {2}, {1, 0})),
                 Arg::Tensor(Values(TSR_DTYPE_BOOL, {2}, {0, 1}))},
                kUnimplemented,
                "bool values and boundaries (ATen: \"searchsorted_out_cpu\" not "
                "implemented for 'Bool')"),
        "not implemented for dtype bool"));
    return e;
  };
  return op;
}

// ---------------------------------------------------------------------------------------------
// tril_indices / triu_indices(row, col, offset=0, *, dtype=long, layout=None, device=None,
// pin_memory=None) -> [2, N]: the (r, c) with c - r <= offset (tril) or >= offset (triu), in
// row-major order, rows then columns; int32 and int64 only (AT_DISPATCH_INDEX_TYPES).
OpInfo TriangleIndices(bool upper) {
  OpInfo op;
  op.name = upper ? "triu_indices" : "tril_indices";
  op.dtypes = Bit(kInt) | Bit(kLong);
  op.samples = [](tsr_dtype dtype, Rng&) {
    std::vector<Sample> s;
    const auto add = [&](int64_t row, int64_t col, std::optional<int64_t> offset) {
      std::vector<Arg> args = {Arg::Int(row), Arg::Int(col)};
      args.push_back(Arg::Int(offset.value_or(0)));
      args.insert(args.end(), {Arg::Dtype(dtype), Arg::None(), Arg::Device()});
      s.push_back(Described(std::move(args)));
    };
    // sample_inputs_trilu_indices (the non-empty one first: a dtype without a kernel must be
    // refused), then offsets past either corner and small odd shapes.
    add(20, 21, 0);
    add(0, 0, std::nullopt);
    add(20, 0, std::nullopt);
    add(0, 20, std::nullopt);
    add(20, 21, 7);
    add(20, 21, -7);
    for (const auto& [row, col, offset] :
         std::vector<std::tuple<int64_t, int64_t, int64_t>>{{3, 4, 1},
                                                            {4, 3, -1},
                                                            {3, 3, -5},
                                                            {3, 3, 7},
                                                            {1, 1, 0},
                                                            {5, 2, -4},
                                                            {2, 5, 4},
                                                            {3, 0, 1},
                                                            {0, 3, -1},
                                                            {6, 6, -6},
                                                            {6, 6, 6}}) {
      add(row, col, offset);
    }
    if (dtype == kLong) {
      s.push_back(Described(
          {Arg::Int(4), Arg::Int(5), Arg::Int(-1), Arg::None(), Arg::None(), Arg::Device()},
          " (dtype None: long)"));
    }
    return s;
  };
  op.reference = [upper](const Sample& s) {
    const int64_t row = s.args[0].integer, col = s.args[1].integer;
    const int64_t offset = Given(s, 2) ? s.args[2].integer : 0;
    std::vector<int64_t> rows, cols;
    for (int64_t r = 0; r < row; ++r) {
      for (int64_t c = 0; c < col; ++c) {
        if (upper ? c - r >= offset : c - r <= offset) {
          rows.push_back(r);
          cols.push_back(c);
        }
      }
    }
    const int64_t n = static_cast<int64_t>(rows.size());
    rows.insert(rows.end(), cols.begin(), cols.end());
    return std::vector<HostTensor>{Longs({2, n}, rows, Given(s, 3) ? s.args[3].dtype : kLong)};
  };
  op.errors = [](Rng&) {
    const auto call = [](int64_t row, int64_t col, tsr_dtype dtype) {
      return std::vector<Arg>{Arg::Int(row),     Arg::Int(col), Arg::Int(0),
                              Arg::Dtype(dtype), Arg::None(),   Arg::Device()};
    };
    return std::vector<ErrorInput>{
        Saying(Refused(call(-1, 3, kLong), kInvalid,
                       "a negative row (ATen: row must be non-negative)"),
               "row must be non-negative"),
        Saying(Refused(call(3, -1, kLong), kInvalid,
                       "a negative col (ATen: col must be non-negative)"),
               "col must be non-negative"),
        Saying(Refused(call(3, 3, TSR_DTYPE_FLOAT32), kUnimplemented,
                       "dtype float32 (ATen: \"tril_indices\" not implemented for 'Float')"),
               "not implemented for dtype float32 (expected int64 or int32)"),
        Saying(Refused(call(3, 3, TSR_DTYPE_INT16), kUnimplemented, "dtype int16"),
               "not implemented for dtype int16 (expected int64 or int32)")};
  };
  return op;
}

}  // namespace

void AddCountingOps(std::vector<OpInfo>& db) {
  db.push_back(Unique2());
  db.push_back(UniqueConsecutive());
  db.push_back(UniqueDim());
  db.push_back(Bincount());
  db.push_back(Histc());
  db.push_back(Searchsorted(/*scalar=*/false));
  db.push_back(Searchsorted(/*scalar=*/true));
  db.push_back(Bucketize(/*scalar=*/false));
  db.push_back(Bucketize(/*scalar=*/true));
  db.push_back(TriangleIndices(/*upper=*/false));
  db.push_back(TriangleIndices(/*upper=*/true));
}

}  // namespace conformance
}  // namespace tessera
