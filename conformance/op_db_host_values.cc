// Op set 1.10's ops whose result is a host value (dispatcher/ops/host_value_ops.cc):
// `_local_scalar_dense`, `item`, `is_nonzero`, `is_same_size`, `equal`, `allclose`, and the
// tensor `isclose`. The harness compares a bool return as a 0-dim bool tensor and a Scalar as a
// 0-dim int64 or float64 one, by the Scalar's kind (Invoke, invoke.h).
//
// Semantics are current ATen's (aten/src/ATen/native/Scalar.cpp, TensorCompare.cpp,
// ReduceOps.cpp's cpu_equal); samples follow the OpInfo entries in common_methods_invocations.py
// (`item`, `equal`, `allclose`, `isclose`: sample_inputs_isclose's rtol/atol/equal_nan grid with
// values near the tolerance), with 0-dim, empty, NaN, infinities and mixed dtypes added. The
// references read each element directly: the first element for `_local_scalar_dense`; for
// `isclose` ATen's steps in its computation dtype (self's when floating, else float32), each
// step rounded as ATen's ops round it.
#include <cmath>
#include <string>
#include <vector>

#include "conformance/op_db.h"
#include "conformance/op_db_helpers.h"

namespace tessera {
namespace conformance {
namespace {

HostTensor Bool(bool v) { return Values(TSR_DTYPE_BOOL, {}, {v ? 1.0 : 0.0}); }

// The Scalar a tensor's element becomes: bool, int64 or double, as a 0-dim tensor of that kind.
HostTensor AsScalar(tsr_dtype dtype, double v) {
  const tsr_dtype kind = dtype == TSR_DTYPE_BOOL ? TSR_DTYPE_BOOL
                         : IsFloating(dtype)     ? TSR_DTYPE_FLOAT64
                                                 : TSR_DTYPE_INT64;
  return Values(kind, {}, {v});
}

std::vector<ErrorInput> NoErrors(Rng&) { return {}; }

OpInfo LocalScalarDense(const std::string& name) {
  const bool item = name == "item";
  OpInfo op;
  op.name = name;
  op.dtypes = kAllMask;
  op.shape_from_values = true;  // a value read from the elements: meta refuses
  op.samples = [item](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    for (const std::vector<int64_t>& shape : {std::vector<int64_t>{}, {1}, {1, 1, 1}}) {
      s.push_back(Described({Arg::Tensor(MakeTensor(shape, dtype, rng))}));
    }
    // _local_scalar_dense reads the first element of any tensor.
    if (!item) {
      for (const std::vector<int64_t>& shape : {std::vector<int64_t>{3}, {2, 3}}) {
        s.push_back(Described({Arg::Tensor(MakeTensor(shape, dtype, rng))}, " (the first)"));
      }
    }
    if (IsFloating(dtype)) {
      for (double v : {double{NAN}, double{INFINITY}, -0.0}) {
        s.push_back(Described({Arg::Tensor(Values(dtype, {}, {v}))}));
      }
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& self = s.args[0].tensor;
    return std::vector<HostTensor>{AsScalar(self.dtype, self.values.at(0))};
  };
  op.errors = [item](Rng&) {
    std::vector<ErrorInput> e{
        RefusedSaying({Arg::Tensor(Values(TSR_DTYPE_FLOAT32, {0}, {}))}, TSR_INVALID_ARGUMENT,
                      "a Tensor with 0 elements cannot be converted to Scalar")};
    if (item) {
      e.push_back(RefusedSaying({Arg::Tensor(Values(TSR_DTYPE_INT64, {2}, {1, 2}))},
                                TSR_INVALID_ARGUMENT,
                                "a Tensor with 2 elements cannot be converted to Scalar"));
    }
    return e;
  };
  return op;
}

OpInfo IsNonzero() {
  OpInfo op;
  op.name = "is_nonzero";
  op.dtypes = kAllMask;
  op.shape_from_values = true;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    s.push_back(Described({Arg::Tensor(MakeTensor({}, dtype, rng))}));
    s.push_back(Described({Arg::Tensor(MakeTensor({1, 1}, dtype, rng))}));
    s.push_back(Described({Arg::Tensor(Values(dtype, {}, {0}))}));
    s.push_back(Described({Arg::Tensor(Values(dtype, {1}, {1}))}));
    if (IsFloating(dtype)) {  // NaN is true, -0.0 false
      s.push_back(Described({Arg::Tensor(Values(dtype, {}, {NAN}))}));
      s.push_back(Described({Arg::Tensor(Values(dtype, {}, {-0.0}))}));
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    return std::vector<HostTensor>{Bool(s.args[0].tensor.values.at(0) != 0)};
  };
  op.errors = [](Rng&) {
    return std::vector<ErrorInput>{
        RefusedSaying({Arg::Tensor(Values(TSR_DTYPE_FLOAT32, {0}, {}))}, TSR_INVALID_ARGUMENT,
                      "Boolean value of Tensor with no values is ambiguous"),
        RefusedSaying({Arg::Tensor(Values(TSR_DTYPE_FLOAT32, {2}, {1, 0}))}, TSR_INVALID_ARGUMENT,
                      "Boolean value of Tensor with more than one value is ambiguous")};
  };
  return op;
}

OpInfo IsSameSize() {
  OpInfo op;
  op.name = "is_same_size";
  op.dtypes = kAllMask;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    const auto add = [&](std::vector<int64_t> a, std::vector<int64_t> b, tsr_dtype other) {
      s.push_back(Described({Arg::Tensor(MakeTensor(std::move(a), dtype, rng)),
                             Arg::Tensor(MakeTensor(std::move(b), other, rng))}));
    };
    add({2, 3}, {2, 3}, dtype);
    add({2, 3}, {3, 2}, dtype);
    add({2, 3}, {2, 3}, TSR_DTYPE_BOOL);  // dtypes do not matter
    add({}, {1}, dtype);
    add({0}, {0}, dtype);
    add({0, 2}, {0}, dtype);
    return s;
  };
  op.reference = [](const Sample& s) {
    return std::vector<HostTensor>{Bool(s.args[0].tensor.shape == s.args[1].tensor.shape)};
  };
  op.errors = NoErrors;
  return op;
}

// A copy of `t` with element `i` changed (to another value `t`'s dtype holds).
HostTensor ChangedAt(HostTensor t, size_t i) {
  const double v = t.values.at(i);
  t.values[i] = RoundTo(t.dtype, t.dtype == TSR_DTYPE_BOOL ? (v != 0 ? 0 : 1)
                                 : v >= 100                ? v - 1
                                                           : v + 1);
  return t;
}

OpInfo Equal() {
  OpInfo op;
  op.name = "equal";
  op.dtypes = kAllMask;
  op.shape_from_values = true;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    const auto add = [&](HostTensor a, HostTensor b, const std::string& note) {
      s.push_back(Described({Arg::Tensor(std::move(a)), Arg::Tensor(std::move(b))}, note));
    };
    const HostTensor x = MakeTensor({3, 4}, dtype, rng);
    add(x, x, " (same values)");
    add(x, ChangedAt(x, 7), " (one element differs)");
    add(x, MakeTensor({4, 3}, dtype, rng), " (other shape)");
    add(MakeTensor({4}, dtype, rng), x, " (broadcastable shape: not equal)");
    const HostTensor scalar = MakeTensor({}, dtype, rng);
    add(scalar, scalar, " (0-dim)");
    add(Values(dtype, {0, 3}, {}), Values(dtype, {0, 3}, {}), " (empty)");
    add(Values(dtype, {0}, {}), Values(dtype, {0, 3}, {}), " (empty, other shape)");
    // Promotion: compared in the result dtype (current ATen and 1.13 alike).
    const tsr_dtype other = IsFloating(dtype) ? TSR_DTYPE_INT64 : TSR_DTYPE_FLOAT64;
    HostTensor small = Values(dtype, {4}, {0, 1, 2, 3});
    HostTensor promoted = small;
    promoted.dtype = other;
    add(small, promoted, " (mixed dtypes)");
    if (IsFloating(dtype)) {
      const HostTensor nan = Values(dtype, {3}, {1, NAN, 2});
      add(nan, nan, " (NaN is not equal to itself)");
      add(Values(dtype, {2}, {INFINITY, -0.0}), Values(dtype, {2}, {INFINITY, 0.0}),
          " (inf, -0.0 == 0.0)");
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    const Arg& a = s.args[0];
    const Arg& b = s.args[1];
    if (a.tensor.shape != b.tensor.shape) return std::vector<HostTensor>{Bool(false)};
    const tsr_dtype common = ResultDtype({&a, &b});
    bool same = true;
    for (size_t i = 0; i < a.tensor.values.size(); ++i) {
      same = same && RoundTo(common, a.tensor.values[i]) == RoundTo(common, b.tensor.values[i]);
    }
    return std::vector<HostTensor>{Bool(same)};
  };
  op.errors = NoErrors;
  return op;
}

// isclose's steps, as ATen's ops round them: in self's dtype when floating, else in float32
// (an integral or bool `other` is cast first, and a bool `self`).
bool IsClose(tsr_dtype dtype, double x, double y, double rtol, double atol, bool equal_nan) {
  if (x == y) return true;
  if (equal_nan && IsFloating(dtype) && std::isnan(x) && std::isnan(y)) return true;
  if (rtol == 0 && atol == 0) return false;
  const tsr_dtype compute = IsFloating(dtype) ? dtype : TSR_DTYPE_FLOAT32;
  const double other = RoundTo(compute, y);
  const double allowed = RoundTo(compute, atol + std::fabs(RoundTo(compute, rtol * other)));
  const double actual = std::fabs(RoundTo(compute, RoundTo(compute, x) - other));
  return std::isfinite(actual) && actual <= allowed;
}

// isclose/allclose(self, other, rtol, atol, equal_nan): the args after self and other, or
// their defaults.
struct Tolerances {
  double rtol = 1e-05, atol = 1e-08;
  bool equal_nan = false;
};
Tolerances TolerancesOf(const Sample& s) {
  Tolerances t;
  if (Given(s, 2)) t.rtol = s.args[2].number;
  if (Given(s, 3)) t.atol = s.args[3].number;
  if (Given(s, 4)) t.equal_nan = s.args[4].boolean;
  return t;
}

HostTensor IsCloseTensor(const Sample& s) {
  const tsr_dtype dtype = s.args[0].tensor.dtype;
  const Tolerances tol = TolerancesOf(s);
  return Elementwise({&s.args[0], &s.args[1]}, TSR_DTYPE_BOOL, [&](const double* v) {
    return IsClose(dtype, v[0], v[1], tol.rtol, tol.atol, tol.equal_nan) ? 1.0 : 0.0;
  });
}

// isclose's and allclose's samples: values near the tolerance (other = self + a step of about
// atol + rtol * |other|, below and above it), the rtol/atol/equal_nan grid of
// sample_inputs_isclose, infinities and NaN, broadcasting, 0-dim and empty.
std::vector<Sample> CloseSamples(tsr_dtype dtype, Rng& rng) {
  std::vector<Sample> s;
  const bool floating = IsFloating(dtype);
  const auto add = [&](HostTensor a, HostTensor b, std::vector<Arg> more) {
    std::vector<Arg> args{Arg::Tensor(std::move(a)), Arg::Tensor(std::move(b))};
    args.insert(args.end(), more.begin(), more.end());
    s.push_back(Described(std::move(args)));
  };
  const HostTensor x = MakeTensor({4, 5}, dtype, rng);
  add(x, x, {});
  add(x, MakeTensor({4, 5}, dtype, rng), {});
  add(x, MakeTensor({5}, dtype, rng), {Arg::Double(0.5), Arg::Double(1)});
  add(MakeTensor({}, dtype, rng), MakeTensor({3}, dtype, rng), {Arg::Double(0), Arg::Double(2)});
  add(Values(dtype, {0, 2}, {}), Values(dtype, {0, 2}, {}), {});
  for (const double rtol : {0.0, 0.01}) {
    for (const double atol : {0.0, 0.5}) {
      for (const bool equal_nan : {false, true}) {
        add(x, ChangedAt(x, 3), {Arg::Double(rtol), Arg::Double(atol), Arg::Bool(equal_nan)});
      }
    }
  }
  if (floating) {
    // Steps around the tolerance 0.1 + 0.1 * |other|, for other in 1..4.
    const HostTensor base = Values(dtype, {8}, {1, 2, 3, 4, 1, 2, 3, 4});
    HostTensor near = base;
    for (size_t i = 0; i < 8; ++i) {
      const double step = (0.1 + 0.1 * base.values[i]) * (i < 4 ? 0.75 : 1.25);
      near.values[i] = RoundTo(dtype, base.values[i] + (i % 2 ? step : -step));
    }
    add(near, base, {Arg::Double(0.1), Arg::Double(0.1)});
    const HostTensor special = Values(dtype, {6}, {NAN, INFINITY, -INFINITY, NAN, 1, INFINITY});
    const HostTensor special2 = Values(dtype, {6}, {NAN, INFINITY, INFINITY, 1, NAN, 1e30});
    for (const bool equal_nan : {false, true}) {
      add(special, special2, {Arg::Double(1e-5), Arg::Double(1e-8), Arg::Bool(equal_nan)});
    }
  } else if (dtype != TSR_DTYPE_BOOL) {
    // Integers: the difference is taken in float32, so uint8's 0 - 255 does not wrap.
    add(Values(dtype, {3}, {0, 5, 100}), Values(dtype, {3}, {1, 7, 98}),
        {Arg::Double(0), Arg::Double(1.5)});
  }
  return s;
}

std::vector<ErrorInput> CloseErrors(Rng& rng) {
  const Arg x = Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT32, rng));
  const Arg ints = Arg::Tensor(MakeTensor({3}, TSR_DTYPE_INT64, rng));
  std::vector<ErrorInput> e{
      RefusedSaying({ints, x}, TSR_INVALID_ARGUMENT, "int64 did not match float32"),
      RefusedSaying({x, x, Arg::Double(-1)}, TSR_INVALID_ARGUMENT,
                    "rtol must be greater than or equal to zero, but got -1"),
      RefusedSaying({x, x, Arg::Double(1e-5), Arg::Double(-2)}, TSR_INVALID_ARGUMENT,
                    "atol must be greater than or equal to zero, but got -2"),
      RefusedSaying({x, Arg::Tensor(MakeTensor({4}, TSR_DTYPE_FLOAT32, rng))}, TSR_INVALID_ARGUMENT,
                    "must match the size")};
  return e;
}

OpInfo IsCloseOp(bool all) {
  OpInfo op;
  op.name = all ? "allclose" : "isclose";
  op.dtypes = kAllMask;
  op.shape_from_values = all;
  op.samples = CloseSamples;
  op.reference = [all](const Sample& s) {
    const HostTensor close = IsCloseTensor(s);
    if (!all) return std::vector<HostTensor>{close};
    bool every = true;
    for (double v : close.values) every = every && v != 0;
    return std::vector<HostTensor>{Bool(every)};
  };
  op.errors = CloseErrors;
  return op;
}

}  // namespace

void AddHostValueOps(std::vector<OpInfo>& db) {
  db.push_back(LocalScalarDense("_local_scalar_dense"));
  db.push_back(LocalScalarDense("item"));
  db.push_back(IsNonzero());
  db.push_back(IsSameSize());
  db.push_back(Equal());
  db.push_back(IsCloseOp(false));
  db.push_back(IsCloseOp(true));
}

}  // namespace conformance
}  // namespace tessera
