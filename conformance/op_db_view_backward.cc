// The backward ops of views of op set 1.10 (dispatcher/ops/view_backward_ops.cc):
// select_backward, slice_backward, diagonal_backward, unfold_backward (each with its out= form)
// and index_select_backward.
//
// After current PyTorch's TensorShape.cpp and UnfoldBackward.cpp (zeros of input_sizes, grad
// copied into the forward's view of them, or for overlapping unfold windows and repeated indices
// added up) and the OpInfo samples of select, slicing, diagonal, unfold and index_select, whose
// gradients are what these ops compute. The references index every element directly: for each
// element of grad, the position of the input the forward read it from (select: the index along
// dim; slice: start + k * step after ATen's clamping of start and end; diagonal: (i, i + offset)
// or (i - offset, i); unfold: window * step + offset; index_select: index[j]), where its value
// is written (or, for unfold and index_select, added).
//
// Every dtype (bool included: its additions are logical or). Where PyTorch 1.13 differs (what
// /usr/bin/python3 runs), the current behaviour is the expected one: unfold_backward refuses a
// step below 1 ("step is 0 but must be > 0"; 1.13 divides by it) and, beyond ATen (which reads
// grad_in unchecked), a grad_in of another shape than unfold's.
//
// Error codes: PyTorch's IndexError (a dim or index out of range) is TSR_OUT_OF_RANGE, its
// RuntimeError TSR_INVALID_ARGUMENT.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "conformance/op_db.h"
#include "conformance/op_db_helpers.h"

namespace tessera {
namespace conformance {
namespace {

using Shape = std::vector<int64_t>;
using Args = std::vector<Arg>;

HostTensor Random(Shape shape, tsr_dtype dtype, Rng& rng) {
  return MakeTensor(std::move(shape), dtype, rng);
}

int64_t Wrap(int64_t dim, int64_t ndim) {
  const int64_t n = std::max<int64_t>(ndim, 1);
  return dim < 0 ? dim + n : dim;
}

// Scattered: zeros of `sizes` (grad's dtype), each element f of grad (broadcast to `view`, the
// view's shape) written (or with `add`, added) at the input position where(index of f in view).
template <typename Where>
HostTensor Scattered(const HostTensor& grad, const Shape& sizes, const Shape& view, bool add,
                     Where where) {
  HostTensor out = Full(sizes, grad.dtype, 0);
  std::vector<long double> acc(out.values.size(), 0);
  int64_t n = 1;
  for (int64_t s : view) n *= s;
  const int64_t lead = static_cast<int64_t>(view.size()) - grad.dim();
  for (int64_t f = 0; f < n; ++f) {
    const Shape at = Unravel(f, view);
    Shape g_at(at.begin() + lead, at.end());
    for (size_t d = 0; d < g_at.size(); ++d) {
      if (grad.shape[d] == 1) g_at[d] = 0;  // broadcast
    }
    const double v = grad.values[static_cast<size_t>(Ravel(g_at, grad.shape))];
    const size_t o = static_cast<size_t>(Ravel(where(at), sizes));
    acc[o] = add ? acc[o] + v : v;
  }
  for (size_t i = 0; i < acc.size(); ++i) out.values[i] = RoundTo(out.dtype, double(acc[i]));
  return out;
}

// ViewInfo: the out= form and the dtypes every view backward shares.
OpInfo ViewBackwardInfo(std::string name, bool has_out) {
  OpInfo op;
  op.name = name;
  if (has_out) op.out = name + ".out";
  op.dtypes = kAllMask;
  return op;
}

HostTensor F64(Shape shape, Rng& rng) {
  MakeOptions range;
  range.low = -4;
  range.high = 4;
  return MakeTensor(std::move(shape), TSR_DTYPE_FLOAT64, rng, range);
}

// ForwardSamples: a GradientSpec's float64 samples of the forward: self of each shape, then
// the forward's further arguments.
std::function<std::vector<Sample>(Rng&)> ForwardSamples(std::vector<std::pair<Shape, Args>> cases) {
  return [cases](Rng& rng) {
    std::vector<Sample> samples;
    for (const auto& [shape, params] : cases) {
      Args args{Arg::Tensor(F64(shape, rng))};
      args.insert(args.end(), params.begin(), params.end());
      samples.push_back(Described(std::move(args)));
    }
    return samples;
  };
}

// (grad, self's sizes, the forward's further arguments): how derivatives.yaml calls every view
// backward here.
GradientSpec ViewSpec(std::string forward, std::vector<std::pair<Shape, Args>> cases) {
  GradientSpec spec;
  spec.forward = std::move(forward);
  spec.samples = ForwardSamples(std::move(cases));
  spec.wrt = {0};
  spec.backward_args = [](const Sample& s, const std::vector<HostTensor>&, const HostTensor& g) {
    Args args{Arg::Tensor(g), Arg::Ints(s.args[0].tensor.shape)};
    args.insert(args.end(), s.args.begin() + 1, s.args.end());
    return args;
  };
  return spec;
}

// ---- select_backward(grad_output, input_sizes, dim, index) ----

Shape SelectShape(const Shape& sizes, int64_t dim) {
  Shape v = sizes;
  v.erase(v.begin() + dim);
  return v;
}

void AddSelectBackward(std::vector<OpInfo>& db) {
  OpInfo op = ViewBackwardInfo("select_backward", true);
  struct Case {
    Shape sizes;
    int64_t dim, index;
    Shape grad;  // empty: the view's shape
    std::string note;
  };
  static const std::vector<Case> cases = {
      {{3, 4}, 0, 1, {}, ""},
      {{3, 4}, 1, -1, {}, " (negative index)"},
      {{2, 3, 4}, -2, 2, {}, " (negative dim)"},
      {{5}, 0, 4, {}, " (1-D: a 0-dim grad)"},
      {{3, 4}, 0, 2, {1}, " (grad broadcast, as copy_ takes it)"},
      {{0, 4}, 1, 3, {}, " (empty)"},
      {{2, 1, 3}, 1, 0, {}, ""},
  };
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> samples;
    for (const Case& c : cases) {
      const Shape view = SelectShape(c.sizes, Wrap(c.dim, c.sizes.size()));
      samples.push_back(Described({Arg::Tensor(Random(c.grad.empty() ? view : c.grad, dtype, rng)),
                                   Arg::Ints(c.sizes), Arg::Int(c.dim), Arg::Int(c.index)},
                                  c.note));
    }
    return samples;
  };
  op.reference = [](const Sample& s) {
    const Shape& sizes = s.args[1].ints;
    const int64_t dim = Wrap(s.args[2].integer, sizes.size());
    const int64_t index =
        s.args[3].integer < 0 ? s.args[3].integer + sizes[dim] : s.args[3].integer;
    return std::vector<HostTensor>{
        Scattered(s.args[0].tensor, sizes, SelectShape(sizes, dim), false, [&](const Shape& at) {
          Shape in = at;
          in.insert(in.begin() + dim, index);
          return in;
        })};
  };
  op.errors = [](Rng& rng) {
    const HostTensor g4 = Random({4}, TSR_DTYPE_FLOAT32, rng);
    return std::vector<ErrorInput>{
        RefusedSaying({Arg::Tensor(g4), Arg::Ints({3, 4}), Arg::Int(0), Arg::Int(3)},
                      TSR_OUT_OF_RANGE, "index 3 out of range"),
        RefusedSaying({Arg::Tensor(g4), Arg::Ints({3, 4}), Arg::Int(0), Arg::Int(-4)},
                      TSR_OUT_OF_RANGE,
                      "index -4 out of range for tensor of size [3, 4] at dimension 0"),
        Saying(Refused({Arg::Tensor(g4), Arg::Ints({3, 4}), Arg::Int(2), Arg::Int(0)},
                       TSR_OUT_OF_RANGE, "Dimension out of range"),
               "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
        RefusedSaying({Arg::Tensor(Random({5}, TSR_DTYPE_FLOAT32, rng)), Arg::Ints({3, 4}),
                       Arg::Int(0), Arg::Int(0)},
                      TSR_INVALID_ARGUMENT,
                      "grad_output of shape [5] must broadcast to the view's shape [4]"),
        RefusedSaying({Arg::Tensor(Random({}, TSR_DTYPE_FLOAT32, rng)), Arg::Ints({}), Arg::Int(0),
                       Arg::Int(0)},
                      TSR_OUT_OF_RANGE, "cannot be applied to a 0-dim tensor"),
    };
  };
  op.gradient = ViewSpec("select.int", {{{3, 4}, {Arg::Int(0), Arg::Int(1)}},
                                        {{2, 3, 4}, {Arg::Int(-1), Arg::Int(-2)}},
                                        {{5}, {Arg::Int(0), Arg::Int(3)}}});
  db.push_back(std::move(op));
}

// ---- slice_backward(grad_output, input_sizes, dim, start, end, step) ----

// SliceRange: ATen's slice: start and end wrapped when negative, clamped to [0, size], end
// at least start; the view has ceil((end - start) / step) elements.
struct SliceRange {
  int64_t start, len;
};
SliceRange RangeOf(int64_t size, int64_t start, int64_t end, int64_t step) {
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, start, size);
  return {start, (end - start + step - 1) / step};
}

void AddSliceBackward(std::vector<OpInfo>& db) {
  OpInfo op = ViewBackwardInfo("slice_backward", true);
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  struct Case {
    Shape sizes;
    int64_t dim, start, end, step;
    std::string note;
  };
  static const std::vector<Case> cases = {
      {{3, 5}, 1, 1, 3, 1, ""},
      {{3, 5}, 1, 1, 100, 2, " (end past the size, step 2)"},
      {{3, 5}, -1, -3, kMax, 1, " (negative start, end INT64_MAX: x[..., -3:])"},
      {{6, 2}, 0, 0, kMax, 4, " (step past half the size)"},
      {{4, 3}, 0, 3, 1, 1, " (end before start: empty)"},
      {{2, 3, 4}, 2, 1, 3, 1, " (x[..., 1:3])"},
      {{0, 4}, 1, 0, 2, 1, " (empty)"},
      {{7}, 0, -100, -2, 3, " (start before the beginning)"},
  };
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> samples;
    for (const Case& c : cases) {
      Shape view = c.sizes;
      const int64_t d = Wrap(c.dim, c.sizes.size());
      view[d] = RangeOf(c.sizes[d], c.start, c.end, c.step).len;
      samples.push_back(
          Described({Arg::Tensor(Random(view, dtype, rng)), Arg::Ints(c.sizes), Arg::Int(c.dim),
                     Arg::Int(c.start), Arg::Int(c.end), Arg::Int(c.step)},
                    c.note));
    }
    return samples;
  };
  op.reference = [](const Sample& s) {
    const Shape& sizes = s.args[1].ints;
    const int64_t dim = Wrap(s.args[2].integer, sizes.size()), step = s.args[5].integer;
    const SliceRange r = RangeOf(sizes[dim], s.args[3].integer, s.args[4].integer, step);
    Shape view = sizes;
    view[dim] = r.len;
    return std::vector<HostTensor>{
        Scattered(s.args[0].tensor, sizes, view, false, [&](const Shape& at) {
          Shape in = at;
          in[dim] = r.start + at[dim] * step;
          return in;
        })};
  };
  op.errors = [](Rng& rng) {
    const HostTensor g = Random({3, 2}, TSR_DTYPE_FLOAT32, rng);
    return std::vector<ErrorInput>{
        RefusedSaying(
            {Arg::Tensor(g), Arg::Ints({3, 5}), Arg::Int(1), Arg::Int(1), Arg::Int(3), Arg::Int(0)},
            TSR_INVALID_ARGUMENT, "step must be positive"),
        Saying(Refused({Arg::Tensor(g), Arg::Ints({3, 5}), Arg::Int(2), Arg::Int(1), Arg::Int(3),
                        Arg::Int(1)},
                       TSR_OUT_OF_RANGE, "Dimension out of range"),
               "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
        RefusedSaying(
            {Arg::Tensor(g), Arg::Ints({3, 5}), Arg::Int(1), Arg::Int(0), Arg::Int(3), Arg::Int(1)},
            TSR_INVALID_ARGUMENT, "must broadcast to the view's shape [3, 3]"),
    };
  };
  op.gradient = ViewSpec("slice.Tensor",
                         {{{3, 5}, {Arg::Int(1), Arg::Int(1), Arg::Int(4), Arg::Int(2)}},
                          {{6, 2}, {Arg::Int(0), Arg::Int(-4), Arg::Int(kMax), Arg::Int(1)}},
                          {{2, 3, 4}, {Arg::Int(-1), Arg::Int(1), Arg::Int(3), Arg::Int(1)}}});
  db.push_back(std::move(op));
}

// ---- diagonal_backward(grad_output, input_sizes, offset, dim1, dim2) ----

// DiagLen: how many elements the diagonal at `offset` of an [n1, n2] plane has.
int64_t DiagLen(int64_t n1, int64_t n2, int64_t offset) {
  return std::max<int64_t>(offset >= 0 ? std::min(n1, n2 - offset) : std::min(n1 + offset, n2), 0);
}

Shape DiagonalShape(const Shape& sizes, int64_t offset, int64_t d1, int64_t d2) {
  Shape v;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (static_cast<int64_t>(d) != d1 && static_cast<int64_t>(d) != d2) v.push_back(sizes[d]);
  }
  v.push_back(DiagLen(sizes[d1], sizes[d2], offset));
  return v;
}

void AddDiagonalBackward(std::vector<OpInfo>& db) {
  OpInfo op = ViewBackwardInfo("diagonal_backward", true);
  struct Case {
    Shape sizes;
    int64_t offset, dim1, dim2;
    std::string note;
  };
  static const std::vector<Case> cases = {
      {{3, 4}, 0, 0, 1, ""},
      {{3, 4}, 1, 0, 1, " (offset 1)"},
      {{3, 4}, -2, 0, 1, " (offset -2)"},
      {{2, 3, 4}, 0, -1, 0, " (negative dim, dims swapped)"},
      {{2, 3, 4}, 1, 2, 1, ""},
      {{3, 4}, 10, 0, 1, " (past the plane: empty)"},
      {{0, 3, 3}, 0, 1, 2, " (empty)"},
  };
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> samples;
    for (const Case& c : cases) {
      const int64_t n = static_cast<int64_t>(c.sizes.size());
      const Shape view = DiagonalShape(c.sizes, c.offset, Wrap(c.dim1, n), Wrap(c.dim2, n));
      samples.push_back(Described({Arg::Tensor(Random(view, dtype, rng)), Arg::Ints(c.sizes),
                                   Arg::Int(c.offset), Arg::Int(c.dim1), Arg::Int(c.dim2)},
                                  c.note));
    }
    return samples;
  };
  op.reference = [](const Sample& s) {
    const Shape& sizes = s.args[1].ints;
    const int64_t n = static_cast<int64_t>(sizes.size()), offset = s.args[2].integer;
    const int64_t d1 = Wrap(s.args[3].integer, n), d2 = Wrap(s.args[4].integer, n);
    return std::vector<HostTensor>{Scattered(
        s.args[0].tensor, sizes, DiagonalShape(sizes, offset, d1, d2), false, [&](const Shape& at) {
          Shape in(sizes.size(), 0);
          size_t k = 0;
          for (int64_t d = 0; d < n; ++d) {
            if (d != d1 && d != d2) in[static_cast<size_t>(d)] = at[k++];
          }
          const int64_t i = at.back();
          in[static_cast<size_t>(d1)] = offset >= 0 ? i : i - offset;
          in[static_cast<size_t>(d2)] = offset >= 0 ? i + offset : i;
          return in;
        })};
  };
  op.errors = [](Rng& rng) {
    const HostTensor g = Random({2}, TSR_DTYPE_FLOAT32, rng);
    return std::vector<ErrorInput>{
        RefusedSaying({Arg::Tensor(g), Arg::Ints({3, 4}), Arg::Int(1), Arg::Int(0), Arg::Int(0)},
                      TSR_INVALID_ARGUMENT, "dimensions cannot be identical 0, 0"),
        Saying(Refused({Arg::Tensor(g), Arg::Ints({3, 4}), Arg::Int(0), Arg::Int(0), Arg::Int(2)},
                       TSR_OUT_OF_RANGE, "Dimension out of range"),
               "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
        RefusedSaying({Arg::Tensor(g), Arg::Ints({3, 4}), Arg::Int(1), Arg::Int(0), Arg::Int(1)},
                      TSR_INVALID_ARGUMENT, "must broadcast to the view's shape [3]"),
    };
  };
  op.gradient = ViewSpec("diagonal", {{{3, 4}, {Arg::Int(1), Arg::Int(0), Arg::Int(1)}},
                                      {{2, 3, 3}, {Arg::Int(-1), Arg::Int(2), Arg::Int(1)}},
                                      {{4, 4}, {Arg::Int(0), Arg::Int(0), Arg::Int(1)}}});
  db.push_back(std::move(op));
}

// ---- unfold_backward(grad_in, input_sizes, dim, size, step) ----

// UnfoldShape: unfold's output for input `sizes` (dim wrapped; a 0-dim input is [size]).
Shape UnfoldShape(const Shape& sizes, int64_t dim, int64_t size, int64_t step) {
  if (sizes.empty()) return {size};
  Shape v = sizes;
  v[dim] = (sizes[dim] - size) / step + 1;
  v.push_back(size);
  return v;
}

void AddUnfoldBackward(std::vector<OpInfo>& db) {
  OpInfo op = ViewBackwardInfo("unfold_backward", true);
  struct Case {
    Shape sizes;
    int64_t dim, size, step;
    std::string note;
  };
  static const std::vector<Case> cases = {
      {{5}, 0, 2, 1, " (overlapping windows)"},
      {{7}, 0, 3, 2, " (overlapping by one)"},
      {{8}, 0, 2, 3, " (gapped windows)"},
      {{6}, 0, 3, 3, " (adjacent windows)"},
      {{3, 6}, -1, 4, 1, " (negative dim)"},
      {{5, 2, 3}, 0, 2, 2, " (leading dim, a remainder)"},
      {{2, 5, 3}, 1, 5, 1, " (one window of the whole dim)"},
      {{4}, 0, 0, 1, " (size 0)"},
      {{}, 0, 1, 1, " (0-dim)"},
      {{}, -1, 0, 2, " (0-dim, size 0)"},
      {{0, 4}, 1, 2, 1, " (empty)"},
  };
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> samples;
    for (const Case& c : cases) {
      const Shape view = UnfoldShape(c.sizes, Wrap(c.dim, c.sizes.size()), c.size, c.step);
      samples.push_back(Described({Arg::Tensor(Random(view, dtype, rng)), Arg::Ints(c.sizes),
                                   Arg::Int(c.dim), Arg::Int(c.size), Arg::Int(c.step)},
                                  c.note));
    }
    return samples;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& g = s.args[0].tensor;
    const Shape& sizes = s.args[1].ints;
    const int64_t dim = Wrap(s.args[2].integer, sizes.size()), step = s.args[4].integer;
    return std::vector<HostTensor>{Scattered(g, sizes, g.shape, true, [&](const Shape& at) {
      if (sizes.empty()) return Shape{};
      Shape in(at.begin(), at.end() - 1);  // element `at.back()` of window `at[dim]`
      in[static_cast<size_t>(dim)] = at[static_cast<size_t>(dim)] * step + at.back();
      return in;
    })};
  };
  op.errors = [](Rng& rng) {
    return std::vector<ErrorInput>{
        RefusedSaying({Arg::Tensor(Random({2, 2}, TSR_DTYPE_FLOAT32, rng)), Arg::Ints({5}),
                       Arg::Int(0), Arg::Int(2), Arg::Int(0)},
                      TSR_INVALID_ARGUMENT, "step is 0 but must be > 0"),
        RefusedSaying({Arg::Tensor(Random({1, 6}, TSR_DTYPE_FLOAT32, rng)), Arg::Ints({5}),
                       Arg::Int(0), Arg::Int(6), Arg::Int(1)},
                      TSR_INVALID_ARGUMENT,
                      "maximum size for tensor at dimension 0 is 5 but size is 6"),
        RefusedSaying({Arg::Tensor(Random({3, 3}, TSR_DTYPE_FLOAT32, rng)), Arg::Ints({5}),
                       Arg::Int(0), Arg::Int(2), Arg::Int(1)},
                      TSR_INVALID_ARGUMENT, "expected grad_in of shape [4, 2]"),
        Saying(Refused({Arg::Tensor(Random({4, 2}, TSR_DTYPE_FLOAT32, rng)), Arg::Ints({5}),
                        Arg::Int(1), Arg::Int(2), Arg::Int(1)},
                       TSR_OUT_OF_RANGE, "Dimension out of range"),
               "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
    };
  };
  op.gradient = ViewSpec("unfold", {{{7}, {Arg::Int(0), Arg::Int(3), Arg::Int(2)}},
                                    {{3, 5}, {Arg::Int(-1), Arg::Int(2), Arg::Int(1)}},
                                    {{8, 2}, {Arg::Int(0), Arg::Int(2), Arg::Int(3)}}});
  db.push_back(std::move(op));
}

// ---- index_select_backward(grad, self_sizes, dim, index) ----

void AddIndexSelectBackward(std::vector<OpInfo>& db) {
  OpInfo op = ViewBackwardInfo("index_select_backward", false);
  struct Case {
    Shape sizes;
    int64_t dim;
    std::vector<double> index;
    tsr_dtype index_dtype;
    std::string note;
  };
  static const std::vector<Case> cases = {
      {{5, 2}, 0, {0, 0, 4}, TSR_DTYPE_INT64, " (a repeated index adds up)"},
      {{3, 4}, -1, {3, 1}, TSR_DTYPE_INT64, " (negative dim)"},
      {{2, 3, 4}, 1, {2, 0, 2, 1}, TSR_DTYPE_INT32, " (int32 index)"},
      {{4, 3}, 0, {}, TSR_DTYPE_INT64, " (empty index)"},
      {{0, 3}, 1, {1}, TSR_DTYPE_INT64, " (empty)"},
      {{}, 0, {0}, TSR_DTYPE_INT64, " (0-dim self)"},
  };
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> samples;
    for (const Case& c : cases) {
      Shape view = c.sizes;
      const int64_t n = static_cast<int64_t>(c.index.size());
      // A 0-dim self's index_select (of its one index) is 0-dim too.
      if (!view.empty()) view[static_cast<size_t>(Wrap(c.dim, c.sizes.size()))] = n;
      HostTensor index = Values(TSR_DTYPE_INT64, {n}, c.index);
      index.dtype = c.index_dtype;
      samples.push_back(Described({Arg::Tensor(Random(view, dtype, rng)), Arg::Ints(c.sizes),
                                   Arg::Int(c.dim), Arg::Tensor(index)},
                                  c.note));
    }
    return samples;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& g = s.args[0].tensor;
    const Shape& sizes = s.args[1].ints;
    const HostTensor& index = s.args[3].tensor;
    const int64_t dim = Wrap(s.args[2].integer, sizes.size());
    return std::vector<HostTensor>{Scattered(g, sizes, g.shape, true, [&](const Shape& at) {
      if (sizes.empty()) return Shape{};
      Shape in = at;
      in[static_cast<size_t>(dim)] =
          static_cast<int64_t>(index.values[static_cast<size_t>(at[static_cast<size_t>(dim)])]);
      return in;
    })};
  };
  op.errors = [](Rng& rng) {
    const HostTensor g = Random({3, 2}, TSR_DTYPE_FLOAT32, rng);
    HostTensor fractional = Values(TSR_DTYPE_INT64, {3}, {0, 0, 1});
    fractional.dtype = TSR_DTYPE_FLOAT32;
    return std::vector<ErrorInput>{
        RefusedSaying({Arg::Tensor(g), Arg::Ints({5, 2}), Arg::Int(0),
                       Arg::Tensor(Values(TSR_DTYPE_INT64, {3}, {0, 0, 5}))},
                      TSR_OUT_OF_RANGE, "index out of range in self"),
        RefusedSaying({Arg::Tensor(g), Arg::Ints({5, 2}), Arg::Int(0),
                       Arg::Tensor(Values(TSR_DTYPE_INT64, {2}, {0, 1}))},
                      TSR_INVALID_ARGUMENT,
                      "Number of indices (2) should be equal to source.size(dim)"),
        RefusedSaying({Arg::Tensor(g), Arg::Ints({5, 2}), Arg::Int(0), Arg::Tensor(fractional)},
                      TSR_INVALID_ARGUMENT, "Expected dtype int32/int64 for index"),
        Saying(Refused({Arg::Tensor(g), Arg::Ints({5, 2}), Arg::Int(2),
                        Arg::Tensor(Values(TSR_DTYPE_INT64, {3}, {0, 1, 2}))},
                       TSR_OUT_OF_RANGE, "Dimension out of range"),
               "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    };
  };
  GradientSpec spec;
  spec.forward = "index_select";
  spec.samples = [](Rng& rng) {
    return std::vector<Sample>{Described({Arg::Tensor(F64({5, 2}, rng)), Arg::Int(0),
                                          Arg::Tensor(Values(TSR_DTYPE_INT64, {4}, {0, 4, 0, 2}))}),
                               Described({Arg::Tensor(F64({2, 3, 4}, rng)), Arg::Int(-1),
                                          Arg::Tensor(Values(TSR_DTYPE_INT64, {3}, {3, 3, 1}))})};
  };
  spec.wrt = {0};
  spec.backward_args = [](const Sample& s, const std::vector<HostTensor>&, const HostTensor& g) {
    return Args{Arg::Tensor(g), Arg::Ints(s.args[0].tensor.shape), s.args[1], s.args[2]};
  };
  op.gradient = std::move(spec);
  db.push_back(std::move(op));
}

}  // namespace

void AddViewBackwardOps(std::vector<OpInfo>& db) {
  AddSelectBackward(db);
  AddSliceBackward(db);
  AddDiagonalBackward(db);
  AddUnfoldBackward(db);
  AddIndexSelectBackward(db);
}

}  // namespace conformance
}  // namespace tessera
