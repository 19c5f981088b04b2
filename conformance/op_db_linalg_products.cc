// Matrix-vector and batched products and trace (op set 1.8): mv, dot, vdot, addmv, addr,
// baddbmm, addbmm and trace, over the composites of dispatcher/ops/linalg_composites.cc.
// References are direct loops in long double, after ATen's CPU kernels (Blas.cpp,
// LinearAlgebra.cpp, cpu/LinearAlgebraKernel.cpp, ReduceOps.cpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "conformance/op_db.h"
#include "conformance/reference_promotion.h"

namespace tessera {
namespace conformance {
namespace {

using Shape = std::vector<int64_t>;

// Floating operands in [-1, 1], as mm's: sums of a few products stay near 1, where the
// per-dtype tolerances are meant to apply.
MakeOptions Unit(tsr_dtype dtype) {
  MakeOptions o;
  if (IsFloating(dtype)) {
    o.low = -1;
    o.high = 1;
  }
  return o;
}

Arg Operand(const Shape& shape, tsr_dtype dtype, Rng& rng) {
  return Arg::Tensor(MakeTensor(shape, dtype, rng, Unit(dtype)));
}

// Coefficient: a beta or alpha for a result of `dtype`: the double `f` for floating results,
// the int `i` for integral ones, `i != 0` as a bool for bool. Integral results never get a
// fractional one: ATen converts it to the dtype (addmv truncates it) or refuses it (addr).
Arg Coefficient(tsr_dtype dtype, double f, int64_t i) {
  if (dtype == TSR_DTYPE_BOOL) return Arg::ScalarBool(i != 0);
  return IsFloating(dtype) ? Arg::ScalarDouble(f) : Arg::ScalarInt(i);
}

// beta (args[3]) or alpha (args[4]): the schema's default 1 where the sample leaves it out.
double CoefficientAt(const Sample& s, size_t i) { return i < s.args.size() ? s.args[i].number : 1; }

// `self`'s values broadcast to `shape` (its dims aligned from the last, size 1 repeating),
// row-major.
std::vector<double> BroadcastTo(const HostTensor& self, const Shape& shape) {
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  std::vector<double> out(static_cast<size_t>(numel));
  const size_t lead = shape.size() - self.shape.size();
  for (int64_t flat = 0; flat < numel; ++flat) {
    int64_t rest = flat, from = 0, stride = 1;
    for (size_t d = shape.size(); d-- > lead;) {
      const int64_t index = rest % shape[d];
      rest /= shape[d];
      const int64_t size = self.shape[d - lead];
      from += (size == 1 ? 0 : index) * stride;
      stride *= size;
    }
    out[flat] = self.values[from];
  }
  return out;
}

// beta * self + alpha * product, self broadcast to `shape`, rounded to `dtype`. Beta 0 drops
// self altogether, so its NaN and inf do not reach the result: every ATen kernel here
// special-cases it ("nans and infs in self should not propagate"). For bool (addr) the sum of
// 0/1 terms is nonzero exactly when ATen's (beta && self) || (alpha && vec1 && vec2) is true.
HostTensor Scaled(const HostTensor& self, const std::vector<long double>& product,
                  const Shape& shape, tsr_dtype dtype, double beta, double alpha) {
  const std::vector<double> bias = BroadcastTo(self, shape);
  std::vector<long double> out(product.size());
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<long double>(alpha) * product[i];
    if (beta != 0) out[i] += static_cast<long double>(beta) * bias[i];
  }
  return FromLong(shape, dtype, out);
}

// How a sample of a beta/alpha op gives its coefficients.
enum class Scale {
  kDefault,    // left out: beta 1, alpha 1
  kGiven,      // beta 0.5 (2 for integers), alpha -1.5 (3)
  kBetaZero,   // beta 0, alpha -1.5 (3); a floating self holds NaN and inf, which must not show
  kAlphaZero,  // beta 0.5 (2), alpha 0: the product drops out
};

// One sample of a beta/alpha op: self's shape and the two operands' shapes.
struct ScaledCase {
  Shape self, a, b;
  Scale scale;
  std::string note;  // the edge case it stands for
};

Sample MakeScaled(const ScaledCase& c, const char* symbol, tsr_dtype dtype, Rng& rng) {
  Arg self = Operand(c.self, dtype, rng);
  if (c.scale == Scale::kBetaZero && IsFloating(dtype)) {
    for (size_t i = 0; i < self.tensor.values.size(); ++i)
      self.tensor.values[i] = i % 2 == 0 ? NAN : INFINITY;
  }
  Sample s{{self, Operand(c.a, dtype, rng), Operand(c.b, dtype, rng)},
           ShapeString(c.self) + " + " + ShapeString(c.a) + symbol + ShapeString(c.b)};
  switch (c.scale) {
    case Scale::kDefault:
      break;
    case Scale::kGiven:
      s.args.push_back(Coefficient(dtype, 0.5, 2));
      s.args.push_back(Coefficient(dtype, -1.5, 3));
      s.desc += " beta " + s.args[3].ToString() + " alpha " + s.args[4].ToString();
      break;
    case Scale::kBetaZero:
      s.args.push_back(Coefficient(dtype, 0, 0));
      s.args.push_back(Coefficient(dtype, -1.5, 3));
      s.desc += " beta 0";
      if (IsFloating(dtype)) s.desc += ", self NaN and inf";
      break;
    case Scale::kAlphaZero:
      s.args.push_back(Coefficient(dtype, 0.5, 2));
      s.args.push_back(Coefficient(dtype, 0, 0));
      s.desc += " alpha 0";
      break;
  }
  if (!c.note.empty()) s.desc += " (" + c.note + ")";
  return s;
}

// An OpInfo for a beta/alpha op `name` with its out= and in-place forms. Samples whose self
// broadcasts get no in-place case: ATen's in-place forms do not resize self, and the variants
// oracle runs them only where self already has the result's shape (as for addmm_).
OpInfo ScaledOp(const std::string& name, DtypeMask dtypes, std::vector<ScaledCase> cases,
                const char* symbol) {
  OpInfo op;
  op.name = name;
  op.out = name + ".out";
  op.inplace = name + "_";
  op.dtypes = dtypes;
  op.tolerance_scale = 10;
  op.samples = [cases = std::move(cases), symbol](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    for (const ScaledCase& c : cases) s.push_back(MakeScaled(c, symbol, dtype, rng));
    return s;
  };
  return op;
}

Arg Of(const Shape& shape, tsr_dtype dtype, Rng& rng) {
  return Arg::Tensor(MakeTensor(shape, dtype, rng));
}

// Every refusal here is a RuntimeError in PyTorch (a TORCH_CHECK on ranks, sizes, dtypes or
// scalars): none is an IndexError. `message`: a part of the refusal's message (ErrorInput's).
ErrorInput Refused(std::vector<Arg> args, const std::string& what, const std::string& message) {
  return {{std::move(args), what}, TSR_INVALID_ARGUMENT, what, message};
}

constexpr tsr_dtype kF32 = TSR_DTYPE_FLOAT32;
constexpr tsr_dtype kF64 = TSR_DTYPE_FLOAT64;

// ---- the ops ----

// mv (Blas.cpp: addmv_ into an empty [n] with beta 0) and dot/vdot (dot_check). Neither takes
// bool: their CPU dispatch lists every numeric type and no bool. Integers accumulate in the
// dtype itself (wrapping, which long double rounded to the dtype matches).
void AddMvDot(std::vector<OpInfo>& db) {
  {
    OpInfo op;
    op.name = "mv";
    op.out = "mv.out";
    op.dtypes = kNumericMask;
    op.tolerance_scale = 10;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      for (const auto& [n, k] :
           std::vector<std::pair<int64_t, int64_t>>{{5, 7}, {1, 13}, {13, 1}, {0, 3}, {4, 0}}) {
        s.push_back({{Operand({n, k}, dtype, rng), Operand({k}, dtype, rng)},
                     ShapeString({n, k}) + " @ " + ShapeString({k})});
      }
      return s;
    };
    op.reference = [](const Sample& s) {
      const HostTensor &a = s.args[0].tensor, &v = s.args[1].tensor;
      const int64_t n = a.shape[0], k = a.shape[1];
      return std::vector<HostTensor>{FromLong({n}, a.dtype, MatMul(a, v, 1, n, k, 1))};
    };
    op.errors = [](Rng& rng) {
      return std::vector<ErrorInput>{
          Refused({Of({3}, kF32, rng), Of({3}, kF32, rng)}, "a 1D matrix",
                  "expected mat to be a 2D tensor, got 1D"),
          Refused({Of({2, 3}, kF32, rng), Of({3, 1}, kF32, rng)}, "a 2D vector",
                  "expected vec to be a 1D tensor, got 2D"),
          Refused({Of({2, 3}, kF32, rng), Of({4}, kF32, rng)}, "sizes that differ",
                  "size mismatch: mat [2, 3] @ vec [4]"),
          Refused({Of({2, 3}, kF32, rng), Of({3}, kF64, rng)}, "float32 matrix, float64 vector",
                  "expected mat and vec to have the same dtype, but got float32 and float64")};
    };
    db.push_back(std::move(op));
  }
  for (const char* name : {"dot", "vdot"}) {
    OpInfo op;
    op.name = name;
    op.out = std::string(name) + ".out";
    op.dtypes = kNumericMask;
    op.tolerance_scale = 10;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      for (int64_t n : {7, 1, 0, 33}) {
        s.push_back({{Operand({n}, dtype, rng), Operand({n}, dtype, rng)},
                     ShapeString({n}) + " . " + ShapeString({n})});
      }
      return s;
    };
    op.reference = [](const Sample& s) {
      const HostTensor &x = s.args[0].tensor, &y = s.args[1].tensor;
      return std::vector<HostTensor>{FromLong({}, x.dtype, MatMul(x, y, 1, 1, x.shape[0], 1))};
    };
    // After PyTorch's error_inputs_dot_vdot: the dtypes are checked before the sizes.
    op.errors = [](Rng& rng) {
      return std::vector<ErrorInput>{
          Refused({Of({1}, kF32, rng), Of({3}, TSR_DTYPE_FLOAT16, rng)},
                  "float32 . float16 (the dtypes checked before the sizes)",
                  "expected both vectors to have the same dtype, but found float32 and float16"),
          Refused({Of({1, 1}, kF32, rng), Of({3}, kF32, rng)}, "a 2D operand",
                  "1D tensors expected, but got 2D and 1D tensors"),
          Refused({Of({}, kF32, rng), Of({1}, kF32, rng)}, "a 0-dim operand",
                  "1D tensors expected, but got 0D and 1D tensors"),
          Refused({Of({9}, kF32, rng), Of({3}, kF32, rng)}, "sizes that differ",
                  "inconsistent tensor size")};
    };
    db.push_back(std::move(op));
  }
}

// addmv (Blas.cpp): mat, vec and self of one dtype, self [n], [1] or 0-dim (not 2D, though it
// would broadcast). Its shortcut for an empty mat writes beta * self unexpanded, so the k = 0
// sample gives self [n]: a [1] self there would make ATen's result [1].
void AddAddmv(std::vector<OpInfo>& db) {
  OpInfo op = ScaledOp("addmv", kNumericMask,
                       {{{5}, {5, 7}, {7}, Scale::kDefault, ""},
                        {{5}, {5, 7}, {7}, Scale::kGiven, ""},
                        {{1}, {5, 7}, {7}, Scale::kGiven, "self broadcast"},
                        {{}, {5, 7}, {7}, Scale::kGiven, "0-dim self"},
                        {{5}, {5, 7}, {7}, Scale::kBetaZero, ""},
                        {{0}, {0, 3}, {3}, Scale::kGiven, "n = 0"},
                        {{4}, {4, 0}, {0}, Scale::kGiven, "k = 0: beta * self"}},
                       " @ ");
  op.reference = [](const Sample& s) {
    const HostTensor &mat = s.args[1].tensor, &vec = s.args[2].tensor;
    const int64_t n = mat.shape[0], k = mat.shape[1];
    return std::vector<HostTensor>{Scaled(s.args[0].tensor, MatMul(mat, vec, 1, n, k, 1), {n},
                                          mat.dtype, CoefficientAt(s, 3), CoefficientAt(s, 4))};
  };
  op.errors = [](Rng& rng) {
    auto f = [&](const Shape& shape) { return Of(shape, kF32, rng); };
    return std::vector<ErrorInput>{
        Refused({f({3}), f({3}), f({3})}, "a 1D mat", "expected mat to be a 2D tensor, got 1D"),
        Refused({f({3}), f({3, 2}), f({2, 1})}, "a 2D vec",
                "expected vec to be a 1D tensor, got 2D"),
        Refused({f({3, 1}), f({3, 2}), f({2})}, "a 2D self (addmv takes at most 1D)",
                "expected self to be a 1D or 0-dim tensor, got 2D"),
        Refused({f({3}), f({3, 2}), f({4})}, "mat and vec sizes that differ",
                "size mismatch: mat [3, 2] @ vec [4]"),
        Refused({f({2}), f({3, 2}), f({2})}, "self of 2 elements for 3 rows",
                "self of shape [2] must broadcast to the product's shape [3]"),
        Refused({Of({3}, kF64, rng), f({3, 2}), f({2})}, "a float64 self",
                "expected self to have the operands' dtype float32, but got float64"),
        Refused({f({3}), f({3, 2}), Of({2}, kF64, rng)}, "a float64 vec",
                "expected mat and vec to have the same dtype, but got float32 and float64")};
  };
  db.push_back(std::move(op));
}

// addr (LinearAlgebra.cpp build_addr_iter, cpu/LinearAlgebraKernel.cpp addr_kernel): a
// TensorIterator over self expanded to [n, m], vec1 as a column and vec2, so the operands'
// dtypes promote (no other op here does), and a 0-dim self takes part as a full operand
// because it is expanded first. Bool is a case of its own: (beta && self) || (alpha && vec1
// && vec2). check_addr_scalar refuses a bool beta/alpha unless the result is bool, and a
// floating one when the result is integral or bool.
void AddAddr(std::vector<OpInfo>& db) {
  OpInfo op = ScaledOp("addr", kAllMask,
                       {{{5, 4}, {5}, {4}, Scale::kDefault, ""},
                        {{5, 4}, {5}, {4}, Scale::kGiven, ""},
                        {{4}, {5}, {4}, Scale::kGiven, "self broadcast over rows"},
                        {{5, 1}, {5}, {4}, Scale::kGiven, "self broadcast over columns"},
                        {{}, {5}, {4}, Scale::kGiven, "0-dim self"},
                        {{5, 4}, {5}, {4}, Scale::kBetaZero, ""},
                        {{5, 4}, {5}, {4}, Scale::kAlphaZero, ""},
                        {{0, 4}, {0}, {4}, Scale::kGiven, "n = 0"},
                        {{3, 0}, {3}, {0}, Scale::kGiven, "m = 0"}},
                       " outer ");
  auto scaled_samples = std::move(op.samples);
  op.samples = [scaled_samples](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s = scaled_samples(dtype, rng);
    // Operands of two dtypes: the result is their promotion. A 0-dim float64 self makes a
    // float64 result even with float32 vectors (expanded, it is no longer 0-dim).
    for (const tsr_dtype self_dtype : {TSR_DTYPE_INT64, kF64}) {
      if (self_dtype == dtype) continue;
      const Shape self_shape = self_dtype == kF64 ? Shape{} : Shape{5, 4};
      const tsr_dtype result = PromoteTypes(self_dtype, dtype);
      s.push_back(
          {{Operand(self_shape, self_dtype, rng), Operand({5}, dtype, rng),
            Operand({4}, dtype, rng), Coefficient(result, 0.5, 2), Coefficient(result, -1.5, 3)},
           std::string(DtypeName(self_dtype)) + " self " + ShapeString(self_shape) +
               " + [5] outer [4] of " + DtypeName(dtype)});
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor &self = s.args[0].tensor, &v1 = s.args[1].tensor, &v2 = s.args[2].tensor;
    const int64_t n = v1.shape[0], m = v2.shape[0];
    const tsr_dtype dtype = PromoteTypes(PromoteTypes(self.dtype, v1.dtype), v2.dtype);
    return std::vector<HostTensor>{Scaled(self, MatMul(v1, v2, 1, n, 1, m), {n, m}, dtype,
                                          CoefficientAt(s, 3), CoefficientAt(s, 4))};
  };
  op.errors = [](Rng& rng) {
    auto f = [&](const Shape& shape) { return Of(shape, kF32, rng); };
    auto scaled = [&](tsr_dtype dtype, Arg beta, Arg alpha, const std::string& what,
                      const std::string& message) {
      return Refused({Of({2, 3}, dtype, rng), Of({2}, dtype, rng), Of({3}, dtype, rng),
                      std::move(beta), std::move(alpha)},
                     what, message);
    };
    return std::vector<ErrorInput>{
        Refused({f({2, 3}), f({2, 1}), f({3})}, "a 2D vec1",
                "expected vec1 to be a 1D tensor, got 2D"),
        Refused({f({2, 3}), f({2}), f({})}, "a 0-dim vec2",
                "expected vec2 to be a 1D tensor, got 0D"),
        Refused({f({3, 3}), f({2}), f({3})}, "self [3, 3] for a [2, 3] result",
                "self of shape [3, 3] must broadcast to the outer product's shape [2, 3]"),
        Refused({f({1, 2, 3}), f({2}), f({3})}, "a 3D self",
                "self of shape [1, 2, 3] must broadcast to the outer product's shape [2, 3]"),
        scaled(kF32, Arg::ScalarBool(true), Arg::ScalarInt(1), "a bool beta, float32 result",
               "Boolean beta only supported for Boolean results"),
        scaled(TSR_DTYPE_INT64, Arg::ScalarInt(1), Arg::ScalarBool(true),
               "a bool alpha, int64 result", "Boolean alpha only supported for Boolean results"),
        scaled(TSR_DTYPE_INT64, Arg::ScalarDouble(0.5), Arg::ScalarInt(1),
               "a floating beta, int64 result",
               "argument beta must not be a floating point number"),
        scaled(TSR_DTYPE_BOOL, Arg::ScalarBool(true), Arg::ScalarDouble(1.5),
               "a floating alpha, bool result",
               "argument alpha must not be a floating point number")};
  };
  db.push_back(std::move(op));
}

// baddbmm and addbmm (LinearAlgebra.cpp): batch1 [b, n, k], batch2 [b, k, p] and self of one
// dtype; baddbmm's self broadcasts to [b, n, p], addbmm's to [n, p], which adds the b products
// up. Both size their result from batch2's sizes in expand_size before checking ranks, so a 2D
// batch2 is an IndexError there: the rank errors below use shapes that reach the checks.
void AddBatched(std::vector<OpInfo>& db) {
  OpInfo baddbmm = ScaledOp("baddbmm", kNumericMask,
                            {{{3, 4, 5}, {3, 4, 6}, {3, 6, 5}, Scale::kDefault, ""},
                             {{3, 4, 5}, {3, 4, 6}, {3, 6, 5}, Scale::kGiven, ""},
                             {{1}, {3, 4, 6}, {3, 6, 5}, Scale::kGiven, "self broadcast"},
                             {{}, {3, 4, 6}, {3, 6, 5}, Scale::kGiven, "0-dim self"},
                             {{4, 5}, {3, 4, 6}, {3, 6, 5}, Scale::kGiven, "self over batches"},
                             {{3, 1, 5}, {3, 4, 6}, {3, 6, 5}, Scale::kGiven, "self over rows"},
                             {{3, 4, 5}, {3, 4, 6}, {3, 6, 5}, Scale::kBetaZero, ""},
                             {{0, 2, 3}, {0, 2, 4}, {0, 4, 3}, Scale::kGiven, "b = 0"},
                             {{2, 0, 3}, {2, 0, 4}, {2, 4, 3}, Scale::kGiven, "n = 0"},
                             {{2, 3, 4}, {2, 3, 0}, {2, 0, 4}, Scale::kGiven, "k = 0"}},
                            " @ ");
  baddbmm.reference = [](const Sample& s) {
    const HostTensor &b1 = s.args[1].tensor, &b2 = s.args[2].tensor;
    const int64_t b = b1.shape[0], n = b1.shape[1], k = b1.shape[2], p = b2.shape[2];
    return std::vector<HostTensor>{Scaled(s.args[0].tensor, MatMul(b1, b2, b, n, k, p), {b, n, p},
                                          b1.dtype, CoefficientAt(s, 3), CoefficientAt(s, 4))};
  };
  baddbmm.errors = [](Rng& rng) {
    auto f = [&](const Shape& shape) { return Of(shape, kF32, rng); };
    return std::vector<ErrorInput>{
        Refused({f({1}), f({4, 6}), f({3, 6, 5})}, "a 2D batch1",
                "expected batch1 to be a 3D tensor, got 2D"),
        Refused({f({1}), f({3, 4, 6}), f({3, 6, 5, 1})}, "a 4D batch2",
                "expected batch2 to be a 3D tensor, got 4D"),
        Refused({f({1}), f({2, 4, 6}), f({3, 6, 5})}, "batch counts that differ",
                "batch1 and batch2 must have the same number of batches, got 2 and 3"),
        Refused({f({1}), f({3, 4, 6}), f({3, 5, 5})}, "inner sizes that differ",
                "shapes [3, 4, 6] and [3, 5, 5] cannot be multiplied (6 != 5)"),
        Refused({f({2, 3}), f({2, 3, 4}), f({2, 4, 5})}, "self [2, 3] for a [2, 3, 5] result",
                "self of shape [2, 3] must broadcast to the product's shape [2, 3, 5]"),
        Refused({Of({3, 4, 5}, kF64, rng), f({3, 4, 6}), f({3, 6, 5})}, "a float64 self",
                "expected self to have the operands' dtype float32, but got float64"),
        Refused({f({3, 4, 5}), f({3, 4, 6}), Of({3, 6, 5}, kF64, rng)}, "a float64 batch2",
                "expected batch1 and batch2 to have the same dtype, but got float32 and float64")};
  };
  db.push_back(std::move(baddbmm));

  OpInfo addbmm = ScaledOp("addbmm", kNumericMask,
                           {{{4, 5}, {3, 4, 6}, {3, 6, 5}, Scale::kDefault, ""},
                            {{4, 5}, {3, 4, 6}, {3, 6, 5}, Scale::kGiven, ""},
                            {{5}, {3, 4, 6}, {3, 6, 5}, Scale::kGiven, "self over rows"},
                            {{4, 1}, {3, 4, 6}, {3, 6, 5}, Scale::kGiven, "self over columns"},
                            {{1}, {3, 4, 6}, {3, 6, 5}, Scale::kGiven, "self broadcast"},
                            {{}, {3, 4, 6}, {3, 6, 5}, Scale::kGiven, "0-dim self"},
                            {{4, 5}, {3, 4, 6}, {3, 6, 5}, Scale::kBetaZero, ""},
                            {{2, 3}, {0, 2, 4}, {0, 4, 3}, Scale::kGiven, "b = 0: beta * self"},
                            {{0, 3}, {2, 0, 4}, {2, 4, 3}, Scale::kGiven, "n = 0"},
                            {{2, 3}, {2, 2, 0}, {2, 0, 3}, Scale::kGiven, "k = 0: beta * self"}},
                           " @ ");
  addbmm.reference = [](const Sample& s) {
    const HostTensor &b1 = s.args[1].tensor, &b2 = s.args[2].tensor;
    const int64_t b = b1.shape[0], n = b1.shape[1], k = b1.shape[2], p = b2.shape[2];
    const std::vector<long double> each = MatMul(b1, b2, b, n, k, p);
    std::vector<long double> sum(static_cast<size_t>(n * p), 0);
    for (int64_t t = 0; t < b; ++t) {
      for (int64_t i = 0; i < n * p; ++i) sum[i] += each[t * n * p + i];
    }
    return std::vector<HostTensor>{
        Scaled(s.args[0].tensor, sum, {n, p}, b1.dtype, CoefficientAt(s, 3), CoefficientAt(s, 4))};
  };
  addbmm.errors = [](Rng& rng) {
    auto f = [&](const Shape& shape) { return Of(shape, kF32, rng); };
    return std::vector<ErrorInput>{
        Refused({f({1}), f({4, 6}), f({3, 6, 5})}, "a 2D batch1",
                "expected batch1 to be a 3D tensor, got 2D"),
        Refused({f({1}), f({3, 4, 6}), f({3, 6, 5, 1})}, "a 4D batch2",
                "expected batch2 to be a 3D tensor, got 4D"),
        Refused({f({1}), f({2, 4, 6}), f({3, 6, 5})}, "batch counts that differ",
                "batch1 and batch2 must have the same number of batches, got 2 and 3"),
        Refused({f({1}), f({3, 4, 6}), f({3, 5, 5})}, "inner sizes that differ",
                "shapes [3, 4, 6] and [3, 5, 5] cannot be multiplied (6 != 5)"),
        Refused({f({3, 3}), f({2, 2, 4}), f({2, 4, 3})}, "self [3, 3] for a [2, 3] result",
                "self of shape [3, 3] must broadcast to the product's shape [2, 3]"),
        Refused({Of({4, 5}, kF64, rng), f({3, 4, 6}), f({3, 6, 5})}, "a float64 self",
                "expected self to have the operands' dtype float32, but got float64"),
        Refused({f({4, 5}), f({3, 4, 6}), Of({3, 6, 5}, kF64, rng)}, "a float64 batch2",
                "expected batch1 and batch2 to have the same dtype, but got float32 and float64")};
  };
  db.push_back(std::move(addbmm));
}

// trace (ReduceOps.cpp trace_cpu): the diagonal's sum of a matrix, square or not, accumulated
// in int64 for integers (the result is int64, as sum's) and in double for floating types.
// Its CPU dispatch takes no bool, float16 or bfloat16.
void AddTrace(std::vector<OpInfo>& db) {
  OpInfo op;
  op.name = "trace";
  op.out = "trace.out";
  op.dtypes = kIntegralMask | Bit(kF32) | Bit(kF64);
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    for (const Shape& shape :
         std::vector<Shape>{{5, 5}, {3, 7}, {7, 3}, {1, 1}, {0, 0}, {0, 4}, {3, 0}}) {
      s.push_back({{Operand(shape, dtype, rng)}, ShapeString(shape)});
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& x = s.args[0].tensor;
    const int64_t rows = x.shape[0], cols = x.shape[1];
    long double sum = 0;
    for (int64_t i = 0; i < std::min(rows, cols); ++i) sum += x.values[i * cols + i];
    const tsr_dtype dtype = IsFloating(x.dtype) ? x.dtype : TSR_DTYPE_INT64;
    return std::vector<HostTensor>{FromLong({}, dtype, {sum})};
  };
  op.errors = [](Rng& rng) {
    return std::vector<ErrorInput>{
        Refused({Of({3}, kF32, rng)}, "a 1D tensor",
                "expected a matrix, but got tensor with dim 1"),
        Refused({Of({2, 2, 2}, kF32, rng)}, "a 3D tensor",
                "expected a matrix, but got tensor with dim 3"),
        Refused({Of({}, kF32, rng)}, "a 0-dim tensor",
                "expected a matrix, but got tensor with dim 0")};
  };
  db.push_back(std::move(op));
}

}  // namespace

void AddLinalgProductOps(std::vector<OpInfo>& db) {
  AddMvDot(db);
  AddAddmv(db);
  AddAddr(db);
  AddBatched(db);
  AddTrace(db);
}

}  // namespace conformance
}  // namespace tessera
