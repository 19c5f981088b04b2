// Op set 1.9's core extras: any.dims and all.dims; var, std, var_mean and std_mean with
// `unbiased` (their overloads without a dim and with one); div.Scalar_mode; the functional copy;
// cdist and _cdist_forward; pdist and _pdist_forward.
//
// Semantics are current PyTorch's CPU ones, read in aten/src/ATen/native:
// - ReduceOps.cpp: allany_meta (the result is bool, or uint8 for a uint8 input) with
//   allow_empty_dims, so any.dims / all.dims with dim=[] reduce NO dim (the result is self != 0,
//   self's shape; allany_dims_default says the same) while dim=None reduces every dim; std_var_out
//   (floating types only; `unbiased` is correction 1 or 0, and var.dim with dim=[] reduces every
//   dim: make_dim_mask without allow_empty_dims), whose Welford division m2 / max(0, N -
//   correction) gives NaN for one element unbiased and for no elements.
// - BinaryOps.cpp and cpu/BinaryOpsKernel.cpp: div with a rounding mode and a wrapped Scalar,
//   promoted as div.Tensor_mode (rounding_mode None divides truly: integers and bool give
//   float32); trunc and floor of integers refuse a zero divisor ("ZeroDivisionError"); floats
//   follow div_floor_floating (Python's floor division: inf // 2.5 is NaN, 1 // 0.1 is 9) and
//   trunc(a / b), computed in the dtype (float for float16 and bfloat16: the reduced-float Scalar
//   path divides by the Scalar in float); bool // bool has no kernel.
// - TensorConversions.cpp (copy): a new tensor of self's shape, dtype and device, src broadcast
//   into it and converted as copy_ converts.
// - Distance.cpp, cpu/DistanceOpsKernel.cpp: cdist's checks and its matrix-product path
//   (_euclidean_dist: |x|^2 - 2 x.y + |y|^2, clamped at 0, square-rooted) taken for p = 2 with
//   compute_mode 1, or with compute_mode None / 0 when either input has more than 25 rows; the
//   norms: p = 0 counts the coordinates that differ, inf takes the largest difference; pdist
//   lists the pairs (i, j), i < j, row-major. Both kernels are float32 and float64 only
//   (AT_DISPATCH_FLOATING_TYPES), so the database declares those.
//
// Samples follow common_methods_invocations.py: sample_inputs_std_var and the reduction samples
// (any, all, var, std), sample_inputs_div's rounding modes, sample_inputs_cdist (its shapes, p in
// 0, 1, 2, 3, 0.5, 1.5, inf, compute modes), sample_inputs_pdist; with 0-dim, empty and
// broadcast inputs, ties for p = 0 and the matrix-product path added. The references index the
// HostTensor values directly and compute in long double (div in the dtype it computes in).
//
// Not sampled, where Tessera's composites may reasonably differ from ATen without a user
// noticing: _pdist_forward's own arguments beyond pdist's (ATen's _pdist_forward checks neither
// the rank, the dtype before its kernel, nor p, and refuses a non-contiguous input, which the
// layouts oracle gives every op); cdist of a float32 and a float64 input on the matrix-product
// path (ATen concatenates and promotes there, and refuses the same on the direct path).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "conformance/op_db.h"
#include "conformance/op_db_helpers.h"
#include "conformance/reduction_reference.h"

namespace tessera {
namespace conformance {
namespace {

using Shape = std::vector<int64_t>;
using Dims = std::optional<std::vector<int64_t>>;  // nullopt: dim=None

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Arg T(HostTensor t) { return Arg::Tensor(std::move(t)); }
HostTensor F32(Shape shape, Rng& rng) {
  return MakeTensor(std::move(shape), TSR_DTYPE_FLOAT32, rng);
}
Arg DimsArg(const Dims& d) { return d ? Arg::Ints(*d) : Arg::None(); }
std::string DimsString(const Dims& d) { return d ? ShapeString(*d) : "None"; }

// ---- Reductions ----

// WithZeros: about `fraction` of the elements made zero (-0.0 for half of those in floating
// types, zero too), so that any and all see both answers.
HostTensor WithZeros(HostTensor t, Rng& rng, double fraction) {
  std::uniform_real_distribution<double> u(0, 1);
  for (double& v : t.values) {
    if (u(rng) < fraction) v = IsFloating(t.dtype) && u(rng) < 0.5 ? -0.0 : 0;
  }
  return t;
}

// Lines for any / all: all zero, all nonzero, mixed, one zero; in floating types NaN (nonzero),
// -0.0 (zero) and inf. As the rows of a [4, 3] tensor (dim 1) or the columns of a [3, 4] one.
HostTensor AnyAllLines(tsr_dtype dtype, int64_t dim) {
  std::vector<std::vector<double>> rows = {{0, 0, 0}, {1, 2, 3}, {0, 4, 0}, {5, 0, 6}};
  if (IsFloating(dtype)) {
    rows = {{0, -0.0, 0}, {kNan, 2.5, kInf}, {0, kNan, -0.0}, {-kInf, 0, 1.5}};
  } else if (dtype == TSR_DTYPE_BOOL) {
    rows = {{0, 0, 0}, {1, 1, 1}, {0, 1, 0}, {1, 0, 1}};
  }
  std::vector<double> values(12);
  for (int64_t r = 0; r < 4; ++r) {
    for (int64_t k = 0; k < 3; ++k) {
      values[static_cast<size_t>(dim == 1 ? r * 3 + k : k * 4 + r)] =
          rows[static_cast<size_t>(r)][static_cast<size_t>(k)];
    }
  }
  return Values(dtype, dim == 1 ? Shape{4, 3} : Shape{3, 4}, values);
}

MakeOptions NonzeroOptions() {
  MakeOptions o;
  o.exclude_zero = true;
  return o;
}

struct DimCase {
  Shape shape;
  Dims dims;
  bool keepdim = false;
  std::string Desc() const {
    return ShapeString(shape) + " dim " + DimsString(dims) + (keepdim ? " keepdim" : "");
  }
};

// any.dims / all.dims(self, int[]? dim=None, bool keepdim=False): bool (uint8 for uint8).
OpInfo AnyAllDims(bool is_all) {
  OpInfo op;
  op.name = is_all ? "all.dims" : "any.dims";
  op.out = is_all ? "all.dims_out" : "any.dims_out";
  op.dtypes = kAllMask;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    using V = std::vector<int64_t>;
    static const std::vector<DimCase> cases = {{{}, std::nullopt, false},
                                               {{}, V{}, false},
                                               {{}, V{0}, true},
                                               {{}, V{-1}, false},
                                               {{5}, std::nullopt, true},
                                               {{5}, V{0}, false},
                                               {{5}, V{}, true},
                                               {{3, 5}, V{1}, false},
                                               {{3, 5}, V{0}, true},
                                               {{3, 5}, V{0, 1}, false},
                                               {{3, 5}, V{-1, 0}, true},
                                               {{3, 5}, V{}, false},
                                               {{3, 2, 1, 2}, V{1, 3}, false},
                                               {{3, 2, 1, 2}, V{0, 2}, true},
                                               {{3, 2, 1, 2}, std::nullopt, false},
                                               {{3, 2, 1, 2}, V{}, true},
                                               {{0}, std::nullopt, false},
                                               {{4, 0}, V{1}, false},
                                               {{4, 0}, V{1}, true},
                                               {{0, 3}, V{1}, false},
                                               {{0, 3}, V{0}, true},
                                               {{0, 3}, V{}, false}};
    std::vector<Sample> s;
    size_t i = 0;
    for (const DimCase& c : cases) {
      const double fraction = i++ % 2 ? 0.6 : 0.15;  // mostly zero, or mostly not
      s.push_back({{T(WithZeros(MakeTensor(c.shape, dtype, rng), rng, fraction)), DimsArg(c.dims),
                    Arg::Bool(c.keepdim)},
                   c.Desc()});
    }
    for (int64_t dim : {1, 0}) {
      s.push_back({{T(AnyAllLines(dtype, dim)), Arg::Ints({dim}), Arg::Bool(false)},
                   "lines all zero, nonzero, mixed (nan, -0.0, inf), dim " + std::to_string(dim)});
    }
    s.push_back({{T(AnyAllLines(dtype, 1))}, "lines, defaults (dim None)"});
    s.push_back({{T(MakeTensor({3, 5}, dtype, rng, NonzeroOptions()))}, "[3, 5] nonzero"});
    return s;
  };
  op.reference = [is_all](const Sample& s) {
    const HostTensor& in = s.args[0].tensor;
    const Dims dims = Given(s, 1) ? Dims(s.args[1].ints) : std::nullopt;
    const bool keepdim = Given(s, 2) && s.args[2].boolean;
    const tsr_dtype dtype = in.dtype == TSR_DTYPE_UINT8 ? TSR_DTYPE_UINT8 : TSR_DTYPE_BOOL;
    return std::vector<HostTensor>{FoldTo(GroupBy(in, dims, keepdim, /*empty_is_all=*/false), dtype,
                                          [is_all](const std::vector<double>& v) {
                                            const auto nonzero = [](double x) { return x != 0; };
                                            return static_cast<double>(
                                                is_all ? std::all_of(v.begin(), v.end(), nonzero)
                                                       : std::any_of(v.begin(), v.end(), nonzero));
                                          })};
  };
  op.errors = [](Rng& rng) {
    return std::vector<ErrorInput>{
        Saying(Refused({T(F32({2, 3}, rng)), Arg::Ints({2}), Arg::Bool(false)}, TSR_OUT_OF_RANGE,
                       "a dim out of range"),
               "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
        Saying(Refused({T(F32({2, 3}, rng)), Arg::Ints({1, -1}), Arg::Bool(false)},
                       TSR_INVALID_ARGUMENT, "a dim given twice"),
               "dim 1 appears multiple times in the list of dims"),
        Saying(Refused({T(F32({}, rng)), Arg::Ints({1}), Arg::Bool(false)}, TSR_OUT_OF_RANGE,
                       "a dim other than 0 or -1 of a 0-dim input"),
               "Dimension out of range (expected to be in range of [-1, 0], but got 1)")};
  };
  return op;
}

// var / std (self, bool unbiased=True), var.dim / std.dim (self, int[1]? dim, bool
// unbiased=True, bool keepdim=False), var_mean / std_mean and their .dim overloads: floating
// types; var_mean and std_mean return (var or std, mean).
OpInfo Moments(bool is_std, bool with_dim, bool with_mean) {
  const std::string base = std::string(is_std ? "std" : "var") + (with_mean ? "_mean" : "");
  OpInfo op;
  op.name = with_dim ? base + ".dim" : base;
  // Only var.dim and std.dim have an out= form in ATen (var.out, std.out).
  op.out = with_dim && !with_mean ? base + ".out" : "";
  op.dtypes = kFloatingMask;
  op.tolerance_scale = 10;
  op.samples = [with_dim, with_mean](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    const Arg unbiased[] = {Arg::Bool(true), Arg::Bool(false)};
    size_t i = 0;
    if (!with_dim) {
      for (const Shape& shape :
           std::vector<Shape>{{}, {1}, {5}, {3, 5}, {3, 2, 1, 2}, {0}, {4, 0}, {2}}) {
        const Arg& u = unbiased[i++ % 2];
        s.push_back({{T(MakeTensor(shape, dtype, rng)), u},
                     ShapeString(shape) + " unbiased " + (u.boolean ? "True" : "False")});
      }
      s.push_back({{T(MakeTensor({3, 5}, dtype, rng))}, "[3, 5] defaults"});
      s.push_back({{T(MakeTensor({}, dtype, rng))}, "[] defaults (nan)"});
      return s;
    }
    using V = std::vector<int64_t>;
    static const std::vector<DimCase> cases = {{{}, std::nullopt, false},
                                               {{}, V{}, true},
                                               {{}, V{0}, false},
                                               {{}, V{-1}, true},
                                               {{5}, V{0}, true},
                                               {{5}, std::nullopt, false},
                                               {{5}, V{0}, false},
                                               {{3, 5}, V{1}, false},
                                               {{3, 5}, V{0}, true},
                                               {{3, 5}, V{-1, 0}, false},
                                               {{3, 5}, V{}, true},
                                               {{3, 5}, V{}, false},
                                               {{3, 2, 1, 2}, V{1, 3}, false},
                                               {{3, 2, 1, 2}, V{0, 2}, true},
                                               {{3, 2, 1, 2}, V{-3}, false},
                                               {{3, 2, 1, 2}, std::nullopt, true},
                                               {{5, 1}, V{1}, false},
                                               {{5, 1}, V{1}, true},
                                               {{0}, std::nullopt, false},
                                               {{4, 0}, V{1}, false},
                                               {{0, 3}, V{1}, true},
                                               {{0, 3}, V{0}, false},
                                               {{3, 4, 5}, V{-3}, false}};
    for (const DimCase& c : cases) {
      const Arg& u = unbiased[i++ % 2];
      s.push_back({{T(MakeTensor(c.shape, dtype, rng)), DimsArg(c.dims), u, Arg::Bool(c.keepdim)},
                   c.Desc() + " unbiased " + (u.boolean ? "True" : "False")});
    }
    s.push_back({{T(MakeTensor({3, 5}, dtype, rng)), Arg::Ints({1})}, "[3, 5] dim [1] defaults"});
    // NaN makes its line's variance and mean NaN; so does inf its variance (inf - inf), but the
    // mean var_mean and std_mean give beside it comes from ATen's Welford update, NaN or inf by
    // where the inf stands, so those ops are not given one.
    s.push_back({{T(Values(dtype, {3, 3}, {kNan, 1, 2, 0.5, 1, 2, 1, kNan, 3})), Arg::Ints({1}),
                  Arg::Bool(true), Arg::Bool(false)},
                 "lines with nan, dim [1]"});
    if (!with_mean) {
      s.push_back({{T(Values(dtype, {2, 3}, {kInf, 1, 2, 1, -kInf, 2})), Arg::Ints({1}),
                    Arg::Bool(false), Arg::Bool(true)},
                   "lines with inf, -inf, dim [1] keepdim"});
    }
    return s;
  };
  op.reference = [is_std, with_dim, with_mean](const Sample& s) {
    const HostTensor& in = s.args[0].tensor;
    const size_t u = with_dim ? 2 : 1;
    const double correction = !Given(s, u) || s.args[u].boolean ? 1 : 0;
    const Dims dims = with_dim && Given(s, 1) ? Dims(s.args[1].ints) : std::nullopt;
    const bool keepdim = with_dim && Given(s, 3) && s.args[3].boolean;
    const Groups g = GroupBy(in, dims, keepdim, /*empty_is_all=*/true);
    std::vector<HostTensor> r{FoldTo(g, in.dtype, [&](const std::vector<double>& v) {
      const double var = VarianceOf(v, correction);
      return is_std ? std::sqrt(var) : var;
    })};
    if (with_mean) r.push_back(FoldTo(g, in.dtype, MeanOf));
    return r;
  };
  op.errors = [with_dim](Rng& rng) {
    // "std and var only support floating point and complex dtypes" (var_mean / std_mean: "...
    // only support ..."), and the dim checks: IndexError out of range, a dim given twice.
    std::vector<ErrorInput> e;
    for (tsr_dtype dtype : {TSR_DTYPE_INT32, TSR_DTYPE_BOOL}) {
      std::vector<Arg> args{T(MakeTensor({3}, dtype, rng))};
      if (with_dim) args.push_back(Arg::Ints({0}));
      e.push_back(Saying(Refused(std::move(args), TSR_INVALID_ARGUMENT, "a non-floating input"),
                         "expected a floating point input or dtype"));
    }
    if (with_dim) {
      e.push_back(Saying(
          Refused({T(F32({2, 3}, rng)), Arg::Ints({2}), Arg::Bool(true), Arg::Bool(false)},
                  TSR_OUT_OF_RANGE, "a dim out of range"),
          "Dimension out of range (expected to be in range of [-2, 1], but got 2)"));
      e.push_back(Saying(
          Refused({T(F32({2, 3}, rng)), Arg::Ints({1, -1}), Arg::Bool(true), Arg::Bool(false)},
                  TSR_INVALID_ARGUMENT, "a dim given twice"),
          "dim 1 appears multiple times in the list of dims"));
      e.push_back(Saying(
          Refused({T(F32({}, rng)), Arg::Ints({1}), Arg::Bool(true), Arg::Bool(false)},
                  TSR_OUT_OF_RANGE, "a dim other than 0 or -1 of a 0-dim input"),
          "Dimension out of range (expected to be in range of [-1, 0], but got 1)"));
    }
    return e;
  };
  return op;
}

// ---- div.Scalar_mode ----

// Python's floor division of floats, as ATen's div_floor_floating computes it in F.
template <typename F>
F FloorDivFloating(F a, F b) {
  if (b == 0) return a / b;
  const F mod = std::fmod(a, b);
  F div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= F(1);
  if (div == 0) return std::copysign(F(0), a / b);
  F floordiv = std::floor(div);
  if (div - floordiv > F(0.5)) floordiv += F(1);
  return floordiv;
}

// DivModeOf: a / b by `mode` ("", "trunc", "floor") in `compute`'s arithmetic; a and b are
// already converted to the promoted dtype (b to float for float16 and bfloat16: ATen's Scalar
// path keeps the Scalar in float, the samples' Scalars are exact there).
double DivModeOf(double a, double b, const std::string& mode, tsr_dtype compute) {
  if (IsIntegral(compute, true)) {  // trunc / floor of integers (nonzero b: errors otherwise)
    const int64_t x = static_cast<int64_t>(a), y = static_cast<int64_t>(b);
    int64_t q = x / y;
    if (mode == "floor" && (x % y != 0) && ((x < 0) != (y < 0))) q -= 1;
    return static_cast<double>(q);
  }
  if (compute == TSR_DTYPE_FLOAT64) {
    return mode.empty() ? a / b : mode == "trunc" ? std::trunc(a / b) : FloorDivFloating(a, b);
  }
  const float x = static_cast<float>(a), y = static_cast<float>(b);
  return mode.empty() ? x / y : mode == "trunc" ? std::trunc(x / y) : FloorDivFloating(x, y);
}

OpInfo DivScalarMode() {
  OpInfo op;
  op.name = "div.Scalar_mode";
  op.out = "div.Scalar_mode_out";
  op.inplace = "div_.Scalar_mode";
  op.dtypes = kAllMask;  // bool with an int or float Scalar (bool // bool: an error input)
  op.elementwise = true;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    // Scalars of each kind, exact in every floating dtype; uint8's in its range.
    std::vector<Arg> scalars;
    if (IsFloating(dtype)) {
      scalars = {Arg::ScalarDouble(2.5), Arg::ScalarDouble(-0.75), Arg::ScalarInt(-3)};
    } else if (dtype == TSR_DTYPE_BOOL) {
      scalars = {Arg::ScalarInt(2), Arg::ScalarDouble(-1.5), Arg::ScalarInt(-3)};
    } else if (dtype == TSR_DTYPE_UINT8) {
      scalars = {Arg::ScalarInt(3), Arg::ScalarDouble(2.5), Arg::ScalarBool(true)};
    } else {
      scalars = {Arg::ScalarInt(-3), Arg::ScalarInt(4), Arg::ScalarDouble(2.5),
                 Arg::ScalarBool(true)};
    }
    const Arg modes[] = {Arg::None(), Arg::String("trunc"), Arg::String("floor")};
    std::vector<Sample> s;
    size_t k = 0;
    for (const Shape& shape : UnaryShapes()) {
      for (const Arg& mode : modes) {
        const Arg& other = scalars[k++ % scalars.size()];
        s.push_back(Described({T(MakeTensor(shape, dtype, rng)), other, mode}));
      }
    }
    if (IsFloating(dtype)) {
      // Python's floor division: 1 // 0.1 is 9, inf // 2.5 is NaN; by zero: inf, -inf, NaN.
      for (const Arg& mode : modes) {
        s.push_back(Described({T(ExtremeTensor(dtype)), Arg::ScalarDouble(2.5), mode}));
        s.push_back(Described({T(MakeTensor({7}, dtype, rng)), Arg::ScalarDouble(0), mode}));
        s.push_back(Described(
            {T(Values(dtype, {6}, {1, -1, 0.5, 2, -0.0, 7})), Arg::ScalarDouble(0.125), mode}));
      }
      if (dtype == TSR_DTYPE_FLOAT32 || dtype == TSR_DTYPE_FLOAT64) {
        s.push_back(Described(
            {T(Values(dtype, {3}, {1, 2, -1})), Arg::ScalarDouble(0.1), Arg::String("floor")},
            " (Python's 1 // 0.1 == 9)"));
      }
    } else {
      // Integers divided truly by 0: inf, -inf and NaN in float32.
      s.push_back(Described({T(MakeTensor({7}, dtype, rng)), Arg::ScalarInt(0), Arg::None()}));
      if (dtype != TSR_DTYPE_BOOL && dtype != TSR_DTYPE_UINT8) {
        s.push_back(Described({T(Values(dtype, {6}, {7, -7, 6, -6, 1, -1})), Arg::ScalarInt(-2),
                               Arg::String("floor")}));
      }
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    const std::string mode = Given(s, 2) ? s.args[2].string : "";
    const tsr_dtype promoted = ResultDtype({&s.args[0], &s.args[1]});
    const tsr_dtype result =
        mode.empty() && IsIntegral(promoted, true) ? TSR_DTYPE_FLOAT32 : promoted;
    const bool reduced = result == TSR_DTYPE_FLOAT16 || result == TSR_DTYPE_BFLOAT16;
    return std::vector<HostTensor>{
        Elementwise({&s.args[0], &s.args[1]}, result, [&](const double* x) {
          const double a = RoundTo(result, x[0]);
          const double b = RoundTo(reduced ? TSR_DTYPE_FLOAT32 : result, x[1]);
          return DivModeOf(a, b, mode, result);
        })};
  };
  op.errors = [](Rng& rng) {
    std::vector<ErrorInput> e;
    for (const char* mode : {"trunc", "floor"}) {
      for (tsr_dtype dtype : {TSR_DTYPE_INT32, TSR_DTYPE_UINT8}) {
        e.push_back(Saying(
            Refused({T(MakeTensor({3}, dtype, rng)), Arg::ScalarInt(0), Arg::String(mode)},
                    TSR_INVALID_ARGUMENT, "integer division by zero (ZeroDivisionError)"),
            "ZeroDivisionError"));
      }
      // bool // bool: ATen has no bool loop for trunc or floor ("div_trunc_cpu" not implemented
      // for 'Bool'; a NotImplementedError in current PyTorch).
      e.push_back(Saying(
          Refused({T(MakeTensor({3}, TSR_DTYPE_BOOL, rng)), Arg::ScalarBool(true),
                   Arg::String(mode)},
                  TSR_UNIMPLEMENTED, "bool divided by a bool with a rounding mode"),
          "not implemented for dtype bool"));
    }
    e.push_back(Saying(Refused({T(F32({3}, rng)), Arg::ScalarDouble(2.5), Arg::String("round")},
                               TSR_INVALID_ARGUMENT, "an unknown rounding mode"),
                       "expected rounding_mode to be one of None, 'trunc' or 'floor'"));
    return e;
  };
  return op;
}

// ---- copy ----

OpInfo Copy() {
  OpInfo op;
  op.name = "copy";
  op.out = "copy.out";
  op.dtypes = kAllMask;
  op.elementwise = true;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    // Sources of other dtypes convert (floats truncate toward zero into integers, wrap into
    // uint8 through int64, are != 0 into bool); the source broadcasts to self's shape.
    const auto src = [&](Shape shape, tsr_dtype d) {
      return T(MakeTensor(std::move(shape), d, rng));
    };
    std::vector<Sample> s;
    s.push_back(Described({src({4, 5}, dtype), src({5}, TSR_DTYPE_FLOAT32)}));
    s.push_back(Described({src({3}, dtype), src({3}, dtype)}));
    s.push_back(Described({src({}, dtype), src({}, TSR_DTYPE_INT64)}));
    s.push_back(Described({src({2, 3, 4}, dtype), src({3, 1}, TSR_DTYPE_INT32)}));
    s.push_back(Described({src({0, 3}, dtype), src({3}, TSR_DTYPE_FLOAT64)}));
    s.push_back(Described({src({4, 1}, dtype), src({1}, TSR_DTYPE_BOOL)}));
    s.push_back(Described({src({5}, dtype), src({}, TSR_DTYPE_FLOAT16)}));
    s.push_back(Described({src({2, 3}, dtype), src({2, 3}, TSR_DTYPE_UINT8), Arg::Bool(true)}));
    s.push_back(Described({src({3, 1, 2}, dtype), src({1, 2}, TSR_DTYPE_BFLOAT16)}));
    if (IsFloating(dtype)) {
      const HostTensor extremes = ExtremeTensor(TSR_DTYPE_FLOAT64);  // into float16: inf, 0
      s.push_back(Described({src(extremes.shape, dtype), T(extremes)}));
    } else {
      s.push_back(Described(
          {src({6}, dtype), T(Values(TSR_DTYPE_FLOAT32, {6}, {-2.75, -0.5, 0.5, 1.5, -0.0, 8.9}))},
          " (toward zero)"));
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    const Arg &self = s.args[0], &src = s.args[1];
    return std::vector<HostTensor>{
        Elementwise({&self, &src}, self.tensor.dtype, [](const double* x) { return x[1]; })};
  };
  op.errors = [](Rng& rng) {
    // ATen's expand messages: "The expanded size of the tensor (3) must match the existing size
    // (4) at non-singleton dimension 1", "expand(...): the number of sizes provided (1) must be
    // greater or equal to the number of dimensions in the tensor (2)".
    return std::vector<ErrorInput>{
        Saying(Refused({T(F32({2, 3}, rng)), T(F32({4}, rng))}, TSR_INVALID_ARGUMENT,
                       "a source that does not broadcast"),
               "src of shape [4] must broadcast to the destination's shape [2, 3]"),
        Saying(Refused({T(F32({3}, rng)), T(F32({2, 3}, rng))}, TSR_INVALID_ARGUMENT,
                       "a source of more dims than self"),
               "src of shape [2, 3] must broadcast to the destination's shape [3]"),
        Saying(Refused({T(F32({}, rng)), T(F32({1}, rng))}, TSR_INVALID_ARGUMENT,
                       "a [1] source into a 0-dim self"),
               "src of shape [1] must broadcast to the destination's shape []")};
  };
  return op;
}

// ---- cdist, pdist ----

// Distance: the p-norm of a - b over `n` coordinates, as ATen's Dist kernels define it: p = 0
// counts the coordinates that differ, inf takes the largest difference (from 0).
double Distance(const double* a, const double* b, int64_t n, double p) {
  long double agg = 0;
  for (int64_t k = 0; k < n; ++k) {
    const long double d = std::fabs(a[k] - b[k]);
    if (p == 0) {
      agg += d != 0;
    } else if (std::isinf(p)) {
      agg = std::max(agg, d);
    } else {
      agg += p == 1 ? d : p == 2 ? d * d : std::pow(d, static_cast<long double>(p));
    }
  }
  if (p == 0 || p == 1 || std::isinf(p)) return static_cast<double>(agg);
  if (p == 2) return static_cast<double>(std::sqrt(agg));
  return static_cast<double>(std::pow(agg, 1 / static_cast<long double>(p)));
}

// Coarse: values from {0, 1, 2}, so that coordinates tie (p = 0 counts only those that differ).
HostTensor Coarse(Shape shape, tsr_dtype dtype, Rng& rng) {
  MakeOptions o;
  o.low = 0;
  o.high = 3;
  HostTensor t = MakeTensor(std::move(shape), dtype, rng, o);
  for (double& v : t.values) v = std::floor(v);
  return t;
}

std::vector<HostTensor> CdistReference(const Sample& s) {
  const HostTensor &x1 = s.args[0].tensor, &x2 = s.args[1].tensor;
  const double p = Given(s, 2) ? s.args[2].number : 2;
  const int64_t n1 = x1.dim(), n2 = x2.dim();
  const int64_t r1 = x1.shape[n1 - 2], r2 = x2.shape[n2 - 2], c = x1.shape[n1 - 1];
  const Shape b1(x1.shape.begin(), x1.shape.end() - 2), b2(x2.shape.begin(), x2.shape.end() - 2);
  const Shape batch = BroadcastShape({b1, b2});
  HostTensor out;
  out.dtype = x1.dtype;
  out.shape = batch;
  out.shape.push_back(r1);
  out.shape.push_back(r2);
  int64_t batches = 1;
  for (int64_t d : batch) batches *= d;
  // The batch index of an input whose batch dims broadcast to `batch`.
  const auto offset = [&](const Shape& own, const Shape& index) {
    int64_t flat = 0;
    const size_t lead = index.size() - own.size();
    for (size_t d = 0; d < own.size(); ++d)
      flat = flat * own[d] + (own[d] == 1 ? 0 : index[lead + d]);
    return flat;
  };
  for (int64_t t = 0; t < batches; ++t) {
    const Shape index = Unravel(t, batch);
    const double* a = x1.values.data() + offset(b1, index) * r1 * c;
    const double* b = x2.values.data() + offset(b2, index) * r2 * c;
    for (int64_t i = 0; i < r1; ++i) {
      for (int64_t j = 0; j < r2; ++j) {
        out.values.push_back(RoundTo(out.dtype, Distance(a + i * c, b + j * c, c, p)));
      }
    }
  }
  return {out};
}

// cdist(x1, x2, float p=2, int? compute_mode=None) and _cdist_forward(x1, x2, p, compute_mode).
OpInfo Cdist(bool forward) {
  OpInfo op;
  op.name = forward ? "_cdist_forward" : "cdist";
  op.out = forward ? "_cdist_forward.out" : "";
  op.dtypes = Bit(TSR_DTYPE_FLOAT32) | Bit(TSR_DTYPE_FLOAT64);
  // The matrix-product path (p = 2) rounds |x|^2 - 2 x.y + |y|^2 in the dtype: an absolute
  // error of about eps * |x|^2 / d in d, which float32 inputs of up to 9 in 5 columns keep
  // within 10 times the default tolerances (their rows are not close).
  op.tolerance_scale = 10;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    const double ps[] = {0, 1, 2, 3, 0.5, 1.5, kInf};
    const Arg modes[] = {Arg::None(), Arg::Int(1), Arg::Int(2)};
    const auto make = [&](Shape shape) { return T(MakeTensor(std::move(shape), dtype, rng)); };
    std::vector<Sample> s;
    // sample_inputs_cdist's shapes (S = 5), each with a p and a mode in turn; the first is
    // small and direct (the dtype claims ask an undeclared dtype with it).
    static const std::vector<std::pair<Shape, Shape>> cases = {{{3, 5}, {4, 5}},
                                                               {{5, 5, 2}, {5, 6, 2}},
                                                               {{5, 5}, {5, 5}},
                                                               {{2, 3, 5}, {2, 3, 5}},
                                                               {{1, 2, 3}, {1, 2, 3}},
                                                               {{1, 1}, {5, 1}},
                                                               {{0, 5}, {4, 5}},
                                                               {{4, 5}, {0, 5}},
                                                               {{0, 4, 5}, {3, 5}},
                                                               {{4, 5}, {0, 3, 5}},
                                                               {{0, 4, 5}, {1, 3, 5}},
                                                               {{1, 4, 5}, {0, 3, 5}},
                                                               {{2, 2, 3, 2}, {2, 2, 4, 2}},
                                                               {{2, 1, 1, 2}, {1, 2, 2}},
                                                               {{1, 1, 2}, {2, 1, 2, 2}},
                                                               {{3, 0}, {4, 0}},
                                                               {{2, 3, 0}, {1, 0}}};
    size_t i = 0;
    for (const auto& [a, b] : cases) {
      const double p = ps[i % 7];
      const Arg& mode = modes[i++ % 3];
      s.push_back(Described({make(a), make(b), Arg::Double(p), mode}));
    }
    // Every p on ties (coarse values): p = 0 counts differing coordinates.
    for (double p : ps) {
      s.push_back(Described({T(Coarse({4, 6}, dtype, rng)), T(Coarse({5, 6}, dtype, rng)),
                             Arg::Double(p), Arg::None()},
                            " coarse"));
    }
    // p = 2 by each mode, direct and through the matrix product (more than 25 rows, or mode 1).
    for (const Arg& mode : modes) {
      s.push_back(Described({make({3, 5}), make({4, 5}), Arg::Double(2), mode}));
      s.push_back(Described({make({30, 5}), make({4, 5}), Arg::Double(2), mode}));
      s.push_back(Described({make({2, 26, 3}), make({27, 3}), Arg::Double(2), mode}));
    }
    return s;
  };
  op.reference = CdistReference;
  op.errors = [](Rng& rng) {
    const auto args = [](HostTensor a, HostTensor b, double p, Arg mode) {
      return std::vector<Arg>{T(std::move(a)), T(std::move(b)), Arg::Double(p), std::move(mode)};
    };
    return std::vector<ErrorInput>{
        Saying(Refused(args(F32({4}, rng), F32({5, 4}, rng), 2, Arg::None()), TSR_INVALID_ARGUMENT,
                       "cdist only supports at least 2D tensors (X1 1D)"),
               "cdist only supports at least 2D tensors, X1 got: 1D"),
        Saying(Refused(args(F32({3, 4}, rng), F32({4}, rng), 2, Arg::None()), TSR_INVALID_ARGUMENT,
                       "cdist only supports at least 2D tensors (X2 1D)"),
               "cdist only supports at least 2D tensors, X2 got: 1D"),
        Saying(Refused(args(F32({3, 4}, rng), F32({5, 3}, rng), 2, Arg::None()),
                       TSR_INVALID_ARGUMENT, "X1 and X2 must have the same number of columns"),
               "X1 and X2 must have the same number of columns. X1: 4 X2: 3"),
        Saying(Refused(args(F32({3, 4}, rng), F32({5, 4}, rng), -1, Arg::None()),
                       TSR_INVALID_ARGUMENT, "cdist only supports non-negative p values"),
               "cdist only supports non-negative p values"),
        Saying(Refused(args(F32({3, 4}, rng), F32({5, 4}, rng), 1, Arg::Int(3)),
                       TSR_INVALID_ARGUMENT, "possible modes: 0, 1, 2, but was: 3"),
               "possible modes: 0, 1, 2, but was: 3"),
        Saying(Refused(args(F32({3, 4}, rng), F32({5, 4}, rng), 2, Arg::Int(-1)),
                       TSR_INVALID_ARGUMENT, "possible modes: 0, 1, 2, but was: -1"),
               "possible modes: 0, 1, 2, but was: -1"),
        Saying(Refused(args(MakeTensor({3, 4}, TSR_DTYPE_INT32, rng),
                            MakeTensor({5, 4}, TSR_DTYPE_INT32, rng), 2, Arg::None()),
                       TSR_INVALID_ARGUMENT, "cdist only supports floating-point dtypes"),
               "cdist only supports floating-point dtypes, X1 got: int32"),
        Saying(Refused(args(F32({3, 4}, rng), MakeTensor({5, 4}, TSR_DTYPE_FLOAT64, rng), 1,
                            Arg::None()),
                       TSR_INVALID_ARGUMENT, "float32 and float64 (expected scalar type Float)"),
               "X1 and X2 must have the same dtype, got float32 and float64"),
        Saying(Refused(args(F32({2, 3, 4}, rng), F32({3, 5, 4}, rng), 2, Arg::None()),
                       TSR_INVALID_ARGUMENT, "batch dims that do not broadcast"),
               "must match the size of tensor b (3) at non-singleton dimension 0")};
  };
  return op;
}

// pdist(self, float p=2) and _pdist_forward(self, float p=2): the distances of the pairs of rows
// (i, j), i < j, row-major.
OpInfo Pdist(bool forward) {
  OpInfo op;
  op.name = forward ? "_pdist_forward" : "pdist";
  op.out = forward ? "_pdist_forward.out" : "";
  op.dtypes = Bit(TSR_DTYPE_FLOAT32) | Bit(TSR_DTYPE_FLOAT64);
  op.tolerance_scale = 10;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    for (const Shape& shape : std::vector<Shape>{{5, 5}, {1, 1}, {1, 5}, {5, 1}}) {
      s.push_back(Described({T(MakeTensor(shape, dtype, rng))}));
    }
    for (double p : {0.0, 1.0, 2.0, 10.0, kInf, 0.5, 1.5}) {
      s.push_back(Described({T(MakeTensor({5, 5}, dtype, rng)), Arg::Double(p)}));
    }
    for (double p : {0.0, 1.0, 2.0, kInf}) {
      s.push_back(Described({T(Coarse({6, 3}, dtype, rng)), Arg::Double(p)}, " coarse"));
    }
    s.push_back(Described({T(MakeTensor({0, 3}, dtype, rng)), Arg::Double(2)}));
    s.push_back(Described({T(MakeTensor({4, 0}, dtype, rng)), Arg::Double(1)}, " (zeros)"));
    s.push_back(Described({T(MakeTensor({30, 4}, dtype, rng)), Arg::Double(2)}));
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& x = s.args[0].tensor;
    const double p = Given(s, 1) ? s.args[1].number : 2;
    const int64_t n = x.shape[0], m = x.shape[1];
    HostTensor out;
    out.dtype = x.dtype;
    out.shape = {n > 1 ? n * (n - 1) / 2 : 0};
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = i + 1; j < n; ++j) {
        out.values.push_back(
            RoundTo(x.dtype, Distance(x.values.data() + i * m, x.values.data() + j * m, m, p)));
      }
    }
    return std::vector<HostTensor>{out};
  };
  if (!forward) {
    op.errors = [](Rng& rng) {
      return std::vector<ErrorInput>{
          Saying(Refused({T(F32({4}, rng))}, TSR_INVALID_ARGUMENT,
                         "pdist only supports 2D tensors (1D)"),
                 "pdist only supports 2D tensors, got: 1D"),
          Saying(Refused({T(F32({2, 3, 4}, rng))}, TSR_INVALID_ARGUMENT,
                         "pdist only supports 2D tensors (3D)"),
                 "pdist only supports 2D tensors, got: 3D"),
          Saying(Refused({T(MakeTensor({4, 3}, TSR_DTYPE_INT32, rng))}, TSR_INVALID_ARGUMENT,
                         "pdist only supports floating-point dtypes"),
                 "pdist only supports floating-point dtypes"),
          Saying(Refused({T(F32({4, 3}, rng)), Arg::Double(-1)}, TSR_INVALID_ARGUMENT,
                         "pdist only supports non-negative p values"),
                 "pdist only supports non-negative p values")};
    };
  }
  return op;
}

}  // namespace

void AddCoreExtraOps(std::vector<OpInfo>& db) {
  db.push_back(AnyAllDims(/*is_all=*/false));
  db.push_back(AnyAllDims(/*is_all=*/true));
  for (bool is_std : {false, true}) {
    for (bool with_mean : {false, true}) {
      for (bool with_dim : {false, true}) db.push_back(Moments(is_std, with_dim, with_mean));
    }
  }
  db.push_back(DivScalarMode());
  db.push_back(Copy());
  db.push_back(Cdist(/*forward=*/false));
  db.push_back(Cdist(/*forward=*/true));
  db.push_back(Pdist(/*forward=*/false));
  db.push_back(Pdist(/*forward=*/true));
}

}  // namespace conformance
}  // namespace tessera
