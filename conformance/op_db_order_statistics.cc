// Op set 1.9's order statistics and scans with indices: kthvalue, median (all elements and along a
// dim), nanmedian (the same two), mode, cummax, cummin and logcumsumexp (composites).
//
// Semantics are current PyTorch's CPU kernels: Sorting.cpp (kthvalue_out_impl_cpu's quick select
// with NaN as the largest value; median_with_indices_impl and median_impl: the lower median, NaN
// propagated by median and skipped by nanmedian), cpu/TensorCompareKernel.cpp (mode_kernel_impl),
// ReduceOps.cpp (cummax_cummin_helper, logcumsumexp) with cpu/ReduceOpsKernel.cpp and
// cpu/LogAddExp.h (_log_add_exp_helper). Samples follow the OpInfos of
// common_methods_invocations.py (sample_inputs_kthvalue, sample_inputs_reduction for median and
// nanmedian, sample_inputs_mode, sample_inputs_cumulative_ops for cummax and cummin,
// sample_inputs_logcumsumexp; error_inputs_kthvalue, error_inputs_logcumsumexp), with ties, NaN,
// infinities, -0.0, empty and 0-dim inputs added. The references walk each line along the dim on
// HostTensor values directly.
//
// Which index among equal values (the oracles compare both returns, values and indices):
// - median.dim, nanmedian.dim: ATen partitions the positions with nth_element ordered by (value,
//   position), so the index is defined: the ((n - 1) / 2)-th position of a stable sort (n: the
//   line's length, for nanmedian its count of non-NaN values). -0.0 and 0.0 are equal there.
//   median.dim with a NaN in the line: NaN and the index of the line's FIRST NaN. nanmedian.dim
//   of an all-NaN line: NaN and position 0 of nth_element over NaNs it cannot order, which is
//   index 0 for lines of up to 3 (libstdc++ insertion-sorts those); the samples' all-NaN lines
//   are 3 long, and the reference says index 0.
// - kthvalue: ATen's quick select is not stable, so with duplicates of the k-th value its index
//   is unspecified. The samples are made so that the k-th value occurs once in its line
//   (distinct values, and hand-made lines with ties elsewhere); the reference takes the
//   position of a stable sort with NaN after every number.
// - mode: ATen sorts (value, position) pairs by value with std::sort and keeps the last pair of
//   the first longest run: the smallest of the most frequent values, and (std::sort being an
//   insertion sort for up to 16 elements) the LAST index of that value. Longer lines have no
//   defined index; the samples' lines with duplicates are at most 16 long, and their long line
//   has distinct values (its mode: the smallest value, found once). No NaN (NaN != NaN makes
//   each NaN its own run, and std::sort's order with NaN undefined).
// - cummax, cummin: ATen keeps a running (value, index) and takes element i when it is NaN, or
//   when the running value is not NaN and x_i >= it (cummax; <= for cummin): ties give the LAST
//   index, a NaN is kept from there on and each later NaN takes its index.
//
// Errors: PyTorch's IndexError (a dim out of range; zero_numel_check_dims' "Expected reduction
// dim 1 to have non-zero size." of kthvalue, median.dim, nanmedian.dim and mode) is
// TSR_OUT_OF_RANGE, its RuntimeError ("kthvalue(): selected number k out of range for dimension
// 1") TSR_INVALID_ARGUMENT, and a dtype the kernels do not take (AT_DISPATCH's "not
// implemented for 'Bool'", a NotImplementedError in current PyTorch) TSR_UNIMPLEMENTED.
//
// Dtypes are current PyTorch's CPU ones: kthvalue, median and nanmedian every dtype but bool
// (1.13, what /usr/bin/python3 runs, lacked float16); mode, cummax and cummin every dtype (1.13:
// cummax and cummin no float16); logcumsumexp the floating ones (1.13: no float16). median() and
// nanmedian() of an empty input are NaN (at::full of NaN, converted to the dtype: sampled for the
// floating dtypes only, an integer's NaN being whatever the conversion gives). cummax and cummin
// do not check `dim` for a 0-dim or an empty input in ATen (cummax(0-dim, dim=3) works); the
// samples give those only dims in range.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "conformance/op_db.h"
#include "conformance/op_db_helpers.h"

namespace tessera {
namespace conformance {
namespace {

using Shape = std::vector<int64_t>;
using Line = std::vector<double>;

constexpr int64_t S = 5;  // PyTorch's OpInfo size
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- Samples ----

// Distinct: distinct integer values in a random order (uint8: from 0, others around 0), so that
// every value of a line occurs once in it.
HostTensor Distinct(Shape shape, tsr_dtype dtype, Rng& rng) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  const int64_t n = t.numel();
  t.values.resize(static_cast<size_t>(n));
  std::iota(t.values.begin(), t.values.end(),
            dtype == TSR_DTYPE_UINT8 ? 0.0 : -static_cast<double>(n / 2));
  std::shuffle(t.values.begin(), t.values.end(), rng);
  for (double& v : t.values) v = RoundTo(dtype, v);
  return t;
}

// SmallInts: integers in [low, high] (uint8: shifted to start at 0; bool: 0 or 1), for ties.
HostTensor SmallInts(Shape shape, tsr_dtype dtype, Rng& rng, int64_t low = -2, int64_t high = 2) {
  if (dtype == TSR_DTYPE_BOOL) {
    low = 0;
    high = 1;
  } else if (dtype == TSR_DTYPE_UINT8 && low < 0) {
    high -= low;
    low = 0;
  }
  std::uniform_int_distribution<int64_t> pick(low, high);
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.values.resize(static_cast<size_t>(t.numel()));
  for (double& v : t.values) v = RoundTo(dtype, static_cast<double>(pick(rng)));
  return t;
}

// LinesOf: `rows` as the lines along `dim` of a 2D tensor: dim 1 gives a [rows, len] tensor, dim 0
// the same lines as the columns of a [len, rows] one (lines a kernel walks strided).
HostTensor LinesOf(tsr_dtype dtype, const std::vector<Line>& rows, int64_t dim) {
  const int64_t n = static_cast<int64_t>(rows.size()), len = static_cast<int64_t>(rows[0].size());
  HostTensor t;
  t.dtype = dtype;
  t.shape = dim == 1 ? Shape{n, len} : Shape{len, n};
  t.values.resize(static_cast<size_t>(n * len));
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t k = 0; k < len; ++k) {
      t.values[static_cast<size_t>(dim == 1 ? r * len + k : k * n + r)] =
          RoundTo(dtype, rows[static_cast<size_t>(r)][static_cast<size_t>(k)]);
    }
  }
  return t;
}

HostTensor F32(Shape shape, Rng& rng) {
  return MakeTensor(std::move(shape), TSR_DTYPE_FLOAT32, rng);
}

// ---- References ----

// ReducedShape: `shape` reduced over `dim` (kept as 1 with keepdim); a 0-dim input stays 0-dim.
Shape ReducedShape(const Shape& shape, int64_t dim, bool keepdim) {
  if (shape.empty()) return {};
  Shape out = shape;
  const size_t d = static_cast<size_t>(dim < 0 ? dim + static_cast<int64_t>(shape.size()) : dim);
  if (keepdim) {
    out[d] = 1;
  } else {
    out.erase(out.begin() + static_cast<std::ptrdiff_t>(d));
  }
  return out;
}

// LineAt: line (o, i) along `lines` of `t`.
Line LineAt(const HostTensor& t, const LinesAlong& lines, int64_t o, int64_t i) {
  Line v(static_cast<size_t>(lines.len));
  for (int64_t k = 0; k < lines.len; ++k) {
    v[static_cast<size_t>(k)] = t.values[static_cast<size_t>(lines.index(o, i, k))];
  }
  return v;
}

struct Picked {
  double value;
  int64_t index;
};
using Pick = std::function<Picked(const Line&)>;

// ReduceLines: (values, indices) of a reduction over `dim`, one Picked per line; the lines' order
// (outer, then inner) is the row-major order of the reduced shape.
std::vector<HostTensor> ReduceLines(const HostTensor& in, int64_t dim, bool keepdim,
                                    const Pick& pick) {
  HostTensor values, indices;
  values.dtype = in.dtype;
  indices.dtype = TSR_DTYPE_INT64;
  values.shape = indices.shape = ReducedShape(in.shape, dim, keepdim);
  const LinesAlong lines(in.shape, dim);
  for (int64_t o = 0; o < lines.outer; ++o) {
    for (int64_t i = 0; i < lines.inner; ++i) {
      const Picked p = pick(LineAt(in, lines, o, i));
      values.values.push_back(RoundTo(in.dtype, p.value));
      indices.values.push_back(static_cast<double>(p.index));
    }
  }
  return {values, indices};
}

// StableOrder: the line's positions sorted by value, NaN after every number; equal values (-0.0
// and 0.0 included) and NaNs among themselves in position order.
std::vector<int64_t> StableOrder(const Line& v) {
  std::vector<int64_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    const double x = v[static_cast<size_t>(a)], y = v[static_cast<size_t>(b)];
    return !std::isnan(x) && (std::isnan(y) || x < y);
  });
  return order;
}

// KthOf: the k-th smallest (1-based), NaN larger than every number.
Picked KthOf(const Line& v, int64_t k) {
  const int64_t at = StableOrder(v)[static_cast<size_t>(k - 1)];
  return {v[static_cast<size_t>(at)], at};
}

// MedianOf: the lower median; with `ignore_nan` (nanmedian) of the non-NaN values (an all-NaN
// line: NaN at position 0), else NaN at the first NaN if there is one.
Picked MedianOf(const Line& v, bool ignore_nan) {
  if (!ignore_nan) {
    for (size_t k = 0; k < v.size(); ++k) {
      if (std::isnan(v[k])) return {v[k], static_cast<int64_t>(k)};
    }
  }
  const int64_t numbers =
      std::count_if(v.begin(), v.end(), [](double x) { return !std::isnan(x); });
  const int64_t rank = numbers == 0 ? 0 : (numbers - 1) / 2;
  const int64_t at = StableOrder(v)[static_cast<size_t>(rank)];
  return {v[static_cast<size_t>(at)], at};
}

// ModeOf: the smallest of the most frequent values, at the last position it occurs (no NaN).
Picked ModeOf(const Line& v) {
  const std::vector<int64_t> order = StableOrder(v);
  Picked best{0, 0};
  size_t best_count = 0;
  for (size_t start = 0; start < order.size();) {
    size_t end = start + 1;
    while (end < order.size() &&
           v[static_cast<size_t>(order[end])] == v[static_cast<size_t>(order[start])]) {
      ++end;
    }
    if (end - start > best_count) {
      best_count = end - start;
      const int64_t last = order[end - 1];  // the largest position: the order is stable
      best = {v[static_cast<size_t>(last)], last};
    }
    start = end;
  }
  return best;
}

// MedianOfAll: median() and nanmedian(): the lower median of every element, NaN for no elements
// (and for median, NaN if any element is).
HostTensor MedianOfAll(const HostTensor& in, bool ignore_nan) {
  Line numbers;
  bool nan = false;
  for (double x : in.values) {
    if (std::isnan(x)) {
      nan = true;
    } else {
      numbers.push_back(x);
    }
  }
  double m = kNan;
  if (!numbers.empty() && (ignore_nan || !nan)) {
    std::sort(numbers.begin(), numbers.end());
    m = numbers[(numbers.size() - 1) / 2];
  }
  return Values(in.dtype, {}, {m});
}

// ScanLines: a scan along `dim` with the same shape as `in`: `scan` fills a line's values and,
// for cummax and cummin, indices.
using Scan = std::function<void(const Line& v, Line* values, std::vector<int64_t>* indices)>;
std::vector<HostTensor> ScanLines(const HostTensor& in, int64_t dim, bool with_indices,
                                  tsr_dtype dtype, const Scan& scan) {
  HostTensor values, indices;
  values.dtype = dtype;
  indices.dtype = TSR_DTYPE_INT64;
  values.shape = indices.shape = in.shape;
  values.values.assign(in.values.size(), 0);
  indices.values.assign(in.values.size(), 0);
  const LinesAlong lines(in.shape, dim);
  for (int64_t o = 0; o < lines.outer; ++o) {
    for (int64_t i = 0; i < lines.inner; ++i) {
      Line v;
      std::vector<int64_t> idx;
      scan(LineAt(in, lines, o, i), &v, &idx);
      for (int64_t k = 0; k < lines.len; ++k) {
        const size_t at = static_cast<size_t>(lines.index(o, i, k));
        values.values[at] = RoundTo(dtype, v[static_cast<size_t>(k)]);
        if (with_indices) indices.values[at] = static_cast<double>(idx[static_cast<size_t>(k)]);
      }
    }
  }
  if (with_indices) return {values, indices};
  return {values};
}

// CumExtremum: cummax_cummin_helper's running (value, index).
void CumExtremum(const Line& v, bool is_max, Line* values, std::vector<int64_t>* indices) {
  if (v.empty()) return;
  double best = v[0];
  int64_t at = 0;
  for (size_t k = 0; k < v.size(); ++k) {
    const double x = v[k];
    if (std::isnan(x) || (!std::isnan(best) && (is_max ? x >= best : x <= best))) {
      best = x;
      at = static_cast<int64_t>(k);
    }
    values->push_back(best);
    indices->push_back(at);
  }
}

// LogAddExp: _log_add_exp_helper(x, acc): NaN propagates, two equal infinities give themselves
// (inf - inf is not taken), else max + log1p(exp(min - max)).
long double LogAddExp(long double x, long double acc) {
  if (std::isnan(x) || std::isnan(acc)) return std::numeric_limits<long double>::quiet_NaN();
  if (x == acc && std::isinf(x)) return x;
  const long double hi = std::max(x, acc), lo = std::min(x, acc);
  return hi + std::log1p(std::exp(lo - hi));
}

// ---- Arguments (a sample may leave trailing ones to their defaults) ----

int64_t IntAt(const Sample& s, size_t i, int64_t otherwise) {
  return Given(s, i) ? s.args[i].integer : otherwise;
}
bool BoolAt(const Sample& s, size_t i) { return Given(s, i) && s.args[i].boolean; }

Arg T(HostTensor t) { return Arg::Tensor(std::move(t)); }

// ---- kthvalue ----

OpInfo Kthvalue() {
  OpInfo op;
  op.name = "kthvalue";
  op.out = "kthvalue.values";
  op.dtypes = kNumericMask;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    const auto add = [&](Shape shape, std::vector<Arg> rest, const std::string& note = "") {
      std::vector<Arg> args{T(Distinct(std::move(shape), dtype, rng))};
      for (Arg& a : rest) args.push_back(std::move(a));
      s.push_back(Described(std::move(args), note));
    };
    // sample_inputs_kthvalue (values distinct, so the indices are defined).
    add({S, S, S}, {Arg::Int(2)}, " (dim -1 by default)");
    add({S, S, S}, {Arg::Int(2), Arg::Int(1)});
    add({S, S, S}, {Arg::Int(2), Arg::Int(-1)});
    add({S, S, S}, {Arg::Int(2), Arg::Int(1), Arg::Bool(true)});
    add({S, S, S}, {Arg::Int(2), Arg::Int(-1), Arg::Bool(true)});
    add({S}, {Arg::Int(2), Arg::Int(0)});
    add({S}, {Arg::Int(2), Arg::Int(0), Arg::Bool(true)});
    add({}, {Arg::Int(1)});
    add({}, {Arg::Int(1), Arg::Int(0)});
    add({}, {Arg::Int(1), Arg::Int(0), Arg::Bool(true)});
    add({}, {Arg::Int(1), Arg::Int(-1), Arg::Bool(false)});
    // The smallest and the largest, a strided dim, a middle dim, an empty result.
    add({4, 7}, {Arg::Int(1), Arg::Int(1), Arg::Bool(false)}, " (k 1: the smallest)");
    add({4, 7}, {Arg::Int(7), Arg::Int(1), Arg::Bool(false)}, " (k 7: the largest)");
    add({7, 4}, {Arg::Int(3), Arg::Int(0), Arg::Bool(true)});
    add({2, 6, 3}, {Arg::Int(4), Arg::Int(1), Arg::Bool(false)});
    add({0, 3}, {Arg::Int(2), Arg::Int(1), Arg::Bool(false)}, " (no lines)");
    add({0, 3}, {Arg::Int(3), Arg::Int(-1), Arg::Bool(true)}, " (no lines)");
    // Ties elsewhere in each line, the 3rd smallest found once: 1 at 2, 4 at 5, 6 at 3.
    const std::vector<Line> ties = {{4, 4, 1, 2, 0, 0}, {3, 7, 3, 5, 7, 4}, {2, 2, 9, 6, 8, 8}};
    for (int64_t dim : {1, 0}) {
      s.push_back(Described({T(LinesOf(dtype, ties, dim)), Arg::Int(3), Arg::Int(dim)},
                            " (ties, the k-th found once)"));
    }
    if (IsFloating(dtype)) {
      // NaN sorts as the largest: k 4 picks it (at 1, 0, 2); one NaN per line.
      const std::vector<Line> nans = {
          {1, kNan, 0, 2}, {kNan, -kInf, 3, kInf}, {5, 4, kNan, -1}, {-0.5, 2.5, -3, kNan}};
      for (int64_t k : {1, 3, 4}) {
        s.push_back(Described({T(LinesOf(dtype, nans, 1)), Arg::Int(k), Arg::Int(1)},
                              " (a NaN and infinities per line)"));
      }
      s.push_back(Described({T(LinesOf(dtype, nans, 0)), Arg::Int(4), Arg::Int(0)},
                            " (a NaN per line, strided)"));
      // inf, -inf, NaN, +-large, tiny, -0.0, 0.0, 1, -1.5: k 3 is -1.5, 6 tiny, 10 NaN (the
      // 4th and 5th, -0.0 and 0.0, are equal: not asked for).
      for (int64_t k : {3, 6, 10}) {
        s.push_back(Described({T(ExtremeTensor(dtype)), Arg::Int(k), Arg::Int(0)}, " (extremes)"));
      }
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    const int64_t k = s.args[1].integer;
    return ReduceLines(s.args[0].tensor, IntAt(s, 2, -1), BoolAt(s, 3),
                       [k](const Line& v) { return KthOf(v, k); });
  };
  op.errors = [](Rng& rng) {
    return std::vector<ErrorInput>{
        // error_inputs_kthvalue
        Saying(Refused({T(F32({2, 2}, rng)), Arg::Int(3), Arg::Int(0)}, TSR_INVALID_ARGUMENT,
                       "k 3 of a dim of 2"),
               "selected number k out of range for dimension 0"),
        Saying(Refused({T(F32({2, 2}, rng)), Arg::Int(3)}, TSR_INVALID_ARGUMENT,
                       "k 3 of the last dim, of 2"),
               "selected number k out of range for dimension 1"),
        Saying(Refused({T(Values(TSR_DTYPE_INT64, {}, {2})), Arg::Int(3)}, TSR_INVALID_ARGUMENT,
                       "k 3 of a 0-dim input"),
               "selected number k out of range for dimension 0"),
        Saying(
            Refused({T(F32({3, 4}, rng)), Arg::Int(0), Arg::Int(1)}, TSR_INVALID_ARGUMENT, "k 0"),
            "selected number k out of range for dimension 1"),
        Saying(
            Refused({T(F32({3, 4}, rng)), Arg::Int(-1), Arg::Int(1)}, TSR_INVALID_ARGUMENT, "k -1"),
            "selected number k out of range for dimension 1"),
        Saying(Refused({T(F32({0, 3}, rng)), Arg::Int(4), Arg::Int(1)}, TSR_INVALID_ARGUMENT,
                       "k 4 of a dim of 3, no lines"),
               "selected number k out of range for dimension 1"),
        // zero_numel_check_dims: an IndexError, before k is looked at.
        Saying(Refused({T(F32({3, 0}, rng)), Arg::Int(1), Arg::Int(1)}, TSR_OUT_OF_RANGE,
                       "a reduction over an empty dim"),
               "Expected reduction dim 1 to have non-zero size"),
        Saying(Refused({T(F32({0}, rng)), Arg::Int(1)}, TSR_OUT_OF_RANGE, "no elements"),
               "Expected reduction dim 0 to have non-zero size"),
        Saying(Refused({T(F32({3, 4}, rng)), Arg::Int(1), Arg::Int(2)}, TSR_OUT_OF_RANGE,
                       "dim 2 of a 2D input"),
               "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
        Saying(Refused({T(F32({}, rng)), Arg::Int(1), Arg::Int(1)}, TSR_OUT_OF_RANGE,
                       "dim 1 of a 0-dim input"),
               "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
        Saying(Refused({T(MakeTensor({3, 4}, TSR_DTYPE_BOOL, rng)), Arg::Int(1), Arg::Int(1)},
                       TSR_UNIMPLEMENTED,
                       "a bool input (\"kthvalue_cpu\" not implemented for 'Bool')"),
               "not implemented for dtype bool")};
  };
  return op;
}

// ---- median, nanmedian ----

// The reduction inputs of opinfo/core.py's _generate_reduction_inputs.
const std::vector<Shape>& ReductionShapes() {
  static const std::vector<Shape> shapes = {{}, {2}, {3, 5}, {3, 2, 1, 2}};
  return shapes;
}

// median() / nanmedian(): the lower median of all elements, a 0-dim result; no out= form.
OpInfo MedianAll(bool ignore_nan) {
  OpInfo op;
  op.name = ignore_nan ? "nanmedian" : "median";
  op.dtypes = kNumericMask;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    for (const Shape& shape : ReductionShapes()) {
      s.push_back(Described({T(MakeTensor(shape, dtype, rng))}));
    }
    // Ties; an even count (the lower of the middle two).
    s.push_back(Described({T(SmallInts({4, 6}, dtype, rng))}, " (ties, 24 elements)"));
    s.push_back(Described({T(SmallInts({7}, dtype, rng))}, " (ties)"));
    s.push_back(Described({T(Distinct({2, 5}, dtype, rng))}, " (10 distinct)"));
    if (IsFloating(dtype)) {
      // No elements: NaN.
      s.push_back(Described({T(MakeTensor({0}, dtype, rng))}, " (NaN)"));
      s.push_back(Described({T(MakeTensor({3, 0}, dtype, rng))}, " (NaN)"));
      // With a NaN: NaN for median; nanmedian the lower median of the rest (0.0 of the
      // extremes), or NaN if all are NaN.
      s.push_back(Described({T(ExtremeTensor(dtype))}, " (extremes)"));
      s.push_back(Described({T(Values(dtype, {2, 3}, {4, kNan, -1, 2, kNan, 7}))}, " (NaNs)"));
      s.push_back(Described({T(Values(dtype, {4}, {kNan, kNan, kNan, kNan}))}, " (all NaN)"));
      s.push_back(Described({T(Values(dtype, {}, {kNan}))}, " (NaN)"));
      s.push_back(
          Described({T(Values(dtype, {5}, {kInf, -kInf, kInf, 1, -kInf}))}, " (infinities)"));
    }
    return s;
  };
  op.reference = [ignore_nan](const Sample& s) {
    return std::vector<HostTensor>{MedianOfAll(s.args[0].tensor, ignore_nan)};
  };
  op.errors = [](Rng& rng) {
    return std::vector<ErrorInput>{Saying(
        Refused({T(MakeTensor({3, 4}, TSR_DTYPE_BOOL, rng))}, TSR_UNIMPLEMENTED, "a bool input"),
        "not implemented for dtype bool")};
  };
  return op;
}

// median.dim / nanmedian.dim(self, int dim, bool keepdim=False) -> (values, indices).
OpInfo MedianDim(bool ignore_nan) {
  OpInfo op;
  op.name = ignore_nan ? "nanmedian.dim" : "median.dim";
  op.out = ignore_nan ? "nanmedian.dim_values" : "median.dim_values";
  op.dtypes = kNumericMask;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    // sample_inputs_reduction (supports_multiple_dims=False): dim 0 keepdim, -1, the middle dim
    // keepdim (dim=None is median()'s own OpInfo here).
    for (const Shape& shape : ReductionShapes()) {
      const int64_t nd = static_cast<int64_t>(shape.size());
      s.push_back(Described({T(MakeTensor(shape, dtype, rng)), Arg::Int(0), Arg::Bool(true)}));
      s.push_back(Described({T(MakeTensor(shape, dtype, rng)), Arg::Int(-1), Arg::Bool(false)}));
      if (nd > 2) {
        s.push_back(
            Described({T(MakeTensor(shape, dtype, rng)), Arg::Int(nd / 2), Arg::Bool(true)}));
      }
    }
    s.push_back(
        Described({T(MakeTensor({S, S, S}, dtype, rng)), Arg::Int(1)}, " (keepdim default)"));
    s.push_back(Described({T(MakeTensor({}, dtype, rng)), Arg::Int(-1), Arg::Bool(true)}));
    s.push_back(Described({T(MakeTensor({0, 3}, dtype, rng)), Arg::Int(1)}, " (no lines)"));
    s.push_back(Described({T(MakeTensor({0, 3}, dtype, rng)), Arg::Int(-1), Arg::Bool(true)},
                          " (no lines)"));
    // Ties: the index is the (n - 1) / 2-th of a stable sort; even and odd lengths.
    s.push_back(Described({T(SmallInts({4, 6}, dtype, rng)), Arg::Int(1)}, " (ties)"));
    s.push_back(Described({T(SmallInts({6, 4}, dtype, rng)), Arg::Int(0)}, " (ties, strided)"));
    s.push_back(
        Described({T(SmallInts({5, 7}, dtype, rng)), Arg::Int(1), Arg::Bool(true)}, " (ties)"));
    s.push_back(
        Described({T(SmallInts({3, 9, 2}, dtype, rng, 0, 1)), Arg::Int(1)}, " (two values)"));
    if (IsFloating(dtype)) {
      // median: NaN at the first NaN; nanmedian: the lower median of the rest (1 at 0, 1 at 2,
      // 2 at 2); both: 2 at 3 (ties), -0.0 at 3 (-0.0 and 0.0 equal).
      const std::vector<Line> rows = {{1, kNan, 0, kNan, 3},   {kNan, 2, 1, 0, 5},
                                      {4, 3, 2, 1, kNan},      {3, 1, 2, 2, 7},
                                      {0.0, -0.0, 1, -0.0, 2}, {kInf, -kInf, kInf, 1, -kInf}};
      for (int64_t dim : {1, 0}) {
        s.push_back(Described({T(LinesOf(dtype, rows, dim)), Arg::Int(dim), Arg::Bool(false)},
                              " (NaNs, ties, -0.0, infinities)"));
      }
      // Lines of 3 with every count of NaN (all NaN: NaN at 0 for both).
      const std::vector<Line> short_rows = {
          {kNan, kNan, kNan}, {kNan, 1, kNan}, {2, kNan, kNan}, {kNan, 5, -4}, {6, 2, 4}};
      for (int64_t dim : {1, 0}) {
        s.push_back(Described({T(LinesOf(dtype, short_rows, dim)), Arg::Int(dim), Arg::Bool(true)},
                              " (lines of 3 with 3, 2, 1, 0 NaNs)"));
      }
      s.push_back(Described({T(ExtremeTensor(dtype)), Arg::Int(0)}, " (extremes)"));
    }
    return s;
  };
  op.reference = [ignore_nan](const Sample& s) {
    return ReduceLines(s.args[0].tensor, s.args[1].integer, BoolAt(s, 2),
                       [ignore_nan](const Line& v) { return MedianOf(v, ignore_nan); });
  };
  op.errors = [](Rng& rng) {
    return std::vector<ErrorInput>{
        Saying(Refused({T(F32({3, 0}, rng)), Arg::Int(1)}, TSR_OUT_OF_RANGE,
                       "a reduction over an empty dim"),
               "Expected reduction dim 1 to have non-zero size"),
        Saying(Refused({T(F32({0}, rng)), Arg::Int(0), Arg::Bool(true)}, TSR_OUT_OF_RANGE,
                       "no elements"),
               "Expected reduction dim 0 to have non-zero size"),
        Saying(Refused({T(F32({3, 4}, rng)), Arg::Int(2)}, TSR_OUT_OF_RANGE, "dim 2 of a 2D input"),
               "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
        Saying(
            Refused({T(F32({3, 4}, rng)), Arg::Int(-3)}, TSR_OUT_OF_RANGE, "dim -3 of a 2D input"),
            "Dimension out of range (expected to be in range of [-2, 1], but got -3)"),
        Saying(Refused({T(F32({}, rng)), Arg::Int(1)}, TSR_OUT_OF_RANGE, "dim 1 of a 0-dim input"),
               "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
        Saying(Refused({T(MakeTensor({3, 4}, TSR_DTYPE_BOOL, rng)), Arg::Int(1)}, TSR_UNIMPLEMENTED,
                       "a bool input"),
               "not implemented for dtype bool")};
  };
  return op;
}

// ---- mode ----

// mode(self, int dim=-1, bool keepdim=False) -> (values, indices).
OpInfo Mode() {
  OpInfo op;
  op.name = "mode";
  op.out = "mode.values";
  op.dtypes = kAllMask;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    // sample_inputs_mode (but its [3000] line, whose index ATen leaves undefined; see the top).
    s.push_back(Described({T(MakeTensor({S, S, S}, dtype, rng))}, " (dim -1 by default)"));
    s.push_back(Described({T(SmallInts({S, S, S}, dtype, rng)), Arg::Int(1)}, " (ties)"));
    s.push_back(
        Described({T(SmallInts({S, S, S}, dtype, rng)), Arg::Int(1), Arg::Bool(true)}, " (ties)"));
    s.push_back(Described({T(MakeTensor({}, dtype, rng))}));
    s.push_back(Described({T(MakeTensor({}, dtype, rng)), Arg::Int(0)}));
    s.push_back(Described({T(MakeTensor({}, dtype, rng)), Arg::Int(0), Arg::Bool(true)}));
    s.push_back(Described({T(MakeTensor({}, dtype, rng)), Arg::Int(-1), Arg::Bool(false)}));
    // Ties in lines of 12 and 16 (the longest whose index ATen defines), strided too.
    s.push_back(Described({T(SmallInts({4, 12}, dtype, rng)), Arg::Int(1)}, " (ties)"));
    s.push_back(Described({T(SmallInts({12, 4}, dtype, rng, -1, 1)), Arg::Int(0), Arg::Bool(true)},
                          " (ties, strided)"));
    s.push_back(Described({T(SmallInts({3, 16}, dtype, rng, 0, 3)), Arg::Int(-1)}, " (ties)"));
    s.push_back(Described({T(SmallInts({2, 3, 4}, dtype, rng)), Arg::Int(1), Arg::Bool(false)},
                          " (ties, a middle dim)"));
    s.push_back(Described({T(MakeTensor({0, 3}, dtype, rng)), Arg::Int(1)}, " (no lines)"));
    if (dtype != TSR_DTYPE_BOOL) {
      // A long line of distinct values: its smallest, found once.
      s.push_back(Described({T(Distinct({200}, dtype, rng))}, " (distinct)"));
      s.push_back(Described({T(Distinct({3, 7}, dtype, rng)), Arg::Int(1)}, " (distinct)"));
      // Equally frequent values: the smallest, at its last position (1 at 3, 0 at 5, 3 at 5,
      // 5 at 4).
      const std::vector<Line> rows = {{1, 2, 2, 1, 3, 4, 6},
                                      {5, 5, 5, 0, 0, 0, 7},
                                      {3, 4, 4, 3, 4, 3, 6},
                                      {9, 8, 7, 6, 5, 10, 11}};
      for (int64_t dim : {1, 0}) {
        s.push_back(
            Described({T(LinesOf(dtype, rows, dim)), Arg::Int(dim)}, " (equally frequent values)"));
      }
    } else {
      // False and True equally frequent: False, at its last position; else the more frequent.
      const std::vector<Line> rows = {{1, 0, 1, 0}, {1, 1, 0, 1}, {0, 0, 1, 0}, {0, 1, 1, 0}};
      for (int64_t dim : {1, 0}) {
        s.push_back(
            Described({T(LinesOf(dtype, rows, dim)), Arg::Int(dim)}, " (equally frequent values)"));
      }
    }
    if (IsFloating(dtype)) {
      // Infinities count as values (inf at 2; -inf at 3); no NaN.
      const std::vector<Line> rows = {{kInf, -kInf, kInf, 1}, {-kInf, 2, 2, -kInf}};
      s.push_back(Described({T(LinesOf(dtype, rows, 1)), Arg::Int(1)}, " (infinities)"));
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    return ReduceLines(s.args[0].tensor, IntAt(s, 1, -1), BoolAt(s, 2), ModeOf);
  };
  op.errors = [](Rng& rng) {
    return std::vector<ErrorInput>{
        Saying(Refused({T(F32({3, 0}, rng)), Arg::Int(1)}, TSR_OUT_OF_RANGE,
                       "a reduction over an empty dim"),
               "Expected reduction dim 1 to have non-zero size"),
        Saying(Refused({T(F32({0}, rng))}, TSR_OUT_OF_RANGE, "no elements"),
               "Expected reduction dim 0 to have non-zero size"),
        Saying(Refused({T(F32({3, 4}, rng)), Arg::Int(2)}, TSR_OUT_OF_RANGE, "dim 2 of a 2D input"),
               "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
        Saying(Refused({T(F32({}, rng)), Arg::Int(1)}, TSR_OUT_OF_RANGE, "dim 1 of a 0-dim input"),
               "Dimension out of range (expected to be in range of [-1, 0], but got 1)")};
  };
  return op;
}

// ---- cummax, cummin ----

// cummax / cummin(self, int dim) -> (values, indices), both of self's shape.
OpInfo CumExtremumOp(bool is_max) {
  OpInfo op;
  op.name = is_max ? "cummax" : "cummin";
  op.out = op.name + ".out";
  op.dtypes = kAllMask;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    // sample_inputs_cumulative_ops (supports_dtype_kwargs=False).
    s.push_back(Described({T(MakeTensor({S, S, S}, dtype, rng)), Arg::Int(0)}));
    s.push_back(Described({T(MakeTensor({S, S, S}, dtype, rng)), Arg::Int(1)}));
    s.push_back(Described({T(MakeTensor({}, dtype, rng)), Arg::Int(0)}));
    s.push_back(Described({T(MakeTensor({}, dtype, rng)), Arg::Int(-1)}));
    s.push_back(Described({T(MakeTensor({S, S, S}, dtype, rng)), Arg::Int(-1)}));
    s.push_back(Described({T(MakeTensor({0, 3}, dtype, rng)), Arg::Int(1)}, " (empty)"));
    s.push_back(Described({T(MakeTensor({3, 0}, dtype, rng)), Arg::Int(1)}, " (empty lines)"));
    s.push_back(Described({T(MakeTensor({2, 0}, dtype, rng)), Arg::Int(-2)}, " (empty)"));
    // Ties: the last index of an equal extremum.
    s.push_back(Described({T(SmallInts({4, 9}, dtype, rng)), Arg::Int(1)}, " (ties)"));
    s.push_back(
        Described({T(SmallInts({9, 4}, dtype, rng, -1, 1)), Arg::Int(0)}, " (ties, strided)"));
    if (IsFloating(dtype)) {
      // A NaN is kept from where it is met, each later NaN taking its index; infinities are
      // ordinary extremes; -0.0 and 0.0 are equal (the later one's index).
      const std::vector<Line> rows = {{1, kNan, 3, kNan, 5, 2},
                                      {kNan, -kInf, kInf, 1, kNan, 0},
                                      {kInf, kInf, -kInf, 2, 2, -kInf},
                                      {0.0, -0.0, 0.0, -1, 1, -0.0},
                                      {-kInf, -kInf, 3, kInf, -2, kNan}};
      for (int64_t dim : {1, 0}) {
        s.push_back(
            Described({T(LinesOf(dtype, rows, dim)), Arg::Int(dim)}, " (NaNs, infinities, -0.0)"));
      }
      s.push_back(Described({T(ExtremeTensor(dtype)), Arg::Int(0)}, " (extremes)"));
    }
    return s;
  };
  op.reference = [is_max](const Sample& s) {
    const HostTensor& in = s.args[0].tensor;
    return ScanLines(in, s.args[1].integer, /*with_indices=*/true, in.dtype,
                     [is_max](const Line& v, Line* values, std::vector<int64_t>* indices) {
                       CumExtremum(v, is_max, values, indices);
                     });
  };
  op.errors = [](Rng& rng) {
    return std::vector<ErrorInput>{
        Saying(Refused({T(F32({2, 3}, rng)), Arg::Int(2)}, TSR_OUT_OF_RANGE, "dim 2 of a 2D input"),
               "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
        Saying(
            Refused({T(F32({2, 3}, rng)), Arg::Int(-3)}, TSR_OUT_OF_RANGE, "dim -3 of a 2D input"),
            "Dimension out of range (expected to be in range of [-2, 1], but got -3)")};
  };
  return op;
}

// ---- logcumsumexp ----

// logcumsumexp(self, int dim) -> Tensor: log(cumsum(exp(self))), computed stably.
OpInfo Logcumsumexp() {
  OpInfo op;
  op.name = "logcumsumexp";
  op.out = "logcumsumexp.out";
  op.dtypes = kFloatingMask;
  op.tolerance_scale = 10;  // a running sum (ATen's in float for float16 and bfloat16)
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    // sample_inputs_logcumsumexp: with and without a large first slice (self[0] = 10000).
    for (bool large : {true, false}) {
      for (const auto& [shape, dim] :
           std::vector<std::pair<Shape, int64_t>>{{{S, S, S}, 0}, {{S, S, S}, 1}, {{}, 0}}) {
        HostTensor t = MakeTensor(shape, dtype, rng);
        if (large && !shape.empty()) {
          const int64_t slice = t.numel() / shape[0];
          for (int64_t k = 0; k < slice; ++k)
            t.values[static_cast<size_t>(k)] = RoundTo(dtype, 1e4);
        }
        s.push_back(Described({T(std::move(t)), Arg::Int(dim)}, large ? " (self[0] = 10000)" : ""));
      }
    }
    s.push_back(Described({T(MakeTensor({S, S, S}, dtype, rng)), Arg::Int(-1)}));
    s.push_back(Described({T(MakeTensor({}, dtype, rng)), Arg::Int(-1)}));
    s.push_back(Described({T(MakeTensor({7, 11}, dtype, rng)), Arg::Int(1)}));
    s.push_back(Described({T(MakeTensor({0, 3}, dtype, rng)), Arg::Int(1)}, " (empty)"));
    s.push_back(Described({T(MakeTensor({3, 0}, dtype, rng)), Arg::Int(1)}, " (empty lines)"));
    // -inf adds nothing (all -inf: -inf); +inf stays; NaN propagates; large values and their
    // differences do not overflow.
    const std::vector<Line> rows = {{-kInf, -kInf, 1, kInf, kInf, 2, kNan, 1},
                                    {kInf, -kInf, 2, -kInf, 3, 0, 1, 4},
                                    {-kInf, -kInf, -kInf, -kInf, -kInf, -kInf, -kInf, -kInf},
                                    {1e4, -1e4, 0, 1e4, 1, 2, 3, 4},
                                    {-1e4, -1e4, -2, -1e4, 3, -0.0, 0.0, -5}};
    for (int64_t dim : {1, 0}) {
      s.push_back(
          Described({T(LinesOf(dtype, rows, dim)), Arg::Int(dim)}, " (infinities, NaN, large)"));
    }
    s.push_back(Described({T(ExtremeTensor(dtype)), Arg::Int(0)}, " (extremes)"));
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& in = s.args[0].tensor;
    return ScanLines(in, s.args[1].integer, /*with_indices=*/false, in.dtype,
                     [](const Line& v, Line* values, std::vector<int64_t>*) {
                       long double acc = -std::numeric_limits<long double>::infinity();
                       for (double x : v) {
                         acc = LogAddExp(x, acc);
                         values->push_back(static_cast<double>(acc));
                       }
                     });
  };
  op.errors = [](Rng& rng) {
    return std::vector<ErrorInput>{
        // error_inputs_logcumsumexp
        Saying(Refused({T(F32({5, 2}, rng)), Arg::Int(3)}, TSR_OUT_OF_RANGE, "dim 3 of a 2D input"),
               "Dimension out of range (expected to be in range of [-2, 1], but got 3)"),
        Saying(Refused({T(F32({0, 2}, rng)), Arg::Int(3)}, TSR_OUT_OF_RANGE,
                       "dim 3 of an empty 2D input"),
               "Dimension out of range (expected to be in range of [-2, 1], but got 3)"),
        Saying(Refused({T(F32({}, rng)), Arg::Int(1)}, TSR_OUT_OF_RANGE, "dim 1 of a 0-dim input"),
               "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
        Saying(
            Refused({T(MakeTensor({3, 4}, TSR_DTYPE_INT64, rng)), Arg::Int(1)}, TSR_UNIMPLEMENTED,
                    "an int64 input (\"logcumsumexp_out_cpu\" not implemented for 'Long')"),
            "not implemented for dtype int64 (expected a floating dtype)"),
        Saying(Refused({T(MakeTensor({3, 4}, TSR_DTYPE_BOOL, rng)), Arg::Int(1)}, TSR_UNIMPLEMENTED,
                       "a bool input"),
               "not implemented for dtype bool (expected a floating dtype)")};
  };
  return op;
}

}  // namespace

void AddOrderStatisticOps(std::vector<OpInfo>& db) {
  db.push_back(Kthvalue());
  db.push_back(MedianAll(/*ignore_nan=*/false));
  db.push_back(MedianDim(/*ignore_nan=*/false));
  db.push_back(MedianAll(/*ignore_nan=*/true));
  db.push_back(MedianDim(/*ignore_nan=*/true));
  db.push_back(Mode());
  db.push_back(CumExtremumOp(/*is_max=*/true));
  db.push_back(CumExtremumOp(/*is_max=*/false));
  db.push_back(Logcumsumexp());
}

}  // namespace conformance
}  // namespace tessera
