// Op set 1.8's norms and set membership as composites (linalg_vector_norm, dist:
// dispatcher/ops/reduction_composites.cc; isin: isin_ops.cc).
//
// Semantics are PyTorch's CPU ones, read in aten/src/ATen/native: LinearAlgebra.cpp
// (linalg_vector_norm's meta checks and its size-1 fast path), cpu/ReduceOpsKernel.cpp (the norm
// kernels: float accumulation for float16 and bfloat16, NaN propagated by the inf norms, x != 0
// counted by the 0 norm), ReduceOps.cpp (dist is norm(self - other, p) over every dim),
// TensorCompare.cpp and cpu/TensorCompareKernel.cpp (isin's two algorithms and its promotion).
// Samples follow the OpInfo entries in torch/testing/_internal (opinfo/definitions/linalg.py:
// linalg.vector_norm's reduction samples and sample_kwargs_vector_norm;
// common_methods_invocations.py: sample_inputs_dist, sample_inputs_isin). The references are
// direct loops in long double.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "conformance/op_db.h"
#include "conformance/op_db_helpers.h"

namespace tessera {
namespace conformance {
namespace {

// Reduction: a reduction's output shape and, per output element in row-major order, the input
// values it reduces. `dims` empty reduces every dim (linalg_vector_norm reduces all for dim=None
// and for dim=[] alike); a 0-dim input is one group whatever dim (0 or -1) and keepdim say.
struct Reduction {
  std::vector<int64_t> shape;
  std::vector<std::vector<double>> groups;
};
Reduction Reduce(const HostTensor& in, const std::vector<int64_t>& dims, bool keepdim) {
  const int64_t nd = in.dim();
  std::vector<bool> reduced(static_cast<size_t>(nd), dims.empty());
  for (int64_t d : dims) {
    if (nd > 0) reduced[static_cast<size_t>(d < 0 ? d + nd : d)] = true;
  }
  Reduction r;
  int64_t count = 1;
  for (int64_t d = 0; d < nd; ++d) {
    if (!reduced[static_cast<size_t>(d)]) count *= in.shape[d];
    if (!reduced[static_cast<size_t>(d)] || keepdim) {
      r.shape.push_back(reduced[static_cast<size_t>(d)] ? 1 : in.shape[d]);
    }
  }
  r.groups.resize(static_cast<size_t>(count));
  for (int64_t flat = 0; flat < in.numel(); ++flat) {
    int64_t rest = flat, o = 0, stride = 1;
    for (int64_t d = nd - 1; d >= 0; --d) {
      const int64_t i = rest % in.shape[d];
      rest /= in.shape[d];
      if (reduced[static_cast<size_t>(d)]) continue;
      o += i * stride;
      stride *= in.shape[d];
    }
    r.groups[static_cast<size_t>(o)].push_back(in.values[static_cast<size_t>(flat)]);
  }
  return r;
}

// VectorNormOf: the ord-norm of one group as PyTorch's norm kernels define it: ord 0 counts the
// x != 0 (NaN included), +-inf take the largest / smallest |x| and propagate NaN, any other ord is
// (sum |x|^ord)^(1/ord), so a zero under a negative ord gives inf^(1/ord) = 0. PyTorch accumulates
// float16 and bfloat16 in float (so |x|^ord may pass their range); samples keep |x|^ord inside
// float's, where this long double sum and PyTorch's agree.
double VectorNormOf(const std::vector<double>& v, double ord) {
  if (std::isinf(ord)) {
    long double best = ord > 0 ? 0 : INFINITY;
    for (double x : v) {
      if (std::isnan(x)) return NAN;
      best = ord > 0 ? std::max(best, std::fabs(static_cast<long double>(x)))
                     : std::min(best, std::fabs(static_cast<long double>(x)));
    }
    return static_cast<double>(best);
  }
  const long double p = ord;
  long double acc = 0;
  for (double x : v) {
    const long double a = std::fabs(static_cast<long double>(x));
    acc += ord == 0 ? (x != 0 ? 1 : 0) : ord == 1 ? a : ord == 2 ? a * a : std::pow(a, p);
  }
  if (ord == 0 || ord == 1) return static_cast<double>(acc);
  return static_cast<double>(ord == 2 ? std::sqrt(acc) : std::pow(acc, 1 / p));
}

// NormOf: the ord-norm over `dims`, rounded to `dtype`.
HostTensor NormOf(const HostTensor& in, const std::vector<int64_t>& dims, bool keepdim,
                  tsr_dtype dtype, double ord) {
  const Reduction r = Reduce(in, dims, keepdim);
  HostTensor t = Values(dtype, r.shape, {});
  for (const std::vector<double>& v : r.groups) {
    t.values.push_back(RoundTo(dtype, VectorNormOf(v, ord)));
  }
  return t;
}

// sample_kwargs_vector_norm's orders: those with an identity (6, 4, 2, 1, 0, 0.9) then those
// without (inf, -2.1, -inf), which empty inputs skip.
const std::vector<Arg>& NormOrds() {
  static const std::vector<Arg> ords = {
      Arg::ScalarInt(6),           Arg::ScalarInt(4),       Arg::ScalarInt(2),
      Arg::ScalarInt(1),           Arg::ScalarInt(0),       Arg::ScalarDouble(0.9),
      Arg::ScalarDouble(INFINITY), Arg::ScalarDouble(-2.1), Arg::ScalarDouble(-INFINITY)};
  return ords;
}

// The widening dtype= each input dtype is allowed (promote_types(self, dtype) == dtype).
tsr_dtype WiderFloat(tsr_dtype d) {
  return d == TSR_DTYPE_FLOAT32 || d == TSR_DTYPE_FLOAT64 ? TSR_DTYPE_FLOAT64 : TSR_DTYPE_FLOAT32;
}

// linalg_vector_norm(self, ord=2, dim=None, keepdim=False, *, dtype=None): floating inputs only;
// dtype= converts the input first and may only widen.
OpInfo LinalgVectorNorm() {
  OpInfo op;
  op.name = "linalg_vector_norm";
  op.out = "linalg_vector_norm.out";
  op.dtypes = kFloatingMask;
  op.tolerance_scale = 10;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    const auto add = [&](HostTensor in, const Arg& ord, Arg dim, bool keepdim, Arg dt,
                         const std::string& note = "") {
      s.push_back(Described(
          {Arg::Tensor(std::move(in)), ord, std::move(dim), Arg::Bool(keepdim), std::move(dt)},
          note));
    };
    // PyTorch's reduction samples (opinfo/core.py _generate_reduction_inputs and _kwargs), two
    // orders each in turn so that every order meets every rank.
    size_t turn = 0;
    for (const std::vector<int64_t>& shape :
         std::vector<std::vector<int64_t>>{{}, {2}, {3, 5}, {3, 2, 1, 2}}) {
      const int64_t nd = static_cast<int64_t>(shape.size());
      std::vector<std::pair<std::optional<std::vector<int64_t>>, bool>> dims = {
          {std::nullopt, false},
          {std::vector<int64_t>{0}, true},
          {std::vector<int64_t>{-1}, false}};
      if (nd > 2) dims.push_back({std::vector<int64_t>{nd / 2}, true});
      std::vector<int64_t> all(static_cast<size_t>(nd));
      std::iota(all.begin(), all.end(), 0);
      dims.push_back({all, false});
      if (nd > 1) dims.push_back({std::vector<int64_t>{0, -1}, true});
      if (nd > 3) dims.push_back({std::vector<int64_t>{1, 3}, false});
      for (const auto& [dim, keepdim] : dims) {
        for (int k = 0; k < 2; ++k) {
          const Arg& ord = NormOrds()[turn++ % NormOrds().size()];
          add(MakeTensor(shape, dtype, rng), ord, dim ? Arg::Ints(*dim) : Arg::None(), keepdim,
              Arg::None());
        }
      }
    }
    // Empty inputs: the orders with an identity over no elements give 0; a reduction over
    // non-empty dims of an empty input is an empty result for every order.
    for (const Arg& ord : {NormOrds()[2], NormOrds()[4], NormOrds()[5]}) {
      add(MakeTensor({0}, dtype, rng), ord, Arg::None(), false, Arg::None());
    }
    add(MakeTensor({4, 0}, dtype, rng), NormOrds()[0], Arg::Ints({1}), false, Arg::None());
    for (const Arg& ord : {NormOrds()[6], NormOrds()[7]}) {
      add(MakeTensor({0, 3}, dtype, rng), ord, Arg::Ints({1}), true, Arg::None());
    }
    // Lines with NaN, infinities and zeros along dim 1 (a NaN makes every order but 0 NaN; a zero
    // makes the negative orders 0), for the orders with special kernels and two general ones.
    const HostTensor lines = Values(
        dtype, {5, 4},
        {1, NAN, -2, 3, INFINITY, 1, -2, 0.5, -INFINITY, 0, 2, 1, 0, -0.0, 0, 0, 1.5, -2, 3, -4});
    for (const Arg& ord : {Arg::ScalarInt(2), Arg::ScalarInt(1), Arg::ScalarInt(0),
                           Arg::ScalarDouble(INFINITY), Arg::ScalarDouble(-INFINITY),
                           Arg::ScalarDouble(0.5), Arg::ScalarInt(-1), Arg::ScalarInt(3)}) {
      add(lines, ord, Arg::Ints({1}), false, Arg::None(), " (nan, inf, -inf and zero lines)");
    }
    // dtype= (a widening one, and the input's own) converts before reducing.
    add(MakeTensor({3, 5}, dtype, rng), Arg::ScalarInt(2), Arg::Ints({1}), false,
        Arg::Dtype(WiderFloat(dtype)));
    add(MakeTensor({3, 5}, dtype, rng), Arg::ScalarDouble(INFINITY), Arg::None(), true,
        Arg::Dtype(dtype));
    if (dtype == TSR_DTYPE_FLOAT16) {
      add(Values(dtype, {2}, {300, -400}), Arg::ScalarInt(2), Arg::None(), false, Arg::None(),
          " (squares past float16's range: PyTorch accumulates in float)");
    }
    s.push_back(Described({Arg::Tensor(MakeTensor({3, 5}, dtype, rng))}));
    s.push_back(Described({Arg::Tensor(MakeTensor({3, 5}, dtype, rng)), Arg::ScalarDouble(3.5)}));
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& in = s.args[0].tensor;
    const double ord = Given(s, 1) ? s.args[1].number : 2;
    const tsr_dtype dtype = Given(s, 4) ? s.args[4].dtype : in.dtype;
    const std::vector<int64_t> dims = Given(s, 2) ? s.args[2].ints : std::vector<int64_t>{};
    return std::vector<HostTensor>{NormOf(in, dims, Given(s, 3) && s.args[3].boolean, dtype, ord)};
  };
  op.errors = [](Rng& rng) {
    const auto refused = [&rng](std::vector<int64_t> shape, tsr_dtype dtype, double ord, Arg dim,
                                Arg dt, tsr_code code, const std::string& what) {
      return Refused({Arg::Tensor(MakeTensor(std::move(shape), dtype, rng)), Arg::ScalarDouble(ord),
                      std::move(dim), Arg::Bool(false), std::move(dt)},
                     code, what);
    };
    const tsr_dtype f32 = TSR_DTYPE_FLOAT32, f16 = TSR_DTYPE_FLOAT16;
    const tsr_code invalid = TSR_INVALID_ARGUMENT;
    const Arg none = Arg::None();
    const std::string no_identity = "an order without identity over no elements";
    const std::string narrowing = "a dtype= that narrows or is not floating";
    return std::vector<ErrorInput>{
        Saying(refused({0}, f32, INFINITY, none, none, invalid, no_identity),
               "the dim is empty and the inf norm has no identity"),
        Saying(refused({3, 0}, f32, -1, Arg::Ints({}), none, invalid, no_identity),
               "the dim is empty and the -1 norm has no identity"),
        Saying(refused({3, 0}, f32, -INFINITY, Arg::Ints({1}), none, invalid, no_identity),
               "the dim is empty and the -inf norm has no identity"),
        Saying(refused({0, 3}, f32, INFINITY, Arg::Ints({0, 1}), none, invalid, no_identity),
               "the dim is empty and the inf norm has no identity"),
        Saying(refused({3}, TSR_DTYPE_INT32, 2, none, none, invalid, "an integer input"),
               "Expected a floating point tensor as input. Got int32"),
        Saying(refused({3}, TSR_DTYPE_BOOL, 2, none, none, invalid, "a bool input"),
               "Expected a floating point tensor as input. Got bool"),
        Saying(refused({3}, TSR_DTYPE_INT64, 2, none, Arg::Dtype(f32), invalid,
                       "an integer input (dtype= does not make it legal)"),
               "Expected a floating point tensor as input. Got int64"),
        Saying(refused({3}, f32, 2, none, Arg::Dtype(f16), invalid, narrowing),
               "should be convertible without narrowing to the specified dtype (float16)"),
        Saying(refused({3}, f16, 2, none, Arg::Dtype(TSR_DTYPE_BFLOAT16), invalid, narrowing),
               "should be convertible without narrowing to the specified dtype (bfloat16)"),
        Saying(refused({3}, TSR_DTYPE_FLOAT64, 2, none, Arg::Dtype(f32), invalid, narrowing),
               "should be convertible without narrowing to the specified dtype (float32)"),
        Saying(refused({3}, f32, 2, none, Arg::Dtype(TSR_DTYPE_INT64), invalid, narrowing),
               "dtype should be a floating point dtype. Got int64"),
        Saying(
            refused({2, 3}, f32, 2, Arg::Ints({2}), none, TSR_OUT_OF_RANGE, "a dim out of range"),
            "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
        Saying(refused({}, f32, 2, Arg::Ints({1}), none, TSR_OUT_OF_RANGE,
                       "a dim other than 0 or -1 of a 0-dim input"),
               "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
        Saying(refused({2, 3}, f32, 2, Arg::Ints({0, -2}), none, invalid, "a dim given twice"),
               "dim 0 appears multiple times in the list of dims")};
  };
  return op;
}

// dist(self, other, p=2) = norm(self - other, p) over every dim: the difference is taken (and
// rounded) in the promoted dtype, which must be floating; the result is 0-dim.
OpInfo Dist() {
  OpInfo op;
  op.name = "dist";
  op.out = "dist.out";
  op.dtypes = kFloatingMask;
  op.tolerance_scale = 10;
  op.elementwise = true;  // its operands broadcast
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    const auto add = [&](HostTensor a, HostTensor b, std::optional<Arg> p) {
      std::vector<Arg> args = {Arg::Tensor(std::move(a)), Arg::Tensor(std::move(b))};
      if (p) args.push_back(*p);
      s.push_back(Described(std::move(args)));
    };
    const auto make = [&](std::vector<int64_t> shape, tsr_dtype d) {
      return MakeTensor(std::move(shape), d, rng);
    };
    // sample_inputs_dist's sizes, paired to cover broadcasting either way, p 2 and 4 in turn.
    const std::vector<std::vector<int64_t>> a = {{5, 5, 5}, {5, 5, 5}, {5}, {5, 1, 5}, {5, 5},
                                                 {},        {5, 5},    {},  {5, 1, 5}, {5}};
    const std::vector<std::vector<int64_t>> b = {{5, 5, 5}, {5}, {5, 5, 5}, {5, 5},    {5, 1, 5},
                                                 {5, 5},    {},  {},        {5, 1, 5}, {}};
    for (size_t i = 0; i < a.size(); ++i) {
      add(make(a[i], dtype), make(b[i], dtype), Arg::ScalarInt(i % 2 ? 4 : 2));
    }
    for (const Arg& p : {Arg::ScalarInt(0), Arg::ScalarInt(1), Arg::ScalarDouble(INFINITY),
                         Arg::ScalarDouble(-INFINITY), Arg::ScalarDouble(0.5), Arg::ScalarInt(-1),
                         Arg::ScalarDouble(3.5)}) {
      add(make({5, 5}, dtype), make({5}, dtype), p);
    }
    add(make({5, 5}, dtype), make({5}, dtype), std::nullopt);
    // Type promotion: an integer operand takes the floating one's dtype; a 0-dim operand of the
    // same category does not promote the other.
    add(make({5, 5}, dtype), make({5}, TSR_DTYPE_INT64), Arg::ScalarInt(2));
    add(make({5}, TSR_DTYPE_INT32), make({5, 5}, dtype), Arg::ScalarInt(1));
    const tsr_dtype other = dtype == TSR_DTYPE_FLOAT64 ? TSR_DTYPE_FLOAT32 : TSR_DTYPE_FLOAT64;
    add(make({5}, dtype), make({}, other), Arg::ScalarInt(2));
    // Empty operands: 0 for the orders with an identity.
    add(make({0}, dtype), make({0}, dtype), Arg::ScalarInt(2));
    add(make({0, 3}, dtype), make({3}, dtype), Arg::ScalarInt(0));
    add(make({0, 3}, dtype), make({3}, dtype), Arg::ScalarDouble(0.5));
    // NaN and infinities in the difference.
    for (const Arg& p : {Arg::ScalarInt(2), Arg::ScalarDouble(INFINITY), Arg::ScalarInt(0)}) {
      add(ExtremeTensor(dtype), Values(dtype, {}, {1}), p);
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    const tsr_dtype dtype = ResultDtype({&s.args[0], &s.args[1]});
    const HostTensor diff =
        Elementwise({&s.args[0], &s.args[1]}, dtype, [](const double* x) { return x[0] - x[1]; });
    return std::vector<HostTensor>{
        NormOf(diff, {}, false, dtype, Given(s, 2) ? s.args[2].number : 2)};
  };
  op.errors = [](Rng& rng) {
    const auto refused = [&rng](std::vector<int64_t> a, std::vector<int64_t> b, tsr_dtype dtype,
                                double p, const std::string& what) {
      return Refused({Arg::Tensor(MakeTensor(std::move(a), dtype, rng)),
                      Arg::Tensor(MakeTensor(std::move(b), dtype, rng)), Arg::ScalarDouble(p)},
                     TSR_INVALID_ARGUMENT, what);
    };
    const tsr_dtype f32 = TSR_DTYPE_FLOAT32;
    // An empty difference under inf or a negative p: dist reduces over dim=[] through
    // linalg_vector_norm, which has no identity for them (PyTorch 1.13 returned 0 instead).
    const std::string no_identity = "an order without identity over no elements";
    return std::vector<ErrorInput>{
        Saying(refused({0}, {0}, f32, INFINITY, no_identity),
               "the dim is empty and the inf norm has no identity"),
        Saying(refused({0, 3}, {3}, f32, -1, no_identity),
               "the dim is empty and the -1 norm has no identity"),
        Saying(refused({2, 3}, {4}, f32, 2, "shapes that do not broadcast"),
               "the size of tensor a (3) must match the size of tensor b (4) at non-singleton "
               "dimension 1"),
        Saying(refused({3}, {3}, TSR_DTYPE_INT64, 2, "an integer difference"),
               "expected floating point operands, got int64 and int64"),
        Saying(refused({3}, {3}, TSR_DTYPE_BOOL, 2, "bool operands (no bool subtraction)"),
               "expected floating point operands, got bool and bool")};
  };
  return op;
}

// Values every dtype holds exactly (uint8's from 0), so that elements and test elements meet
// and either of PyTorch's isin algorithms promotes to the same answer; floating ones add halves.
std::vector<double> Pool(tsr_dtype dtype) {
  std::vector<double> pool;
  for (int v = dtype == TSR_DTYPE_UINT8 ? 0 : -9; v <= 9; ++v) pool.push_back(v);
  if (IsFloating(dtype)) pool.insert(pool.end(), {-0.5, 1.5, 2.5});
  return pool;
}

// Picks: a tensor of values drawn from the pool (with repeats), or `unique` ones: distinct,
// as assume_unique=True requires of the elements.
HostTensor Picks(std::vector<int64_t> shape, tsr_dtype dtype, Rng& rng, bool unique = false) {
  std::vector<double> pool = Pool(dtype);
  std::shuffle(pool.begin(), pool.end(), rng);
  std::uniform_int_distribution<size_t> pick(0, pool.size() - 1);
  HostTensor t = Values(dtype, std::move(shape), {});
  for (int64_t i = 0; i < t.numel(); ++i) {
    t.values.push_back(unique ? pool[static_cast<size_t>(i)] : pool[pick(rng)]);
  }
  return t;
}

// isin(elements, test_elements, *, assume_unique=False, invert=False) -> bool of elements'
// shape (0-dim for a Scalar element): each element compared with ==, both converted to their
// result_type first, so NaN is never found and -0.0 finds 0.0; invert negates.
std::vector<HostTensor> IsinReference(const Sample& s) {
  const Arg& elements = s.args[0];
  const Arg& tests = s.args[1];
  const tsr_dtype common = ResultDtype({&elements, &tests});
  const auto values = [common](const Arg& a) {
    std::vector<double> v =
        a.kind == Arg::Kind::kTensor ? a.tensor.values : std::vector<double>{a.number};
    for (double& x : v) x = RoundTo(common, x);
    return v;
  };
  const std::vector<double> test = values(tests);
  const bool invert = Given(s, 3) && s.args[3].boolean;
  HostTensor out = Values(
      TSR_DTYPE_BOOL,
      elements.kind == Arg::Kind::kTensor ? elements.tensor.shape : std::vector<int64_t>{}, {});
  for (double x : values(elements)) {
    const bool found = std::find(test.begin(), test.end(), x) != test.end();
    out.values.push_back(found != invert ? 1 : 0);
  }
  return {out};
}

enum class IsinForm { kTensorTensor, kTensorScalar, kScalarTensor };

// isin's three overloads (Tensor_Tensor, Tensor_Scalar, Scalar_Tensor). PyTorch compares element
// by element when test_elements.numel() < 10 * elements.numel()^0.145 and else sorts both
// (unique'd unless assume_unique) together; samples take both paths: [20] in [5] and [5] in
// [20] as sample_inputs_isin does. Bool (and complex) inputs are refused.
OpInfo Isin(IsinForm form) {
  OpInfo op;
  op.name = form == IsinForm::kTensorTensor   ? "isin.Tensor_Tensor"
            : form == IsinForm::kTensorScalar ? "isin.Tensor_Scalar"
                                              : "isin.Scalar_Tensor";
  op.out = op.name + "_out";
  op.dtypes = kNumericMask;
  op.samples = [form](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    const auto add = [&](Arg e, Arg t, std::optional<bool> unique, bool invert) {
      std::vector<Arg> args = {std::move(e), std::move(t)};
      if (unique) args.insert(args.end(), {Arg::Bool(*unique), Arg::Bool(invert)});
      s.push_back(Described(std::move(args)));
    };
    const auto picks = [&](std::vector<int64_t> shape, bool unique = false) {
      return Arg::Tensor(Picks(std::move(shape), dtype, rng, unique));
    };
    const bool floating = IsFloating(dtype);
    // NaN is in nothing (not even with NaN among the tests), -0.0 is in [0], on either path.
    const Arg nan_row = Arg::Tensor(Values(dtype, {6}, {NAN, 1, 2, -0.0, 3, NAN}));
    const std::vector<double> few = {NAN, 2, 0},
                              many = {NAN, 2, 0, 4, 5, 6, 7, 8, 9, -1, -2, -3, -4, -5};
    if (form == IsinForm::kTensorTensor) {
      add(picks({20}), picks({5}), std::nullopt, false);
      for (bool invert : {false, true}) {
        add(picks({5}), picks({20}), false, invert);
        add(picks({20}), picks({5}), false, invert);
        add(picks({5}, true), picks({20}), true, invert);
      }
      add(picks({8}, true), picks({3}), true, false);
      add(picks({3, 4}), picks({2, 3}), false, false);
      add(picks({}), picks({3}), false, false);
      add(picks({0, 3}), picks({4}), false, false);
      add(picks({2, 3}), picks({0}), false, true);
      // Promotion: the comparison is in result_type(elements, test_elements).
      const tsr_dtype other = floating ? TSR_DTYPE_INT64 : TSR_DTYPE_FLOAT32;
      add(picks({6}), Arg::Tensor(Picks({4}, other, rng)), false, false);
      const tsr_dtype same_kind = dtype == TSR_DTYPE_FLOAT64 ? TSR_DTYPE_FLOAT16
                                  : floating                 ? TSR_DTYPE_FLOAT64
                                  : dtype == TSR_DTYPE_UINT8 ? TSR_DTYPE_INT8
                                                             : TSR_DTYPE_UINT8;
      add(picks({6}), Arg::Tensor(Picks({20}, same_kind, rng)), false, false);
      if (floating) {
        for (bool invert : {false, true}) {
          add(nan_row, Arg::Tensor(Values(dtype, {3}, few)), false, invert);
          add(nan_row, Arg::Tensor(Values(dtype, {14}, many)), false, invert);
        }
      }
    } else if (form == IsinForm::kTensorScalar) {
      add(picks({5, 4}), Arg::ScalarInt(3), std::nullopt, false);
      add(picks({5, 4}), Arg::ScalarInt(3), false, true);
      add(picks({5, 4}), Arg::ScalarDouble(2), false, false);
      add(picks({5, 4}), Arg::ScalarDouble(2.5), false, false);
      add(picks({}), Arg::ScalarInt(3), true, false);
      add(picks({0, 3}), Arg::ScalarInt(3), false, false);
      if (floating) {
        for (bool invert : {false, true}) add(nan_row, Arg::ScalarDouble(NAN), false, invert);
        add(nan_row, Arg::ScalarInt(0), false, false);
      }
    } else {
      HostTensor with3 = Picks({5}, dtype, rng);
      with3.values[1] = 3;
      add(Arg::ScalarInt(3), Arg::Tensor(with3), std::nullopt, false);
      add(Arg::ScalarInt(3), picks({20}), false, false);
      add(Arg::ScalarDouble(2), picks({4, 5}), false, true);
      add(Arg::ScalarDouble(2.5), picks({5}), false, false);
      add(Arg::ScalarInt(3), picks({}), false, false);
      add(Arg::ScalarInt(3), picks({0}), false, true);
    }
    return s;
  };
  op.reference = IsinReference;
  op.errors = [form](Rng& rng) {
    // The form's operand of a dtype: a Scalar where the form has one.
    const auto operand = [&rng](bool tensor, tsr_dtype dtype) {
      return tensor                    ? Arg::Tensor(MakeTensor({3}, dtype, rng))
             : dtype == TSR_DTYPE_BOOL ? Arg::ScalarBool(true)
                                       : Arg::ScalarInt(1);
    };
    const bool e = form != IsinForm::kScalarTensor, t = form != IsinForm::kTensorScalar;
    return std::vector<ErrorInput>{
        Saying(Refused({operand(e, TSR_DTYPE_BOOL), operand(t, TSR_DTYPE_INT64)},
                       TSR_INVALID_ARGUMENT, "bool elements"),
               "Unsupported input type encountered for isin(): bool"),
        Saying(Refused({operand(e, TSR_DTYPE_INT64), operand(t, TSR_DTYPE_BOOL)},
                       TSR_INVALID_ARGUMENT, "bool test elements"),
               "Unsupported input type encountered for isin(): bool")};
  };
  return op;
}

}  // namespace

void AddNormSetOps(std::vector<OpInfo>& db) {
  db.push_back(LinalgVectorNorm());
  db.push_back(Dist());
  db.push_back(Isin(IsinForm::kTensorTensor));
  db.push_back(Isin(IsinForm::kTensorScalar));
  db.push_back(Isin(IsinForm::kScalarTensor));
}

}  // namespace conformance
}  // namespace tessera
