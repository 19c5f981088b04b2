// The ops whose result is a host value (dispatcher/ops/host_value_ops.cc). Op set 1.10:
// `_local_scalar_dense`, `item`, `is_nonzero`, `is_same_size`, `equal`, `allclose`, and the
// tensor `isclose`. Op set 1.11: the metadata queries `sym_size.int`, `sym_stride.int`,
// `sym_numel`, `sym_storage_offset` and `sym_is_contiguous`. The harness compares a bool return
// as a 0-dim bool tensor, an int (SymInt) as a 0-dim int64 one and a Scalar as a 0-dim int64 or
// float64 one, by the Scalar's kind (Invoke, invoke.h).
//
// Semantics are current ATen's (aten/src/ATen/native/Scalar.cpp, TensorCompare.cpp,
// ReduceOps.cpp's cpu_equal, TensorProperties.cpp; c10/core/TensorImpl.h and Contiguity.h for
// the queries); samples follow the OpInfo entries in common_methods_invocations.py (`item`,
// `equal`, `allclose`, `isclose`: sample_inputs_isclose's rtol/atol/equal_nan grid with values
// near the tolerance), with 0-dim, empty, NaN, infinities and mixed dtypes added. The references
// read each element directly: the first element for `_local_scalar_dense`; for `isclose` ATen's
// steps in its computation dtype (self's when floating, else float32), each step rounded as
// ATen's ops round them. The queries' references read the sample's shape, and the strides and
// storage offset it lays the tensor out with (Note [Queries of the layout] below).
#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
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

// --- Op set 1.11: the metadata queries ----------------------------------------------------

// Note [Queries of the layout]
// sym_stride.int, sym_storage_offset and sym_is_contiguous answer from the tensor's strides and
// storage offset, which the layouts oracle changes (interleaved, offset 3, transposed) without
// the reference seeing it. So every sample of theirs lays its tensor out explicitly (Arg's
// strides and storage_offset, which Push keeps under every Layout: the layouts cases then run
// the sample as laid out, and agree with the reference), and the samples themselves are the
// strided views: transposed, narrowed at an offset, expanded (stride 0), every other column, a
// size-1 dim of any stride, channels-last (2-D and 3-D), empty. sym_size.int and sym_numel read
// only the shape, which no layout changes: theirs run under every layout as usual. A 0-dim
// tensor cannot be laid out explicitly (no strides: Push takes it for a tensor without a
// layout of its own), so sym_storage_offset has no 0-dim sample (the offset layout puts it at
// 3); its strides and its contiguity are the same under every layout. On the Meta
// device a tensor is laid out contiguously whatever the sample says; the meta oracle compares
// only the result's dtype and shape there.

HostTensor Int(int64_t v) { return Values(TSR_DTYPE_INT64, {}, {static_cast<double>(v)}); }

// A tensor of `shape` viewed with `strides` from `offset` (elements sharing memory, as an
// expanded view's, hold equal values: all are 1; the queries never read them).
struct Strided {
  std::vector<int64_t> shape, strides;
  int64_t offset;
  std::string note;
};

const std::vector<Strided>& StridedViews() {
  static const std::vector<Strided> views{
      {{2, 3, 4}, {12, 4, 1}, 0, "contiguous"},
      {{4, 3}, {1, 4}, 0, "transposed"},
      {{2, 2}, {3, 1}, 4, "narrowed at offset 4"},
      {{3, 4}, {0, 1}, 0, "expanded"},
      {{3, 4}, {8, 2}, 1, "every other column, offset 1"},
      {{2, 1, 3}, {3, 7, 1}, 0, "a size-1 dim of any stride"},
      {{5}, {1}, 0, "1-D"},
      {{}, {}, 0, "0-dim"},
      {{0, 3}, {3, 1}, 0, "empty"},
      {{0, 3}, {1, 5}, 0, "empty, transposed strides"},
      {{2, 3, 2, 2}, {12, 4, 2, 1}, 0, "contiguous 4-D"},
      {{2, 3, 2, 2}, {12, 1, 6, 3}, 0, "channels_last"},
      {{2, 3, 2, 2}, {12, 1, 6, 3}, 5, "channels_last at offset 5"},
      {{2, 1, 1, 1}, {1, 1, 1, 1}, 0, "[2, 1, 1, 1]: both layouts"},
      {{0, 3, 2, 2}, {12, 4, 2, 1}, 0, "empty 4-D"},
      {{0, 3, 2, 2}, {12, 1, 6, 3}, 0, "empty 4-D, channels_last strides"},
      {{2, 3, 2, 2}, {12, 1, 3, 6}, 0, "channels innermost, H and W swapped"},
      {{2, 3, 2, 2, 2}, {24, 8, 4, 2, 1}, 0, "contiguous 5-D"},
      {{2, 3, 2, 2, 2}, {24, 1, 12, 6, 3}, 0, "channels_last_3d"},
      {{2, 3, 2, 2, 2}, {24, 1, 12, 6, 3}, 3, "channels_last_3d at offset 3"},
  };
  return views;
}

Arg Laid(const Strided& v, tsr_dtype dtype) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = v.shape;
  t.values.assign(static_cast<size_t>(t.numel()), 1.0);
  Arg a = Arg::Tensor(std::move(t));
  a.strides = v.strides;
  a.storage_offset = v.offset;
  return a;
}

std::string LaidNote(const Strided& v) {
  return " (" + v.note + ": strides " + ShapeString(v.strides) + ", offset " +
         std::to_string(v.offset) + ")";
}

// The strided views a dtype's samples use: every one for float32 and int64, a few for the
// other dtypes (the queries do not look at the dtype).
std::vector<Strided> ViewsFor(tsr_dtype dtype) {
  const std::vector<Strided>& all = StridedViews();
  if (dtype == TSR_DTYPE_FLOAT32 || dtype == TSR_DTYPE_INT64) return all;
  return {all[1], all[2], all[8]};
}

// WrappedDim: dim in [-ndim, ndim) as an index (the samples' dims are in range).
size_t WrappedDim(int64_t dim, size_t ndim) {
  return static_cast<size_t>(dim < 0 ? dim + static_cast<int64_t>(ndim) : dim);
}

std::vector<ErrorInput> DimErrors(Rng& rng) {
  const Arg matrix = Arg::Tensor(MakeTensor({2, 3}, TSR_DTYPE_FLOAT32, rng));
  const Arg scalar = Arg::Tensor(MakeTensor({}, TSR_DTYPE_FLOAT32, rng));
  return {
      RefusedSaying({matrix, Arg::Int(2)}, TSR_OUT_OF_RANGE,
                    "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
      RefusedSaying({matrix, Arg::Int(-3)}, TSR_OUT_OF_RANGE,
                    "Dimension out of range (expected to be in range of [-2, 1], but got -3)"),
      // maybe_wrap_dim with wrap_scalar=false: a 0-dim tensor has no dim 0 or -1 either.
      RefusedSaying({scalar, Arg::Int(0)}, TSR_OUT_OF_RANGE,
                    "Dimension specified as 0 but tensor has no dimensions"),
      RefusedSaying({scalar, Arg::Int(-1)}, TSR_OUT_OF_RANGE,
                    "Dimension specified as -1 but tensor has no dimensions"),
  };
}

// sym_size.int(self, dim): the shape only, under every layout; sym_stride.int(self, dim): the
// strides the sample lays the tensor out with (Note [Queries of the layout]).
OpInfo SymSizeOrStride(bool stride) {
  OpInfo op;
  op.name = stride ? "sym_stride.int" : "sym_size.int";
  op.dtypes = kAllMask;
  op.samples = [stride](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    const auto every_dim = [&](const Arg& self, size_t ndim, const std::string& note) {
      for (int64_t d = -static_cast<int64_t>(ndim); d < static_cast<int64_t>(ndim); ++d) {
        s.push_back(Described({self, Arg::Int(d)}, note));
      }
    };
    for (const Strided& v : ViewsFor(dtype)) {
      if (v.shape.empty()) continue;  // no dim to ask for: an error input
      every_dim(Laid(v, dtype), v.shape.size(), LaidNote(v));
    }
    if (!stride) {
      for (const std::vector<int64_t>& shape :
           {std::vector<int64_t>{5}, {2, 3}, {0, 4}, {3, 0, 2}, {1, 1, 1, 1}}) {
        every_dim(Arg::Tensor(MakeTensor(shape, dtype, rng)), shape.size(), "");
      }
    }
    return s;
  };
  op.reference = [stride](const Sample& s) {
    const Arg& self = s.args[0];
    const size_t d = WrappedDim(s.args[1].integer, self.tensor.shape.size());
    return std::vector<HostTensor>{Int(stride ? self.strides.at(d) : self.tensor.shape.at(d))};
  };
  op.errors = DimErrors;
  return op;
}

OpInfo SymNumel() {
  OpInfo op;
  op.name = "sym_numel";
  op.dtypes = kAllMask;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    for (const std::vector<int64_t>& shape :
         {std::vector<int64_t>{}, {5}, {2, 3, 4}, {0}, {3, 0, 2}, {1, 1}}) {
      s.push_back(Described({Arg::Tensor(MakeTensor(shape, dtype, rng))}));
    }
    for (const Strided& v : ViewsFor(dtype)) s.push_back(Described({Laid(v, dtype)}, LaidNote(v)));
    return s;
  };
  op.reference = [](const Sample& s) {
    const std::vector<int64_t>& shape = s.args[0].tensor.shape;
    return std::vector<HostTensor>{
        Int(std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<int64_t>()))};
  };
  op.errors = NoErrors;
  return op;
}

OpInfo SymStorageOffset() {
  OpInfo op;
  op.name = "sym_storage_offset";
  op.dtypes = kAllMask;
  op.samples = [](tsr_dtype dtype, Rng&) {
    std::vector<Sample> s;
    for (const Strided& v : ViewsFor(dtype)) {
      if (v.shape.empty()) continue;  // no layout of its own (Note [Queries of the layout])
      s.push_back(Described({Laid(v, dtype)}, LaidNote(v)));
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    return std::vector<HostTensor>{Int(s.args[0].storage_offset)};
  };
  op.errors = NoErrors;
  return op;
}

// DenseFor: whether `strides` are the dense strides of `shape` for the dims stored in `order`,
// innermost first, at every dim of size other than 1 (whose stride does not matter), as
// TensorImpl computes is_contiguous (row-major order) and is_channels_last_contiguous.
bool DenseFor(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
              const std::vector<size_t>& order) {
  std::vector<int64_t> dense(shape.size());
  int64_t next = 1;
  for (size_t d : order) {
    dense[d] = next;
    next *= shape[d];
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] != 1 && strides[d] != dense[d]) return false;
  }
  return true;
}

// IsContiguous: ATen's is_contiguous(memory_format) (0 contiguous_format, 1 preserve_format,
// 2 channels_last, 3 channels_last_3d). Row-major order holds for any empty tensor; the
// channels-last orders (C innermost, then W, H (, D), N) only for 4-D / 5-D tensors, with no
// shortcut for an empty one.
bool IsContiguous(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
                  int64_t format) {
  if (format == 2) return shape.size() == 4 && DenseFor(shape, strides, {1, 3, 2, 0});
  if (format == 3) return shape.size() == 5 && DenseFor(shape, strides, {1, 4, 3, 2, 0});
  if (std::count(shape.begin(), shape.end(), 0) > 0) return true;
  std::vector<size_t> row_major(shape.size());
  std::iota(row_major.rbegin(), row_major.rend(), size_t{0});
  return DenseFor(shape, strides, row_major);
}

OpInfo SymIsContiguous() {
  OpInfo op;
  op.name = "sym_is_contiguous";
  op.dtypes = kAllMask;
  op.samples = [](tsr_dtype dtype, Rng&) {
    std::vector<Sample> s;
    for (const Strided& v : ViewsFor(dtype)) {
      s.push_back(Described({Laid(v, dtype)}, LaidNote(v)));  // contiguous_format by default
      for (int64_t format : {0, 1, 2, 3}) {
        s.push_back(Described({Laid(v, dtype), Arg::Int(format)}, LaidNote(v)));
      }
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    const Arg& self = s.args[0];
    const int64_t format = Given(s, 1) ? s.args[1].integer : 0;
    return std::vector<HostTensor>{Bool(IsContiguous(self.tensor.shape, self.strides, format))};
  };
  op.errors = [](Rng& rng) {
    // The schema's MemoryFormat takes ATen's four values (the dispatcher checks it).
    return std::vector<ErrorInput>{
        RefusedSaying({Arg::Tensor(MakeTensor({2, 3}, TSR_DTYPE_FLOAT32, rng)), Arg::Int(4)},
                      TSR_INVALID_ARGUMENT, "expected a MemoryFormat in [0, 4)")};
  };
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
  db.push_back(SymSizeOrStride(false));
  db.push_back(SymSizeOrStride(true));
  db.push_back(SymNumel());
  db.push_back(SymStorageOffset());
  db.push_back(SymIsContiguous());
}

}  // namespace conformance
}  // namespace tessera
