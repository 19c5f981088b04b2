// The indexing ops op set 1.9 adds as composites (dispatcher/ops/index_composites.cc,
// dispatcher/ops/advanced_index_ops.cc): index_add, index_copy, index_fill (both overloads),
// take, put, nonzero, masked_select, masked_scatter, and advanced indexing (index.Tensor and
// index_put, whose indices are a Tensor?[]: Arg::OptionalTensors).
//
// Semantics are PyTorch's CPU ones, read in aten/src/ATen/native: TensorAdvancedIndexing.cpp
// (the meta functions of index_add and index_copy, index_fill_, put_, take, index_put_,
// masked_select, masked_scatter, nonzero), IndexingUtils.h and TensorAdvancedIndexingUtils.h
// (masks become their nonzero(), the indices broadcast together, non-adjacent indices put the
// broadcast shape first) and cpu/IndexKernel.cpp (the bounds checks; index_fill, take, put and
// index wrap negative indices, index_add and index_copy refuse them). Samples follow the OpInfos
// of common_methods_invocations.py (sample_inputs_index, sample_inputs_take, sample_inputs_put,
// sample_inputs_nonzero, sample_inputs_masked_select, sample_inputs_masked_scatter,
// sample_inputs_index_put, sample_inputs_getitem), with empty, 0-dim, negative dims and indices
// added. The references index every element directly, independently of any plugin.
//
// Where current PyTorch differs from 1.13 we follow current PyTorch: index.Tensor and index_put
// take int32 indices (IndexingUtils.h's checkIndexTensorTypes with allow_int; 1.13 refuses them
// with "tensors used as indices must be long, byte or bool tensors"), and masked_select and
// masked_scatter take bool masks only (pytorch/pytorch#96112 and #97999; 1.13 takes uint8 masks
// with a deprecation warning, and masked_scatter any integer mask). Indexing with a uint8 mask
// is still allowed (deprecated) in both.
//
// Error codes: PyTorch's IndexError (TORCH_CHECK_INDEX: indices out of range, the dtype checks
// of index_fill_ and index.Tensor, too many indices, a mask or index shape that does not fit) is
// TSR_OUT_OF_RANGE; its RuntimeError is TSR_INVALID_ARGUMENT. Each error input's description is
// ATen's message.
//
// Accumulating ops (index_add, put and index_put with accumulate=True) add repeated indices one
// after the other, as ATen's CPU kernels do; their samples of 16-bit floats hold multiples of
// 1/2 whose sums are exact, so that the order and the rounding of a composite do not matter.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "conformance/op_db.h"
#include "conformance/op_db_helpers.h"

namespace tessera {
namespace conformance {
namespace {

using Shape = std::vector<int64_t>;
using Opt = std::optional<HostTensor>;

constexpr int64_t S = 5;  // the OpInfos' S and M

Arg T(HostTensor t) { return Arg::Tensor(std::move(t)); }

// WrapDim: a dim of a tensor of `ndim` dims; a 0-dim tensor takes dims 0 and -1.
int64_t WrapDim(int64_t dim, int64_t ndim) {
  return dim < 0 ? dim + std::max<int64_t>(ndim, 1) : dim;
}

HostTensor Long(Shape shape, const std::vector<double>& values) {
  return Values(TSR_DTYPE_INT64, std::move(shape), values);
}

HostTensor F32(Shape shape, Rng& rng) {
  return MakeTensor(std::move(shape), TSR_DTYPE_FLOAT32, rng);
}

// RandomIndex: int64 (or `dtype`) indices in [low, high), repeats possible.
HostTensor RandomIndex(Shape shape, int64_t low, int64_t high, Rng& rng,
                       tsr_dtype dtype = TSR_DTYPE_INT64) {
  MakeOptions o;
  o.low = static_cast<double>(low);
  o.high = static_cast<double>(high);
  return MakeTensor(std::move(shape), dtype, rng, o);
}

// DistinctIndex: `n` distinct indices of [0, bound), in a random order (torch.randperm's first n).
HostTensor DistinctIndex(int64_t n, int64_t bound, Rng& rng) {
  std::vector<double> all;
  for (int64_t i = 0; i < bound; ++i) all.push_back(static_cast<double>(i));
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(static_cast<size_t>(n));
  return Long({n}, all);
}

// Mask: a random bool mask, with at least one True when it has elements (mask_not_all_zeros).
HostTensor Mask(Shape shape, Rng& rng) {
  HostTensor m = MakeTensor(std::move(shape), TSR_DTYPE_BOOL, rng);
  if (m.numel() > 0 && std::find(m.values.begin(), m.values.end(), 1.0) == m.values.end())
    m.values[static_cast<size_t>(rng() % m.values.size())] = 1;
  return m;
}

int64_t CountTrue(const HostTensor& mask) {
  return static_cast<int64_t>(
      std::count_if(mask.values.begin(), mask.values.end(), [](double v) { return v != 0; }));
}

// Summable: values for the accumulating ops: for float16 and bfloat16, multiples of 1/2 in
// [-4, 4] (their sums stay exact); other dtypes as MakeTensor draws them.
HostTensor Summable(Shape shape, tsr_dtype dtype, Rng& rng) {
  if (dtype != TSR_DTYPE_FLOAT16 && dtype != TSR_DTYPE_BFLOAT16)
    return MakeTensor(std::move(shape), dtype, rng);
  MakeOptions o;
  o.low = -8;
  o.high = 9;
  HostTensor t = MakeTensor(std::move(shape), TSR_DTYPE_INT64, rng, o);
  t.dtype = dtype;
  for (double& v : t.values) v /= 2;
  return t;
}

// ScalarOf: a Scalar of the kind a value of `dtype` is (as Tensor.item() gives it).
Arg ScalarOf(tsr_dtype dtype, double v) {
  if (dtype == TSR_DTYPE_BOOL) return Arg::ScalarBool(v != 0);
  if (IsFloating(dtype)) return Arg::ScalarDouble(v);
  return Arg::ScalarInt(static_cast<int64_t>(v));
}

// One value of `dtype` in its make_tensor range.
double AValue(tsr_dtype dtype, Rng& rng) { return MakeTensor({}, dtype, rng).values[0]; }

// BroadcastAt: the element of `t` at `index` of a shape `t` broadcasts to (right-aligned).
double BroadcastAt(const HostTensor& t, const Shape& index) {
  const size_t lead = index.size() - t.shape.size();
  int64_t off = 0;
  for (size_t d = 0; d < t.shape.size(); ++d)
    off = off * t.shape[d] + (t.shape[d] == 1 ? 0 : index[lead + d]);
  return t.values[static_cast<size_t>(off)];
}

// Wrapped: an index into a dim (or a flattened tensor) of `size`, negative counting from the end.
int64_t Wrapped(double v, int64_t size) {
  const int64_t i = static_cast<int64_t>(v);
  return i < 0 ? i + size : i;
}

// ---------------------------------------------------------------------------------------------
// index_add, index_copy, index_fill

// AlongDim: a sample's self, dim and index as index_add, index_copy and index_fill read them: a
// 0-dim self counts as [1].
struct AlongDim {
  explicit AlongDim(const Sample& s)
      : self(s.args[0].tensor),
        shape(self.shape.empty() ? Shape{1} : self.shape),
        dim(WrapDim(s.args[1].integer, self.dim())),
        index(s.args[2].tensor) {}
  const HostTensor& self;
  Shape shape;
  int64_t dim;
  const HostTensor& index;
};

// IndexInto: index_add (`add`, times alpha) or index_copy: for every element of source, the
// element of self at its index with the position along dim replaced by index[position], in
// source's row-major order (index order per element of self, as ATen's CPU loop adds).
std::vector<HostTensor> IndexInto(const Sample& s, bool add) {
  const AlongDim a(s);
  const HostTensor& source = s.args[3].tensor;
  const Shape source_shape = source.shape.empty() ? Shape{1} : source.shape;
  const double alpha = add && Given(s, 4) ? s.args[4].number : 1;
  HostTensor out = a.self;
  for (int64_t f = 0; f < source.numel(); ++f) {
    Shape at = Unravel(f, source_shape);
    at[a.dim] = static_cast<int64_t>(a.index.values[static_cast<size_t>(at[a.dim])]);
    double& dst = out.values[static_cast<size_t>(Ravel(at, a.shape))];
    const double v = source.values[static_cast<size_t>(f)];
    dst = RoundTo(out.dtype, add ? dst + alpha * v : v);
  }
  return {out};
}

OpInfo IndexAdd() {
  OpInfo op;
  op.name = "index_add";
  op.out = "index_add.out";
  op.inplace = "index_add_";
  op.dtypes = kAllMask;  // AT_DISPATCH_ALL_TYPES_AND_COMPLEX_AND4(Half, Bool, BFloat16, ...)
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    // sample_inputs_index: alphas True and False for bool, -1, 0 and 2 otherwise (an int alpha
    // is converted to the dtype: -1 wraps for uint8), and a fractional one for floating types.
    std::vector<Arg> alphas;
    if (dtype == TSR_DTYPE_BOOL) {
      alphas = {Arg::ScalarBool(true), Arg::ScalarBool(false)};
    } else {
      alphas = {Arg::ScalarInt(-1), Arg::ScalarInt(0), Arg::ScalarInt(2)};
      if (IsFloating(dtype)) alphas.push_back(Arg::ScalarDouble(0.5));
    }
    for (const Shape& shape : {Shape{}, Shape{1}, Shape{S, S}}) {
      const int64_t dim = shape.size() == 2 ? 1 : 0;
      const int64_t n = shape.empty() ? 1 : shape[static_cast<size_t>(dim)];
      for (const Arg& alpha : alphas) {
        s.push_back(
            Described({T(Summable(shape, dtype, rng)), Arg::Int(dim), T(DistinctIndex(n, n, rng)),
                       T(Summable(shape, dtype, rng)), alpha}));
      }
    }
    // Repeated indices add up (ATen's CPU loop is sequential); an index longer than the dim.
    s.push_back(Described({T(Summable({3, 4, 5}, dtype, rng)), Arg::Int(1),
                           T(RandomIndex({6}, 0, 4, rng)), T(Summable({3, 6, 5}, dtype, rng))},
                          " (repeated indices)"));
    s.push_back(Described(
        {T(Summable({4, 3}, dtype, rng)), Arg::Int(-2),
         T(RandomIndex({5}, 0, 4, rng, TSR_DTYPE_INT32)), T(Summable({5, 3}, dtype, rng))},
        " (int32 index, repeated, negative dim)"));
    s.push_back(Described({T(Summable({2, 3, 4}, dtype, rng)), Arg::Int(-1), T(Long({2}, {3, 0})),
                           T(Summable({2, 3, 2}, dtype, rng))},
                          " (last dim)"));
    // A 0-dim index (one element); a 0-dim self and source at dim -1. (A 0-dim source beside
    // a 1-D self, which 1.13 took, current ATen refuses: see the errors.)
    s.push_back(Described({T(Summable({4, 3}, dtype, rng)), Arg::Int(0), T(Long({}, {2})),
                           T(Summable({1, 3}, dtype, rng))},
                          " (0-dim index)"));
    s.push_back(Described(
        {T(Summable({}, dtype, rng)), Arg::Int(-1), T(Long({1}, {0})), T(Summable({}, dtype, rng))},
        " (0-dim self and source, dim -1)"));
    // Empty: no index; no elements in self.
    s.push_back(Described({T(Summable({4, 3}, dtype, rng)), Arg::Int(0), T(Long({0}, {})),
                           T(Summable({0, 3}, dtype, rng))},
                          " (empty index)"));
    s.push_back(Described({T(Summable({0, 3}, dtype, rng)), Arg::Int(1), T(Long({2}, {2, 0})),
                           T(Summable({0, 2}, dtype, rng))},
                          " (empty self)"));
    return s;
  };
  op.reference = [](const Sample& s) { return IndexInto(s, true); };
  op.errors = [](Rng& rng) {
    const Arg self = T(F32({3, 4}, rng));
    const Arg source = T(F32({1, 4}, rng));
    return std::vector<ErrorInput>{
        // index_add_cpu_: no negative indices, and the one message for any out of range.
        Saying(Refused({self, Arg::Int(0), T(Long({1}, {3})), source}, TSR_OUT_OF_RANGE,
                       "index out of range in self (index 3 of a dim of 3)"),
               "index out of range in self"),
        Saying(Refused({self, Arg::Int(0), T(Long({1}, {-1})), source}, TSR_OUT_OF_RANGE,
                       "index out of range in self (index -1)"),
               "index out of range in self"),
        Saying(Refused({T(F32({4}, rng)), Arg::Int(0), T(Long({1}, {4})), T(F32({1}, rng))},
                       TSR_OUT_OF_RANGE, "index out of range in self (1-D self)"),
               "index out of range in self"),
        Saying(Refused({self, Arg::Int(0), T(Values(TSR_DTYPE_INT16, {1}, {0})), source},
                       TSR_INVALID_ARGUMENT,
                       "index_add_(): Expected dtype int32/int64 for index but got: Short"),
               "Expected dtype int32/int64 for index but got: "),
        Saying(Refused(
                   {self, Arg::Int(0), T(Long({1}, {0})),
                    T(MakeTensor({1, 4}, TSR_DTYPE_FLOAT64, rng))},
                   TSR_INVALID_ARGUMENT,
                   "index_add_(): self (Float) and source (Double) must have the same scalar type"),
               "self (float32) and source (float64) must have the same scalar type"),
        Saying(
            Refused({self, Arg::Int(0), T(Long({2}, {0, 1})), source}, TSR_INVALID_ARGUMENT,
                    "index_add_(): Number of indices (2) should be equal to source.size(dim): (1), "
                    "for dim: 0"),
            "Number of indices (2) should be equal to source.size(dim): (1), for dim: 0"),
        Saying(Refused({self, Arg::Int(0), T(Long({1, 1}, {0})), source}, TSR_OUT_OF_RANGE,
                       "index_add_(): Index is supposed to be a vector, but got dim: 2"),
               "Index is supposed to be a vector, but got dim: 2"),
        Saying(Refused(
                   {self, Arg::Int(1), T(Long({1}, {0})), T(F32({1}, rng))}, TSR_INVALID_ARGUMENT,
                   "index_add_(): Indexing dim 1 is out of bounds of the source tensor with dim 1"),
               "Indexing dim 1 is out of bounds of the source tensor with dim 1"),
        // The slices' shapes must agree (ATen's TensorIterator over one slice of each).
        Saying(
            Refused({self, Arg::Int(1), T(Long({1}, {0})), T(F32({2, 1}, rng))},
                    TSR_INVALID_ARGUMENT,
                    "The size of tensor a (3) must match the size of tensor b (2) at non-singleton "
                    "dimension 0"),
            "source tensor shape must match self tensor shape, excluding the specified dimension"),
        Saying(Refused({self, Arg::Int(2), T(Long({1}, {0})), source}, TSR_OUT_OF_RANGE,
                       "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
               "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
        // Current ATen compares a 0-dim self or source with the other whole (1.13 took these).
        Saying(Refused({T(F32({4}, rng)), Arg::Int(0), T(Long({1}, {3})), T(F32({}, rng))},
                       TSR_INVALID_ARGUMENT,
                       "source tensor shape must match self tensor shape, excluding the specified "
                       "dimension. Got self.shape = [4] source.shape = [] (0-dim source)"),
               "source tensor shape must match self tensor shape, excluding the specified "
               "dimension. Got self.shape = [4] source.shape = []"),
        Saying(Refused({T(F32({}, rng)), Arg::Int(-1), T(Long({1}, {0})), T(F32({1}, rng))},
                       TSR_INVALID_ARGUMENT,
                       "source tensor shape must match self tensor shape, excluding the specified "
                       "dimension. Got self.shape = [] source.shape = [1] (0-dim self)"),
               "source tensor shape must match self tensor shape, excluding the specified "
               "dimension. Got self.shape = [] source.shape = [1]")};
  };
  return op;
}

OpInfo IndexCopy() {
  OpInfo op;
  op.name = "index_copy";
  op.out = "index_copy.out";
  op.inplace = "index_copy_";
  op.dtypes = kAllMask;
  // Distinct indices only: which of two copies to one element wins is unspecified in ATen.
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    for (const Shape& shape : {Shape{}, Shape{1}, Shape{S, S}}) {
      const int64_t dim = shape.size() == 2 ? 1 : 0;
      const int64_t n = shape.empty() ? 1 : shape[static_cast<size_t>(dim)];
      s.push_back(Described({T(MakeTensor(shape, dtype, rng)), Arg::Int(dim),
                             T(DistinctIndex(n, n, rng)), T(MakeTensor(shape, dtype, rng))}));
    }
    // Some of the positions along dim 1 (negative dim), in a random order.
    s.push_back(Described({T(MakeTensor({4, 5, 3}, dtype, rng)), Arg::Int(-2),
                           T(DistinctIndex(3, 5, rng)), T(MakeTensor({4, 3, 3}, dtype, rng))}));
    s.push_back(Described({T(MakeTensor({3, 4}, dtype, rng)), Arg::Int(0), T(Long({}, {1})),
                           T(MakeTensor({1, 4}, dtype, rng))},
                          " (0-dim index)"));
    s.push_back(Described({T(MakeTensor({4}, dtype, rng)), Arg::Int(0), T(Long({1}, {2})),
                           T(MakeTensor({}, dtype, rng))},
                          " (0-dim source)"));
    s.push_back(Described({T(MakeTensor({}, dtype, rng)), Arg::Int(-1), T(Long({1}, {0})),
                           T(MakeTensor({1}, dtype, rng))},
                          " (0-dim self, dim -1)"));
    s.push_back(Described({T(MakeTensor({3, 4}, dtype, rng)), Arg::Int(1), T(Long({0}, {})),
                           T(MakeTensor({3, 0}, dtype, rng))},
                          " (empty index)"));
    s.push_back(Described({T(MakeTensor({0, 3}, dtype, rng)), Arg::Int(1), T(Long({2}, {2, 0})),
                           T(MakeTensor({0, 2}, dtype, rng))},
                          " (empty self)"));
    return s;
  };
  op.reference = [](const Sample& s) { return IndexInto(s, false); };
  op.errors = [](Rng& rng) {
    const Arg self = T(F32({3, 4}, rng));
    const Arg source = T(F32({1, 4}, rng));
    return std::vector<ErrorInput>{
        Saying(Refused({self, Arg::Int(0), T(Long({1}, {3})), source}, TSR_OUT_OF_RANGE,
                       "index_copy_(): index 3 is out of bounds for dimension 0 with size 3"),
               "index 3 is out of bounds for dimension 0 with size 3"),
        Saying(Refused({self, Arg::Int(0), T(Long({1}, {-1})), source}, TSR_OUT_OF_RANGE,
                       "index_copy_(): index -1 is out of bounds for dimension 0 with size 3"),
               "index -1 is out of bounds for dimension 0 with size 3"),
        Saying(Refused({self, Arg::Int(0), T(Values(TSR_DTYPE_INT32, {1}, {0})), source},
                       TSR_INVALID_ARGUMENT,
                       "index_copy_(): Expected a long tensor for index, but got Int"),
               "Expected a long tensor for index, but got "),
        Saying(Refused(
                   {self, Arg::Int(0), T(Long({1}, {0})),
                    T(MakeTensor({1, 4}, TSR_DTYPE_FLOAT64, rng))},
                   TSR_INVALID_ARGUMENT,
                   "index_copy_(): self and source expected to have the same dtype, but got (self) "
                   "Float and (source) Double"),
               "self and source expected to have the same dtype, but got (self) "),
        Saying(
            Refused({self, Arg::Int(0), T(Long({2}, {0, 1})), source}, TSR_OUT_OF_RANGE,
                    "index_copy_(): Number of indices (2) should be equal to source.size(dim) (1)"),
            "Number of indices (2) should be equal to source.size(dim) (1)"),
        Saying(Refused({self, Arg::Int(0), T(Long({1, 1}, {0})), source}, TSR_OUT_OF_RANGE,
                       "index_copy_(): Index should have dimension 1 or 0 (got 2)"),
               "Index should have dimension 1 or 0 (got 2)"),
        Saying(Refused({self, Arg::Int(1), T(Long({1}, {0})), T(F32({2, 1}, rng))},
                       TSR_INVALID_ARGUMENT,
                       "index_copy_(): Source/destination tensor must have same slice shapes. "
                       "Destination slice shape: 3 at dimension 1 and source slice shape: 2 at "
                       "dimension 0."),
               "Source/destination tensor must have same slice shapes."),
        Saying(Refused({self, Arg::Int(1), T(Long({1}, {0})), T(F32({3, 1, 1}, rng))},
                       TSR_OUT_OF_RANGE,
                       "index_copy_(): When source and destination are not scalars, their "
                       "dimensionality must match. Source dimensionality (3), destination "
                       "dimensionality (2)"),
               "When source and destination are not scalars, their dimensionality must match. "
               "Source dimensionality (3), destination dimensionality (2)"),
        Saying(
            Refused({self, Arg::Int(0), T(Long({2}, {0, 1})), T(F32({}, rng))}, TSR_OUT_OF_RANGE,
                    "index_copy_(): When source is scalar, index should have one element (got 2)"),
            "When source is scalar, index should have one element (got 2)"),
        Saying(Refused({self, Arg::Int(-3), T(Long({1}, {0})), source}, TSR_OUT_OF_RANGE,
                       "Dimension out of range (expected to be in range of [-2, 1], but got -3)"),
               "Dimension out of range (expected to be in range of [-2, 1], but got -3)")};
  };
  return op;
}

// index_fill.int_Scalar or, with `tensor_value`, index_fill.int_Tensor (its value a 0-dim
// tensor of any dtype, read as value.item()). Indices may repeat and be negative.
OpInfo IndexFill(bool tensor_value) {
  OpInfo op;
  op.name = tensor_value ? "index_fill.int_Tensor" : "index_fill.int_Scalar";
  op.out = tensor_value ? "index_fill.int_Tensor_out" : "index_fill.int_Scalar_out";
  op.inplace = tensor_value ? "index_fill_.int_Tensor" : "index_fill_.int_Scalar";
  op.dtypes = kAllMask;
  op.samples = [tensor_value](tsr_dtype dtype, Rng& rng) {
    // The value: of self's dtype, as sample_inputs_index's make_arg((1,)).item().
    auto value = [&](double v, tsr_dtype of) {
      return tensor_value ? T(Values(of, {}, {v})) : ScalarOf(of, v);
    };
    auto same = [&]() { return value(AValue(dtype, rng), dtype); };
    std::vector<Sample> s;
    for (const Shape& shape : {Shape{}, Shape{1}, Shape{S, S}}) {
      const int64_t dim = shape.size() == 2 ? 1 : 0;
      const int64_t n = shape.empty() ? 1 : shape[static_cast<size_t>(dim)];
      s.push_back(Described({T(MakeTensor(shape, dtype, rng)), Arg::Int(dim),
                             T(RandomIndex({n}, 0, n, rng)), same()}));
    }
    s.push_back(Described(
        {T(MakeTensor({3, 4, 5}, dtype, rng)), Arg::Int(-2), T(Long({4}, {-1, 0, -4, 2})), same()},
        " (negative and repeated indices)"));
    s.push_back(
        Described({T(MakeTensor({4, 3}, dtype, rng)), Arg::Int(1), T(Long({}, {-1})), same()},
                  " (0-dim index)"));
    s.push_back(Described({T(MakeTensor({}, dtype, rng)), Arg::Int(-1), T(Long({1}, {-1})), same()},
                          " (0-dim self, dim -1)"));
    s.push_back(
        Described({T(MakeTensor({4, 3}, dtype, rng)), Arg::Int(0), T(Long({0}, {})), same()},
                  " (empty index)"));
    s.push_back(
        Described({T(MakeTensor({0, 3}, dtype, rng)), Arg::Int(1), T(Long({2}, {2, 0})), same()},
                  " (empty self)"));
    // A value of another kind, converted to self's dtype (an integer self truncates 2.5).
    const tsr_dtype other = IsFloating(dtype) ? TSR_DTYPE_INT64 : TSR_DTYPE_FLOAT64;
    s.push_back(Described({T(MakeTensor({3, 4}, dtype, rng)), Arg::Int(0), T(Long({2}, {2, 0})),
                           value(IsFloating(dtype) ? 7 : 2.5, other)},
                          " (value of another dtype)"));
    if (IsFloating(dtype)) {
      for (double v : {NAN, -INFINITY}) {
        s.push_back(Described({T(MakeTensor({3, 4}, dtype, rng)), Arg::Int(1), T(Long({2}, {3, 1})),
                               value(v, dtype)}));
      }
    }
    return s;
  };
  op.reference = [tensor_value](const Sample& s) {
    const AlongDim a(s);
    const double value =
        RoundTo(a.self.dtype, tensor_value ? s.args[3].tensor.values[0] : s.args[3].number);
    const int64_t size = a.shape[static_cast<size_t>(a.dim)];
    std::vector<bool> filled(static_cast<size_t>(size), false);
    for (double v : a.index.values) filled[static_cast<size_t>(Wrapped(v, size))] = true;
    HostTensor out = a.self;
    for (int64_t f = 0; f < out.numel(); ++f) {
      if (filled[static_cast<size_t>(Unravel(f, a.shape)[static_cast<size_t>(a.dim)])])
        out.values[static_cast<size_t>(f)] = value;
    }
    return std::vector<HostTensor>{out};
  };
  op.errors = [tensor_value](Rng& rng) {
    const Arg self = T(F32({3, 4}, rng));
    const Arg value = tensor_value ? T(Values(TSR_DTYPE_FLOAT32, {}, {1})) : Arg::ScalarDouble(1);
    std::vector<ErrorInput> e = {
        Saying(Refused({self, Arg::Int(0), T(Long({1}, {3})), value}, TSR_OUT_OF_RANGE,
                       "index 3 is out of bounds for dimension 0 with size 3"),
               "index 3 is out of bounds for dimension 0 with size 3"),
        Saying(Refused({self, Arg::Int(1), T(Long({2}, {0, -5})), value}, TSR_OUT_OF_RANGE,
                       "index -5 is out of bounds for dimension 1 with size 4"),
               "index -5 is out of bounds for dimension 1 with size 4"),
        Saying(Refused({self, Arg::Int(0), T(Values(TSR_DTYPE_INT32, {1}, {0})), value},
                       TSR_OUT_OF_RANGE, "index_fill_(): Expected dtype int64 for index."),
               "Expected dtype int64 for index."),
        Saying(Refused({self, Arg::Int(0), T(Long({1, 1}, {0})), value}, TSR_INVALID_ARGUMENT,
                       "Index has to be a vector/scalar"),
               "Index has to be a vector/scalar"),
        Saying(Refused({self, Arg::Int(2), T(Long({1}, {0})), value}, TSR_OUT_OF_RANGE,
                       "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
               "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
        Saying(Refused({T(MakeTensor({3}, TSR_DTYPE_UINT8, rng)), Arg::Int(0), T(Long({1}, {0})),
                        tensor_value ? T(Values(TSR_DTYPE_INT64, {}, {300})) : Arg::ScalarInt(300)},
                       TSR_INVALID_ARGUMENT,
                       "value cannot be converted to type uint8_t without overflow"),
               "cannot be converted to uint8 without overflow")};
    if (tensor_value) {
      e.push_back(Saying(
          Refused({self, Arg::Int(0), T(Long({1}, {0})), T(F32({1}, rng))}, TSR_INVALID_ARGUMENT,
                  "index_fill_ only supports a 0-dimensional value tensor, but got tensor "
                  "with 1 dimension(s)."),
          "index_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 "
          "dimension(s)."));
    }
    return e;
  };
  return op;
}

// ---------------------------------------------------------------------------------------------
// take, put

OpInfo Take() {
  OpInfo op;
  op.name = "take";
  op.out = "take.out";
  op.dtypes = kAllMask;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    // sample_inputs_take: S of S * S elements, and the same counted from the end.
    const HostTensor index = RandomIndex({3}, 0, 9, rng);
    HostTensor from_end = index;
    for (double& v : from_end.values) v = -v - 1;
    s.push_back(Described({T(MakeTensor({3, 3}, dtype, rng)), T(index)}));
    s.push_back(Described({T(MakeTensor({3, 3}, dtype, rng)), T(from_end)}, " (negative)"));
    s.push_back(Described({T(MakeTensor({2, 3}, dtype, rng)), T(Long({2, 2}, {0, 5, -6, -1}))},
                          " (the first and last elements, both ways)"));
    // Scalar cases: a 0-dim or one-element self and index.
    for (const Shape& self : {Shape{}, Shape{1}}) {
      for (const Shape& idx : {Shape{}, Shape{1}}) {
        s.push_back(Described({T(MakeTensor(self, dtype, rng)), T(Long(idx, {0}))}));
      }
    }
    s.push_back(
        Described({T(MakeTensor({}, dtype, rng)), T(Long({1, 1}, {-1}))}, " (index -1 of 1)"));
    // Empty cases: no index, of any self (an empty one included).
    for (const Shape& self : {Shape{0}, Shape{}, Shape{1}, Shape{3, 2}}) {
      s.push_back(Described({T(MakeTensor(self, dtype, rng)), T(Long({0}, {}))}));
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor &self = s.args[0].tensor, &index = s.args[1].tensor;
    HostTensor out = Values(self.dtype, index.shape, {});
    for (double v : index.values)
      out.values.push_back(self.values[static_cast<size_t>(Wrapped(v, self.numel()))]);
    return std::vector<HostTensor>{out};
  };
  op.errors = [](Rng& rng) {
    const Arg self = T(F32({2, 3}, rng));
    return std::vector<ErrorInput>{
        Saying(Refused({self, T(Long({2}, {0, 6}))}, TSR_OUT_OF_RANGE,
                       "out of range: tried to access index 6 on a tensor of 6 elements."),
               "out of range: tried to access index 6 on a tensor of 6 elements."),
        Saying(Refused({self, T(Long({1}, {-7}))}, TSR_OUT_OF_RANGE,
                       "out of range: tried to access index -7 on a tensor of 6 elements."),
               "out of range: tried to access index -7 on a tensor of 6 elements."),
        Saying(Refused({self, T(Values(TSR_DTYPE_INT32, {1}, {0}))}, TSR_INVALID_ARGUMENT,
                       "take(): Expected a long tensor for index, but got Int"),
               "Expected a long tensor for index, but got "),
        Saying(Refused({T(F32({0}, rng)), T(Long({1}, {0}))}, TSR_OUT_OF_RANGE,
                       "take(): tried to take from an empty tensor"),
               "tried to take from an empty tensor")};
  };
  return op;
}

OpInfo Put() {
  OpInfo op;
  op.name = "put";
  op.out = "put.out";
  op.inplace = "put_";
  op.dtypes = kAllMask;
  // Without accumulate, distinct indices only (which write wins is unspecified in ATen).
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    // sample_inputs_put: S distinct of S * S elements, and the same counted from the end.
    const HostTensor index = DistinctIndex(3, 9, rng);
    HostTensor from_end = index;
    for (double& v : from_end.values) v = -v - 1;
    for (const HostTensor& idx : {index, from_end}) {
      for (bool acc : {true, false}) {
        s.push_back(Described(
            {T(Summable({3, 3}, dtype, rng)), T(idx), T(Summable({3}, dtype, rng)), Arg::Bool(acc)},
            idx.values == index.values ? "" : " (negative)"));
      }
    }
    // Repeated indices (0, 8 - 9 and 0 again) accumulate, one after the other.
    s.push_back(Described({T(Summable({3, 3}, dtype, rng)), T(Long({4}, {0, 8, -9, 0})),
                           T(Summable({4}, dtype, rng)), Arg::Bool(true)},
                          " (repeated indices)"));
    // index and source of other shapes with as many elements.
    s.push_back(Described({T(MakeTensor({2, 3}, dtype, rng)), T(Long({2, 2}, {5, 0, -3, 1})),
                           T(MakeTensor({4}, dtype, rng)), Arg::Bool(false)}));
    s.push_back(Described({T(Summable({2, 3}, dtype, rng)), T(Long({4}, {5, 0, -3, 1})),
                           T(Summable({2, 2}, dtype, rng)), Arg::Bool(true)}));
    s.push_back(Described(
        {T(MakeTensor({2, 3}, dtype, rng)), T(Long({2}, {1, 4})), T(MakeTensor({2}, dtype, rng))},
        " (accumulate left out)"));
    // Scalar cases: 0-dim or one-element self, index and source.
    for (const Shape& self : {Shape{}, Shape{1}}) {
      for (const Shape& idx : {Shape{}, Shape{1}}) {
        for (bool acc : {true, false}) {
          const Shape src = idx.empty() ? Shape{1} : Shape{};
          s.push_back(Described({T(Summable(self, dtype, rng)), T(Long(idx, {0})),
                                 T(Summable(src, dtype, rng)), Arg::Bool(acc)}));
        }
      }
    }
    // Empty cases: no index and no source, into any self (an empty one included).
    for (const Shape& self : {Shape{0}, Shape{}, Shape{1}, Shape{3, 2}}) {
      s.push_back(Described({T(MakeTensor(self, dtype, rng)), T(Long({0}, {})),
                             T(MakeTensor({0}, dtype, rng)), Arg::Bool(self.size() == 1)}));
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor &index = s.args[1].tensor, &source = s.args[2].tensor;
    const bool accumulate = Given(s, 3) && s.args[3].boolean;
    HostTensor out = s.args[0].tensor;
    for (int64_t i = 0; i < index.numel(); ++i) {
      double& dst = out.values[static_cast<size_t>(
          Wrapped(index.values[static_cast<size_t>(i)], out.numel()))];
      const double v = source.values[static_cast<size_t>(i)];
      dst = RoundTo(out.dtype, accumulate ? dst + v : v);
    }
    return std::vector<HostTensor>{out};
  };
  op.errors = [](Rng& rng) {
    const Arg self = T(F32({2, 3}, rng));
    const Arg two = T(F32({2}, rng));
    return std::vector<ErrorInput>{
        Saying(Refused(
                   {self, T(Long({2}, {0, 1})), T(F32({3}, rng))}, TSR_OUT_OF_RANGE,
                   "put_(): Expected source and index to have the same number of elements, but got "
                   "source.numel() = 3, index.numel() = 2"),
               "Expected source and index to have the same number of elements, but got "
               "source.numel() = 3, index.numel() = 2"),
        Saying(Refused({self, T(Values(TSR_DTYPE_INT32, {2}, {0, 1})), two}, TSR_INVALID_ARGUMENT,
                       "put_(): Expected a long tensor for index, but got Int"),
               "Expected a long tensor for index, but got "),
        Saying(
            Refused({self, T(Long({2}, {0, 1})), T(MakeTensor({2}, TSR_DTYPE_FLOAT64, rng))},
                    TSR_INVALID_ARGUMENT,
                    "put_(): self and source expected to have the same dtype, but got self.dtype = "
                    "Float and source.dtype = Double"),
            "self and source expected to have the same dtype, but got self.dtype = "),
        Saying(Refused({self, T(Long({2}, {0, 6})), two}, TSR_OUT_OF_RANGE,
                       "out of range: tried to access index 6 on a tensor of 6 elements."),
               "out of range: tried to access index 6 on a tensor of 6 elements."),
        Saying(Refused({self, T(Long({2}, {-7, 0})), two, Arg::Bool(true)}, TSR_OUT_OF_RANGE,
                       "out of range: tried to access index -7 on a tensor of 6 elements."),
               "out of range: tried to access index -7 on a tensor of 6 elements."),
        Saying(Refused({T(F32({0}, rng)), T(Long({1}, {0})), T(F32({1}, rng))}, TSR_OUT_OF_RANGE,
                       "put_(): Tried to put elements into an empty tensor"),
               "Tried to put elements into an empty tensor")};
  };
  return op;
}

// ---------------------------------------------------------------------------------------------
// nonzero, masked_select, masked_scatter

OpInfo Nonzero() {
  OpInfo op;
  op.name = "nonzero";
  op.shape_from_values = true;  // its shape (or a mask's nonzero) needs values
  op.out = "nonzero.out";
  op.dtypes = kAllMask;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    // sample_inputs_nonzero: each shape with no nonzero element, then with some zeroed.
    for (const Shape& shape :
         {Shape{}, Shape{S}, Shape{S, S}, Shape{S, S, S}, Shape{S, 1, S}, Shape{S, 0, S}}) {
      s.push_back(Described({T(Full(shape, dtype, 0))}, " (zeros)"));
      HostTensor mixed = MakeTensor(shape, dtype, rng);
      const HostTensor zeroed = MakeTensor(shape, TSR_DTYPE_BOOL, rng);
      for (size_t i = 0; i < mixed.values.size(); ++i) {
        if (zeroed.values[i] != 0) mixed.values[i] = 0;
      }
      s.push_back(Described({T(mixed)}, " (mixed)"));
    }
    MakeOptions nonzero;
    nonzero.exclude_zero = true;
    s.push_back(Described({T(MakeTensor({}, dtype, rng, nonzero))}, " (nonzero)"));
    // NaN and infinities are nonzero, -0.0 is not.
    if (IsFloating(dtype)) s.push_back(Described({T(ExtremeTensor(dtype))}, " (extremes)"));
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& self = s.args[0].tensor;
    std::vector<double> coords;
    int64_t n = 0;
    for (int64_t f = 0; f < self.numel(); ++f) {
      if (self.values[static_cast<size_t>(f)] == 0) continue;  // NaN != 0
      for (int64_t c : Unravel(f, self.shape)) coords.push_back(static_cast<double>(c));
      ++n;
    }
    return std::vector<HostTensor>{Long({n, self.dim()}, coords)};
  };
  return op;
}

// Masked: self and mask broadcast together, as masked_select and masked_scatter read them.
struct Masked {
  Masked(const HostTensor& self, const HostTensor& mask)
      : shape(BroadcastShape({self.shape, mask.shape})) {
    for (int64_t size : shape) numel *= size;
  }
  Shape shape;
  int64_t numel = 1;
};

OpInfo MaskedSelect() {
  OpInfo op;
  op.name = "masked_select";
  op.shape_from_values = true;  // its shape (or a mask's nonzero) needs values
  op.out = "masked_select.out";
  op.dtypes = kAllMask;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    // sample_inputs_masked_select: every way self and mask broadcast, 0-dim ones included.
    const std::vector<std::pair<Shape, Shape>> shapes = {
        {{S, S}, {S, S}}, {{S, S}, {S}}, {{S}, {S, S}}, {{S, 1, S}, {S, S}},
        {{}, {}},         {{S, S}, {}},  {{}, {S, S}},  {{2, 3}, {1, 3}}};
    for (const auto& [self, mask] : shapes) {
      const HostTensor m = mask.empty() ? Values(TSR_DTYPE_BOOL, {}, {1}) : Mask(mask, rng);
      s.push_back(Described({T(MakeTensor(self, dtype, rng)), T(m)}));
    }
    s.push_back(Described({T(MakeTensor({S, S}, dtype, rng)), T(Full({S}, TSR_DTYPE_BOOL, 0))},
                          " (nothing selected)"));
    s.push_back(Described({T(MakeTensor({S, S}, dtype, rng)), T(Values(TSR_DTYPE_BOOL, {}, {0}))},
                          " (0-dim False)"));
    s.push_back(Described({T(MakeTensor({0, 3}, dtype, rng)), T(Mask({3}, rng))}, " (empty)"));
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor &self = s.args[0].tensor, &mask = s.args[1].tensor;
    const Masked m(self, mask);
    HostTensor out = Values(self.dtype, {0}, {});
    for (int64_t f = 0; f < m.numel; ++f) {
      const Shape at = Unravel(f, m.shape);
      if (BroadcastAt(mask, at) != 0) out.values.push_back(BroadcastAt(self, at));
    }
    out.shape = {static_cast<int64_t>(out.values.size())};
    return std::vector<HostTensor>{out};
  };
  op.errors = [](Rng& rng) {
    const Arg self = T(F32({2, 3}, rng));
    return std::vector<ErrorInput>{
        // Current PyTorch (pytorch/pytorch#96112); 1.13 takes a uint8 mask with a warning.
        Saying(Refused({self, T(Values(TSR_DTYPE_UINT8, {3}, {1, 0, 1}))}, TSR_INVALID_ARGUMENT,
                       "masked_select: expected BoolTensor for mask (a uint8 mask)"),
               "expected BoolTensor for mask"),
        Saying(Refused({self, T(Long({3}, {1, 0, 1}))}, TSR_INVALID_ARGUMENT,
                       "masked_select: expected BoolTensor for mask (an int64 mask)"),
               "expected BoolTensor for mask"),
        Saying(
            Refused({self, T(Values(TSR_DTYPE_BOOL, {2}, {1, 0}))}, TSR_INVALID_ARGUMENT,
                    "The size of tensor a (2) must match the size of tensor b (3) at non-singleton "
                    "dimension 1"),
            "must match the size of tensor b (2) at non-singleton dimension 1")};
  };
  return op;
}

OpInfo MaskedScatter() {
  OpInfo op;
  op.name = "masked_scatter";
  op.out = "masked_scatter.out";
  op.inplace = "masked_scatter_";
  op.dtypes = kAllMask;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    // sample_inputs_masked_scatter: the mask broadcast to self, or self to the mask (the
    // functional form only: masked_scatter_ cannot grow self).
    const std::vector<std::pair<Shape, Shape>> shapes = {
        {{S, S}, {S, S}}, {{S, S}, {S}}, {{S, S}, {}}, {{S}, {S, S}}, {{}, {}}};
    for (const auto& [self, mask] : shapes) {
      const HostTensor m = mask.empty() ? MakeTensor({}, TSR_DTYPE_BOOL, rng) : Mask(mask, rng);
      s.push_back(
          Described({T(MakeTensor(self, dtype, rng)), T(m), T(MakeTensor({S, S}, dtype, rng))}));
    }
    // Source: read in row-major order whatever its shape; elements past the last True unread.
    const HostTensor mask = Mask({3, 4}, rng);
    s.push_back(
        Described({T(MakeTensor({3, 4}, dtype, rng)), T(mask), T(MakeTensor({2, 8}, dtype, rng))},
                  " (source of another shape)"));
    s.push_back(Described(
        {T(MakeTensor({3, 4}, dtype, rng)), T(mask), T(MakeTensor({CountTrue(mask)}, dtype, rng))},
        " (source just large enough)"));
    s.push_back(Described({T(MakeTensor({3, 4}, dtype, rng)), T(Full({3, 4}, TSR_DTYPE_BOOL, 0)),
                           T(MakeTensor({0}, dtype, rng))},
                          " (nothing scattered, empty source)"));
    s.push_back(Described(
        {T(MakeTensor({0, 3}, dtype, rng)), T(Mask({3}, rng)), T(MakeTensor({0}, dtype, rng))},
        " (empty self)"));
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor &self = s.args[0].tensor, &mask = s.args[1].tensor, &source = s.args[2].tensor;
    const Masked m(self, mask);
    HostTensor out = Values(self.dtype, m.shape, {});
    size_t next = 0;
    for (int64_t f = 0; f < m.numel; ++f) {
      const Shape at = Unravel(f, m.shape);
      out.values.push_back(BroadcastAt(mask, at) != 0 ? source.values.at(next++)
                                                      : BroadcastAt(self, at));
    }
    return std::vector<HostTensor>{out};
  };
  op.errors = [](Rng& rng) {
    const Arg self = T(F32({2, 3}, rng));
    const Arg source = T(F32({6}, rng));
    return std::vector<ErrorInput>{
        // Current PyTorch (pytorch/pytorch#97999); 1.13 takes a uint8 mask with a warning.
        Saying(Refused(
                   {self, T(Values(TSR_DTYPE_UINT8, {3}, {1, 0, 1})), source}, TSR_INVALID_ARGUMENT,
                   "masked_scatter_ only supports boolean masks, but got mask with dtype unsigned "
                   "char"),
               "masked_scatter_ only supports boolean masks, but got mask with dtype "),
        Saying(
            Refused({self, T(Values(TSR_DTYPE_BOOL, {3}, {1, 0, 1})),
                     T(MakeTensor({6}, TSR_DTYPE_FLOAT64, rng))},
                    TSR_INVALID_ARGUMENT,
                    "masked_scatter: expected self and source to have same dtypes but gotFloat and "
                    "Double"),
            "expected self and source to have same dtypes but got"),
        Saying(
            Refused({self, T(Values(TSR_DTYPE_BOOL, {3}, {1, 0, 1})), T(F32({3}, rng))},
                    TSR_INVALID_ARGUMENT, "Number of elements of source < number of ones in mask"),
            "Number of elements of source < number of ones in mask"),
        Saying(
            Refused({self, T(Values(TSR_DTYPE_BOOL, {2}, {1, 0})), source}, TSR_INVALID_ARGUMENT,
                    "The size of tensor a (2) must match the size of tensor b (3) at non-singleton "
                    "dimension 1"),
            "must match the size of tensor b (2) at non-singleton dimension 1")};
  };
  return op;
}

// ---------------------------------------------------------------------------------------------
// index.Tensor, index_put

// Indexed: where each element of an advanced indexing result comes from in self, after ATen's
// make_info (TensorAdvancedIndexing.cpp): a bool or uint8 mask becomes one index per dim it
// covers (its nonzero() coordinates, row-major), the indices broadcast together, missing
// trailing dims are whole; adjacent indices put the broadcast shape where the indexed dims
// were, non-adjacent ones put it first (then the whole dims, in order). Negative indices count
// from the end. The sample's indices must be valid (the error inputs check the rest).
struct Indexed {
  Shape shape;                // the indexing result's
  std::vector<int64_t> from;  // per result element (row-major), its row-major offset in self
};

Indexed AdvancedIndex(const HostTensor& self, const Arg& indices) {
  std::vector<Opt> per_dim;
  for (size_t i = 0; i < indices.tensors.size(); ++i) {
    if (indices.Absent(i)) {
      per_dim.emplace_back();
      continue;
    }
    const HostTensor& t = indices.tensors[i];
    if (t.dtype != TSR_DTYPE_BOOL && t.dtype != TSR_DTYPE_UINT8) {
      per_dim.emplace_back(t);
      continue;
    }
    std::vector<std::vector<double>> coords(static_cast<size_t>(t.dim()));
    for (int64_t f = 0; f < t.numel(); ++f) {
      if (t.values[static_cast<size_t>(f)] == 0) continue;
      const Shape at = Unravel(f, t.shape);
      for (size_t d = 0; d < at.size(); ++d) coords[d].push_back(static_cast<double>(at[d]));
    }
    for (const std::vector<double>& c : coords)
      per_dim.emplace_back(Long({static_cast<int64_t>(c.size())}, c));
  }
  per_dim.resize(static_cast<size_t>(self.dim()));
  std::vector<Shape> shapes;
  std::vector<size_t> indexed;
  for (size_t d = 0; d < per_dim.size(); ++d) {
    if (!per_dim[d]) continue;
    shapes.push_back(per_dim[d]->shape);
    indexed.push_back(d);
  }
  const Shape broadcast = BroadcastShape(shapes);
  const size_t nb = broadcast.size(), nd = per_dim.size();
  // Where the broadcast dims go in the result, and where each whole dim of self goes.
  const bool adjacent = indexed.empty() || indexed.back() - indexed.front() + 1 == indexed.size();
  const size_t first = adjacent && !indexed.empty() ? indexed.front() : 0;
  Indexed r;
  std::vector<size_t> place(nd);
  if (!adjacent) r.shape = broadcast;
  for (size_t d = 0; d < nd; ++d) {
    if (adjacent && d == first) r.shape.insert(r.shape.end(), broadcast.begin(), broadcast.end());
    if (per_dim[d]) continue;
    place[d] = r.shape.size();
    r.shape.push_back(self.shape[d]);
  }
  HostTensor result;
  result.shape = r.shape;
  for (int64_t f = 0; f < result.numel(); ++f) {
    const Shape at = Unravel(f, r.shape);
    const Shape b(at.begin() + static_cast<std::ptrdiff_t>(first),
                  at.begin() + static_cast<std::ptrdiff_t>(first + nb));
    Shape src(nd);
    for (size_t d = 0; d < nd; ++d)
      src[d] = per_dim[d] ? Wrapped(BroadcastAt(*per_dim[d], b), self.shape[d]) : at[place[d]];
    r.from.push_back(Ravel(src, self.shape));
  }
  return r;
}

// Indices: a Tensor?[] argument; nullopt is None.
Arg Indices(std::vector<Opt> ts) { return Arg::OptionalTensors(std::move(ts)); }

HostTensor Int32(Shape shape, const std::vector<double>& values) {
  return Values(TSR_DTYPE_INT32, std::move(shape), values);
}

OpInfo Index() {
  OpInfo op;
  op.name = "index.Tensor";
  op.shape_from_values = true;  // its shape (or a mask's nonzero) needs values
  op.out = "index.Tensor_out";
  op.dtypes = kAllMask;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    auto x = [&](Shape shape) { return T(MakeTensor(std::move(shape), dtype, rng)); };
    const Opt none;
    std::vector<Sample> s;
    // sample_inputs_getitem's indices of a [S, S, S] tensor, and more.
    s.push_back(Described({x({S, S, S}), Indices({Long({2}, {1, 2})})}));
    s.push_back(Described({x({S, S, S}), Indices({none, Long({2}, {0, 3})})}));
    s.push_back(Described({x({S, S, S}), Indices({none, none, Long({2}, {4, -5})})},
                          " (last dim, negative)"));
    s.push_back(Described(
        {x({S, S, S}), Indices({Long({3}, {0, 2, 3}), Long({3}, {1, 3, 3}), Long({3}, {0, 0, 2})})},
        " (every dim)"));
    s.push_back(
        Described({x({S, S, S}), Indices({Long({2}, {0, 3}), Long({2}, {1, 2})})}, " (adjacent)"));
    s.push_back(Described({x({S, S, S}), Indices({Long({2}, {0, 3}), none, Long({2}, {1, -1})})},
                          " (not adjacent: broadcast dims first)"));
    s.push_back(
        Described({x({4, 3, S, 2}), Indices({none, Long({2}, {0, 2}), none, Long({2}, {1, 0})})},
                  " (not adjacent, whole dims between)"));
    s.push_back(Described({x({4, 3, S, 2}), Indices({none, Long({2}, {0, 2}), Long({2}, {4, 1})})},
                          " (adjacent in the middle)"));
    // Indices broadcast together; an index of several dims; 0-dim indices.
    s.push_back(Described({x({S, S, S}), Indices({Long({2, 1}, {0, 4}), Long({3}, {1, 2, -1})})},
                          " (broadcast indices)"));
    s.push_back(
        Described({x({S, S, S}), Indices({Long({2, 1}, {3, 1}), none, Long({1, 3}, {0, 2, 4})})},
                  " (broadcast, not adjacent)"));
    s.push_back(Described({x({S, S, S}), Indices({none, RandomIndex({2, 3}, -S, S, rng)})},
                          " (2-D index, negative)"));
    s.push_back(Described({x({S, S, S}), Indices({Long({}, {-1})})}, " (0-dim index)"));
    s.push_back(Described({x({3, 4, S}), Indices({Long({}, {1}), none, Long({}, {-1})})},
                          " (0-dim indices, not adjacent)"));
    s.push_back(
        Described({x({S, 1, 4}), Indices({none, Long({3}, {0, -1, 0})})}, " (repeated indices)"));
    // int32 indices: current PyTorch's make_info takes them (1.13 refuses them).
    s.push_back(
        Described({x({S, S, S}), Indices({none, Int32({3}, {4, 0, -5})})}, " (int32 index)"));
    s.push_back(Described({x({S, S}), Indices({Int32({2}, {1, 3}), Long({2}, {0, -2})})},
                          " (int32 and int64 indices)"));
    // Masks stand for their nonzero(): one index per dim they cover.
    s.push_back(Described({x({S, S, S}), Indices({Mask({S}, rng)})}, " (mask)"));
    s.push_back(Described({x({S, S, S}), Indices({none, Mask({S}, rng)})}, " (mask of dim 1)"));
    s.push_back(Described({x({S, S, S}), Indices({Mask({S, S}, rng)})}, " (2-D mask)"));
    s.push_back(Described({x({S, S, S}), Indices({Mask({S, S}, rng), Long({1}, {3})})},
                          " (2-D mask and an index)"));
    s.push_back(Described({x({S, S, S}), Indices({Long({1}, {2}), none, Mask({S}, rng)})},
                          " (an index and a mask, not adjacent)"));
    s.push_back(Described({x({S, S, S}), Indices({Full({S}, TSR_DTYPE_BOOL, 0)})},
                          " (mask selecting nothing)"));
    s.push_back(Described({x({7}), Indices({Mask({7}, rng)})}, " (mask of every dim)"));
    // uint8 masks: deprecated, still taken.
    HostTensor byte_mask = Mask({S}, rng);
    byte_mask.dtype = TSR_DTYPE_UINT8;
    s.push_back(Described({x({S, S, S}), Indices({none, byte_mask})}, " (uint8 mask)"));
    // Empty indices and empty selves.
    s.push_back(Described({x({S, S, S}), Indices({Long({0}, {})})}, " (empty index)"));
    s.push_back(Described({x({S, S, S}), Indices({none, Long({0}, {}), Long({1}, {1})})},
                          " (empty index broadcast)"));
    s.push_back(Described({x({0, 3}), Indices({none, Long({2}, {2, 0})})}, " (empty self)"));
    s.push_back(Described({x({0, 3}), Indices({Long({0, 2}, {})})}, " (empty self and index)"));
    s.push_back(
        Described({x({0, 3}), Indices({Full({0}, TSR_DTYPE_BOOL, 0)})}, " (empty self and mask)"));
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& self = s.args[0].tensor;
    const Indexed r = AdvancedIndex(self, s.args[1]);
    HostTensor out = Values(self.dtype, r.shape, {});
    for (int64_t f : r.from) out.values.push_back(self.values[static_cast<size_t>(f)]);
    return std::vector<HostTensor>{out};
  };
  op.errors = [](Rng& rng) {
    const Arg self = T(F32({2, 3, 4}, rng));
    const Opt none;
    return std::vector<ErrorInput>{
        Saying(Refused({self,
                        Indices({Long({1}, {0}), Long({1}, {0}), Long({1}, {0}), Long({1}, {0})})},
                       TSR_OUT_OF_RANGE, "too many indices for tensor of dimension 3 (got 4)"),
               "too many indices for tensor of dimension 3 (got 4)"),
        Saying(Refused({self, Indices({Values(TSR_DTYPE_FLOAT32, {1}, {0})})}, TSR_OUT_OF_RANGE,
                       "tensors used as indices must be long, int, byte or bool tensors (float32)"),
               "tensors used as indices must be long, int, byte or bool tensors"),
        Saying(Refused({self, Indices({none, Values(TSR_DTYPE_INT16, {1}, {0})})}, TSR_OUT_OF_RANGE,
                       "tensors used as indices must be long, int, byte or bool tensors (int16)"),
               "tensors used as indices must be long, int, byte or bool tensors"),
        Saying(Refused({self, Indices({Long({2}, {0, 2})})}, TSR_OUT_OF_RANGE,
                       "index 2 is out of bounds for dimension 0 with size 2"),
               "index 2 is out of bounds for dimension 0 with size 2"),
        // ATen numbers the indexed dims in its message, not self's dims.
        Saying(Refused({self, Indices({none, none, Long({1}, {-5})})}, TSR_OUT_OF_RANGE,
                       "index -5 is out of bounds for dimension 0 with size 4"),
               "index -5 is out of bounds for dimension 0 with size 4"),
        Saying(Refused({self, Indices({none, Long({1}, {0}), Long({1}, {4})})}, TSR_OUT_OF_RANGE,
                       "index 4 is out of bounds for dimension 1 with size 4"),
               "index 4 is out of bounds for dimension 1 with size 4"),
        Saying(
            Refused({self, Indices({Long({2}, {0, 1}), Long({3}, {0, 1, 2})})}, TSR_OUT_OF_RANGE,
                    "shape mismatch: indexing tensors could not be broadcast together with shapes "
                    "[2], [3]"),
            "shape mismatch: indexing tensors could not be broadcast together with shapes [2], "
            "[3]"),
        Saying(
            Refused({self, Indices({Values(TSR_DTYPE_BOOL, {3}, {1, 0, 1})})}, TSR_OUT_OF_RANGE,
                    "The shape of the mask [3] at index 0 does not match the shape of the indexed "
                    "tensor [2, 3, 4] at index 0"),
            "The shape of the mask [3] at index 0 does not match the shape of the indexed tensor "
            "[2, 3, 4] at index 0"),
        Saying(Refused(
                   {T(F32({3}, rng)), Indices({Full({3, 3}, TSR_DTYPE_BOOL, 1)})}, TSR_OUT_OF_RANGE,
                   "Dimension out of range (expected to be in range of [-1, 0], but got 1) (a mask "
                   "of more dims than self)"),
               "too many indices for tensor of dimension 1 (got 2)"),
        Saying(Refused({T(F32({0, 3}, rng)), Indices({Long({1}, {0})})}, TSR_OUT_OF_RANGE,
                       "index is out of bounds for dimension with size 0"),
               "index is out of bounds for dimension with size 0")};
  };
  return op;
}

OpInfo IndexPut() {
  OpInfo op;
  op.name = "index_put";
  op.shape_from_values = true;  // its shape (or a mask's nonzero) needs values
  op.out = "index_put.out";
  op.inplace = "index_put_";
  op.dtypes = kAllMask;
  // Without accumulate, no element indexed twice (which write wins is unspecified in ATen).
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    auto x = [&](Shape shape) { return T(Summable(std::move(shape), dtype, rng)); };
    const Opt none;
    std::vector<Sample> s;
    for (bool acc : {false, true}) {
      const std::string note = acc ? " accumulate" : "";
      // sample_inputs_index_put: an index of dim 0 (repeated when accumulating), a mask.
      const HostTensor rows = acc ? Long({3}, {1, 1, -4}) : DistinctIndex(2, S, rng);
      s.push_back(
          Described({x({S, S}), Indices({rows}), x({rows.numel(), S}), Arg::Bool(acc)}, note));
      const HostTensor mask = acc ? Full({S}, TSR_DTYPE_BOOL, 0) : Mask({S}, rng);
      s.push_back(Described({x({S, S}), Indices({mask}), x({S}), Arg::Bool(acc)},
                            note + " (mask, values broadcast)"));
      // Values broadcast: a 0-dim one, a leading 1.
      s.push_back(Described({x({S, S}), Indices({none, Long({2}, {4, 0})}), x({}), Arg::Bool(acc)},
                            note + " (0-dim values)"));
      s.push_back(Described({x({S, S}), Indices({Long({2}, {4, 0})}), x({1, S}), Arg::Bool(acc)},
                            note + " (values [1, S])"));
      // Not adjacent: the indexing result's broadcast dims come first.
      s.push_back(Described({x({S, 3, S}), Indices({Long({2}, {0, 3}), none, Long({2}, {1, -1})}),
                             x({2, 3}), Arg::Bool(acc)},
                            note + " (not adjacent)"));
      // Indices broadcast together.
      s.push_back(Described({x({S, S}), Indices({Long({2, 1}, {0, 4}), Long({3}, {1, 2, -1})}),
                             x({2, 3}), Arg::Bool(acc)},
                            note + " (broadcast indices)"));
      s.push_back(
          Described({x({S, S}), Indices({none, Int32({2}, {0, -2})}), x({S, 2}), Arg::Bool(acc)},
                    note + " (int32 index)"));
      HostTensor byte_mask = Mask({S}, rng);
      byte_mask.dtype = TSR_DTYPE_UINT8;
      s.push_back(Described({x({S, S}), Indices({byte_mask}), x({S}), Arg::Bool(acc)},
                            note + " (uint8 mask)"));
      const HostTensor mask2 = Mask({S, S}, rng);
      s.push_back(
          Described({x({S, S, 2}), Indices({mask2}), x({CountTrue(mask2), 2}), Arg::Bool(acc)},
                    note + " (2-D mask)"));
      s.push_back(Described({x({S, S, 3}), Indices({mask2, Long({1}, {2})}), x({}), Arg::Bool(acc)},
                            note + " (2-D mask and an index, 0-dim values)"));
      s.push_back(Described({x({S, S}), Indices({Long({0}, {})}), x({0, S}), Arg::Bool(acc)},
                            note + " (empty index)"));
      s.push_back(
          Described({x({0, 3}), Indices({none, Long({2}, {2, 0})}), x({0, 2}), Arg::Bool(acc)},
                    note + " (empty self)"));
    }
    // Repeated elements accumulate, one after the other: a 2-D index, a repeating broadcast.
    s.push_back(Described(
        {x({S, S}), Indices({Long({2, 2}, {0, 1, 0, -5})}), x({2, 2, S}), Arg::Bool(true)},
        " accumulate (2-D repeated index)"));
    s.push_back(Described({x({S, S}), Indices({Long({3, 1}, {2, 2, 2}), Long({2}, {1, 1})}),
                           x({3, 2}), Arg::Bool(true)},
                          " accumulate (one element six times)"));
    s.push_back(
        Described({x({4, 3}), Indices({Long({2}, {3, 0})}), x({2, 3})}, " (accumulate left out)"));
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor &self = s.args[0].tensor, &values = s.args[2].tensor;
    const bool accumulate = Given(s, 3) && s.args[3].boolean;
    const Indexed r = AdvancedIndex(self, s.args[1]);
    HostTensor out = self;
    for (size_t k = 0; k < r.from.size(); ++k) {
      const double v = BroadcastAt(values, Unravel(static_cast<int64_t>(k), r.shape));
      double& dst = out.values[static_cast<size_t>(r.from[k])];
      dst = RoundTo(out.dtype, accumulate ? dst + v : v);
    }
    return std::vector<HostTensor>{out};
  };
  op.errors = [](Rng& rng) {
    const Arg self = T(F32({3, 4}, rng));
    const Arg value = T(Values(TSR_DTYPE_FLOAT32, {}, {1}));
    const Opt none;
    return std::vector<ErrorInput>{
        Saying(Refused({self, Indices({Long({1}, {0}), Long({1}, {0}), Long({1}, {0})}), value},
                       TSR_OUT_OF_RANGE, "too many indices for tensor of dimension 2 (got 3)"),
               "too many indices for tensor of dimension 2 (got 3)"),
        Saying(
            Refused({self, Indices({Values(TSR_DTYPE_FLOAT32, {1}, {0})}), value}, TSR_OUT_OF_RANGE,
                    "tensors used as indices must be long, int, byte or bool tensors"),
            "tensors used as indices must be long, int, byte or bool tensors"),
        Saying(Refused({self, Indices({Long({1}, {3})}), value}, TSR_OUT_OF_RANGE,
                       "index 3 is out of bounds for dimension 0 with size 3"),
               "index 3 is out of bounds for dimension 0 with size 3"),
        Saying(Refused({self, Indices({none, Long({2}, {0, -5})}), value, Arg::Bool(true)},
                       TSR_OUT_OF_RANGE, "index -5 is out of bounds for dimension 0 with size 4"),
               "index -5 is out of bounds for dimension 0 with size 4"),
        // A long index (a mask alone with a one-element value takes masked_fill_'s path, which
        // converts the value).
        Saying(
            Refused({self, Indices({Long({2}, {1, 0})}), T(Values(TSR_DTYPE_FLOAT64, {}, {1}))},
                    TSR_INVALID_ARGUMENT,
                    "Index put requires the source and destination dtypes match, got Float for the "
                    "destination and Double for the source."),
            "Index put requires the source and destination dtypes match, got float32 for the "
            "destination and float64 for the source."),
        Saying(Refused({self, Indices({Long({2}, {1, 0})}), T(F32({3}, rng))}, TSR_INVALID_ARGUMENT,
                       "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing "
                       "result of shape [2, 4]"),
               "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result "
               "of shape [2, 4]"),
        Saying(
            Refused(
                {self, Indices({Long({2}, {1, 0})}), T(F32({1, 1, 1}, rng))}, TSR_INVALID_ARGUMENT,
                "shape mismatch: value tensor of shape [1, 1, 1] cannot be broadcast to indexing "
                "result of shape [2, 4]"),
            "shape mismatch: value tensor of shape [1, 1, 1] cannot be broadcast to indexing "
            "result of shape [2, 4]"),
        Saying(
            Refused({self, Indices({Long({2}, {0, 1}), Long({3}, {0, 1, 2})}), value},
                    TSR_OUT_OF_RANGE,
                    "shape mismatch: indexing tensors could not be broadcast together with shapes "
                    "[2], [3]"),
            "shape mismatch: indexing tensors could not be broadcast together with shapes [2], "
            "[3]"),
        Saying(
            Refused({self, Indices({Values(TSR_DTYPE_BOOL, {2}, {1, 0})}), value}, TSR_OUT_OF_RANGE,
                    "The shape of the mask [2] at index 0 does not match the shape of the indexed "
                    "tensor [3, 4] at index 0"),
            "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor "
            "[3, 4] at index 0")};
  };
  return op;
}

}  // namespace

void AddIndexCompositeOps(std::vector<OpInfo>& db) {
  db.push_back(IndexAdd());
  db.push_back(IndexCopy());
  db.push_back(IndexFill(false));
  db.push_back(IndexFill(true));
  db.push_back(Take());
  db.push_back(Put());
  db.push_back(Nonzero());
  db.push_back(MaskedSelect());
  db.push_back(MaskedScatter());
  db.push_back(Index());
  db.push_back(IndexPut());
}

}  // namespace conformance
}  // namespace tessera
