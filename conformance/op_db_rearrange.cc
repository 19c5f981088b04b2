// Rearranging ops of op set 1.8: roll, rot90, diag, diag_embed and tile (composites,
// dispatcher/ops/rearrange_ops.cc).
//
// After ATen's TensorTransformations.cpp (roll, rot90; roll_common in TensorTransformations.h) and
// TensorShape.cpp (diag, diag_embed, diagonal, tile over repeat), with the samples and error inputs
// of their OpInfos. Each op only moves elements (diag and diag_embed also fill zeros), so every
// result keeps self's dtype and every reference gathers: it says, for each index of the result,
// which element of self lands there.
//
// Error codes: PyTorch's IndexError (a dim out of range when wrapped, a dim of a 0-dim tensor) is
// TSR_OUT_OF_RANGE; its RuntimeError is TSR_INVALID_ARGUMENT. rot90 checks its dims' range with
// TORCH_CHECK, so a rot90 dim out of range is a RuntimeError, unlike roll's and diag_embed's.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "conformance/op_db.h"
#include "conformance/op_db_helpers.h"

namespace tessera {
namespace conformance {
namespace {

using Shape = std::vector<int64_t>;

int64_t WrapDim(int64_t dim, int64_t ndim) { return dim < 0 ? dim + ndim : dim; }

// Mod: a mod n in [0, n), as Python's %, which ATen's roll corrects C++'s % to.
int64_t Mod(int64_t a, int64_t n) { return (a % n + n) % n; }

// Arguments the sample may leave to the schema's default.
int64_t IntArg(const Sample& s, size_t i, int64_t fallback) {
  return i < s.args.size() && s.args[i].kind == Arg::Kind::kInt ? s.args[i].integer : fallback;
}
Shape IntsArg(const Sample& s, size_t i, const Shape& fallback) {
  return i < s.args.size() && s.args[i].kind == Arg::Kind::kIntList ? s.args[i].ints : fallback;
}

// Gather: a tensor of `shape` and self's dtype holding, at each index, self's element at the flat
// index `from` gives, or 0 where it gives none (the zeros diag and diag_embed fill in).
using From = std::function<std::optional<int64_t>(const Shape& index, int64_t flat)>;
HostTensor Gather(const HostTensor& self, Shape shape, const From& from) {
  HostTensor out = Full(std::move(shape), self.dtype, 0);
  for (int64_t f = 0; f < out.numel(); ++f) {
    const std::optional<int64_t> at = from(Unravel(f, out.shape), f);
    if (at) out.values[f] = self.values[*at];
  }
  return out;
}

// Embed: diag_embed with dims already wrapped: the last dim of self becomes the diagonal at
// `offset` of the plane (dim1, dim2) of a result one dim larger, zero elsewhere; the other dims of
// the result are self's leading dims, in order. Swapping dim1 and dim2 transposes the plane, so
// the same offset then lies on the other side of the main diagonal.
HostTensor Embed(const HostTensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  const int64_t len = self.shape.back() + std::abs(offset);
  Shape shape(self.shape.begin(), self.shape.end() - 1);
  shape.insert(shape.begin() + std::min(dim1, dim2), len);
  shape.insert(shape.begin() + std::max(dim1, dim2), len);
  return Gather(self, shape, [&](const Shape& idx, int64_t) -> std::optional<int64_t> {
    if (idx[dim2] - idx[dim1] != offset) return std::nullopt;
    Shape at;
    for (size_t d = 0; d < idx.size(); ++d) {
      if (static_cast<int64_t>(d) != dim1 && static_cast<int64_t>(d) != dim2) at.push_back(idx[d]);
    }
    at.push_back(offset >= 0 ? idx[dim1] : idx[dim2]);
    return Ravel(at, self.shape);
  });
}

OpInfo Rearranging(const std::string& name, const std::string& out) {
  OpInfo op;
  op.name = name;
  op.out = out;
  op.dtypes = kAllMask;
  return op;
}

// A sample: self of `shape` in the dtype under test, then the op's other arguments.
Sample Of(tsr_dtype dtype, Rng& rng, const Shape& shape, std::vector<Arg> rest,
          const std::string& label) {
  std::vector<Arg> args{Arg::Tensor(MakeTensor(shape, dtype, rng))};
  args.insert(args.end(), rest.begin(), rest.end());
  return {std::move(args), ShapeString(shape) + (label.empty() ? "" : " " + label)};
}

ErrorInput Refused(std::vector<Arg> args, const std::string& desc, tsr_code code,
                   const std::string& what) {
  return {{std::move(args), desc}, code, what};
}

Arg F32(Shape shape, Rng& rng) {
  return Arg::Tensor(MakeTensor(std::move(shape), TSR_DTYPE_FLOAT32, rng));
}

void AddRoll(std::vector<OpInfo>& db) {
  OpInfo op = Rearranging("roll", "roll.out");
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    struct Case {
      Shape shape, shifts;
      std::optional<Shape> dims;  // none: left to the default [], which rolls the flattened self
    };
    // sample_inputs_roll's shifts and dims, over [3, 4, 5] in place of its cubic [S, S, S] (so a
    // mix-up of dims shows) and over the empty [0, 0, 0]; then negative dims, shifts beyond the
    // size both ways, the same dim twice (its shifts add), and dims given as [] explicitly.
    const std::vector<Case> pytorch{{{}, {0}, Shape{0}},     {{}, {1}, Shape{2}},
                                    {{}, {0}, Shape{2}},     {{}, {2}, Shape{0}},
                                    {{}, {-1}, Shape{0}},    {{}, {10000}, Shape{1}},
                                    {{}, {2}, std::nullopt}, {{}, {1, 2, -1}, Shape{0, 1, 2}}};
    std::vector<Case> cases;
    for (const Shape& shape : {Shape{3, 4, 5}, Shape{0, 0, 0}}) {
      for (Case c : pytorch) {
        c.shape = shape;
        cases.push_back(c);
      }
    }
    const std::vector<Case> more{{{}, {10}, std::nullopt},  // 0-dim, flattened
                                 {{}, {-3}, Shape{}},
                                 {{3, 4, 5}, {-7}, Shape{-1}},
                                 {{3, 4, 5}, {3, -13}, Shape{-1, 0}},
                                 {{3, 4, 5}, {1, 2}, Shape{1, 1}},
                                 {{3, 4, 5}, {-4}, Shape{}},
                                 {{3, 4, 5}, {-61}, std::nullopt},
                                 {{4, 0, 3}, {2}, Shape{2}},
                                 {{7}, {3}, std::nullopt},
                                 {{6}, {-8}, Shape{0}},
                                 {{2, 3}, {5}, Shape{}}};
    cases.insert(cases.end(), more.begin(), more.end());
    std::vector<Sample> s;
    for (const Case& c : cases) {
      std::vector<Arg> rest{Arg::Ints(c.shifts)};
      std::string label = "shifts " + ShapeString(c.shifts);
      if (c.dims) {
        rest.push_back(Arg::Ints(*c.dims));
        label += " dims " + ShapeString(*c.dims);
      }
      s.push_back(Of(dtype, rng, c.shape, std::move(rest), label));
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& x = s.args[0].tensor;
    const Shape& shifts = s.args[1].ints;
    const Shape dims = IntsArg(s, 2, {});
    if (dims.empty()) {  // roll_common: the flattened self, rolled along its one dim
      return std::vector<HostTensor>{Gather(x, x.shape, [&](const Shape&, int64_t f) {
        return std::optional<int64_t>(Mod(f - shifts[0], x.numel()));
      })};
    }
    // One dim after another, as roll_common recurses: the same dim twice adds its shifts.
    return std::vector<HostTensor>{Gather(x, x.shape, [&](const Shape& idx, int64_t) {
      Shape at = idx;
      for (size_t i = 0; i < dims.size(); ++i) {
        const int64_t d = WrapDim(dims[i], x.dim());
        at[d] = Mod(at[d] - shifts[i], x.shape[d]);
      }
      return std::optional<int64_t>(Ravel(at, x.shape));
    })};
  };
  op.errors = [](Rng& rng) {
    // error_inputs_roll, and the other dims the same checks refuse. (A dim out of range of an
    // empty self is not among them: ATen's CPU roll returns a clone before it looks at dims.)
    return std::vector<ErrorInput>{
        Saying(Refused({F32({5}, rng), Arg::Ints({})}, "[5] shifts []", TSR_INVALID_ARGUMENT,
                       "no shifts (`shifts` required)"),
               "`shifts` required"),
        Saying(Refused({F32({5, 5}, rng), Arg::Ints({2, 1}), Arg::Ints({0})},
                       "shifts [2, 1] dims [0]", TSR_INVALID_ARGUMENT, "more shifts than dims"),
               "shifts and dimensions must align. shifts: 2, dims: 1"),
        Saying(Refused({F32({5, 5}, rng), Arg::Ints({1}), Arg::Ints({0, 1})},
                       "shifts [1] dims [0, 1]", TSR_INVALID_ARGUMENT, "fewer shifts than dims"),
               "shifts and dimensions must align. shifts: 1, dims: 2"),
        Saying(Refused({F32({5, 5}, rng), Arg::Ints({1, 2})}, "shifts [1, 2] without dims",
                       TSR_INVALID_ARGUMENT, "several shifts for the flattened self"),
               "shifts and dimensions must align. shifts: 2, dims: 0"),
        Saying(Refused({F32({5}, rng), Arg::Ints({0}), Arg::Ints({2})}, "[5] dims [2]",
                       TSR_OUT_OF_RANGE, "a dim out of range"),
               "Dimension out of range (expected to be in range of [-1, 0], but got 2)"),
        Saying(Refused({F32({2, 3}, rng), Arg::Ints({1, 1}), Arg::Ints({0, -3})},
                       "[2, 3] dims [0, -3]", TSR_OUT_OF_RANGE, "a dim out of range"),
               "Dimension out of range (expected to be in range of [-2, 1], but got -3)"),
        Saying(Refused({F32({}, rng), Arg::Ints({0}), Arg::Ints({0})}, "0-dim dims [0]",
                       TSR_OUT_OF_RANGE, "a dim of a 0-dim self (IndexError: no dimensions)"),
               "Dimension specified as 0 but tensor has no dimensions")};
  };
  db.push_back(std::move(op));
}

void AddRot90(std::vector<OpInfo>& db) {
  OpInfo op = Rearranging("rot90", "rot90.out");
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    // sample_inputs_rot90: the defaults, then k in [-5, 5] over three pairs of dims, on [3, 4, 5]
    // in place of its cubic [S, S, S], so that a rotation in the wrong plane changes the shape.
    const Shape cube{3, 4, 5};
    s.push_back(Of(dtype, rng, cube, {}, "defaults"));
    s.push_back(Of(dtype, rng, cube, {Arg::Int(2)}, "k 2"));
    for (const Shape& dims : {Shape{0, 1}, Shape{1, 2}, Shape{1, -1}}) {
      for (int64_t k = -5; k <= 5; ++k) {
        s.push_back(Of(dtype, rng, cube, {Arg::Int(k), Arg::Ints(dims)},
                       "k " + std::to_string(k) + " dims " + ShapeString(dims)));
      }
    }
    struct Case {
      Shape shape;
      int64_t k;
      Shape dims;
    };
    // Dims in descending order (the other sense), 2-D and 4-D selves, empty ones, large k.
    const std::vector<Case> more{{{2, 3}, 1, {1, 0}},         {{2, 3}, -1, {-1, -2}},
                                 {{2, 3}, 6, {0, 1}},         {{2, 3, 4, 2}, 1, {3, 1}},
                                 {{2, 3, 4, 2}, -7, {-1, 0}}, {{0, 3, 2}, 1, {1, 2}},
                                 {{3, 0}, 3, {0, 1}},         {{1, 1}, 1, {0, 1}}};
    for (const Case& c : more) {
      s.push_back(Of(dtype, rng, c.shape, {Arg::Int(c.k), Arg::Ints(c.dims)},
                     "k " + std::to_string(c.k) + " dims " + ShapeString(c.dims)));
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& x = s.args[0].tensor;
    const int64_t k = Mod(IntArg(s, 1, 1), 4);
    const Shape dims = IntsArg(s, 2, {0, 1});
    const int64_t a = WrapDim(dims[0], x.dim()), b = WrapDim(dims[1], x.dim());
    // ATen: k = 1 is flip(dim b) then transpose(a, b); k = 2 flips both; k = 3 is flip(dim a)
    // then transpose(a, b). So an odd k swaps the two sizes, and a result index, with a and b
    // swapped back, is self's index with the flipped coordinates mirrored.
    Shape shape = x.shape;
    if (k % 2 == 1) std::swap(shape[a], shape[b]);
    return std::vector<HostTensor>{Gather(x, shape, [&](const Shape& idx, int64_t) {
      Shape at = idx;
      if (k % 2 == 1) std::swap(at[a], at[b]);
      if (k == 2 || k == 3) at[a] = x.shape[a] - 1 - at[a];
      if (k == 1 || k == 2) at[b] = x.shape[b] - 1 - at[b];
      return std::optional<int64_t>(Ravel(at, x.shape));
    })};
  };
  op.errors = [](Rng& rng) {
    auto call = [&rng](Shape shape, Shape dims) {
      return std::vector<Arg>{F32(std::move(shape), rng), Arg::Int(1), Arg::Ints(std::move(dims))};
    };
    // error_inputs_rot90, then the range checks, which are RuntimeErrors in ATen's rot90.
    return std::vector<ErrorInput>{
        Saying(Refused(call({5, 5}, {0}), "dims [0]", TSR_INVALID_ARGUMENT, "one rotation dim"),
               "expected total rotation dims == 2, but got dims = 1"),
        Saying(Refused(call({5, 5}, {0, 1, 1}), "dims [0, 1, 1]", TSR_INVALID_ARGUMENT,
                       "three rotation dims"),
               "expected total rotation dims == 2, but got dims = 3"),
        Saying(Refused({F32({5}, rng)}, "[5]", TSR_INVALID_ARGUMENT, "a self of fewer than 2 dims"),
               "expected total dims >= 2, but got total dims = 1"),
        Saying(
            Refused({F32({}, rng)}, "0-dim", TSR_INVALID_ARGUMENT, "a self of fewer than 2 dims"),
            "expected total dims >= 2, but got total dims = 0"),
        Saying(Refused(call({5, 5}, {1, 1}), "dims [1, 1]", TSR_INVALID_ARGUMENT,
                       "the same dim twice"),
               "expected rotation dims to be different, but got dim0 = 1 and dim1 = 1"),
        Saying(Refused(call({5, 5}, {0, -2}), "dims [0, -2]", TSR_INVALID_ARGUMENT,
                       "the same dim twice, once negative"),
               "expected rotation dims to be different, but got dim0 = 0 and dim1 = -2"),
        Saying(Refused(call({5, 5}, {0, 5}), "dims [0, 5] of [5, 5]", TSR_INVALID_ARGUMENT,
                       "a dim out of range (RuntimeError)"),
               "Rotation dim1 out of range, dim1 = 5"),
        Saying(Refused(call({2, 3, 4}, {-4, 0}), "dims [-4, 0] of [2, 3, 4]", TSR_INVALID_ARGUMENT,
                       "a dim out of range (RuntimeError)"),
               "Rotation dim0 out of range, dim0 = -4")};
  };
  db.push_back(std::move(op));
}

void AddDiag(std::vector<OpInfo>& db) {
  OpInfo op = Rearranging("diag", "diag.out");
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    auto add = [&](const Shape& shape, std::optional<int64_t> diagonal) {
      s.push_back(diagonal ? Of(dtype, rng, shape, {Arg::Int(*diagonal)},
                                "diagonal " + std::to_string(*diagonal))
                           : Of(dtype, rng, shape, {}, ""));
    };
    // sample_inputs_diag: a vector, and square and non-square matrices at offsets on both sides.
    add({5}, std::nullopt);
    for (const Shape& shape : {Shape{5, 5}, Shape{3, 5}, Shape{5, 3}}) {
      add(shape, std::nullopt);
      for (int64_t d : {2, -2, 1}) add(shape, d);
    }
    // A vector embeds into a square of size n + |diagonal| (an empty one into zeros); a matrix's
    // diagonal is empty once the offset passes its edge, however far.
    for (int64_t d : {2, -2, 0}) add({4}, d);
    add({0}, std::nullopt);
    add({0}, -2);
    add({1}, 3);
    for (int64_t d : {4, 5, 10, -3, -10}) add({3, 5}, d);
    add({5, 3}, -4);
    add({0, 3}, 1);
    add({3, 0}, -1);
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& x = s.args[0].tensor;
    const int64_t offset = IntArg(s, 1, 0);
    if (x.dim() == 1) return std::vector<HostTensor>{Embed(x, offset, 0, 1)};
    // diagonal(): above the main diagonal, the first `offset` columns drop; below, the rows.
    const int64_t rows = x.shape[0], cols = x.shape[1];
    const int64_t row0 = std::max<int64_t>(-offset, 0), col0 = std::max<int64_t>(offset, 0);
    const int64_t len = std::max<int64_t>(std::min(rows - row0, cols - col0), 0);
    return std::vector<HostTensor>{Gather(x, {len}, [&](const Shape&, int64_t k) {
      return std::optional<int64_t>((row0 + k) * cols + col0 + k);
    })};
  };
  op.errors = [](Rng& rng) {
    // error_inputs_diag: "diag(): Supports 1D or 2D tensors".
    return std::vector<ErrorInput>{
        Saying(Refused({F32({}, rng), Arg::Int(0)}, "0-dim", TSR_INVALID_ARGUMENT, "a 0-dim self"),
               "Supports 1D or 2D tensors. Got 0D"),
        Saying(Refused({F32({1, 1, 1}, rng), Arg::Int(0)}, "[1, 1, 1]", TSR_INVALID_ARGUMENT,
                       "a 3-D self"),
               "Supports 1D or 2D tensors. Got 3D")};
  };
  db.push_back(std::move(op));
}

void AddDiagEmbed(std::vector<OpInfo>& db) {
  OpInfo op = Rearranging("diag_embed", "diag_embed.out");
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    auto add = [&](const Shape& shape, std::vector<int64_t> ints) {  // offset, dim1, dim2
      std::vector<Arg> rest;
      static const char* const names[] = {"offset ", " dim1 ", " dim2 "};
      std::string label;
      for (size_t i = 0; i < ints.size(); ++i) {
        rest.push_back(Arg::Int(ints[i]));
        label += names[i] + std::to_string(ints[i]);
      }
      s.push_back(Of(dtype, rng, shape, std::move(rest), label));
    };
    // sample_inputs_diagonal_diag_embed, with [3, 4, 5] in place of its cubic [S, S, S].
    for (const Shape& shape : {Shape{5, 5}, Shape{3, 5}, Shape{5, 3}}) {
      add(shape, {});
      for (int64_t offset : {2, -2, 1}) add(shape, {offset});
    }
    for (const std::vector<int64_t>& ints : {std::vector<int64_t>{1, 1, 2}, {2, 0, 1}, {-2, 0, 1}})
      add({3, 4, 5}, ints);
    // 1-D and empty selves; dims in descending order (the plane transposed) and negative.
    add({4}, {});
    add({4}, {-1});
    add({0}, {});
    add({0}, {2});
    add({2, 0}, {1});
    add({0, 3}, {1});
    add({3, 4}, {1, 2, 0});
    add({3, 4}, {-1, -1, -3});
    add({3, 4}, {0, 0, 2});
    add({3, 4, 5}, {-2, 3, 1});
    add({3, 4, 5}, {3, -1, 0});
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& x = s.args[0].tensor;
    const int64_t rank = x.dim() + 1;
    return std::vector<HostTensor>{Embed(x, IntArg(s, 1, 0), WrapDim(IntArg(s, 2, -2), rank),
                                         WrapDim(IntArg(s, 3, -1), rank))};
  };
  op.errors = [](Rng& rng) {
    auto call = [&rng](Shape shape, int64_t dim1, int64_t dim2) {
      return std::vector<Arg>{F32(std::move(shape), rng), Arg::Int(0), Arg::Int(dim1),
                              Arg::Int(dim2)};
    };
    // error_inputs_diagonal_diag_embed; dims wrap over self's dims + 1.
    return std::vector<ErrorInput>{
        Saying(Refused(call({3, 4}, 1, 1), "dims 1, 1", TSR_INVALID_ARGUMENT, "the same dim twice"),
               "diagonal dimensions cannot be identical 1, 1"),
        Saying(Refused(call({3, 4, 5}, 1, -3), "dims 1, -3 of a 4-D result", TSR_INVALID_ARGUMENT,
                       "the same dim twice, once negative"),
               "diagonal dimensions cannot be identical 1, -3"),
        Saying(
            Refused(call({3, 4}, 10000, -1), "dim1 10000", TSR_OUT_OF_RANGE, "a dim out of range"),
            "Dimension out of range (expected to be in range of [-3, 2], but got 10000)"),
        Saying(
            Refused(call({3, 4}, -2, 10000), "dim2 10000", TSR_OUT_OF_RANGE, "a dim out of range"),
            "Dimension out of range (expected to be in range of [-3, 2], but got 10000)"),
        Saying(Refused(call({3, 4}, -4, -1), "dim1 -4 of a 3-D result", TSR_OUT_OF_RANGE,
                       "a dim out of range"),
               "Dimension out of range (expected to be in range of [-3, 2], but got -4)"),
        Saying(
            Refused({F32({}, rng)}, "0-dim", TSR_OUT_OF_RANGE,
                    "a 0-dim self (dim1 -2 is out of range of a 1-D result)"),
            "expected a tensor with at least 1 dim (its last is the diagonal), got a 0-dim one")};
  };
  db.push_back(std::move(op));
}

void AddTile(std::vector<OpInfo>& db) {
  OpInfo op = Rearranging("tile", "");
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    // sample_repeat_tile, all of it: unlike repeat, tile takes fewer dims than self has (ones
    // are prepended to them) as well as more (ones are prepended to self's shape).
    const std::vector<Shape> shapes{{}, {0}, {2}, {3, 0}, {3, 2}, {3, 0, 1}};
    const std::vector<Shape> dims{{},     {0},       {1},       {0, 2},      {1, 1},
                                  {2, 3}, {2, 3, 2}, {0, 2, 3}, {2, 1, 1, 1}};
    std::vector<Sample> s;
    for (const Shape& d : dims) {
      for (const Shape& shape : shapes)
        s.push_back(Of(dtype, rng, shape, {Arg::Ints(d)}, "dims " + ShapeString(d)));
    }
    s.push_back(Of(dtype, rng, {2, 5, 3}, {Arg::Ints({2})}, "dims [2]"));
    s.push_back(Of(dtype, rng, {2, 5, 3}, {Arg::Ints({3, 1})}, "dims [3, 1]"));
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& x = s.args[0].tensor;
    Shape reps = s.args[1].ints, padded = x.shape;
    // Both padded with leading ones to the longer length, then repeat's rule.
    if (reps.size() < padded.size()) reps.insert(reps.begin(), padded.size() - reps.size(), 1);
    padded.insert(padded.begin(), reps.size() - padded.size(), 1);
    Shape shape;
    for (size_t d = 0; d < reps.size(); ++d) shape.push_back(padded[d] * reps[d]);
    return std::vector<HostTensor>{Gather(x, shape, [&](const Shape& idx, int64_t) {
      Shape at = idx;
      for (size_t d = 0; d < at.size(); ++d) at[d] %= padded[d];
      return std::optional<int64_t>(Ravel(at, padded));
    })};
  };
  op.errors = [](Rng& rng) {
    // repeat's empty() refuses the negative size it computes.
    return std::vector<ErrorInput>{
        Saying(Refused({F32({2, 3}, rng), Arg::Ints({-1})}, "[2, 3] dims [-1]",
                       TSR_INVALID_ARGUMENT, "a negative repeat"),
               "dims must be non-negative, but got [-1]"),
        Saying(Refused({F32({2}, rng), Arg::Ints({0, -2})}, "[2] dims [0, -2]",
                       TSR_INVALID_ARGUMENT, "a negative repeat beside a zero one"),
               "dims must be non-negative, but got [0, -2]")};
  };
  db.push_back(std::move(op));
}

}  // namespace

void AddRearrangeOps(std::vector<OpInfo>& db) {
  AddRoll(db);
  AddRot90(db);
  AddDiag(db);
  AddDiagEmbed(db);
  AddTile(db);
}

}  // namespace conformance
}  // namespace tessera
