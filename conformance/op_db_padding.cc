// Padding and pixel-shuffle ops of op set 1.9: reflection_pad{1,2,3}d, replication_pad{1,2,3}d,
// pad, pixel_shuffle and pixel_unshuffle (composites, dispatcher/ops/padding_ops.cc).
//
// After current PyTorch's Padding.h (the shape checks every padding op shares), cpu/
// PaddingKernel.cpp (which element of self each output position reads), PadNd.cpp (pad and
// _pad_circular) and PixelShuffle.cpp, with the samples of the OpInfos nn.functional.pad
// (constant, reflect, replicate, replicate_negative, circular), nn.functional.pixel_shuffle and
// nn.functional.pixel_unshuffle. The references index every element directly: for each output
// position, per dim, the position of self it reads (none: the constant's fill).
//
// Where PyTorch 1.13 differs (it is what /usr/bin/python3 runs), the current behaviour is the
// expected one: the reflection and replication ops take every dtype but bool (1.13: floating ones
// only), refuse an empty padded output in every dim (1.13 accepted some in the 2-D and 3-D ops),
// refuse a 0-channel non-batch input to reflection_pad1d and a padding list of the wrong length;
// pad's circular mode pads a non-batch input too (1.13 refused one).
//
// Error codes: PyTorch's RuntimeError is TSR_INVALID_ARGUMENT; its NotImplementedError (pad's
// unknown mode, a non-constant padding of dims it has no op for) and a dtype the kernels do not
// take are TSR_UNIMPLEMENTED.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "conformance/op_db.h"
#include "conformance/op_db_helpers.h"

namespace tessera {
namespace conformance {
namespace {

using Shape = std::vector<int64_t>;
// Sources: for each dim of the output, the position of self each of its positions reads, or -1
// where it reads none (constant padding's fill).
using Sources = std::vector<std::vector<int64_t>>;

// Mapped: a tensor of `shape` and x's dtype holding x's element at the position `sources` gives
// dim by dim, or `fill` where a dim gives none.
HostTensor Mapped(const HostTensor& x, const Shape& shape, const Sources& sources, double fill) {
  HostTensor out = Full(shape, x.dtype, fill);
  for (int64_t f = 0; f < out.numel(); ++f) {
    Shape at = Unravel(f, shape);
    bool inside = true;
    for (size_t d = 0; d < at.size(); ++d) {
      at[d] = sources[d][static_cast<size_t>(at[d])];
      inside = inside && at[d] >= 0;
    }
    if (inside)
      out.values[static_cast<size_t>(f)] = x.values[static_cast<size_t>(Ravel(at, x.shape))];
  }
  return out;
}

// Identity: each position reads its own, for the dims a pad leaves alone.
std::vector<int64_t> Identity(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) v[static_cast<size_t>(k)] = k;
  return v;
}

enum class Mode { kConstant, kReflect, kReplicate, kCircular };

// DimSources: the positions of a dim of self of size n, padded by (before, after), that its
// output positions read. Reflection and replication as ATen's CPU kernels index (relative to the
// uncropped self, a negative padding shifting where the output starts reading); circular as
// _pad_circular copies: the cropped self into the middle, then the `before` positions from the
// end of what it wrote and the `after` positions from its start.
std::vector<int64_t> DimSources(Mode mode, int64_t n, int64_t before, int64_t after) {
  const int64_t m = n + before + after;
  const int64_t in_start = std::max<int64_t>(-before, 0), out_start = std::max<int64_t>(before, 0);
  std::vector<int64_t> src(static_cast<size_t>(m), -1);
  for (int64_t j = 0; j < m; ++j) {
    int64_t& at = src[static_cast<size_t>(j)];
    if (mode == Mode::kConstant) {
      at = j - before >= 0 && j - before < n ? j - before : -1;
    } else if (mode == Mode::kReflect) {
      const int64_t i = j < before ? 2 * before - j : j < n + before ? j : 2 * (n + before - 1) - j;
      at = i - out_start + in_start;
    } else if (mode == Mode::kReplicate) {
      const int64_t i = j < before ? before : j < n + before ? j : n + before - 1;
      at = i - out_start + in_start;
    }
  }
  if (mode != Mode::kCircular) return src;
  const int64_t core_end = m - std::max<int64_t>(after, 0);
  for (int64_t j = out_start; j < core_end; ++j) {
    src[static_cast<size_t>(j)] = in_start + j - out_start;
  }
  for (int64_t k = 0; k < before; ++k) {
    src[static_cast<size_t>(k)] = src[static_cast<size_t>(core_end - before + k)];
  }
  for (int64_t k = 0; k < after; ++k) {
    src[static_cast<size_t>(m - after + k)] = src[static_cast<size_t>(out_start + k)];
  }
  if (std::find(src.begin(), src.end(), -1) != src.end()) {
    throw std::runtime_error("circular padding wraps past the cropped dim (no defined result)");
  }
  return src;
}

// Padded: x padded by `pad` (pairs from the last dim backwards) in `mode`.
HostTensor Padded(const HostTensor& x, const Shape& pad, Mode mode, double value) {
  Shape shape = x.shape;
  for (size_t p = 0; p < pad.size() / 2; ++p) {
    shape[x.shape.size() - 1 - p] += pad[2 * p] + pad[2 * p + 1];
  }
  // An empty result reads nothing (whatever a circular wrap would have read).
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return Full(shape, x.dtype, value);
  Sources sources;
  for (int64_t n : x.shape) sources.push_back(Identity(n));
  for (size_t p = 0; p < pad.size() / 2; ++p) {
    const size_t d = x.shape.size() - 1 - p;
    sources[d] = DimSources(mode, x.shape[d], pad[2 * p], pad[2 * p + 1]);
  }
  return Mapped(x, shape, sources, value);
}

HostTensor F32(Shape shape, Rng& rng) {
  return MakeTensor(std::move(shape), TSR_DTYPE_FLOAT32, rng);
}

// ---- reflection_pad{1,2,3}d and replication_pad{1,2,3}d ----

struct PadCase {
  Shape shape, pad;
  std::string note;
};

// The cases for an op padding `dims` dims: nn.functional.pad's reflect/replicate samples of that
// padding length, then batched and non-batch selves, empty batches, negative paddings and
// paddings of size - 1 (the most a reflection takes).
std::vector<PadCase> PadCases(int64_t dims, bool replicate) {
  std::vector<PadCase> c;
  if (dims == 1) {
    c = {{{1, 3}, {1, 2}, ""},
         {{1, 3}, {0, 1}, ""},
         {{0, 3, 3}, {1, 2}, " (empty batch)"},
         {{0, 3, 3}, {0, 1}, " (empty batch)"},
         {{1, 3, 3}, {1, 2}, ""},
         {{1, 3, 3}, {0, 1}, ""},
         {{2, 5}, {4, 4}, " (size - 1 both sides)"},
         {{2, 3, 6}, {-2, 3}, " (crop before)"},
         {{2, 3, 6}, {3, -2}, " (crop after)"},
         {{1, 2, 6}, {-5, 4}, " (crop all but one, then pad)"},
         {{1, 2, 12}, {-11, 11}, ""},
         {{3, 1, 4}, {-3, 3}, ""},
         {{2, 4}, {-1, -2}, " (crop only)"},
         {{2, 1}, {0, 0}, " (no padding)"},
         {{0, 2, 1}, {0, 0}, " (empty batch, no padding)"}};
    if (replicate) {
      c.push_back({{2, 3}, {5, 7}, " (beyond the size)"});
      c.push_back({{1, 2, 4}, {-6, 3}, " (crop past the end)"});
      c.push_back({{1, 3, 4}, {5, -3}, ""});
      c.push_back({{2, 1}, {3, 2}, ""});
    }
  } else if (dims == 2) {
    c = {{{1, 3, 3}, {0, 2, 0, 1}, ""},
         {{0, 3, 3, 3}, {0, 2, 0, 1}, " (empty batch)"},
         {{3, 3, 5, 5}, {0, 2, 0, 1}, ""},
         {{1, 3, 4, 4}, {-1, 1, -2, 1}, ""},
         {{2, 4, 5}, {4, 3, 3, 2}, " (size - 1)"},
         {{2, 2, 3, 4}, {-2, 1, 2, -1}, ""},
         {{3, 1, 5}, {1, 2, 0, 0}, " (a dim of 1)"},
         {{1, 1, 1}, {0, 0, 0, 0}, " (no padding)"},
         {{2, 3, 4}, {0, 0, 1, 1}, " (only H)"}};
    if (replicate) {
      // nn.functional.pad's replicate_negative samples.
      c.push_back({{5, 3, 4, 4}, {-4, 5, 0, 0}, ""});
      c.push_back({{6, 2, 4, 4}, {0, 0, 2, -4}, ""});
      c.push_back({{5, 6, 4, 4}, {5, -4, -4, 3}, ""});
      c.push_back({{4, 2, 5, 5}, {-2, -1, 4, 6}, ""});
      c.push_back({{2, 6, 5, 5}, {8, -1, -1, -3}, ""});
      c.push_back({{8, 1, 5, 5}, {-2, -1, -1, -3}, ""});
    }
  } else {
    c = {{{3, 3, 5, 5}, {1, 1, 1, 1, 1, 1}, " (non-batch)"},
         {{1, 3, 3, 3, 3}, {1, 1, 1, 1, 1, 1}, ""},
         {{0, 2, 3, 4, 5}, {1, 1, 2, 2, 1, 1}, " (empty batch)"},
         {{2, 3, 4, 5}, {-1, 4, 2, -2, 2, 2}, ""},
         {{1, 2, 2, 2, 2}, {1, 1, 1, 1, 1, 1}, " (size - 1)"},
         {{1, 2, 3, 4}, {0, 0, 0, 0, 0, 0}, " (no padding)"}};
    if (replicate) {
      c.push_back({{2, 1, 2, 3}, {3, -2, 0, 2, -1, 4}, ""});
      c.push_back({{1, 1, 2, 2, 2}, {3, 3, 3, 3, 3, 3}, " (beyond the size)"});
    }
  }
  return c;
}

OpInfo PadOp(int64_t dims, Mode mode) {
  const bool replicate = mode == Mode::kReplicate;
  const std::string name =
      std::string(replicate ? "replication" : "reflection") + "_pad" + std::to_string(dims) + "d";
  OpInfo op;
  op.name = name;
  op.out = name + ".out";
  // Current PyTorch's CPU kernels: every dtype but bool (all_types_and_complex_and(half,
  // bfloat16) in the OpInfos).
  op.dtypes = kNumericMask;
  op.samples = [dims, replicate](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    for (const PadCase& c : PadCases(dims, replicate)) {
      s.push_back(
          Described({Arg::Tensor(MakeTensor(c.shape, dtype, rng)), Arg::Ints(c.pad)}, c.note));
    }
    return s;
  };
  op.reference = [mode](const Sample& s) {
    return std::vector<HostTensor>{Padded(s.args[0].tensor, s.args[1].ints, mode, 0)};
  };
  op.errors = [dims, replicate](Rng& rng) {
    auto call = [&rng](Shape shape, Shape pad) {
      return std::vector<Arg>{Arg::Tensor(F32(std::move(shape), rng)), Arg::Ints(std::move(pad))};
    };
    const Shape zeros(static_cast<size_t>(2 * dims), 0);
    Shape batch_shape(static_cast<size_t>(dims + 2), 3);  // [3, 3, ...]
    Shape plain_shape(static_cast<size_t>(dims + 1), 3);
    std::vector<ErrorInput> e;
    // padding size is expected to be 2 * dims
    const std::string size_msg = "padding size is expected to be " + std::to_string(2 * dims);
    e.push_back(Saying(Refused(call(batch_shape, Shape(zeros.begin(), zeros.end() - 1)),
                               TSR_INVALID_ARGUMENT, "a padding list one too short"),
                       size_msg));
    e.push_back(Saying(Refused(call(batch_shape, Shape(static_cast<size_t>(2 * dims + 2), 1)),
                               TSR_INVALID_ARGUMENT, "a padding list two too long"),
                       size_msg));
    // Expected (dims + 1)D or (dims + 2)D (batch mode) tensor ...
    const std::string dims_msg = "Expected " + std::to_string(dims + 1) + "D or " +
                                 std::to_string(dims + 2) +
                                 "D (batch mode) tensor with possibly 0 batch size and other "
                                 "non-zero dimensions for input";
    e.push_back(Saying(Refused(call(Shape(static_cast<size_t>(dims), 3), zeros),
                               TSR_INVALID_ARGUMENT, "a self of too few dims"),
                       dims_msg));
    e.push_back(Saying(Refused(call(Shape(static_cast<size_t>(dims + 3), 2), zeros),
                               TSR_INVALID_ARGUMENT, "a self of too many dims"),
                       dims_msg));
    e.push_back(Saying(Refused(call({}, zeros), TSR_INVALID_ARGUMENT, "a 0-dim self"), dims_msg));
    Shape empty_channel = batch_shape;
    empty_channel[1] = 0;
    e.push_back(Saying(Refused(call(empty_channel, zeros), TSR_INVALID_ARGUMENT,
                               "an empty channel dim in batch mode"),
                       dims_msg));
    Shape empty_plain = plain_shape;
    empty_plain[0] = 0;
    e.push_back(
        Saying(Refused(call(empty_plain, zeros), TSR_INVALID_ARGUMENT,
                       "an empty first dim of a non-batch self (1.13 let some reflections pass)"),
               dims_msg));
    Shape empty_last = batch_shape;
    empty_last.back() = 0;
    e.push_back(Saying(
        Refused(call(empty_last, zeros), TSR_INVALID_ARGUMENT, "an empty padded dim"), dims_msg));
    // The output sizes must all be at least 1: a crop of the whole W, and of the first padded
    // dim (1.13 accepted both in the 2-D and 3-D ops when another size was left).
    Shape crop_w = zeros;
    crop_w[0] = -2;
    crop_w[1] = -1;
    e.push_back(
        Saying(Refused(call(batch_shape, crop_w), TSR_INVALID_ARGUMENT, "a crop of all of W"),
               dims == 1 ? "is too small. Calculated output W: 0"
                         : "W: 0 must be >= 1 in every dimension"));
    Shape crop_first = zeros;
    crop_first[static_cast<size_t>(2 * dims - 2)] = -3;
    if (dims > 1) {
      e.push_back(Saying(Refused(call(plain_shape, crop_first), TSR_INVALID_ARGUMENT,
                                 "a crop of all of the first padded dim"),
                         dims == 2 ? "Calculated output H: 0" : "Calculated output D: 0"));
    }
    if (!replicate) {
      // Argument #4 + 2 i: Padding size should be less than the corresponding input dimension
      for (int64_t i = 0; i < dims; ++i) {
        Shape pad = zeros;
        pad[static_cast<size_t>(2 * i)] = 3;
        const std::string msg = "Argument #" + std::to_string(4 + 2 * i) +
                                ": Padding size should be less than the corresponding input "
                                "dimension";
        e.push_back(Saying(Refused(call(batch_shape, pad), TSR_INVALID_ARGUMENT,
                                   "a reflection as long as the dim, pair " + std::to_string(i)),
                           msg));
        pad = zeros;
        pad[static_cast<size_t>(2 * i + 1)] = 5;
        e.push_back(Saying(Refused(call(plain_shape, pad), TSR_INVALID_ARGUMENT,
                                   "a reflection longer than the dim, pair " + std::to_string(i)),
                           msg));
      }
    } else {
      Shape huge = zeros;
      huge[0] = std::numeric_limits<int64_t>::max();
      huge[1] = 1;
      e.push_back(Saying(Refused(call(batch_shape, huge), TSR_INVALID_ARGUMENT,
                                 "an output size that overflows int64"),
                         "overflows int64"));
    }
    return e;
  };
  return op;
}

// ---- pad ----

Mode ModeOf(const Sample& s) {
  if (!Given(s, 2)) return Mode::kConstant;
  const std::string& m = s.args[2].string;
  return m == "reflect"     ? Mode::kReflect
         : m == "replicate" ? Mode::kReplicate
         : m == "circular"  ? Mode::kCircular
                            : Mode::kConstant;
}

OpInfo PadFunctional() {
  OpInfo op;
  op.name = "pad";
  // constant and circular modes take every dtype; reflect and replicate all but bool, so a bool
  // self gets only samples of the first two (and an error input of the others).
  op.dtypes = kAllMask;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    auto add = [&](const Shape& shape, const Shape& pad, std::vector<Arg> rest,
                   const std::string& note = "") {
      std::vector<Arg> args{Arg::Tensor(MakeTensor(shape, dtype, rng)), Arg::Ints(pad)};
      args.insert(args.end(), rest.begin(), rest.end());
      s.push_back(Described(std::move(args), note));
    };
    // sample_inputs_nn_pad, mode 'constant': the defaults, then every case with a value (1.0 and
    // 2.0 alternately, where PyTorch runs each case with both).
    add({1, 3, 3}, {2, 2}, {}, " (defaults)");
    const std::vector<std::pair<Shape, Shape>> constant{{{1, 3}, {1, 2}},
                                                        {{1, 3}, {0, 1}},
                                                        {{1, 3}, {0, 2, 0, 1}},
                                                        {{5, 3}, {-1, -2, 1, 1}},
                                                        {{0, 3, 3}, {1, 2}},
                                                        {{0, 3, 3}, {0, 1}},
                                                        {{0, 3, 3}, {0, 2, 0, 1}},
                                                        {{0, 3, 3}, {1, 1, 1, 1, 1, 1}},
                                                        {{1, 3, 3}, {1, 2}},
                                                        {{1, 3, 3}, {0, 1}},
                                                        {{1, 3, 3}, {0, 2, 0, 1}},
                                                        {{1, 3, 3}, {1, 1, 1, 1, 1, 1}},
                                                        {{0, 3, 3, 3}, {1, 2}},
                                                        {{0, 3, 3, 3}, {0, 1}},
                                                        {{0, 3, 3, 3}, {0, 2, 0, 1}},
                                                        {{0, 3, 3, 3}, {1, 1, 1, 1, 1, 1}},
                                                        {{3, 3, 5, 5}, {1, 2}},
                                                        {{3, 3, 5, 5}, {0, 1}},
                                                        {{3, 3, 5, 5}, {0, 2, 0, 1}},
                                                        {{3, 3, 5, 5}, {1, 1, 1, 1, 1, 1}},
                                                        {{1, 3, 3, 3, 3}, {1, 2}},
                                                        {{1, 3, 3, 3, 3}, {0, 1}},
                                                        {{1, 3, 3, 3, 3}, {0, 2, 0, 1}},
                                                        {{1, 3, 3, 3, 3}, {1, 1, 1, 1, 1, 1}},
                                                        {{1, 3, 4, 4}, {-1, 1, -2, 1}}};
    for (size_t i = 0; i < constant.size(); ++i) {
      add(constant[i].first, constant[i].second,
          {Arg::String("constant"), Arg::Double(i % 2 == 0 ? 1.0 : 2.0)});
    }
    // A value left None (0), one that truncates into integers (2) and is true for bool, no
    // padding at all, and any number of dims (constant mode has no 5-D limit).
    add({2, 3}, {1, 1}, {Arg::String("constant"), Arg::None()});
    add({2, 3}, {1, 0, 0, 2}, {Arg::String("constant"), Arg::Double(2.5)});
    add({2, 3}, {}, {Arg::String("constant")}, " (no padding)");
    add({3}, {2, 1}, {Arg::String("constant"), Arg::Double(1.0)}, " (1-D)");
    add({1, 1, 1, 2, 1, 2}, {1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1},
        {Arg::String("constant"), Arg::Double(2.0)}, " (6-D)");
    // mode 'circular' (its bool cases where dtype is bool).
    const std::vector<std::pair<Shape, Shape>> circular =
        dtype == TSR_DTYPE_BOOL
            ? std::vector<std::pair<Shape, Shape>>{{{2, 3, 3}, {1, 2}}, {{1, 3, 3}, {1, 2}}}
            : std::vector<std::pair<Shape, Shape>>{{{0, 3, 3}, {1, 2}},
                                                   {{0, 3, 3}, {0, 1}},
                                                   {{1, 3, 3}, {1, 2}},
                                                   {{1, 3, 3}, {0, 1}},
                                                   {{0, 3, 3, 3}, {0, 2, 0, 1}},
                                                   {{3, 3, 5, 5}, {0, 2, 0, 1}},
                                                   {{1, 3, 3, 3, 3}, {1, 1, 1, 1, 1, 1}},
                                                   {{1, 3, 4, 4}, {-1, 1, -2, 1}}};
    for (const auto& c : circular) add(c.first, c.second, {Arg::String("circular")});
    // A non-batch self (current PyTorch; 1.13 refused it), wraps of the whole dim, wraps of a
    // cropped dim (they read the cropped part), crops to nothing, an empty kept dim, and a
    // value of 0, which non-constant modes accept.
    const Arg circ = Arg::String("circular");
    add({3, 4}, {1, 2}, {circ}, " (non-batch)");
    add({2, 3, 4}, {1, 2, 2, 1}, {circ}, " (non-batch)");
    add({2, 1, 4}, {4, 4}, {circ}, " (the whole dim each side)");
    add({1, 2, 4}, {-1, 3}, {circ}, " (wraps the cropped dim)");
    add({1, 1, 4}, {3, -1}, {circ}, " (wraps the cropped dim)");
    add({1, 2, 3, 4}, {4, 4, -1, 2}, {circ});
    add({2, 3, 4}, {-3, -1}, {circ}, " (cropped to nothing)");
    add({0, 1, 4}, {2, -3}, {circ}, " (empty batch)");
    add({2, 0, 4}, {1, 1}, {circ}, " (empty channel)");
    add({1, 2, 2, 3, 4}, {1, 1, 1, 1, 1, 1}, {circ, Arg::Double(0.0)}, " (value 0)");
    if (dtype == TSR_DTYPE_BOOL) return s;
    // modes 'reflect' and 'replicate', then 'replicate_negative'.
    const std::vector<std::pair<Shape, Shape>> mirror{{{1, 3}, {1, 2}},
                                                      {{1, 3}, {0, 1}},
                                                      {{0, 3, 3}, {1, 2}},
                                                      {{0, 3, 3}, {0, 1}},
                                                      {{1, 3, 3}, {1, 2}},
                                                      {{1, 3, 3}, {0, 1}},
                                                      {{1, 3, 3}, {0, 2, 0, 1}},
                                                      {{0, 3, 3, 3}, {0, 2, 0, 1}},
                                                      {{3, 3, 5, 5}, {0, 2, 0, 1}},
                                                      {{3, 3, 5, 5}, {1, 1, 1, 1, 1, 1}},
                                                      {{1, 3, 3, 3, 3}, {1, 1, 1, 1, 1, 1}},
                                                      {{1, 3, 4, 4}, {-1, 1, -2, 1}}};
    for (const char* mode : {"reflect", "replicate"}) {
      for (const auto& c : mirror) add(c.first, c.second, {Arg::String(mode)});
    }
    const std::vector<std::pair<Shape, Shape>> negative{
        {{5, 3, 4, 4}, {-4, 5, 0, 0}},   {{6, 2, 4, 4}, {0, 0, 2, -4}},
        {{5, 6, 4, 4}, {5, -4, -4, 3}},  {{4, 2, 5, 5}, {-2, -1, 4, 6}},
        {{2, 6, 5, 5}, {8, -1, -1, -3}}, {{8, 1, 5, 5}, {-2, -1, -1, -3}}};
    for (const auto& c : negative) add(c.first, c.second, {Arg::String("replicate")});
    add({1, 3, 4}, {1, 1}, {Arg::String("reflect"), Arg::Double(0.0)}, " (value 0)");
    add({2, 5}, {-4, 4}, {Arg::String("reflect")});
    return s;
  };
  op.reference = [](const Sample& s) {
    const double value = Given(s, 3) ? s.args[3].number : 0;
    return std::vector<HostTensor>{Padded(s.args[0].tensor, s.args[1].ints, ModeOf(s), value)};
  };
  op.errors = [](Rng& rng) {
    auto call = [&rng](Shape shape, Shape pad, std::vector<Arg> rest) {
      std::vector<Arg> args{Arg::Tensor(F32(std::move(shape), rng)), Arg::Ints(std::move(pad))};
      args.insert(args.end(), rest.begin(), rest.end());
      return args;
    };
    const Arg reflect = Arg::String("reflect"), circular = Arg::String("circular");
    const std::string odd = "Padding length must be divisible by 2";
    const std::string too_long =
        "Padding length should be less than or equal to two times the input dimension";
    const std::string only = "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported";
    const std::string wraps = "Padding value causes wrapping around more than once.";
    std::vector<ErrorInput> e{
        Saying(Refused(call({1, 3, 4}, {1, 1}, {Arg::String("symmetric")}), TSR_UNIMPLEMENTED,
                       "an unknown mode (NotImplementedError: Unrecognised padding mode)"),
               "Unrecognised padding mode symmetric"),
        Saying(Refused(call({1, 3, 4}, {1}, {reflect}), TSR_INVALID_ARGUMENT,
                       "a padding of odd length"),
               odd),
        Saying(Refused(call({1, 3, 4}, {1}, {}), TSR_INVALID_ARGUMENT,
                       "a padding of odd length, constant mode"),
               odd),
        Saying(Refused(call({1, 3, 4}, {1, 1, 1, 1, 1, 1, 1, 1}, {Arg::String("constant")}),
                       TSR_INVALID_ARGUMENT, "a padding longer than twice the dims"),
               too_long),
        Saying(Refused(call({}, {0, 0}, {}), TSR_INVALID_ARGUMENT,
                       "a padding longer than twice the dims of a 0-dim self"),
               too_long),
        Saying(Refused(call({1, 3, 4}, {1, 1}, {reflect, Arg::Double(1.0)}), TSR_INVALID_ARGUMENT,
                       "a value in reflect mode"),
               "Padding mode \"reflect\" doesn't take in value argument"),
        Saying(Refused(call({1, 3, 4}, {1, 1}, {circular, Arg::Double(-2.0)}), TSR_INVALID_ARGUMENT,
                       "a value in circular mode"),
               "Padding mode \"circular\" doesn't take in value argument"),
        Saying(Refused(call({4}, {1, 1}, {reflect}), TSR_UNIMPLEMENTED,
                       "a non-constant padding of a 1-D self (NotImplementedError)"),
               only),
        Saying(Refused(call({4}, {1, 1}, {circular}), TSR_UNIMPLEMENTED,
                       "a circular padding of a 1-D self (NotImplementedError)"),
               only),
        Saying(Refused(call({2, 3, 4}, {1, 1, 1, 1, 1, 1}, {Arg::String("replicate")}),
                       TSR_UNIMPLEMENTED, "3 padded dims of a 3-D self (NotImplementedError)"),
               only),
        Saying(Refused(call({2, 3, 4, 5, 6, 7}, {1, 1}, {reflect}), TSR_UNIMPLEMENTED,
                       "one padded dim of a 6-D self (NotImplementedError)"),
               only),
        Saying(Refused(call({2, 3, 4}, {}, {reflect}), TSR_UNIMPLEMENTED,
                       "no padding in reflect mode (NotImplementedError)"),
               only),
        // The reflection and replication ops' own checks.
        Saying(Refused(call({1, 3, 4}, {1, 4}, {reflect}), TSR_INVALID_ARGUMENT,
                       "a reflection longer than the dim"),
               "Padding size should be less than the corresponding input dimension"),
        Saying(Refused(call({2, 0, 4}, {1, 1}, {Arg::String("replicate")}), TSR_INVALID_ARGUMENT,
                       "an empty channel dim"),
               "tensor with possibly 0 batch size and other non-zero dimensions for input"),
        Saying(Refused(call({1, 3, 4}, {-2, -2}, {Arg::String("replicate")}), TSR_INVALID_ARGUMENT,
                       "an empty output"),
               "Calculated output W: 0"),
        // _pad_circular's.
        Saying(Refused(call({2, 3, 4}, {5, 1}, {circular}), TSR_INVALID_ARGUMENT,
                       "a wrap longer than the dim"),
               wraps),
        Saying(Refused(call({2, 3, 4}, {-3, -2}, {circular}), TSR_INVALID_ARGUMENT,
                       "a negative output size"),
               "Negative padding value is resulting in an empty dimension"),
        // Wraps longer than what the crop leaves: PyTorch's copy reads what it writes (it raises
        // its overlap error, or returns uninitialized memory where it does not detect it).
        Saying(Refused(call({1, 1, 4}, {2, -3}, {circular}), TSR_INVALID_ARGUMENT,
                       "a wrap longer than the cropped dim"),
               "wraps around the 1 elements its negative padding leaves"),
        Saying(Refused(call({1, 1, 4}, {-3, 2}, {circular}), TSR_INVALID_ARGUMENT,
                       "a wrap longer than the cropped dim"),
               "wraps around the 1 elements its negative padding leaves"),
        Saying(Refused(call({1, 1, 4}, {2, -4}, {circular}), TSR_INVALID_ARGUMENT,
                       "a wrap of a dim cropped to nothing"),
               "wraps around the 0 elements its negative padding leaves"),
        Saying(Refused(call({1, 1, 3, 4}, {2, -3, 0, 0}, {circular}), TSR_INVALID_ARGUMENT,
                       "a wrap longer than the cropped dim, 2-D"),
               "wraps around the 1 elements its negative padding leaves"),
        // dtypes: the reflection and replication kernels take no bool; constant's fill value
        // must fit the dtype (fill_'s overflow check).
        Saying(Refused({Arg::Tensor(MakeTensor({1, 3, 4}, TSR_DTYPE_BOOL, rng)), Arg::Ints({1, 1}),
                        reflect},
                       TSR_UNIMPLEMENTED, "a bool self in reflect mode"),
               "reflection_pad1d: not implemented for dtype bool"),
        Saying(Refused({Arg::Tensor(MakeTensor({1, 3, 4}, TSR_DTYPE_BOOL, rng)), Arg::Ints({1, 1}),
                        Arg::String("replicate")},
                       TSR_UNIMPLEMENTED, "a bool self in replicate mode"),
               "replication_pad1d: not implemented for dtype bool"),
        Saying(Refused({Arg::Tensor(MakeTensor({2, 3}, TSR_DTYPE_UINT8, rng)), Arg::Ints({1, 1}),
                        Arg::String("constant"), Arg::Double(300)},
                       TSR_INVALID_ARGUMENT, "a value that overflows uint8"),
               "cannot be converted to uint8 without overflow")};
    return e;
  };
  return op;
}

// ---- pixel_shuffle and pixel_unshuffle ----

// Shuffle: pixel_shuffle (up) or pixel_unshuffle of x by f, element by element: channel
// c * f * f + i * f + j of a [..., C, H, W] self is the (i, j) pixel of each f x f block of
// channel c of the [..., C / (f f), H f, W f] result. An empty self of pixel_unshuffle gets the
// documented shape, as from ATen's math composite, meta and CUDA (ATen's CPU kernel returns
// self's shape: pytorch/pytorch#192816).
HostTensor Shuffle(const HostTensor& x, int64_t f, bool up) {
  const size_t b = x.shape.size() - 3;
  Shape shape = x.shape;
  if (up) {
    shape[b] /= f * f;
    shape[b + 1] *= f;
    shape[b + 2] *= f;
  } else {
    shape[b] *= f * f;
    shape[b + 1] /= f;
    shape[b + 2] /= f;
  }
  HostTensor out = Full(shape, x.dtype, 0);
  for (int64_t k = 0; k < out.numel(); ++k) {
    Shape at = Unravel(k, shape);
    if (up) {
      const int64_t c = at[b], y = at[b + 1], z = at[b + 2];
      at[b] = c * f * f + (y % f) * f + (z % f);
      at[b + 1] = y / f;
      at[b + 2] = z / f;
    } else {
      const int64_t c = at[b], y = at[b + 1], z = at[b + 2];
      at[b] = c / (f * f);
      at[b + 1] = y * f + (c % (f * f)) / f;
      at[b + 2] = z * f + c % f;
    }
    out.values[static_cast<size_t>(k)] = x.values[static_cast<size_t>(Ravel(at, x.shape))];
  }
  return out;
}

OpInfo PixelOp(bool up) {
  OpInfo op;
  op.name = up ? "pixel_shuffle" : "pixel_unshuffle";
  op.out = op.name + ".out";
  op.dtypes = kAllMask;
  op.samples = [up](tsr_dtype dtype, Rng& rng) {
    struct Case {
      Shape shape;
      int64_t f;
    };
    // sample_inputs_pixel_shuffle / _unshuffle, then non-batch selves, two batch dims, empty
    // batches and a factor that moves several channels.
    std::vector<Case> cases =
        up ? std::vector<Case>{{{1, 9, 2, 2}, 1},    {{1, 9, 2, 2}, 3}, {{1, 0, 1, 1}, 1},
                               {{1, 1, 0, 1}, 1},    {{1, 1, 1, 0}, 1}, {{8, 3, 2}, 2},
                               {{2, 3, 8, 2, 3}, 2}, {{0, 4, 2, 2}, 2}, {{4, 0, 3}, 2},
                               {{1, 18, 1, 2}, 3},   {{2, 4, 3, 1}, 1}}
           : std::vector<Case>{{{1, 1, 6, 6}, 1},    {{1, 1, 6, 6}, 3}, {{1, 0, 1, 1}, 1},
                               {{1, 1, 0, 1}, 1},    {{1, 1, 1, 0}, 1}, {{2, 4, 6}, 2},
                               {{2, 1, 2, 4, 6}, 2}, {{0, 1, 4, 4}, 2}, {{3, 0, 4}, 2},
                               {{1, 2, 3, 6}, 3},    {{2, 4, 3, 1}, 1}};
    std::vector<Sample> s;
    for (const Case& c : cases) {
      s.push_back(Described({Arg::Tensor(MakeTensor(c.shape, dtype, rng)), Arg::Int(c.f)}));
    }
    return s;
  };
  op.reference = [up](const Sample& s) {
    return std::vector<HostTensor>{Shuffle(s.args[0].tensor, s.args[1].integer, up)};
  };
  op.errors = [up](Rng& rng) {
    auto call = [&rng](Shape shape, int64_t f) {
      return std::vector<Arg>{Arg::Tensor(F32(std::move(shape), rng)), Arg::Int(f)};
    };
    const std::string name = up ? "pixel_shuffle" : "pixel_unshuffle";
    const std::string factor = up ? "upscale_factor" : "downscale_factor";
    const std::string dims = name + " expects input to have at least 3 dimensions";
    const std::string positive = name + " expects a positive " + factor;
    std::vector<ErrorInput> e{
        Saying(Refused(call({4, 2}, 2), TSR_INVALID_ARGUMENT, "a 2-D self"), dims),
        Saying(Refused(call({}, 1), TSR_INVALID_ARGUMENT, "a 0-dim self"), dims),
        Saying(Refused(call({4, 2, 2}, 0), TSR_INVALID_ARGUMENT, "a factor of 0"), positive),
        Saying(Refused(call({4, 2, 2}, -2), TSR_INVALID_ARGUMENT, "a negative factor"), positive)};
    if (up) {
      const std::string channels =
          "expects its input's 'channel' dimension to be divisible by "
          "the square of upscale_factor";
      e.push_back(Saying(Refused(call({5, 2, 2}, 2), TSR_INVALID_ARGUMENT,
                                 "channels not divisible by the factor squared"),
                         channels));
      e.push_back(Saying(Refused(call({2, 3, 2, 2}, 3), TSR_INVALID_ARGUMENT,
                                 "fewer channels than the factor squared"),
                         channels));
      // Current PyTorch checks the square for overflow (1.13 divided by zero).
      e.push_back(Saying(Refused(call({4, 2, 2}, int64_t{1} << 32), TSR_INVALID_ARGUMENT,
                                 "a factor whose square overflows int64"),
                         "upscale factor is too large"));
    } else {
      const std::string height = "expects height to be divisible by downscale_factor";
      e.push_back(Saying(
          Refused(call({4, 3, 2}, 2), TSR_INVALID_ARGUMENT, "a height not divisible by the factor"),
          height));
      e.push_back(Saying(
          Refused(call({4, 2, 3}, 2), TSR_INVALID_ARGUMENT, "a width not divisible by the factor"),
          "expects width to be divisible by downscale_factor"));
      e.push_back(Saying(
          Refused(call({1, 1, 2, 2}, 3), TSR_INVALID_ARGUMENT, "a height smaller than the factor"),
          height));
      e.push_back(Saying(Refused(call({4, 0, 0}, int64_t{1} << 31), TSR_INVALID_ARGUMENT,
                                 "output channels (4 * factor^2) that overflow int64"),
                         "overflow int64"));
    }
    return e;
  };
  return op;
}

}  // namespace

void AddPaddingOps(std::vector<OpInfo>& db) {
  for (int64_t dims = 1; dims <= 3; ++dims) db.push_back(PadOp(dims, Mode::kReflect));
  for (int64_t dims = 1; dims <= 3; ++dims) db.push_back(PadOp(dims, Mode::kReplicate));
  db.push_back(PadFunctional());
  db.push_back(PixelOp(/*up=*/true));
  db.push_back(PixelOp(/*up=*/false));
}

}  // namespace conformance
}  // namespace tessera
