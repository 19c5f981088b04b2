// The reductions op set 1.8 adds as composites (dispatcher/ops/reduction_composites.cc): nansum,
// count_nonzero (both overloads), aminmax, var_mean and std_mean (their correction overloads).
//
// Semantics are PyTorch's CPU ones: aten/src/ATen/native/ReduceOps.cpp (nansum, var_mean,
// std_mean, the aminmax meta function), TensorAdvancedIndexing.cpp (count_nonzero) and
// cpu/TensorCompareKernel.cpp, cpu/ReduceAllOpsKernel.cpp (aminmax's NaN handling). Samples follow
// the OpInfo reduction samples of torch/testing/_internal (_generate_reduction_inputs and
// _generate_reduction_kwargs, sample_inputs_aminmax, sample_inputs_std_var). The references group
// each output element's inputs and fold them in long double, independently of any plugin.
#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "conformance/op_db.h"
#include "conformance/op_db_helpers.h"
#include "conformance/reduction_reference.h"

namespace tessera {
namespace conformance {
namespace {

// nansum: NaN inputs count as 0, but an inf - inf met on the way is a NaN like any other sum's.
double NanSumOf(const std::vector<double>& v) {
  long double s = 0;
  for (double x : v) s += std::isnan(x) ? 0 : x;
  return static_cast<double>(s);
}

// count_nonzero counts x != 0: NaN counts, -0.0 does not.
double NonzeroCountOf(const std::vector<double>& v) {
  return static_cast<double>(std::count_if(v.begin(), v.end(), [](double x) { return x != 0; }));
}

// The min (or max) of a group; a NaN anywhere makes both NaN (PyTorch's aminmax kernels stop at
// the first NaN and return it for both).
double ExtremeOf(const std::vector<double>& v, bool max) {
  if (v.empty()) return NAN;  // unreachable: samples never reduce over an empty dim
  double best = v.front();
  for (double x : v) {
    if (std::isnan(x)) return x;
    if (max ? x > best : x < best) best = x;
  }
  return best;
}

// Arguments a sample leaves out take their schema defaults (None, keepdim=False), as the
// oracles' out= calls fill them in (Given).
std::vector<int64_t> DimsAt(const Sample& s, size_t i) {
  if (!Given(s, i)) return {};
  const Arg& a = s.args[i];
  return a.kind == Arg::Kind::kInt ? std::vector<int64_t>{a.integer} : a.ints;
}
bool KeepdimAt(const Sample& s, size_t i) { return Given(s, i) && s.args[i].boolean; }

// A reduction case; `dims` nullopt is dim=None.
struct Case {
  std::vector<int64_t> shape;
  std::optional<std::vector<int64_t>> dims;
  bool keepdim = false;

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return n;
  }
  bool single() const { return !dims || dims->size() == 1; }
  // Whether every reduced dim has elements (what aminmax requires).
  bool nonempty_reduction() const {
    if (!dims) return numel() > 0;
    for (int64_t d : *dims) {
      const int64_t nd = static_cast<int64_t>(shape.size());
      if (nd > 0 && shape[static_cast<size_t>(d < 0 ? d + nd : d)] == 0) return false;
    }
    return true;
  }
  Arg DimArg() const { return dims ? Arg::Int(dims->front()) : Arg::None(); }
  Arg DimsArg() const { return dims ? Arg::Ints(*dims) : Arg::None(); }
  std::string Desc(bool with_keepdim = true) const {
    return ShapeString(shape) + " dim " + (dims ? ShapeString(*dims) : "None") +
           (with_keepdim && keepdim ? " keepdim" : "");
  }
};

// PyTorch's reduction samples (opinfo/core.py): inputs 0-dim, [2], [3, 5] and [3, 2, 1, 2], each
// with dim None, 0 (keepdim), -1, the middle dim (keepdim), all dims as a list ([] for the 0-dim
// input), (0, -1) (keepdim) and every other dim from 1; then empty inputs: [0] whole, [4, 0] over
// its empty dim, and [0, 3] over its non-empty dim (an empty result).
const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = [] {
    std::vector<Case> c;
    for (const std::vector<int64_t>& shape :
         std::vector<std::vector<int64_t>>{{}, {2}, {3, 5}, {3, 2, 1, 2}}) {
      const int64_t nd = static_cast<int64_t>(shape.size());
      c.push_back({shape, std::nullopt, false});
      c.push_back({shape, std::vector<int64_t>{0}, true});
      c.push_back({shape, std::vector<int64_t>{-1}, false});
      if (nd > 2) c.push_back({shape, std::vector<int64_t>{nd / 2}, true});
      std::vector<int64_t> all;
      for (int64_t d = 0; d < nd; ++d) all.push_back(d);
      c.push_back({shape, all, false});
      if (nd > 1) c.push_back({shape, std::vector<int64_t>{0, -1}, true});
      if (nd > 3) c.push_back({shape, std::vector<int64_t>{1, 3}, false});
    }
    c.push_back({{0}, std::nullopt, false});
    c.push_back({{4, 0}, std::vector<int64_t>{1}, false});
    c.push_back({{0, 3}, std::vector<int64_t>{1}, true});
    return c;
  }();
  return cases;
}

// RowsAlong: `rows` as the lines along `dim` of a 2D tensor: dim 1 gives a [rows, len] tensor,
// dim 0 the same lines as the columns of a [len, rows] one (lines a kernel walks strided).
HostTensor RowsAlong(tsr_dtype dtype, const std::vector<std::vector<double>>& rows, int64_t dim) {
  const int64_t n = static_cast<int64_t>(rows.size()), len = static_cast<int64_t>(rows[0].size());
  HostTensor t;
  t.dtype = dtype;
  t.shape = dim == 1 ? std::vector<int64_t>{n, len} : std::vector<int64_t>{len, n};
  t.values.resize(static_cast<size_t>(n * len));
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t k = 0; k < len; ++k) {
      t.values[static_cast<size_t>(dim == 1 ? r * len + k : k * n + r)] =
          RoundTo(dtype, rows[static_cast<size_t>(r)][static_cast<size_t>(k)]);
    }
  }
  return t;
}

// WithZeros: count_nonzero's inputs with about a third of their elements zero (random floating
// values never are), some of them -0.0 (zero too), and in floating types some NaN (not zero).
HostTensor WithZeros(HostTensor t, Rng& rng) {
  std::uniform_int_distribution<int> pick(0, 8);
  for (double& v : t.values) {
    const int k = pick(rng);
    if (k < 2) v = 0;
    if (k == 2) v = IsFloating(t.dtype) ? -0.0 : 0;
    if (k == 3 && IsFloating(t.dtype)) v = NAN;
  }
  return t;
}

ErrorInput Refused(std::vector<Arg> args, std::string desc, tsr_code code, std::string what) {
  return {{std::move(args), std::move(desc)}, code, std::move(what)};
}

HostTensor F32(std::vector<int64_t> shape, Rng& rng) {
  return MakeTensor(std::move(shape), TSR_DTYPE_FLOAT32, rng);
}

OpInfo NanSum() {
  OpInfo op;
  op.name = "nansum";
  op.out = "nansum.out";
  op.dtypes = kAllMask;  // integers and bool go through sum (and widen to int64 as it does)
  op.tolerance_scale = 10;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    for (const Case& c : Cases()) {
      s.push_back({{Arg::Tensor(MakeTensor(c.shape, dtype, rng)), c.DimsArg(), Arg::Bool(c.keepdim),
                    Arg::None()},
                   c.Desc()});
    }
    // dtype= converts the input before summing, for every input dtype.
    s.push_back({{Arg::Tensor(MakeTensor({3, 5}, dtype, rng)), Arg::Ints({1}), Arg::Bool(false),
                  Arg::Dtype(TSR_DTYPE_FLOAT64)},
                 "[3, 5] dim [1] dtype float64"});
    s.push_back({{Arg::Tensor(MakeTensor({3, 5}, dtype, rng))}, "[3, 5] defaults"});
    if (IsFloating(dtype)) {
      // NaN is skipped (a line of NaN sums to 0), inf is not, and inf + -inf is NaN.
      const std::vector<std::vector<double>> rows = {{NAN, 1.5, -2, 3},
                                                     {NAN, NAN, NAN, NAN},
                                                     {INFINITY, NAN, 1, -2},
                                                     {INFINITY, -INFINITY, NAN, 1},
                                                     {1, 2, 3, 4}};
      for (int64_t dim : {1, 0}) {
        s.push_back({{Arg::Tensor(RowsAlong(dtype, rows, dim)), Arg::Ints({dim}), Arg::Bool(false),
                      Arg::None()},
                     "lines with nan, all nan, inf, inf and -inf, dim " + std::to_string(dim)});
      }
      s.push_back({{Arg::Tensor(RowsAlong(dtype, {rows[0], rows[1], rows[4]}, 1)), Arg::None(),
                    Arg::Bool(true), Arg::None()},
                   "nan and all nan lines, dim None keepdim"});
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& in = s.args[0].tensor;
    const tsr_dtype dtype = Given(s, 3)                  ? s.args[3].dtype
                            : IsIntegral(in.dtype, true) ? TSR_DTYPE_INT64
                                                         : in.dtype;
    return std::vector<HostTensor>{
        FoldTo(GroupBy(in, DimsAt(s, 1), KeepdimAt(s, 2)), dtype, NanSumOf)};
  };
  op.errors = [](Rng& rng) {
    return std::vector<ErrorInput>{
        Saying(Refused({Arg::Tensor(F32({2, 3}, rng)), Arg::Ints({2}), Arg::Bool(false)},
                       "[2, 3] dim [2]", TSR_OUT_OF_RANGE, "a dim out of range"),
               "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
        Saying(Refused({Arg::Tensor(F32({2, 3}, rng)), Arg::Ints({0, -2}), Arg::Bool(false)},
                       "[2, 3] dim [0, -2]", TSR_INVALID_ARGUMENT, "a dim given twice"),
               "dim 0 appears multiple times in the list of dims"),
        // PyTorch's nansum kernel exists for floating types only; integer inputs take sum's.
        Saying(Refused({Arg::Tensor(F32({2, 3}, rng)), Arg::None(), Arg::Bool(false),
                        Arg::Dtype(TSR_DTYPE_INT64)},
                       "float32 [2, 3] dtype int64", TSR_INVALID_ARGUMENT,
                       "a floating input summed in an integer dtype"),
               "expected a floating dtype to sum a float32 tensor in, got int64")};
  };
  return op;
}

// count_nonzero.dim_IntList (dim=[] counts all) or count_nonzero (int? dim); int64 for every
// input dtype, no keepdim.
OpInfo CountNonzero(bool dim_list) {
  OpInfo op;
  op.name = dim_list ? "count_nonzero.dim_IntList" : "count_nonzero";
  op.out = dim_list ? "count_nonzero.dim_IntList_out" : "count_nonzero.out";
  op.dtypes = kAllMask;
  op.samples = [dim_list](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    std::set<std::string> seen;  // cases that differ in keepdim only are one case here
    for (const Case& c : Cases()) {
      if (dim_list ? !c.dims : !c.single()) continue;
      if (!seen.insert(c.Desc(false)).second) continue;
      s.push_back({{Arg::Tensor(WithZeros(MakeTensor(c.shape, dtype, rng), rng)),
                    dim_list ? c.DimsArg() : c.DimArg()},
                   c.Desc(false)});
    }
    if (!dim_list) s.push_back({{Arg::Tensor(MakeTensor({3, 5}, dtype, rng))}, "[3, 5] defaults"});
    if (IsFloating(dtype)) {  // inf, -inf, NaN, tiny (a subnormal in float16) count; -0.0 not
      s.push_back({{Arg::Tensor(ExtremeTensor(dtype)), dim_list ? Arg::Ints({0}) : Arg::Int(0)},
                   "extremes dim 0"});
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    return std::vector<HostTensor>{
        FoldTo(GroupBy(s.args[0].tensor, DimsAt(s, 1), false), TSR_DTYPE_INT64, NonzeroCountOf)};
  };
  op.errors = [dim_list](Rng& rng) {
    std::vector<ErrorInput> e;
    e.push_back(
        Saying(Refused({Arg::Tensor(F32({2, 3}, rng)), dim_list ? Arg::Ints({2}) : Arg::Int(2)},
                       "[2, 3] dim 2", TSR_OUT_OF_RANGE, "a dim out of range"),
               "Dimension out of range (expected to be in range of [-2, 1], but got 2)"));
    e.push_back(
        Saying(Refused({Arg::Tensor(F32({}, rng)), dim_list ? Arg::Ints({1}) : Arg::Int(1)},
                       "[] dim 1", TSR_OUT_OF_RANGE, "a dim other than 0 or -1 of a 0-dim input"),
               "Dimension out of range (expected to be in range of [-1, 0], but got 1)"));
    if (dim_list) {
      e.push_back(Saying(Refused({Arg::Tensor(F32({2, 3}, rng)), Arg::Ints({1, -1})},
                                 "[2, 3] dim [1, -1]", TSR_INVALID_ARGUMENT, "a dim given twice"),
                         "dim 1 appears multiple times in the list of dims"));
    }
    return e;
  };
  return op;
}

// aminmax(self, *, dim=None, keepdim=False) -> (min, max), both of self's dtype (bool included).
OpInfo Aminmax() {
  OpInfo op;
  op.name = "aminmax";
  op.out = "aminmax.out";
  op.dtypes = kAllMask;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    for (const Case& c : Cases()) {
      if (!c.single() || !c.nonempty_reduction()) continue;  // those are error inputs
      s.push_back({{Arg::Tensor(MakeTensor(c.shape, dtype, rng)), c.DimArg(), Arg::Bool(c.keepdim)},
                   c.Desc()});
    }
    s.push_back({{Arg::Tensor(MakeTensor({3, 5}, dtype, rng))}, "[3, 5] defaults"});
    if (IsFloating(dtype)) {
      // A NaN first, last or in between makes both NaN; infinities are ordinary extremes.
      const std::vector<std::vector<double>> rows = {{NAN, 1, 2, 3},
                                                     {1, 2, 3, NAN},
                                                     {4, NAN, -5, 7},
                                                     {INFINITY, -INFINITY, 0, 1},
                                                     {-0.0, 2, -3, 0.5}};
      for (int64_t dim : {1, 0}) {
        s.push_back(
            {{Arg::Tensor(RowsAlong(dtype, rows, dim)), Arg::Int(dim), Arg::Bool(false)},
             "lines with nan first, last, between, and infinities, dim " + std::to_string(dim)});
      }
      // dim=None takes PyTorch's separate all-reduce kernel: with a NaN, and with infinities.
      s.push_back({{Arg::Tensor(RowsAlong(dtype, rows, 1)), Arg::None(), Arg::Bool(true)},
                   "lines with nan, dim None keepdim"});
      s.push_back(
          {{Arg::Tensor(RowsAlong(dtype, {rows[3], rows[4]}, 1)), Arg::None(), Arg::Bool(false)},
           "lines with infinities, dim None"});
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& in = s.args[0].tensor;
    const Groups g = GroupBy(in, DimsAt(s, 1), KeepdimAt(s, 2));
    return std::vector<HostTensor>{
        FoldTo(g, in.dtype, [](const std::vector<double>& v) { return ExtremeOf(v, false); }),
        FoldTo(g, in.dtype, [](const std::vector<double>& v) { return ExtremeOf(v, true); })};
  };
  op.errors = [](Rng& rng) {
    return std::vector<ErrorInput>{
        Saying(
            Refused({Arg::Tensor(F32({0}, rng)), Arg::None(), Arg::Bool(false)}, "[0] dim None",
                    TSR_INVALID_ARGUMENT, "no elements and no dim (min and max have no identity)"),
            "cannot compute aminmax over an empty dimension as the operation has no identity"),
        // PyTorch raises IndexError here (zero_numel_check_dims); Tessera's reductions give
        // INVALID_ARGUMENT for an empty reduced dim (amax, max.dim, argmax), and so does this.
        Saying(Refused({Arg::Tensor(F32({3, 0}, rng)), Arg::Int(1), Arg::Bool(false)},
                       "[3, 0] dim 1", TSR_INVALID_ARGUMENT, "a reduction over an empty dim"),
               "expected reduction dim 1 to have non-zero size (input shape [3, 0])"),
        Saying(Refused({Arg::Tensor(F32({2, 3}, rng)), Arg::Int(2), Arg::Bool(false)},
                       "[2, 3] dim 2", TSR_OUT_OF_RANGE, "a dim out of range"),
               "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
        Saying(Refused({Arg::Tensor(F32({}, rng)), Arg::Int(1), Arg::Bool(false)}, "[] dim 1",
                       TSR_OUT_OF_RANGE, "a dim other than 0 or -1 of a 0-dim input"),
               "Dimension out of range (expected to be in range of [-1, 0], but got 1)")};
  };
  return op;
}

// var_mean.correction / std_mean.correction(self, dim=None, *, correction=None, keepdim=False)
// -> (var or std, mean); floating types only; correction None is 1.
OpInfo MomentsAndMean(bool is_std) {
  OpInfo op;
  op.name = is_std ? "std_mean.correction" : "var_mean.correction";
  op.out = is_std ? "std_mean.correction_out" : "var_mean.correction_out";
  op.dtypes = kFloatingMask;
  op.tolerance_scale = 10;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    // PyTorch's sample_inputs_std_var corrections (default, 0, fractional, negative, 1, more),
    // taken in turn, in an order that leaves most of the cases degrees of freedom.
    const Arg corrections[] = {Arg::None(),        Arg::ScalarInt(0), Arg::ScalarDouble(1.3),
                               Arg::ScalarInt(-1), Arg::ScalarInt(1), Arg::ScalarInt(2)};
    std::vector<Sample> s;
    size_t i = 0;
    for (const Case& c : Cases()) {
      const Arg& correction = corrections[i++ % 6];
      s.push_back({{Arg::Tensor(MakeTensor(c.shape, dtype, rng)), c.DimsArg(), correction,
                    Arg::Bool(c.keepdim)},
                   c.Desc() + " correction " + correction.ToString()});
    }
    // No degrees of freedom: 0 / 0 (one element) is NaN, m2 / 0 is inf; no elements: NaN even
    // where N - correction is positive.
    const auto add = [&](std::vector<int64_t> shape, Arg dims, Arg correction, std::string desc) {
      s.push_back({{Arg::Tensor(MakeTensor(std::move(shape), dtype, rng)), std::move(dims),
                    std::move(correction), Arg::Bool(false)},
                   std::move(desc)});
    };
    add({}, Arg::None(), Arg::ScalarInt(0), "[] correction 0");
    add({}, Arg::None(), Arg::ScalarInt(1), "[] correction 1 (nan)");
    add({2}, Arg::None(), Arg::ScalarInt(2), "[2] correction 2 (inf)");
    add({0, 3}, Arg::Ints({0}), Arg::ScalarInt(-1), "[0, 3] dim [0] correction -1 (nan)");
    add({3, 4, 5}, Arg::Ints({-3}), Arg::None(), "[3, 4, 5] dim [-3]");
    s.push_back({{Arg::Tensor(MakeTensor({3, 5}, dtype, rng))}, "[3, 5] defaults"});
    return s;
  };
  op.reference = [is_std](const Sample& s) {
    const HostTensor& in = s.args[0].tensor;
    const double correction = Given(s, 2) ? s.args[2].number : 1;
    const Groups g = GroupBy(in, DimsAt(s, 1), KeepdimAt(s, 3));
    return std::vector<HostTensor>{FoldTo(g, in.dtype,
                                          [&](const std::vector<double>& v) {
                                            const double var = VarianceOf(v, correction);
                                            return is_std ? std::sqrt(var) : var;
                                          }),
                                   FoldTo(g, in.dtype, MeanOf)};
  };
  op.errors = [](Rng& rng) {
    return std::vector<ErrorInput>{
        Saying(Refused({Arg::Tensor(MakeTensor({3}, TSR_DTYPE_INT32, rng))}, "int32 [3]",
                       TSR_INVALID_ARGUMENT, "an integer input"),
               "expected a floating point input or dtype, got int32"),
        Saying(Refused({Arg::Tensor(MakeTensor({3}, TSR_DTYPE_BOOL, rng))}, "bool [3]",
                       TSR_INVALID_ARGUMENT, "a bool input"),
               "expected a floating point input or dtype, got bool"),
        Saying(
            Refused({Arg::Tensor(F32({2, 3}, rng)), Arg::Ints({2}), Arg::None(), Arg::Bool(false)},
                    "[2, 3] dim [2]", TSR_OUT_OF_RANGE, "a dim out of range"),
            "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
        Saying(Refused({Arg::Tensor(F32({2, 3}, rng)), Arg::Ints({1, -1}), Arg::None(),
                        Arg::Bool(false)},
                       "[2, 3] dim [1, -1]", TSR_INVALID_ARGUMENT, "a dim given twice"),
               "dim 1 appears multiple times in the list of dims")};
  };
  return op;
}

}  // namespace

void AddReductionCompositeOps(std::vector<OpInfo>& db) {
  db.push_back(NanSum());
  db.push_back(CountNonzero(/*dim_list=*/true));
  db.push_back(CountNonzero(/*dim_list=*/false));
  db.push_back(Aminmax());
  db.push_back(MomentsAndMean(/*is_std=*/false));
  db.push_back(MomentsAndMean(/*is_std=*/true));
}

}  // namespace conformance
}  // namespace tessera
