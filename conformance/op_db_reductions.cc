// Reductions, scans and softmax. The reference folds each output's elements in double (long
// double for sums), so it is independent of any plugin's summation order.
#include <algorithm>
#include <cmath>
#include <limits>

#include "conformance/op_db.h"
#include "conformance/op_db_helpers.h"

namespace tessera {
namespace conformance {
namespace {

using Fold = std::function<std::vector<double>(const std::vector<double>&)>;

// Integer products wrap modulo 2^64 like the int64 they are computed in.
double WrappingProduct(const std::vector<double>& v) {
  uint64_t p = 1;
  for (double x : v) p *= static_cast<uint64_t>(static_cast<int64_t>(x));
  return static_cast<double>(static_cast<int64_t>(p));
}

std::vector<bool> ReducedDims(int64_t ndim, const std::vector<int64_t>& dims) {
  std::vector<bool> r(static_cast<size_t>(ndim), dims.empty());
  for (int64_t d : dims) {
    if (ndim > 0) r[static_cast<size_t>(d < 0 ? d + ndim : d)] = true;
  }
  return r;
}

// Reduce folds the values of each output position (over the reduced dims, in row-major
// order) with `fold`, which returns one value per output tensor.
std::vector<HostTensor> Reduce(const HostTensor& in, const std::vector<int64_t>& dims, bool keepdim,
                               const std::vector<tsr_dtype>& dtypes, const Fold& fold) {
  const int64_t nd = in.dim();
  const std::vector<bool> reduced = ReducedDims(nd, dims);
  std::vector<int64_t> out_shape, kept;
  for (int64_t d = 0; d < nd; ++d) {
    if (!reduced[d]) {
      out_shape.push_back(in.shape[d]);
      kept.push_back(d);
    } else if (keepdim) {
      out_shape.push_back(1);
    }
  }
  std::vector<HostTensor> outs(dtypes.size());
  int64_t count = 1;
  for (int64_t s : out_shape) count *= s;
  for (size_t k = 0; k < dtypes.size(); ++k) {
    outs[k].dtype = dtypes[k];
    outs[k].shape = out_shape;
    outs[k].values.resize(static_cast<size_t>(count));
  }
  std::vector<std::vector<double>> groups(static_cast<size_t>(count));
  std::vector<int64_t> index(static_cast<size_t>(nd), 0);
  for (int64_t flat = 0; flat < in.numel(); ++flat) {
    int64_t rest = flat;
    for (int64_t d = nd - 1; d >= 0; --d) {
      index[d] = rest % in.shape[d];
      rest /= in.shape[d];
    }
    int64_t o = 0;
    for (int64_t d : kept) o = o * in.shape[d] + index[d];
    groups[static_cast<size_t>(o)].push_back(in.values[static_cast<size_t>(flat)]);
  }
  for (int64_t o = 0; o < count; ++o) {
    const std::vector<double> r = fold(groups[static_cast<size_t>(o)]);
    for (size_t k = 0; k < dtypes.size(); ++k) {
      outs[k].values[static_cast<size_t>(o)] = RoundTo(dtypes[k], r[k]);
    }
  }
  return outs;
}

double SumOf(const std::vector<double>& v) {
  long double s = 0;
  for (double x : v) s += x;
  return static_cast<double>(s);
}

tsr_dtype SumDtype(tsr_dtype in) { return IsIntegral(in, true) ? TSR_DTYPE_INT64 : in; }

// Index of the max (kMax) or min, first occurrence; NaN counts as the extreme.
std::vector<double> Extremum(const std::vector<double>& v, bool max) {
  size_t best = 0;
  for (size_t i = 1; i < v.size(); ++i) {
    if (std::isnan(v[best])) break;
    if (std::isnan(v[i]) || (max ? v[i] > v[best] : v[i] < v[best])) best = i;
  }
  return {v[best], static_cast<double>(best)};
}

struct DimCase {
  std::vector<int64_t> shape;
  std::vector<int64_t> dims;  // empty: all
  bool keepdim;
};

const std::vector<DimCase>& DimCases() {
  static const std::vector<DimCase> cases = {
      {{}, {}, false},      {{5}, {0}, false},           {{7, 11}, {1}, false},
      {{7, 11}, {0}, true}, {{13, 1, 5}, {0, 2}, false}, {{13, 1, 5}, {-1}, true},
      {{4, 0}, {1}, false}, {{2, 3, 5}, {}, false}};
  return cases;
}

std::string CaseDesc(const DimCase& c) {
  return ShapeString(c.shape) + " dim " + ShapeString(c.dims) + (c.keepdim ? " keepdim" : "");
}

MakeOptions Small(tsr_dtype dtype) {
  MakeOptions o;
  if (IsFloating(dtype)) {  // keep products and exponentials finite
    o.low = -2;
    o.high = 2;
  }
  return o;
}

// Ops over a dim list with keepdim: name(self, dim, keepdim[, extras]).
void AddDimReduction(std::vector<OpInfo>& db, const std::string& name, const std::string& out,
                     DtypeMask dtypes, bool nonempty, std::function<tsr_dtype(tsr_dtype)> out_dtype,
                     Fold fold, double tolerance = 1, bool single_dim = false,
                     std::vector<Arg> extra = {}) {
  OpInfo op;
  op.name = name;
  op.out = out;
  op.dtypes = dtypes;
  op.tolerance_scale = tolerance;
  op.samples = [=](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> samples;
    for (const DimCase& c : DimCases()) {
      if (single_dim && c.dims.size() != 1) continue;
      if (nonempty && c.shape.size() == 2 && c.shape[1] == 0) continue;
      std::vector<Arg> args{Arg::Tensor(MakeTensor(c.shape, dtype, rng, Small(dtype)))};
      if (single_dim) {
        args.push_back(Arg::Int(c.dims[0]));
      } else {
        args.push_back(Arg::Ints(c.dims));
      }
      args.push_back(Arg::Bool(c.keepdim));
      for (const Arg& e : extra) args.push_back(e);
      samples.push_back({args, CaseDesc(c)});
    }
    return samples;
  };
  op.reference = [=](const Sample& s) {
    const HostTensor& in = s.args[0].tensor;
    const std::vector<int64_t> dims =
        single_dim ? std::vector<int64_t>{s.args[1].integer} : s.args[1].ints;
    return Reduce(in, dims, s.args[2].boolean, {out_dtype(in.dtype)}, fold);
  };
  op.errors = [name, single_dim](Rng& rng) {
    std::vector<Arg> args{Arg::Tensor(MakeTensor({2, 3}, TSR_DTYPE_FLOAT32, rng))};
    args.push_back(single_dim ? Arg::Int(2) : Arg::Ints({2}));
    args.push_back(Arg::Bool(false));
    return std::vector<ErrorInput>{
        Saying({{args, "dim 2 of a 2D tensor"}, TSR_OUT_OF_RANGE, "a dim out of range"},
               "Dimension out of range (expected to be in range of [-2, 1], but got 2)")};
  };
  db.push_back(std::move(op));
}

// Ops over all elements: name(self) (and sum/mean/prod with dtype=None).
void AddFullReduction(std::vector<OpInfo>& db, const std::string& name, const std::string& out,
                      DtypeMask dtypes, bool nonempty,
                      std::function<tsr_dtype(tsr_dtype)> out_dtype, Fold fold,
                      double tolerance = 1) {
  OpInfo op;
  op.name = name;
  op.out = out;
  op.dtypes = dtypes;
  op.tolerance_scale = tolerance;
  op.samples = [=](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> samples;
    for (const auto& shape : std::vector<std::vector<int64_t>>{{}, {5}, {7, 11}, {0}, {3, 0}}) {
      if (nonempty && (shape == std::vector<int64_t>{0} || (shape.size() == 2 && shape[1] == 0))) {
        continue;
      }
      samples.push_back(
          {{Arg::Tensor(MakeTensor(shape, dtype, rng, Small(dtype)))}, ShapeString(shape)});
    }
    if (IsFloating(dtype) && name != "prod") {
      samples.push_back({{Arg::Tensor(ExtremeTensor(dtype))}, "extremes"});
    }
    return samples;
  };
  op.reference = [=](const Sample& s) {
    return Reduce(s.args[0].tensor, {}, false, {out_dtype(s.args[0].tensor.dtype)}, fold);
  };
  if (nonempty) {
    op.errors = [](Rng&) {
      return std::vector<ErrorInput>{
          Saying({{{Arg::Tensor(Full({0}, TSR_DTYPE_FLOAT32, 0))}, "[0]"},
                  TSR_INVALID_ARGUMENT,
                  "a reduction without identity over no elements"},
                 "expected reduction dim 0 to have non-zero size (input shape [0])")};
    };
  }
  db.push_back(std::move(op));
}

tsr_dtype Same(tsr_dtype d) { return d; }
tsr_dtype BoolLike(tsr_dtype d) { return d == TSR_DTYPE_UINT8 ? TSR_DTYPE_UINT8 : TSR_DTYPE_BOOL; }
tsr_dtype FloatOf(tsr_dtype d) { return IsFloating(d) ? d : TSR_DTYPE_FLOAT32; }

std::vector<double> Var(const std::vector<double>& v, double correction, bool sqrt_of) {
  long double mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<long double>(v.size());
  long double m2 = 0;
  for (double x : v) m2 += (x - mean) * (x - mean);
  const double var =
      static_cast<double>(m2) / std::max(0.0, static_cast<double>(v.size()) - correction);
  return {sqrt_of ? std::sqrt(var) : var};
}

}  // namespace

void AddReductionOps(std::vector<OpInfo>& db) {
  const Fold sum = [](const std::vector<double>& v) { return std::vector<double>{SumOf(v)}; };
  const Fold mean = [](const std::vector<double>& v) {
    return std::vector<double>{SumOf(v) / static_cast<double>(v.size())};
  };
  const Fold prod = [](const std::vector<double>& v) {
    bool integers = true;
    for (double x : v) integers = integers && x == std::floor(x) && std::fabs(x) < 1e15;
    long double p = 1;
    for (double x : v) p *= x;
    // Integer inputs multiply in int64 (wrapping); exact products below 2^53 agree either way.
    if (integers && std::fabs(static_cast<double>(p)) >= 9e15)
      return std::vector<double>{WrappingProduct(v)};
    return std::vector<double>{static_cast<double>(p)};
  };
  const Fold amax = [](const std::vector<double>& v) {
    return std::vector<double>{Extremum(v, true)[0]};
  };
  const Fold amin = [](const std::vector<double>& v) {
    return std::vector<double>{Extremum(v, false)[0]};
  };
  const Fold any = [](const std::vector<double>& v) {
    return std::vector<double>{
        static_cast<double>(std::any_of(v.begin(), v.end(), [](double x) { return x != 0; }))};
  };
  const Fold all = [](const std::vector<double>& v) {
    return std::vector<double>{
        static_cast<double>(std::all_of(v.begin(), v.end(), [](double x) { return x != 0; }))};
  };
  const Fold logsumexp = [](const std::vector<double>& v) {
    double m = -std::numeric_limits<double>::infinity();
    for (double x : v) m = std::isnan(x) ? x : std::max(m, x);
    if (std::isnan(m)) return std::vector<double>{m};
    if (std::isinf(m)) return std::vector<double>{m};
    long double s = 0;
    for (double x : v) s += std::exp(x - m);
    return std::vector<double>{m + std::log(static_cast<double>(s))};
  };

  AddFullReduction(db, "sum", "sum.out", kAllMask, false, SumDtype, sum, 10);
  AddDimReduction(db, "sum.dim_IntList", "sum.IntList_out", kAllMask, false, SumDtype, sum, 10);
  AddFullReduction(db, "mean", "mean.dtype_out", kFloatingMask, false, Same, mean, 10);
  AddDimReduction(db, "mean.dim", "mean.out", kFloatingMask, false, Same, mean, 10);
  AddFullReduction(db, "prod", "prod.out", kAllMask, false, SumDtype, prod, 10);
  AddDimReduction(db, "prod.dim_int", "prod.int_out", kAllMask, false, SumDtype, prod, 10, true);
  AddDimReduction(db, "amax", "amax.out", kAllMask, true, Same, amax);
  AddDimReduction(db, "amin", "amin.out", kAllMask, true, Same, amin);
  AddFullReduction(db, "max", "max.unary_out", kAllMask, true, Same, amax);
  AddFullReduction(db, "min", "min.unary_out", kAllMask, true, Same, amin);
  AddFullReduction(db, "any", "any.all_out", kAllMask, false, BoolLike, any);
  AddFullReduction(db, "all", "all.all_out", kAllMask, false, BoolLike, all);
  AddDimReduction(db, "any.dim", "any.out", kAllMask, false, BoolLike, any, 1, true);
  AddDimReduction(db, "all.dim", "all.out", kAllMask, false, BoolLike, all, 1, true);
  AddDimReduction(db, "logsumexp", "logsumexp.out", kAllMask, false, FloatOf, logsumexp, 10);

  // max.dim / min.dim: values and the first index of the extreme.
  for (bool is_max : {true, false}) {
    OpInfo op;
    op.name = is_max ? "max.dim" : "min.dim";
    op.out = is_max ? "max.dim_max" : "min.dim_min";
    op.dtypes = kAllMask;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> samples;
      for (const DimCase& c : DimCases()) {
        if (c.dims.size() != 1 || (c.shape.size() == 2 && c.shape[1] == 0)) continue;
        samples.push_back({{Arg::Tensor(MakeTensor(c.shape, dtype, rng)), Arg::Int(c.dims[0]),
                            Arg::Bool(c.keepdim)},
                           CaseDesc(c)});
      }
      return samples;
    };
    op.reference = [is_max](const Sample& s) {
      return Reduce(s.args[0].tensor, {s.args[1].integer}, s.args[2].boolean,
                    {s.args[0].tensor.dtype, TSR_DTYPE_INT64},
                    [is_max](const std::vector<double>& v) { return Extremum(v, is_max); });
    };
    db.push_back(std::move(op));
  }
  // argmax / argmin over one dim or all (dim=None).
  for (bool is_max : {true, false}) {
    OpInfo op;
    op.name = is_max ? "argmax" : "argmin";
    op.out = op.name + ".out";
    op.dtypes = kNumericMask;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> samples;
      samples.push_back(
          {{Arg::Tensor(MakeTensor({7, 11}, dtype, rng)), Arg::None(), Arg::Bool(false)},
           "[7, 11] dim None"});
      samples.push_back(
          {{Arg::Tensor(MakeTensor({7, 11}, dtype, rng)), Arg::Int(1), Arg::Bool(true)},
           "[7, 11] dim 1 keepdim"});
      samples.push_back(
          {{Arg::Tensor(MakeTensor({13, 1, 5}, dtype, rng)), Arg::Int(0), Arg::Bool(false)},
           "[13, 1, 5] dim 0"});
      samples.push_back({{Arg::Tensor(MakeTensor({}, dtype, rng)), Arg::None(), Arg::Bool(false)},
                         "[] dim None"});
      return samples;
    };
    op.reference = [is_max](const Sample& s) {
      const bool all_dims = s.args[1].kind == Arg::Kind::kNone;
      const HostTensor& in = s.args[0].tensor;
      std::vector<HostTensor> r =
          Reduce(in, all_dims ? std::vector<int64_t>{} : std::vector<int64_t>{s.args[1].integer},
                 s.args[2].boolean, {TSR_DTYPE_INT64}, [is_max](const std::vector<double>& v) {
                   return std::vector<double>{Extremum(v, is_max)[1]};
                 });
      return r;
    };
    op.errors = [](Rng&) {
      return std::vector<ErrorInput>{Saying(
          {{{Arg::Tensor(Full({0}, TSR_DTYPE_FLOAT32, 0)), Arg::None(), Arg::Bool(false)}, "[0]"},
           TSR_INVALID_ARGUMENT,
           "an empty input"},
          "expected reduction dim 0 to have non-zero size (input shape [0])")};
    };
    db.push_back(std::move(op));
  }
  // var / std with corrections 1 (default) and 0.
  for (bool is_std : {false, true}) {
    OpInfo op;
    op.name = is_std ? "std.correction" : "var.correction";
    op.out = is_std ? "std.correction_out" : "var.correction_out";
    op.dtypes = kFloatingMask;
    op.tolerance_scale = 10;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> samples;
      for (const DimCase& c : DimCases()) {
        if (c.shape.empty() || (c.shape.size() == 2 && c.shape[1] == 0)) continue;
        for (int64_t correction : {1, 0}) {
          samples.push_back({{Arg::Tensor(MakeTensor(c.shape, dtype, rng)), Arg::Ints(c.dims),
                              Arg::ScalarInt(correction), Arg::Bool(c.keepdim)},
                             CaseDesc(c) + " correction " + std::to_string(correction)});
        }
      }
      return samples;
    };
    op.reference = [is_std](const Sample& s) {
      const double correction = s.args[2].number;
      return Reduce(s.args[0].tensor, s.args[1].ints, s.args[3].boolean, {s.args[0].tensor.dtype},
                    [=](const std::vector<double>& v) { return Var(v, correction, is_std); });
    };
    op.errors = [](Rng& rng) {
      return std::vector<ErrorInput>{
          Saying({{{Arg::Tensor(MakeTensor({3}, TSR_DTYPE_INT32, rng))}, "int32"},
                  TSR_INVALID_ARGUMENT,
                  "an integer input"},
                 "expected a floating point input or dtype, got int32")};
    };
    db.push_back(std::move(op));
  }
  // norm(self, p, dim, keepdim) for p in {None (2), 1, inf, 3}.
  {
    OpInfo op;
    op.name = "norm.ScalarOpt_dim";
    op.out = "norm.out";
    op.dtypes = kFloatingMask;
    op.tolerance_scale = 10;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> samples;
      const Arg ps[] = {Arg::None(), Arg::ScalarInt(1), Arg::ScalarDouble(INFINITY),
                        Arg::ScalarInt(3)};
      for (const Arg& p : ps) {
        samples.push_back({{Arg::Tensor(MakeTensor({7, 11}, dtype, rng, Small(dtype))), p,
                            Arg::Ints({1}), Arg::Bool(false)},
                           "[7, 11] dim 1 p=" + p.ToString()});
      }
      // An empty input over a non-empty dim: an empty result, for every order (PyTorch's).
      for (const Arg& p : {Arg::ScalarDouble(INFINITY), Arg::ScalarDouble(-1), Arg::ScalarInt(2)}) {
        samples.push_back(
            {{Arg::Tensor(MakeTensor({0, 4}, dtype, rng)), p, Arg::Ints({1}), Arg::Bool(false)},
             "[0, 4] dim 1 p=" + p.ToString()});
      }
      // Over an empty dim, the orders with an identity: 0 (p = 2, 1, 0).
      samples.push_back({{Arg::Tensor(MakeTensor({3, 0}, dtype, rng)), Arg::ScalarInt(1),
                          Arg::Ints({1}), Arg::Bool(false)},
                         "[3, 0] dim 1 p=1"});
      return samples;
    };
    op.errors = [](Rng& rng) {
      // +inf and negative orders over an empty dim have no identity (PyTorch refuses them).
      std::vector<ErrorInput> errors;
      for (const Arg& p :
           {Arg::ScalarDouble(INFINITY), Arg::ScalarDouble(-INFINITY), Arg::ScalarDouble(-2)}) {
        errors.push_back(Saying({{{Arg::Tensor(MakeTensor({3, 0}, TSR_DTYPE_FLOAT32, rng)), p,
                                   Arg::Ints({1}), Arg::Bool(false)},
                                  "[3, 0] dim 1 p=" + p.ToString()},
                                 TSR_INVALID_ARGUMENT,
                                 "an order without identity over an empty dim"},
                                "norm over dim 1 of an input of shape [3, 0]: the dim is empty"));
      }
      return errors;
    };
    op.reference = [](const Sample& s) {
      const double p = s.args[1].kind == Arg::Kind::kNone ? 2 : s.args[1].number;
      return Reduce(s.args[0].tensor, s.args[2].ints, s.args[3].boolean, {s.args[0].tensor.dtype},
                    [p](const std::vector<double>& v) {
                      if (std::isinf(p)) {
                        double m = 0;
                        for (double x : v) m = std::max(m, std::fabs(x));
                        return std::vector<double>{m};
                      }
                      long double acc = 0;
                      for (double x : v) acc += std::pow(std::fabs(x), p);
                      return std::vector<double>{std::pow(static_cast<double>(acc), 1 / p)};
                    });
    };
    db.push_back(std::move(op));
  }
  // cumsum / cumprod along a dim; integers widen to int64.
  for (bool is_prod : {false, true}) {
    OpInfo op;
    op.name = is_prod ? "cumprod" : "cumsum";
    op.out = op.name + ".out";
    op.inplace = op.name + "_";
    op.dtypes = kAllMask;
    op.tolerance_scale = 10;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> samples;
      for (const auto& [shape, dim] : std::vector<std::pair<std::vector<int64_t>, int64_t>>{
               {{5}, 0}, {{7, 11}, 1}, {{7, 11}, 0}, {{}, 0}, {{0, 3}, 1}}) {
        samples.push_back(
            {{Arg::Tensor(MakeTensor(shape, dtype, rng, Small(dtype))), Arg::Int(dim)},
             ShapeString(shape) + " dim " + std::to_string(dim)});
      }
      return samples;
    };
    op.reference = [is_prod](const Sample& s) {
      const HostTensor& in = s.args[0].tensor;
      HostTensor out;
      out.dtype = SumDtype(in.dtype);
      out.shape = in.shape;
      out.values = in.values;
      const LinesAlong lines(in.shape, s.args[1].integer);
      for (int64_t o = 0; o < lines.outer; ++o) {
        for (int64_t i = 0; i < lines.inner; ++i) {
          long double acc = is_prod ? 1 : 0;
          for (int64_t k = 0; k < lines.len; ++k) {
            double& v = out.values[static_cast<size_t>(lines.index(o, i, k))];
            acc = is_prod ? acc * v : acc + v;
            v = RoundTo(out.dtype, static_cast<double>(acc));
          }
        }
      }
      return std::vector<HostTensor>{out};
    };
    db.push_back(std::move(op));
  }
  // softmax / log_softmax (the composites) and their native ops.
  for (bool is_log : {false, true}) {
    for (bool native : {false, true}) {
      OpInfo op;
      op.name = std::string(native ? "_" : "") + (is_log ? "log_softmax" : "softmax") +
                (native ? "" : ".int");
      op.out = native ? op.name + ".out" : "";
      op.dtypes = kFloatingMask;
      op.tolerance_scale = 10;
      op.samples = [native](tsr_dtype dtype, Rng& rng) {
        std::vector<Sample> samples;
        for (const auto& [shape, dim] : std::vector<std::pair<std::vector<int64_t>, int64_t>>{
                 {{5}, 0}, {{7, 11}, 1}, {{7, 11}, 0}, {{}, 0}, {{13, 1, 5}, -1}}) {
          std::vector<Arg> args{Arg::Tensor(MakeTensor(shape, dtype, rng)), Arg::Int(dim)};
          args.push_back(native ? Arg::Bool(false) : Arg::None());
          samples.push_back({args, ShapeString(shape) + " dim " + std::to_string(dim)});
        }
        // PyTorch's row max propagates NaN: a row with a NaN, with +inf (inf - inf), or of -inf
        // only is NaN throughout; a -inf among finite values is 0 (-inf for log_softmax).
        // Along the last dim (contiguous rows) and dim 0 (strided), float32 included (oneDNN
        // gave [nan, 0, 0] for [nan, 1, 2]).
        for (int64_t dim : {1, 0}) {
          HostTensor t = MakeTensor({4, 3}, dtype, rng);
          const double row_dim1[4][3] = {
              {NAN, 1, 2}, {INFINITY, 1, 2}, {-INFINITY, 1, 2}, {-INFINITY, -INFINITY, -INFINITY}};
          for (int64_t r = 0; r < 4; ++r) {
            for (int64_t c = 0; c < 3; ++c) {
              // dim 0: the same lines as columns of a [3, 4] tensor.
              t.values[static_cast<size_t>(dim == 1 ? r * 3 + c : c * 4 + r)] = row_dim1[r][c];
            }
          }
          if (dim == 0) t.shape = {3, 4};
          std::vector<Arg> args{Arg::Tensor(t), Arg::Int(dim)};
          args.push_back(native ? Arg::Bool(false) : Arg::None());
          samples.push_back(
              {args, "lines with nan, inf, -inf, all -inf, dim " + std::to_string(dim)});
        }
        return samples;
      };
      op.reference = [is_log](const Sample& s) {
        const HostTensor& in = s.args[0].tensor;
        HostTensor out = in;
        const LinesAlong lines(in.shape, s.args[1].integer);
        const int64_t len = lines.len;
        for (int64_t o = 0; o < lines.outer; ++o) {
          for (int64_t i = 0; i < lines.inner; ++i) {
            auto at = [&](int64_t k) -> double& {
              return out.values[static_cast<size_t>(lines.index(o, i, k))];
            };
            double m = -INFINITY;
            for (int64_t k = 0; k < len; ++k) m = std::max(m, at(k));
            long double sum = 0;
            for (int64_t k = 0; k < len; ++k) sum += std::exp(at(k) - m);
            for (int64_t k = 0; k < len; ++k) {
              const double v = is_log ? at(k) - m - std::log(static_cast<double>(sum))
                                      : std::exp(at(k) - m) / static_cast<double>(sum);
              at(k) = RoundTo(in.dtype, v);
            }
          }
        }
        return std::vector<HostTensor>{out};
      };
      db.push_back(std::move(op));
    }
  }
  AddReductionCompositeOps(db);  // op set 1.8: nansum, count_nonzero, aminmax, ...
  AddNormSetOps(db);             // op set 1.8: linalg_vector_norm, dist, isin
  AddOrderStatisticOps(db);      // op set 1.9: kthvalue, median, mode, cummax, logcumsumexp
  AddCoreExtraOps(db);           // op set 1.9: any/all.dims, var/std(unbiased), div mode, cdist
  AddHostValueOps(db);           // op set 1.10: item, equal, allclose, isclose, is_nonzero
}

}  // namespace conformance
}  // namespace tessera
