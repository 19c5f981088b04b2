// The backward ops of op set 1.9's pairwise distances (op set 1.10, family "training"):
// _cdist_backward and _pdist_backward with their out= forms; composites,
// dispatcher/ops/distance_backward_ops.cc.
//
// The references are ATen's CPU kernel (cpu/DistanceOpsKernel.cpp, Dist<scalar_t>::backward of
// odist_calc, lttdist_calc, tdist_calc, pdist_calc, idist_calc) written out pair by pair in long
// double: each pair's component difference, rounded to the dtype as the kernel forms it, its
// term T(diff, g, d) by p's rule (0 for p = 0; g sign(diff) for p = 1; 0 where d = 0, and for
// p < 1 where diff = 0, which is where the p-norm has no derivative; the inf norm's gradient
// goes to every component at the maximum), summed over x2's rows (cdist) or given +T to row i
// and -T to row j (pdist). The distances passed in are the forward's, computed here from the
// same rounded differences. _cdist_backward returns x1's gradient in x1's shape with the batch
// dims broadcast against x2's (zeros of x1's own shape when nothing is differentiated), as ATen
// does. Samples: every p (0, 0.5, 1, 1.5, 2, 3, inf) on rows that coincide, components that tie
// and maxima that tie; batched and broadcast batches; empty rows, columns and batches; the rows
// past 25 where cdist's forward takes the matrix product. The GradientSpecs check them against
// _cdist_forward and _pdist_forward with random rows (no ties).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "conformance/op_db.h"
#include "conformance/op_db_helpers.h"

namespace tessera {
namespace conformance {
namespace {

using Shape = std::vector<int64_t>;
using Args = std::vector<Arg>;
using Returns = std::vector<HostTensor>;

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kPs[] = {0, 0.5, 1, 1.5, 2, 3, kInf};

Arg T(HostTensor t) { return Arg::Tensor(std::move(t)); }

HostTensor Random(Shape shape, tsr_dtype dtype, Rng& rng, double low = -2, double high = 2) {
  return Uniform(std::move(shape), dtype, rng, low, high);
}

HostTensor F32(Shape shape, Rng& rng) { return Random(std::move(shape), TSR_DTYPE_FLOAT32, rng); }

int64_t Product(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// ExpandTo: `t`'s values broadcast to `shape`.
HostTensor ExpandTo(const HostTensor& t, const Shape& shape) {
  const Arg from = Arg::Tensor(t);
  const Arg to = Arg::Tensor(Full(shape, t.dtype, 0));
  return Elementwise({&from, &to}, t.dtype, [](const double* v) { return v[0]; });
}

// Sign as ATen's sign(): 0 for 0.
double Sign(double v) { return v > 0 ? 1 : v < 0 ? -1 : 0; }

// Term: the kernel's backward for one component: diff (rounded), the pair's g and distance d.
long double Term(double diff, double g, double d, double p) {
  if (p == 0) return 0;
  if (p == 1) return g * Sign(diff);
  if (p < 2) {
    if (d == 0 || (p < 1 && diff == 0)) return 0;
    return Sign(diff) * std::pow(static_cast<long double>(std::fabs(diff)), p - 1) * g /
           std::pow(static_cast<long double>(d), p - 1);
  }
  if (p == 2) return d == 0 ? 0 : static_cast<long double>(g) * diff / d;
  if (std::isinf(p)) return std::fabs(diff) == d ? g * Sign(diff) : 0;
  if (d == 0) return 0;
  return diff * std::pow(static_cast<long double>(std::fabs(diff)), p - 2) * g /
         std::pow(static_cast<long double>(d), p - 1);
}

// Norm: the p-norm of the rounded differences of rows a and b (c components), in the dtype.
double Norm(const double* a, const double* b, int64_t c, double p, tsr_dtype dtype) {
  long double acc = 0;
  for (int64_t k = 0; k < c; ++k) {
    const long double diff = std::fabs(RoundTo(dtype, a[k] - b[k]));
    if (p == 0) {
      acc += diff != 0;
    } else if (std::isinf(p)) {
      acc = std::max(acc, diff);
    } else {
      acc += std::pow(diff, static_cast<long double>(p));
    }
  }
  if (p != 0 && !std::isinf(p)) acc = std::pow(acc, 1 / static_cast<long double>(p));
  return RoundTo(dtype, static_cast<double>(acc));
}

// ---- _cdist_backward ----

struct CdistGeometry {
  Shape batch;
  int64_t r1 = 0, r2 = 0, c = 0;
  Shape e1() const { return With(r1); }
  Shape e2() const { return With(r2); }
  Shape out() const {
    Shape s = batch;
    s.insert(s.end(), {r1, r2});
    return s;
  }
  Shape With(int64_t rows) const {
    Shape s = batch;
    s.insert(s.end(), {rows, c});
    return s;
  }
};

CdistGeometry GeometryOf(const Shape& a, const Shape& b) {
  CdistGeometry g;
  g.batch = BroadcastShape({Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2)});
  g.r1 = a[a.size() - 2];
  g.r2 = b[b.size() - 2];
  g.c = a.back();
  return g;
}

// CdistOf: the forward's distances [batch..., r1, r2] of x1 and x2 (batch dims broadcast).
HostTensor CdistOf(const HostTensor& x1, const HostTensor& x2, double p) {
  const CdistGeometry g = GeometryOf(x1.shape, x2.shape);
  const HostTensor a = ExpandTo(x1, g.e1()), b = ExpandTo(x2, g.e2());
  HostTensor d = Values(x1.dtype, g.out(), {});
  for (int64_t l = 0; l < Product(g.batch); ++l)
    for (int64_t i = 0; i < g.r1; ++i)
      for (int64_t j = 0; j < g.r2; ++j)
        d.values.push_back(Norm(a.values.data() + static_cast<size_t>((l * g.r1 + i) * g.c),
                                b.values.data() + static_cast<size_t>((l * g.r2 + j) * g.c), g.c, p,
                                x1.dtype));
  return d;
}

// CdistGradient: x1's gradient (e1's shape), the terms summed over x2's rows.
HostTensor CdistGradient(const HostTensor& grad, const HostTensor& x1, const HostTensor& x2,
                         double p, const HostTensor& dist) {
  const CdistGeometry g = GeometryOf(x1.shape, x2.shape);
  if (g.r1 == 0 || g.r2 == 0 || g.c == 0 || Product(g.batch) == 0) {
    return Full(x1.shape, x1.dtype, 0);  // zeros_like(x1)
  }
  const HostTensor a = ExpandTo(x1, g.e1()), b = ExpandTo(x2, g.e2());
  std::vector<long double> out(a.values.size(), 0);
  for (int64_t l = 0; l < Product(g.batch); ++l)
    for (int64_t i = 0; i < g.r1; ++i)
      for (int64_t j = 0; j < g.r2; ++j) {
        const size_t pair = static_cast<size_t>((l * g.r1 + i) * g.r2 + j);
        for (int64_t k = 0; k < g.c; ++k) {
          const size_t ai = static_cast<size_t>((l * g.r1 + i) * g.c + k);
          const size_t bj = static_cast<size_t>((l * g.r2 + j) * g.c + k);
          const double diff = RoundTo(x1.dtype, a.values[ai] - b.values[bj]);
          out[ai] += Term(diff, grad.values[pair], dist.values[pair], p);
        }
      }
  return FromLong(g.e1(), x1.dtype, out);
}

// Ties: x1 [4, c] and x2 [5, c] (c >= 3) made to meet the kernel's special cases: x2's row 0
// is x1's (distance 0), x2's row 1 shares x1's row 1's first component (a difference of 0), x1's
// row 2 is x2's row 2 plus (1, -1, 0.5, 0...) (two components at the inf norm's maximum).
void MakeTies(HostTensor& x1, HostTensor& x2) {
  const int64_t c = x1.shape.back();
  for (int64_t k = 0; k < c; ++k) x2.values[static_cast<size_t>(k)] = x1.values[k];
  x2.values[static_cast<size_t>(c)] = x1.values[static_cast<size_t>(c)];
  const double offsets[] = {1, -1, 0.5};
  for (int64_t k = 0; k < c; ++k) {
    const size_t at = static_cast<size_t>(2 * c + k);
    x2.values[at] = RoundTo(x2.dtype, std::round(x2.values[at]));  // small integers: exact
    x1.values[at] = x2.values[at] + (k < 3 ? offsets[k] : 0);
  }
}

Args CdistArgs(Rng& rng, HostTensor x1, HostTensor x2, double p) {
  const CdistGeometry g = GeometryOf(x1.shape, x2.shape);
  HostTensor dist = CdistOf(x1, x2, p);
  return {T(Random(g.out(), x1.dtype, rng)), T(std::move(x1)), T(std::move(x2)), Arg::Double(p),
          T(std::move(dist))};
}

OpInfo CdistBackward() {
  OpInfo op;
  op.name = "_cdist_backward";
  op.out = "_cdist_backward.out";
  op.dtypes = Bit(TSR_DTYPE_FLOAT32) | Bit(TSR_DTYPE_FLOAT64);
  op.tolerance_scale = 10;  // powers of |diff| and d in the dtype, summed over x2's rows
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    // Every p on the special cases.
    for (double p : kPs) {
      HostTensor x1 = Random({4, 3}, dtype, rng), x2 = Random({5, 3}, dtype, rng);
      MakeTies(x1, x2);
      s.push_back(Described(CdistArgs(rng, std::move(x1), std::move(x2), p),
                            " (a zero distance, a zero difference, tied maxima)"));
    }
    struct C {
      Shape a, b;
      double p;
      std::string note;
    };
    const std::vector<C> cases{
        {{2, 3, 4}, {2, 5, 4}, 2, " (batched)"},
        {{2, 3, 4}, {2, 5, 4}, 1.5, " (batched)"},
        {{2, 3, 4}, {1, 5, 4}, 3, " (x2's batch broadcast)"},
        {{3, 4}, {2, 5, 4}, 1, " (x1's batch broadcast: the gradient has the broadcast shape)"},
        {{2, 1, 3, 2}, {1, 2, 4, 2}, 0.5, " (both broadcast)"},
        {{30, 3}, {4, 3}, 2, " (more than 25 rows: the forward's matrix product)"},
        {{1, 1}, {5, 1}, kInf, ""},
        {{3, 4}, {5, 4}, 0, " (p = 0: zeros)"},
        {{0, 3}, {4, 3}, 2, " (no rows in x1)"},
        {{2, 3}, {0, 3}, 2, " (no rows in x2: zeros)"},
        {{3, 0}, {2, 0}, 1, " (no columns: zeros)"},
        {{0, 2, 3}, {1, 4, 3}, 2, " (an empty batch)"},
        {{3, 4}, {0, 5, 4}, 2, " (an empty broadcast batch: zeros of x1's shape)"},
    };
    for (const C& c : cases) {
      s.push_back(
          Described(CdistArgs(rng, Random(c.a, dtype, rng), Random(c.b, dtype, rng), c.p), c.note));
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    return Returns{CdistGradient(s.args[0].tensor, s.args[1].tensor, s.args[2].tensor,
                                 s.args[3].number, s.args[4].tensor)};
  };
  op.errors = [](Rng& rng) {
    const auto args = [](HostTensor g, HostTensor x1, HostTensor x2, HostTensor d) {
      return Args{T(std::move(g)), T(std::move(x1)), T(std::move(x2)), Arg::Double(2),
                  T(std::move(d))};
    };
    const tsr_dtype f64 = TSR_DTYPE_FLOAT64;
    return std::vector<ErrorInput>{
        Saying(Refused(args(F32({5}, rng), F32({4}, rng), F32({5, 4}, rng), F32({5}, rng)),
                       TSR_INVALID_ARGUMENT, "cdist only supports at least 2D tensors (X1 1D)"),
               "cdist only supports at least 2D tensors, X1 got: 1D"),
        Saying(Refused(args(F32({3, 5}, rng), F32({3, 4}, rng), F32({5, 3}, rng), F32({3, 5}, rng)),
                       TSR_INVALID_ARGUMENT, "X1 and X2 must have the same number of columns"),
               "X1 and X2 must have the same number of columns. X1: 4 X2: 3"),
        Saying(Refused(args(F32({3, 4}, rng), F32({3, 4}, rng), F32({5, 4}, rng), F32({3, 5}, rng)),
                       TSR_INVALID_ARGUMENT, "a grad of another shape than the forward's output"),
               "expected grad of shape [3, 5] (the forward's output), got [3, 4]"),
        Saying(Refused(args(F32({3, 5}, rng), F32({3, 4}, rng), F32({5, 4}, rng), F32({5, 3}, rng)),
                       TSR_INVALID_ARGUMENT, "a cdist of another shape than the forward's output"),
               "expected cdist of shape [3, 5] (the forward's output), got [5, 3]"),
        Saying(Refused(args(Random({3, 5}, f64, rng), F32({3, 4}, rng), F32({5, 4}, rng),
                            F32({3, 5}, rng)),
                       TSR_INVALID_ARGUMENT, "a float64 grad for float32 x1"),
               "expected grad of dtype float32 (x1's), got float64"),
        Saying(Refused(args(F32({3, 5}, rng), F32({3, 4}, rng), Random({5, 4}, f64, rng),
                            F32({3, 5}, rng)),
                       TSR_INVALID_ARGUMENT, "a float64 x2 for float32 x1"),
               "expected x2 of dtype float32 (x1's), got float64"),
        Saying(Refused(args(F32({2, 3, 5}, rng), F32({2, 3, 4}, rng), F32({3, 5, 4}, rng),
                            F32({2, 3, 5}, rng)),
                       TSR_INVALID_ARGUMENT, "batch dims that do not broadcast"),
               "the size of tensor a (2) must match the size of tensor b (3) at non-singleton "
               "dimension 0 (shapes [2] and [3])")};
  };
  GradientSpec spec;
  spec.forward = "_cdist_forward";
  spec.samples = [](Rng& rng) {
    std::vector<Sample> samples;
    for (double p : kPs) {
      samples.push_back({{T(Random({3, 4}, TSR_DTYPE_FLOAT64, rng)),
                          T(Random({5, 4}, TSR_DTYPE_FLOAT64, rng)), Arg::Double(p), Arg::None()},
                         "[3, 4] by [5, 4] p " + std::to_string(p)});
    }
    samples.push_back(
        {{T(Random({2, 3, 2}, TSR_DTYPE_FLOAT64, rng)),
          T(Random({1, 4, 2}, TSR_DTYPE_FLOAT64, rng)), Arg::Double(1.5), Arg::None()},
         "[2, 3, 2] by [1, 4, 2] p 1.5"});
    samples.push_back({{T(Random({27, 2}, TSR_DTYPE_FLOAT64, rng)),
                        T(Random({3, 2}, TSR_DTYPE_FLOAT64, rng)), Arg::Double(2), Arg::None()},
                       "[27, 2] by [3, 2] p 2 (the matrix product)"});
    return samples;
  };
  spec.wrt = {0};
  spec.backward_args = [](const Sample& s, const Returns& r, const HostTensor& g) {
    return Args{Arg::Tensor(g), s.args[0], s.args[1], s.args[2], Arg::Tensor(r[0])};
  };
  op.gradient = spec;
  return op;
}

// ---- _pdist_backward ----

// PdistOf: the forward's distances of the pairs (i, j), i < j, row-major.
HostTensor PdistOf(const HostTensor& x, double p) {
  const int64_t n = x.shape[0], c = x.shape[1];
  HostTensor d = Values(x.dtype, {std::max<int64_t>(n * (n - 1) / 2, 0)}, {});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j)
      d.values.push_back(Norm(x.values.data() + static_cast<size_t>(i * c),
                              x.values.data() + static_cast<size_t>(j * c), c, p, x.dtype));
  return d;
}

OpInfo PdistBackward() {
  OpInfo op;
  op.name = "_pdist_backward";
  op.out = "_pdist_backward.out";
  op.dtypes = Bit(TSR_DTYPE_FLOAT32) | Bit(TSR_DTYPE_FLOAT64);
  op.tolerance_scale = 10;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    const auto add = [&](HostTensor x, double p, const std::string& note) {
      HostTensor d = PdistOf(x, p);
      s.push_back(Described(
          {T(Random(d.shape, dtype, rng)), T(std::move(x)), Arg::Double(p), T(std::move(d))},
          note));
    };
    for (double p : kPs) {
      // Rows 0 and 1 coincide, rows 2 and 3 share a component, rows 3 and 4 tie at the maximum.
      HostTensor x = Random({5, 3}, dtype, rng);
      for (size_t k = 0; k < 3; ++k) {
        x.values[3 + k] = x.values[k];
        x.values[9 + k] = RoundTo(dtype, std::round(x.values[9 + k]));
      }
      x.values[6] = x.values[9];
      const double offsets[] = {1, -1, 0.5};
      for (size_t k = 0; k < 3; ++k) x.values[12 + k] = x.values[9 + k] + offsets[k];
      add(std::move(x), p, " (a zero distance, a zero difference, tied maxima)");
    }
    add(Random({6, 4}, dtype, rng), 2, "");
    add(Random({30, 3}, dtype, rng), 2, " (30 rows)");
    add(Random({2, 5}, dtype, rng), 1.5, " (one pair)");
    add(Random({1, 3}, dtype, rng), 2, " (no pair: zeros)");
    add(Random({4, 0}, dtype, rng), 1, " (no columns: zeros)");
    add(Random({0, 3}, dtype, rng), 2, " (no rows)");
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& g = s.args[0].tensor;
    const HostTensor& x = s.args[1].tensor;
    const double p = s.args[2].number;
    const HostTensor& d = s.args[3].tensor;
    const int64_t n = x.shape[0], c = x.shape[1];
    std::vector<long double> out(x.values.size(), 0);
    size_t pair = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = i + 1; j < n; ++j, ++pair)
        for (int64_t k = 0; k < c; ++k) {
          const size_t xi = static_cast<size_t>(i * c + k), xj = static_cast<size_t>(j * c + k);
          const long double t = Term(RoundTo(x.dtype, x.values[xi] - x.values[xj]), g.values[pair],
                                     d.values[pair], p);
          out[xi] += t;
          out[xj] -= t;
        }
    return Returns{FromLong(x.shape, x.dtype, out)};
  };
  op.errors = [](Rng& rng) {
    const auto args = [](HostTensor g, HostTensor x, HostTensor d) {
      return Args{T(std::move(g)), T(std::move(x)), Arg::Double(2), T(std::move(d))};
    };
    return std::vector<ErrorInput>{
        Saying(Refused(args(F32({0}, rng), F32({4}, rng), F32({0}, rng)), TSR_INVALID_ARGUMENT,
                       "pdist only supports 2D tensors"),
               "pdist only supports 2D tensors, got: 1D"),
        Saying(Refused(args(F32({5}, rng), F32({4, 3}, rng), F32({6}, rng)), TSR_INVALID_ARGUMENT,
                       "a grad of another shape than the forward's output"),
               "expected grad of shape [6] (the forward's output), got [5]"),
        Saying(Refused(args(F32({6}, rng), F32({4, 3}, rng), F32({3, 2}, rng)),
                       TSR_INVALID_ARGUMENT, "a pdist of another shape than the forward's output"),
               "expected pdist of shape [6] (the forward's output), got [3, 2]"),
        Saying(Refused(args(Random({6}, TSR_DTYPE_FLOAT64, rng), F32({4, 3}, rng), F32({6}, rng)),
                       TSR_INVALID_ARGUMENT, "a float64 grad for float32 self"),
               "expected grad of dtype float32 (self's), got float64"),
        Saying(Refused(args(F32({6}, rng), F32({4, 3}, rng), Random({6}, TSR_DTYPE_FLOAT64, rng)),
                       TSR_INVALID_ARGUMENT, "a float64 pdist for float32 self"),
               "expected pdist of dtype float32 (self's), got float64")};
  };
  GradientSpec spec;
  spec.forward = "_pdist_forward";
  spec.samples = [](Rng& rng) {
    std::vector<Sample> samples;
    for (double p : kPs) {
      samples.push_back({{T(Random({5, 3}, TSR_DTYPE_FLOAT64, rng)), Arg::Double(p)},
                         "[5, 3] p " + std::to_string(p)});
    }
    return samples;
  };
  spec.wrt = {0};
  spec.backward_args = [](const Sample& s, const Returns& r, const HostTensor& g) {
    return Args{Arg::Tensor(g), s.args[0], s.args[1], Arg::Tensor(r[0])};
  };
  op.gradient = spec;
  return op;
}

}  // namespace

void AddDistanceBackwardOps(std::vector<OpInfo>& db) {
  db.push_back(CdistBackward());
  db.push_back(PdistBackward());
}

}  // namespace conformance
}  // namespace tessera
