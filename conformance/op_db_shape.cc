// Shape ops of op set 1.8: padding, repeat, the list-returning splits and the scatter views
// (composites, dispatcher/ops/shape_ops.cc).
//
// constant_pad_nd, repeat, alias, split.Tensor, split_with_sizes, chunk, unbind.int,
// select_scatter, slice_scatter and diagonal_scatter, after ATen's PadNd.cpp and TensorShape.cpp
// and the samples of their OpInfos. The references index every element directly (no views), and a
// list-returning op's reference returns one tensor per piece, in order.
//
// Error codes: PyTorch's IndexError (TORCH_CHECK_INDEX: a dim out of range, select's index, the
// 0-dim refusals of select, slice and unbind) is TSR_OUT_OF_RANGE; its RuntimeError is
// TSR_INVALID_ARGUMENT.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "conformance/op_db.h"

namespace tessera {
namespace conformance {
namespace {

using Shape = std::vector<int64_t>;

int64_t WrapDim(int64_t dim, int64_t ndim) { return dim < 0 ? dim + ndim : dim; }

// An int argument the sample may leave to the schema's default.
int64_t IntArg(const Sample& s, size_t i, int64_t fallback) {
  return i < s.args.size() && s.args[i].kind == Arg::Kind::kInt ? s.args[i].integer : fallback;
}

OpInfo Shaped(const std::string& name, const std::string& out) {
  OpInfo op;
  op.name = name;
  op.out = out;
  op.dtypes = kAllMask;
  return op;
}

// Refused: an error input whose error message must contain `message` (ErrorInput's).
ErrorInput Refused(std::vector<Arg> args, const std::string& desc, tsr_code code,
                   const std::string& what, const std::string& message) {
  return {{std::move(args), desc}, code, what, message};
}

Arg F32(Shape shape, Rng& rng) {
  return Arg::Tensor(MakeTensor(std::move(shape), TSR_DTYPE_FLOAT32, rng));
}

// Pieces: `x` cut along `dim` into consecutive pieces of `sizes` (which sum to its size there).
std::vector<HostTensor> Pieces(const HostTensor& x, int64_t dim, const Shape& sizes) {
  std::vector<HostTensor> pieces;
  int64_t start = 0;
  for (int64_t len : sizes) {
    HostTensor p;
    p.dtype = x.dtype;
    p.shape = x.shape;
    p.shape[dim] = len;
    for (int64_t f = 0; f < p.numel(); ++f) {
      Shape idx = Unravel(f, p.shape);
      idx[dim] += start;
      p.values.push_back(x.values[Ravel(idx, x.shape)]);
    }
    pieces.push_back(std::move(p));
    start += len;
  }
  return pieces;
}

// ScatterInto: `self` with the elements of one of its views replaced by `src`'s, converted to
// self's dtype as copy_ converts (PyTorch copies src into the view of a clone of self, so src may
// have any dtype and the result keeps self's). `locate` gives the index into src of an element of
// self inside the view.
using Locate = std::function<std::optional<Shape>(const Shape& self_index)>;
HostTensor ScatterInto(const HostTensor& self, const HostTensor& src, const Locate& locate) {
  HostTensor out = self;
  for (int64_t f = 0; f < self.numel(); ++f) {
    const std::optional<Shape> at = locate(Unravel(f, self.shape));
    if (at) out.values[f] = RoundTo(self.dtype, src.values[Ravel(*at, src.shape)]);
  }
  return out;
}

// A source of another dtype for the scatter ops: int64 values 0..9, which every dtype holds.
HostTensor IntSource(Shape shape, Rng& rng) {
  MakeOptions o;
  o.low = 0;
  o.high = 10;
  return MakeTensor(std::move(shape), TSR_DTYPE_INT64, rng, o);
}

// The value a sample pads with: of the dtype's own kind, as the OpInfo casts it.
Arg PadValue(tsr_dtype dtype) {
  return dtype == TSR_DTYPE_BOOL ? Arg::ScalarBool(true)
         : IsFloating(dtype)     ? Arg::ScalarDouble(2.5)
                                 : Arg::ScalarInt(3);
}

void AddConstantPad(std::vector<OpInfo>& db) {
  OpInfo op = Shaped("constant_pad_nd", "constant_pad_nd.out");
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    struct Case {
      Shape shape, pad;
    };
    // PyTorch's nn.pad cases, then cropping ones. Sizes stay above 0 where any pad is positive:
    // a size of exactly 0 there is an error in 1.13's PadNd.cpp (new_dim > 0) and allowed in
    // today's (new_dim >= 0). Cropping alone never fills, so it may leave 0.
    const std::vector<Case> cases{{{1, 3}, {1, 2}},
                                  {{1, 3}, {0, 2, 0, 1}},
                                  {{5, 3}, {-1, -1, 1, 1}},
                                  {{0, 3, 3}, {1, 2}},
                                  {{0, 3, 3}, {1, 1, 1, 1, 1, 1}},
                                  {{1, 3, 3}, {0, 2, 0, 1}},
                                  {{3, 3, 5, 5}, {1, 1, 1, 1, 1, 1}},
                                  {{1, 3, 4, 4}, {-1, 1, -2, 1}},
                                  {{2, 3}, {-3, 1}},  // cropped away, then padded
                                  {{4, 5}, {-1, -2}},
                                  {{4, 5}, {0, -2, -1, 0}},
                                  {{4, 5}, {-2, -3}},  // cropped to nothing: [4, 0]
                                  {{2, 3}, {}},
                                  {{}, {}}};
    std::vector<Sample> s;
    for (const Case& c : cases) {
      s.push_back(
          {{Arg::Tensor(MakeTensor(c.shape, dtype, rng)), Arg::Ints(c.pad), PadValue(dtype)},
           ShapeString(c.shape) + " pad " + ShapeString(c.pad)});
    }
    s.push_back({{Arg::Tensor(MakeTensor({1, 3, 3}, dtype, rng)), Arg::Ints({2, 2})},
                 "[1, 3, 3] pad [2, 2], value 0 by default"});
    // fill_'s conversion: a float value truncates toward 0 into integers (2), is true for bool.
    s.push_back({{Arg::Tensor(MakeTensor({2, 3}, dtype, rng)), Arg::Ints({1, 1, 0, 2}),
                  Arg::ScalarDouble(2.7)},
                 "[2, 3] pad [1, 1, 0, 2], float value 2.7"});
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& x = s.args[0].tensor;
    const Shape& pad = s.args[1].ints;
    const double value = s.args.size() > 2 ? s.args[2].number : 0;
    // pad pairs run from the last dim backwards; a negative entry crops.
    Shape shape = x.shape, before(x.shape.size(), 0);
    for (size_t p = 0; p < pad.size() / 2; ++p) {
      const size_t d = x.shape.size() - 1 - p;
      before[d] = pad[2 * p];
      shape[d] += pad[2 * p] + pad[2 * p + 1];
    }
    HostTensor out = Full(shape, x.dtype, value);
    for (int64_t f = 0; f < out.numel(); ++f) {
      Shape idx = Unravel(f, shape);
      bool inside = true;
      for (size_t d = 0; d < idx.size(); ++d) {
        idx[d] -= before[d];
        inside = inside && idx[d] >= 0 && idx[d] < x.shape[d];
      }
      if (inside) out.values[f] = x.values[Ravel(idx, x.shape)];
    }
    return std::vector<HostTensor>{out};
  };
  op.errors = [](Rng& rng) {
    return std::vector<ErrorInput>{
        Refused({F32({2, 3}, rng), Arg::Ints({1})}, "[2, 3] pad [1]", TSR_INVALID_ARGUMENT,
                "a pad of odd length",
                "Length of pad must be even but instead it equals 1"),
        Refused({F32({3}, rng), Arg::Ints({1, 1, 1, 1})}, "[3] pad [1, 1, 1, 1]",
                TSR_INVALID_ARGUMENT, "a pad longer than twice the dims",
                "Length of pad should be no more than twice the number of dimensions"),
        Refused({F32({}, rng), Arg::Ints({1, 1})}, "0-dim pad [1, 1]", TSR_INVALID_ARGUMENT,
                "a pad longer than twice the dims",
                "Length of pad should be no more than twice the number of dimensions"),
        // The crop narrows to a negative length (narrow's RuntimeError).
        Refused({F32({2, 3}, rng), Arg::Ints({-2, -2})}, "[2, 3] pad [-2, -2]",
                TSR_INVALID_ARGUMENT, "a pad that makes a size negative",
                "plus negative padding -2 and -2 resulted in a negative output size"),
        Refused({F32({2, 3}, rng), Arg::Ints({1, -5, 1, 1})}, "[2, 3] pad [1, -5, 1, 1]",
                TSR_INVALID_ARGUMENT, "a pad that makes a size negative",
                "plus negative padding 1 and -5 resulted in a negative output size"),
        // One side crops more than the dim holds, though the other side's padding makes the
        // total size non-negative: ATen narrows one side at a time and refuses.
        Refused({F32({4}, rng), Arg::Ints({3, -6})}, "[4] pad [3, -6]", TSR_INVALID_ARGUMENT,
                "a crop larger than the dim, padded back",
                "padding 3 and -6 of dim 0 crop more than its 4 elements"),
        Refused({F32({4}, rng), Arg::Ints({-5, 10})}, "[4] pad [-5, 10]", TSR_INVALID_ARGUMENT,
                "a crop larger than the dim, padded back",
                "padding -5 and 10 of dim 0 crop more than its 4 elements"),
        // fill_ converts the value with c10's overflow check.
        Refused({Arg::Tensor(MakeTensor({2}, TSR_DTYPE_UINT8, rng)), Arg::Ints({1, 1}),
                 Arg::ScalarInt(300)},
                "uint8 [2] pad [1, 1] value 300", TSR_INVALID_ARGUMENT,
                "a value that overflows the dtype",
                "cannot be converted to uint8 without overflow")};
  };
  db.push_back(std::move(op));
}

void AddRepeat(std::vector<OpInfo>& db) {
  OpInfo op = Shaped("repeat", "repeat.out");
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    // sample_repeat_tile's shapes and repeats, where repeat takes them (no fewer repeats than
    // dims): extra repeats add leading dims, a 0 repeat makes the result empty.
    const std::vector<Shape> shapes{{}, {0}, {2}, {3, 0}, {3, 2}, {3, 0, 1}};
    const std::vector<Shape> repeats{{},     {0},       {1},       {0, 2},      {1, 1},
                                     {2, 3}, {2, 3, 2}, {0, 2, 3}, {2, 1, 1, 1}};
    std::vector<Sample> s;
    for (const Shape& r : repeats) {
      for (const Shape& shape : shapes) {
        if (r.size() < shape.size()) continue;
        s.push_back({{Arg::Tensor(MakeTensor(shape, dtype, rng)), Arg::Ints(r)},
                     ShapeString(shape) + " repeats " + ShapeString(r)});
      }
    }
    s.push_back({{Arg::Tensor(MakeTensor({2, 5, 3}, dtype, rng)), Arg::Ints({2, 1, 3})},
                 "[2, 5, 3] repeats [2, 1, 3]"});
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& x = s.args[0].tensor;
    const Shape& r = s.args[1].ints;
    // self as if it had leading dims of size 1, one per extra repeat.
    Shape padded(r.size() - x.shape.size(), 1);
    padded.insert(padded.end(), x.shape.begin(), x.shape.end());
    HostTensor out;
    out.dtype = x.dtype;
    for (size_t d = 0; d < r.size(); ++d) out.shape.push_back(padded[d] * r[d]);
    for (int64_t f = 0; f < out.numel(); ++f) {
      Shape idx = Unravel(f, out.shape);
      for (size_t d = 0; d < idx.size(); ++d) idx[d] %= padded[d];
      out.values.push_back(x.values[Ravel(idx, padded)]);
    }
    return std::vector<HostTensor>{out};
  };
  op.errors = [](Rng& rng) {
    return std::vector<ErrorInput>{
        Refused({F32({2, 3}, rng), Arg::Ints({2})}, "[2, 3] repeats [2]", TSR_INVALID_ARGUMENT,
                "fewer repeats than dims",
                "can not be smaller than number of dimensions of tensor (2)"),
        Refused({F32({2}, rng), Arg::Ints({-1})}, "[2] repeats [-1]", TSR_INVALID_ARGUMENT,
                "a negative repeat", "repeats must be non-negative, but got [-1]")};
  };
  db.push_back(std::move(op));
}

void AddAlias(std::vector<OpInfo>& db) {
  OpInfo op = Shaped("alias", "");
  op.elementwise = true;  // a view of an expanded input reads back as that input
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    for (const Shape& shape : UnaryShapes())
      s.push_back({{Arg::Tensor(MakeTensor(shape, dtype, rng))}, ShapeString(shape)});
    return s;
  };
  op.reference = [](const Sample& s) { return std::vector<HostTensor>{s.args[0].tensor}; };
  db.push_back(std::move(op));
}

// The errors every split refuses alike: a 0-dim self (RuntimeError "split/chunk expects at least
// a 1-dimensional tensor") and a dim out of range (IndexError). `arg` is the op's second argument.
std::vector<ErrorInput> SplitErrors(const Arg& arg, Rng& rng) {
  return {Refused({F32({}, rng), arg, Arg::Int(0)}, "0-dim", TSR_INVALID_ARGUMENT, "a 0-dim self",
                  "expects at least a 1-dimensional tensor"),
          Refused({F32({3, 4}, rng), arg, Arg::Int(2)}, "dim 2 of [3, 4]", TSR_OUT_OF_RANGE,
                  "a dim out of range",
                  "Dimension out of range (expected to be in range of [-2, 1], but got 2)")};
}

// A split sample: self, the op's second argument (`label` names it), and dim unless left to
// its default.
Sample SplitSample(tsr_dtype dtype, Rng& rng, const Shape& shape, const std::string& label,
                   const Arg& arg, std::optional<int64_t> dim) {
  Sample s{{Arg::Tensor(MakeTensor(shape, dtype, rng)), arg},
           ShapeString(shape) + " " + label + " " + arg.ToString()};
  if (dim) {
    s.args.push_back(Arg::Int(*dim));
    s.desc += " dim " + std::to_string(*dim);
  }
  return s;
}

void AddSplits(std::vector<OpInfo>& db) {
  {
    // split: pieces of split_size, the last one shorter; a single piece when split_size is
    // larger than the dim, and one empty piece for a dim of size 0 (split_size 0 only there).
    OpInfo op = Shaped("split.Tensor", "");
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      auto sample = [&](const Shape& shape, int64_t split_size, std::optional<int64_t> dim) {
        return SplitSample(dtype, rng, shape, "split_size", Arg::Int(split_size), dim);
      };
      return std::vector<Sample>{
          sample({5, 6, 7}, 2, 0),  sample({5, 6, 7}, 5, 1),      sample({5, 6, 7}, 1, -2),
          sample({5, 6, 7}, 7, -1), sample({5, 6, 7}, 10, 1),     sample({3, 0, 4}, 2, 1),
          sample({3, 0, 4}, 0, 1),  sample({0}, 3, std::nullopt), sample({7, 2}, 3, std::nullopt)};
    };
    op.reference = [](const Sample& s) {
      const HostTensor& x = s.args[0].tensor;
      const int64_t dim = WrapDim(IntArg(s, 2, 0), x.dim());
      const int64_t size = x.shape[dim], step = s.args[1].integer;
      Shape sizes;
      for (int64_t at = 0; at < size; at += step) sizes.push_back(std::min(step, size - at));
      if (sizes.empty()) sizes.push_back(0);
      return Pieces(x, dim, sizes);
    };
    op.errors = [](Rng& rng) {
      std::vector<ErrorInput> e = SplitErrors(Arg::Int(2), rng);
      e.push_back(Refused({F32({3, 4}, rng), Arg::Int(-1)}, "split_size -1", TSR_INVALID_ARGUMENT,
                          "a negative split_size",
                          "split expects split_size be non-negative, but got split_size=-1"));
      e.push_back(Refused({F32({3, 4}, rng), Arg::Int(0)}, "split_size 0 of a dim of 3",
                          TSR_INVALID_ARGUMENT, "split_size 0 for a dim that is not empty",
                          "split_size can only be 0 if dimension size is 0"));
      return e;
    };
    db.push_back(std::move(op));
  }
  {
    OpInfo op = Shaped("split_with_sizes", "");
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      auto sample = [&](const Shape& shape, const Shape& sizes, std::optional<int64_t> dim) {
        return SplitSample(dtype, rng, shape, "sizes", Arg::Ints(sizes), dim);
      };
      return std::vector<Sample>{sample({5, 6, 7}, {1, 3, 1}, 0), sample({5, 6, 7}, {2, 4, 0}, 1),
                                 sample({5, 6, 7}, {3, 0, 4}, -1), sample({5, 6, 7}, {6}, -2),
                                 sample({4, 3}, {1, 3}, std::nullopt), sample({2, 0}, {0, 0}, 1),
                                 // No sizes for a dim of size 0: no pieces at all.
                                 sample({2, 0}, {}, 1)};
    };
    op.reference = [](const Sample& s) {
      const HostTensor& x = s.args[0].tensor;
      return Pieces(x, WrapDim(IntArg(s, 2, 0), x.dim()), s.args[1].ints);
    };
    op.errors = [](Rng& rng) {
      std::vector<ErrorInput> e = SplitErrors(Arg::Ints({1, 2}), rng);
      e.push_back(Refused({F32({3, 4}, rng), Arg::Ints({1, 1})}, "sizes [1, 1] of 3",
                          TSR_INVALID_ARGUMENT, "sizes that do not sum to the dim's size",
                          "split_with_sizes expects split_sizes to sum exactly to 3"));
      e.push_back(Refused({F32({3, 4}, rng), Arg::Ints({-1, 4})}, "sizes [-1, 4] of 3",
                          TSR_INVALID_ARGUMENT, "a negative size",
                          "expects split_sizes have only non-negative entries"));
      return e;
    };
    db.push_back(std::move(op));
  }
  {
    // chunk: split by ceil(size / chunks), so it may give fewer than `chunks` pieces (7 in 4 is
    // 2, 2, 2, 1; 6 in 4 is 2, 2, 2); a dim of size 0 gives `chunks` empty pieces.
    OpInfo op = Shaped("chunk", "");
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      auto sample = [&](const Shape& shape, int64_t chunks, std::optional<int64_t> dim) {
        return SplitSample(dtype, rng, shape, "chunks", Arg::Int(chunks), dim);
      };
      return std::vector<Sample>{sample({5, 6, 7}, 2, 0),  sample({5, 6, 7}, 4, 1),
                                 sample({5, 6, 7}, 4, -1), sample({5, 6, 7}, 7, -1),
                                 sample({5, 6, 7}, 10, 2), sample({5, 6, 7}, 1, 1),
                                 sample({4, 0}, 3, 1),     sample({7, 2}, 3, std::nullopt)};
    };
    op.reference = [](const Sample& s) {
      const HostTensor& x = s.args[0].tensor;
      const int64_t dim = WrapDim(IntArg(s, 2, 0), x.dim());
      const int64_t size = x.shape[dim], chunks = s.args[1].integer;
      const int64_t step = (size + chunks - 1) / chunks;
      Shape sizes;
      if (size == 0) sizes.assign(static_cast<size_t>(chunks), 0);
      for (int64_t at = 0; at < size; at += step) sizes.push_back(std::min(step, size - at));
      return Pieces(x, dim, sizes);
    };
    op.errors = [](Rng& rng) {
      std::vector<ErrorInput> e = SplitErrors(Arg::Int(2), rng);
      e.push_back(Refused({F32({3, 4}, rng), Arg::Int(0)}, "chunks 0", TSR_INVALID_ARGUMENT,
                          "chunks not above 0",
                          "chunk expects `chunks` to be greater than 0, got: 0"));
      e.push_back(Refused({F32({3, 4}, rng), Arg::Int(-2)}, "chunks -2", TSR_INVALID_ARGUMENT,
                          "chunks not above 0",
                          "chunk expects `chunks` to be greater than 0, got: -2"));
      return e;
    };
    db.push_back(std::move(op));
  }
  {
    OpInfo op = Shaped("unbind.int", "");
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      struct Case {
        Shape shape;
        std::optional<int64_t> dim;
      };
      // A dim of size 0 gives no tensors at all ([2, 0] along 1).
      const std::vector<Case> cases{{{5}, 0},     {{5, 6}, 0},           {{5, 6}, 1},
                                    {{5, 6}, -1}, {{5, 0, 6}, 0},        {{3, 4, 5}, 1},
                                    {{2, 0}, 1},  {{3, 2}, std::nullopt}};
      std::vector<Sample> s;
      for (const Case& c : cases) {
        Sample one{{Arg::Tensor(MakeTensor(c.shape, dtype, rng))}, ShapeString(c.shape)};
        if (c.dim) {
          one.args.push_back(Arg::Int(*c.dim));
          one.desc += " dim " + std::to_string(*c.dim);
        }
        s.push_back(std::move(one));
      }
      return s;
    };
    op.reference = [](const Sample& s) {
      const HostTensor& x = s.args[0].tensor;
      const int64_t dim = WrapDim(IntArg(s, 1, 0), x.dim());
      std::vector<HostTensor> pieces = Pieces(x, dim, Shape(static_cast<size_t>(x.shape[dim]), 1));
      for (HostTensor& p : pieces) p.shape.erase(p.shape.begin() + dim);
      return pieces;
    };
    op.errors = [](Rng& rng) {
      return std::vector<ErrorInput>{
          Refused({F32({}, rng), Arg::Int(0)}, "0-dim", TSR_OUT_OF_RANGE,
                  "a 0-dim self (IndexError: no dimensions)",
                  "Dimension specified as 0 but tensor has no dimensions"),
          Refused({F32({2}, rng), Arg::Int(2)}, "dim 2 of [2]", TSR_OUT_OF_RANGE,
                  "a dim out of range",
                  "Dimension out of range (expected to be in range of [-1, 0], but got 2)")};
    };
    db.push_back(std::move(op));
  }
}

// PyTorch's slice(): negative bounds count from the end, then both clamp to [0, size] and end to
// no less than start.
struct SliceBounds {
  SliceBounds(int64_t size, const Arg& start_arg, const Arg& end_arg) {
    start = start_arg.kind == Arg::Kind::kInt ? start_arg.integer : 0;
    end = end_arg.kind == Arg::Kind::kInt ? end_arg.integer : size;
    if (start < 0) start += size;
    if (end < 0) end += size;
    start = std::clamp<int64_t>(start, 0, size);
    end = std::clamp<int64_t>(end, start, size);
  }
  int64_t start = 0, end = 0;
};

// A scatter sample: self of the dtype under test; src of that dtype, or int64 when `int_src`.
Sample ScatterSample(tsr_dtype dtype, Rng& rng, const Shape& self, const Shape& src,
                     std::vector<Arg> rest, const std::string& desc, bool int_src = false) {
  std::vector<Arg> args{Arg::Tensor(MakeTensor(self, dtype, rng)),
                        Arg::Tensor(int_src ? IntSource(src, rng) : MakeTensor(src, dtype, rng))};
  args.insert(args.end(), rest.begin(), rest.end());
  return {args, ShapeString(self) + " src " + ShapeString(src) + " " + desc};
}

void AddScatters(std::vector<OpInfo>& db) {
  {
    OpInfo op = Shaped("select_scatter", "select_scatter.out");
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      auto at = [](int64_t dim, int64_t index) {
        return std::vector<Arg>{Arg::Int(dim), Arg::Int(index)};
      };
      return std::vector<Sample>{
          ScatterSample(dtype, rng, {5, 6, 7}, {6, 7}, at(0, 2), "dim 0 index 2"),
          ScatterSample(dtype, rng, {5, 6, 7}, {5, 6}, at(-1, 2), "dim -1 index 2"),
          ScatterSample(dtype, rng, {5, 6, 7}, {5, 6}, at(-1, -1), "dim -1 index -1"),
          ScatterSample(dtype, rng, {5, 6, 7}, {5, 7}, at(1, -6), "dim 1 index -6"),
          ScatterSample(dtype, rng, {5}, {}, at(0, 2), "dim 0 index 2"),
          ScatterSample(dtype, rng, {3, 0}, {0}, at(0, 1), "dim 0 index 1"),
          ScatterSample(dtype, rng, {4, 3}, {3}, at(0, 3), "dim 0 index 3, int64 src", true)};
    };
    op.reference = [](const Sample& s) {
      const HostTensor &self = s.args[0].tensor, &src = s.args[1].tensor;
      const int64_t dim = WrapDim(s.args[2].integer, self.dim());
      const int64_t index = WrapDim(s.args[3].integer, self.shape[dim]);
      return std::vector<HostTensor>{
          ScatterInto(self, src, [&](const Shape& idx) -> std::optional<Shape> {
            if (idx[dim] != index) return std::nullopt;
            Shape at = idx;
            at.erase(at.begin() + dim);
            return at;
          })};
    };
    op.errors = [](Rng& rng) {
      auto call = [&rng](Shape self, Shape src, int64_t dim, int64_t index) {
        return std::vector<Arg>{F32(std::move(self), rng), F32(std::move(src), rng), Arg::Int(dim),
                                Arg::Int(index)};
      };
      return std::vector<ErrorInput>{
          Refused(call({3, 4}, {4}, 0, 3), "index 3 of 3", TSR_OUT_OF_RANGE,
                  "an index out of range (IndexError)",
                  "index 3 out of range for tensor of size [3, 4] at dimension 0"),
          Refused(call({3, 4}, {4}, 0, -4), "index -4 of 3", TSR_OUT_OF_RANGE,
                  "an index out of range (IndexError)",
                  "index -4 out of range for tensor of size [3, 4] at dimension 0"),
          Refused(call({3, 4}, {4}, 2, 0), "dim 2 of [3, 4]", TSR_OUT_OF_RANGE,
                  "a dim out of range",
                  "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
          Refused(call({}, {}, 0, 0), "0-dim self", TSR_OUT_OF_RANGE,
                  "a 0-dim self (select's IndexError)",
                  "cannot be applied to a 0-dim tensor"),
          Refused(call({3, 4}, {3}, 0, 1), "src [3] for a [4] slice", TSR_INVALID_ARGUMENT,
                  "a src of another shape than the slice",
                  "expected src to have a size equal to the slice of self"),
          Refused(call({3, 4}, {1}, 0, 1), "src [1] for a [4] slice", TSR_INVALID_ARGUMENT,
                  "a src that only broadcasts to the slice",
                  "expected src to have a size equal to the slice of self")};
    };
    db.push_back(std::move(op));
  }
  {
    OpInfo op = Shaped("slice_scatter", "slice_scatter.out");
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      const Arg none = Arg::None();
      auto slice = [&none](int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
                           int64_t step) {
        return std::vector<Arg>{Arg::Int(dim), start ? Arg::Int(*start) : none,
                                end ? Arg::Int(*end) : none, Arg::Int(step)};
      };
      const Shape self{6, 5, 7};
      return std::vector<Sample>{
          ScatterSample(dtype, rng, self, {6, 5, 7}, slice(0, 0, 6, 1), "dim 0 [0:6]"),
          ScatterSample(dtype, rng, self, {3, 5, 7}, slice(0, 3, 6, 1), "dim 0 [3:6]"),
          ScatterSample(dtype, rng, self, {2, 5, 7}, slice(0, 3, 6, 2), "dim 0 [3:6:2]"),
          ScatterSample(dtype, rng, self, {6, 3, 7}, slice(1, {}, {}, 2), "dim 1 [::2]"),
          ScatterSample(dtype, rng, self, {6, 5, 2}, slice(2, -4, {}, 3), "dim 2 [-4::3]"),
          ScatterSample(dtype, rng, self, {6, 5, 3}, slice(-1, 2, 100, 2), "dim -1 [2:100:2]"),
          ScatterSample(dtype, rng, self, {6, 3, 7}, slice(1, -100, -2, 1), "dim 1 [-100:-2]"),
          ScatterSample(dtype, rng, self, {6, 0, 7}, slice(1, 4, 2, 1), "dim 1 [4:2], empty"),
          ScatterSample(dtype, rng, self, {2, 5, 7}, slice(0, {}, 2, 1), "dim 0 [:2]"),
          ScatterSample(dtype, rng, {4, 3}, {4, 3}, {}, "defaults"),
          ScatterSample(dtype, rng, {0, 3}, {0, 3}, {}, "defaults, empty self"),
          ScatterSample(dtype, rng, {4, 3}, {2, 3}, slice(0, 1, 3, 1), "dim 0 [1:3], int64 src",
                        true)};
    };
    op.reference = [](const Sample& s) {
      const HostTensor &self = s.args[0].tensor, &src = s.args[1].tensor;
      const Arg none = Arg::None();
      const int64_t dim = WrapDim(IntArg(s, 2, 0), self.dim()), step = IntArg(s, 5, 1);
      const SliceBounds b(self.shape[dim], s.args.size() > 3 ? s.args[3] : none,
                          s.args.size() > 4 ? s.args[4] : none);
      return std::vector<HostTensor>{
          ScatterInto(self, src, [&](const Shape& idx) -> std::optional<Shape> {
            const int64_t i = idx[dim];
            if (i < b.start || i >= b.end || (i - b.start) % step != 0) return std::nullopt;
            Shape at = idx;
            at[dim] = (i - b.start) / step;
            return at;
          })};
    };
    op.errors = [](Rng& rng) {
      auto call = [&rng](Shape self, Shape src, int64_t dim, int64_t step) {
        return std::vector<Arg>{F32(std::move(self), rng),
                                F32(std::move(src), rng),
                                Arg::Int(dim),
                                Arg::None(),
                                Arg::None(),
                                Arg::Int(step)};
      };
      return std::vector<ErrorInput>{
          Refused(call({4, 3}, {4, 2}, 1, 1), "src [4, 2] for [4, 3]", TSR_INVALID_ARGUMENT,
                  "a src of another shape than the slice",
                  "expected src to have a size equal to the slice of self"),
          Refused(call({4, 3}, {1, 3}, 0, 1), "src [1, 3] for [4, 3]", TSR_INVALID_ARGUMENT,
                  "a src that only broadcasts to the slice",
                  "expected src to have a size equal to the slice of self"),
          Refused(call({4, 3}, {4, 3}, 0, 0), "step 0", TSR_INVALID_ARGUMENT, "a step not above 0",
                  "step must be positive, got 0"),
          Refused(call({4, 3}, {4, 3}, 0, -1), "step -1", TSR_INVALID_ARGUMENT,
                  "a step not above 0",
                  "step must be positive, got -1"),
          Refused(call({4, 3}, {4, 3}, 2, 1), "dim 2 of [4, 3]", TSR_OUT_OF_RANGE,
                  "a dim out of range",
                  "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
          Refused(call({}, {}, 0, 1), "0-dim self", TSR_OUT_OF_RANGE,
                  "a 0-dim self (slice's IndexError)",
                  "cannot be applied to a 0-dim tensor")};
    };
    db.push_back(std::move(op));
  }
  {
    // diagonal_scatter: the diagonal of (dim1, dim2) at `offset` (above the main one when
    // positive) is the last dim of the view, after self's other dims in order.
    OpInfo op = Shaped("diagonal_scatter", "diagonal_scatter.out");
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      auto diag = [](int64_t offset, int64_t dim1, int64_t dim2) {
        return std::vector<Arg>{Arg::Int(offset), Arg::Int(dim1), Arg::Int(dim2)};
      };
      return std::vector<Sample>{
          ScatterSample(dtype, rng, {5, 5}, {5}, {}, "defaults"),
          ScatterSample(dtype, rng, {3, 5}, {3}, {Arg::Int(2)}, "offset 2"),
          ScatterSample(dtype, rng, {5, 3}, {3}, {Arg::Int(-2)}, "offset -2"),
          ScatterSample(dtype, rng, {5, 3}, {2}, {Arg::Int(1)}, "offset 1"),
          ScatterSample(dtype, rng, {3, 4}, {0}, {Arg::Int(5)}, "offset 5, empty diagonal"),
          ScatterSample(dtype, rng, {4, 5, 6}, {4, 5}, diag(1, 1, 2), "offset 1 dims 1, 2"),
          ScatterSample(dtype, rng, {4, 5, 6}, {6, 3}, diag(2, 0, 1), "offset 2 dims 0, 1"),
          ScatterSample(dtype, rng, {4, 5, 6}, {6, 2}, diag(-2, 0, 1), "offset -2 dims 0, 1"),
          ScatterSample(dtype, rng, {4, 5, 6}, {5, 3}, diag(1, 2, 0), "offset 1 dims 2, 0"),
          ScatterSample(dtype, rng, {4, 5, 6}, {4, 5}, diag(-1, -1, -2), "offset -1 dims -1, -2"),
          ScatterSample(dtype, rng, {3, 3}, {3}, {}, "defaults, int64 src", true)};
    };
    op.reference = [](const Sample& s) {
      const HostTensor &self = s.args[0].tensor, &src = s.args[1].tensor;
      const int64_t offset = IntArg(s, 2, 0);
      const int64_t dim1 = WrapDim(IntArg(s, 3, 0), self.dim());
      const int64_t dim2 = WrapDim(IntArg(s, 4, 1), self.dim());
      return std::vector<HostTensor>{
          ScatterInto(self, src, [&](const Shape& idx) -> std::optional<Shape> {
            if (idx[dim2] - idx[dim1] != offset) return std::nullopt;
            Shape at;
            for (int64_t d = 0; d < self.dim(); ++d) {
              if (d != dim1 && d != dim2) at.push_back(idx[d]);
            }
            at.push_back(offset >= 0 ? idx[dim1] : idx[dim2]);
            return at;
          })};
    };
    op.errors = [](Rng& rng) {
      auto call = [&rng](Shape self, Shape src, int64_t dim1, int64_t dim2) {
        return std::vector<Arg>{F32(std::move(self), rng), F32(std::move(src), rng), Arg::Int(0),
                                Arg::Int(dim1), Arg::Int(dim2)};
      };
      return std::vector<ErrorInput>{
          Refused(call({3, 4}, {4}, 0, 1), "src [4] for a [3] diagonal", TSR_INVALID_ARGUMENT,
                  "a src of another shape than the diagonal",
                  "expected src to have a size equal to the slice of self"),
          Refused(call({3, 4}, {1}, 0, 1), "src [1] for a [3] diagonal", TSR_INVALID_ARGUMENT,
                  "a src that only broadcasts to the diagonal",
                  "expected src to have a size equal to the slice of self"),
          Refused(call({3, 4}, {3}, 1, -1), "dims 1 and -1", TSR_INVALID_ARGUMENT,
                  "the same dim twice",
                  "dimensions cannot be identical 1, -1"),
          Refused(call({3, 4}, {3}, 0, 2), "dim 2 of [3, 4]", TSR_OUT_OF_RANGE,
                  "a dim out of range",
                  "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
          Refused(call({4}, {1}, 0, 1), "1-D self", TSR_OUT_OF_RANGE,
                  "a 1-D self (dim2 = 1 out of range)",
                  "expected a tensor with at least 2 dimensions, got 1D")};
    };
    db.push_back(std::move(op));
  }
}

}  // namespace

void AddShapeOps(std::vector<OpInfo>& db) {
  AddConstantPad(db);
  AddRepeat(db);
  AddAlias(db);
  AddSplits(db);
  AddScatters(db);
}

}  // namespace conformance
}  // namespace tessera
