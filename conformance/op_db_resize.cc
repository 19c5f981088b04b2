// Resize ops of op set 1.11: resize and resize_as with their out= and in-place forms (resize_,
// resize_as_: composites, dispatcher/ops/resize_ops.cc).
//
// After ATen's Resize.cpp (resize_, resize_as_ and the functional and out= forms
// native_functions.yaml autogenerates: a clone of self, memory_format None, resized in place, then
// copied into out), c10's empty_tensor_restride (contiguous and channels-last strides), and the
// OpInfos `resize_` and `resize_as_` (sample_inputs_resize_ops) with more cases: shrink, keep,
// grow, 0-dim, empty, channels_last, and the error inputs of ATen's checks.
//
// What the references follow: the functional form's clone holds self's elements in memory order,
// and the resized clone is a view of that memory with the new strides, so element i of the result
// (row-major) is the clone's element at the position the new strides give i. Every layout the
// harness makes of self gives a clone whose memory order is row-major (a contiguous copy, or a
// transposed one whose last two dims include a 1), except a transposed self whose last two dims
// are both longer than 1: those samples keep self's shape (where resize_ changes nothing), as the
// layouts oracle transposes every sample. Where the storage grows, the elements past self's are
// uninitialized in ATen and here (Note [Growing a storage] in core/tensor.cc):
// OpInfo::specified_elements leaves them unjudged (only contiguous results grow in the samples,
// so those are a row-major tail).
//
// Error codes: every refusal here is a RuntimeError in PyTorch: TSR_INVALID_ARGUMENT.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "conformance/op_db.h"
#include "conformance/op_db_helpers.h"

namespace tessera {
namespace conformance {
namespace {

using Shape = std::vector<int64_t>;

// MemoryFormat values as the stack carries them (c10::MemoryFormat).
constexpr int64_t kContiguousFormat = 0, kPreserveFormat = 1, kChannelsLast = 2,
                  kChannelsLast3d = 3;

int64_t NumelOf(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// StridesFor: c10's contiguous strides (a size-0 or size-1 dim counts as 1) or, for channels
// last, get_channels_last_strides_2d/3d (raw sizes: channel innermost, then the spatial dims from
// the last, then the batch).
Shape StridesFor(const Shape& size, std::optional<int64_t> format) {
  const size_t nd = size.size();
  Shape strides(nd, 1);
  if (format == kChannelsLast || format == kChannelsLast3d) {
    strides[1] = 1;
    strides[nd - 1] = size[1];
    for (size_t d = nd - 1; d-- > 2;) strides[d] = strides[d + 1] * size[d + 1];
    strides[0] = strides[2] * size[2];
    return strides;
  }
  for (size_t d = nd; d-- > 1;) strides[d - 1] = strides[d] * std::max<int64_t>(size[d], 1);
  return strides;
}

std::optional<int64_t> FormatArg(const Sample& s, size_t i) {
  if (i < s.args.size() && s.args[i].kind == Arg::Kind::kInt) return s.args[i].integer;
  return std::nullopt;
}

// ResizedClone: clone(self).resize_(size, memory_format=format) for a self whose clone is laid out
// row-major (see the head of the file). Elements past self's are left 0: never judged
// (specified_elements).
HostTensor ResizedClone(const HostTensor& self, const Shape& size, std::optional<int64_t> format) {
  HostTensor out;
  out.dtype = self.dtype;
  out.shape = size;
  // Same sizes, no memory format: nothing changes.
  if (!format && size == self.shape) return self;
  const Shape strides = StridesFor(size, format);
  const int64_t n = NumelOf(size), old = self.numel();
  out.values.assign(static_cast<size_t>(n), 0.0);
  for (int64_t f = 0; f < n; ++f) {
    const Shape index = Unravel(f, size);
    int64_t position = 0;
    for (size_t d = 0; d < size.size(); ++d) position += index[d] * strides[d];
    if (position < old) out.values[f] = self.values[position];
  }
  return out;
}

// Grown: how many leading elements of the result hold self's (the rest were never written) for a
// sample whose result has more elements than self; -1 (all) otherwise.
int64_t Grown(const HostTensor& self, const Shape& size) {
  return NumelOf(size) > self.numel() ? self.numel() : -1;
}

struct ResizeCase {
  Shape self, size;
  std::optional<int64_t> format;
  std::string note;
};

// The cases of both ops (resize_as_'s template has `size`). Self shapes whose last two dims are
// both longer than 1 keep their shape (see the head of the file).
const std::vector<ResizeCase>& Cases() {
  static const std::vector<ResizeCase> cases = {
      // sample_inputs_resize_ops: ((S, S, S), (S * S, S)) with self [S * S, 1, S] instead (its
      // transposed layout keeps row-major order), ((), ()), ((), (1, 1, 1)).
      {{25, 1, 5}, {25, 5}, std::nullopt, " (the same numel)"},
      {{}, {}, std::nullopt, " (0-dim, unchanged)"},
      {{}, {1, 1, 1}, std::nullopt, " (0-dim to 3-D)"},
      {{3, 4}, {3, 4}, std::nullopt, " (unchanged: strides kept)"},
      {{7}, {2, 3}, std::nullopt, " (shrinks)"},
      {{2, 1, 6}, {5}, std::nullopt, " (shrinks)"},
      {{4}, {3, 3}, std::nullopt, " (grows)"},
      {{2, 3, 1}, {4, 5}, std::nullopt, " (grows)"},
      {{3}, {0}, std::nullopt, " (to empty)"},
      {{0}, {2, 2}, std::nullopt, " (grows from empty)"},
      {{2, 0}, {0, 3}, std::nullopt, " (empty to empty)"},
      {{6, 1}, {2, 3}, kContiguousFormat, " contiguous_format"},
      {{2, 1, 3}, {2, 1, 3}, kContiguousFormat, " contiguous_format (unchanged)"},
      {{24}, {2, 3, 2, 2}, kChannelsLast, " channels_last"},
      {{30}, {1, 3, 2, 4}, kChannelsLast, " channels_last (shrinks)"},
      {{2, 3, 1, 4}, {2, 3, 1, 4}, kChannelsLast, " channels_last (restrided)"},
      {{0}, {2, 0, 3, 1}, kChannelsLast, " channels_last (empty)"},
      {{24}, {1, 3, 2, 2, 2}, kChannelsLast3d, " channels_last_3d"},
  };
  return cases;
}

Arg FormatOrNone(std::optional<int64_t> format) { return format ? Arg::Int(*format) : Arg::None(); }

void AddResize(std::vector<OpInfo>& db) {
  OpInfo op;
  op.name = "resize";
  op.out = "resize.out";
  op.inplace = "resize_";
  op.dtypes = kAllMask;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    for (const ResizeCase& c : Cases()) {
      std::vector<Arg> args = {Arg::Tensor(MakeTensor(c.self, dtype, rng)), Arg::Ints(c.size)};
      if (c.format) args.push_back(Arg::Int(*c.format));
      s.push_back({std::move(args), ShapeString(c.self) + " size " + ShapeString(c.size) + c.note});
    }
    // memory_format None given explicitly.
    s.push_back({{Arg::Tensor(MakeTensor({10, 1}, dtype, rng)), Arg::Ints({3, 3}), Arg::None()},
                 "[10, 1] size [3, 3] memory_format None"});
    return s;
  };
  op.reference = [](const Sample& s) {
    return std::vector<HostTensor>{ResizedClone(s.args[0].tensor, s.args[1].ints, FormatArg(s, 2))};
  };
  op.specified_elements = [](const Sample& s) { return Grown(s.args[0].tensor, s.args[1].ints); };
  op.errors = [](Rng& rng) {
    auto self = [&rng] { return Arg::Tensor(MakeTensor({2, 3}, TSR_DTYPE_FLOAT32, rng)); };
    const std::string overflow = "numel: integer multiplication overflow";
    return std::vector<ErrorInput>{
        RefusedSaying({self(), Arg::Ints({2, -1})}, TSR_INVALID_ARGUMENT, overflow),
        RefusedSaying({self(), Arg::Ints({-3})}, TSR_INVALID_ARGUMENT, overflow),
        // ATen accepts a negative size beside a 0 (its numel check reads sizes unsigned), and
        // gives a tensor of size [0, -1]; refused here.
        RefusedSaying({self(), Arg::Ints({0, -1})}, TSR_INVALID_ARGUMENT, overflow),
        RefusedSaying({self(), Arg::Ints({int64_t{1} << 62, 4})}, TSR_INVALID_ARGUMENT, overflow),
        // 2^61 float32 elements are 2^63 bytes.
        RefusedSaying({self(), Arg::Ints({int64_t{1} << 61})}, TSR_INVALID_ARGUMENT,
                      "Storage size calculation overflowed with sizes=[2305843009213693952]"),
        RefusedSaying({self(), Arg::Ints({2, 3}), Arg::Int(kPreserveFormat)}, TSR_INVALID_ARGUMENT,
                      "Unsupported memory formatPreserve"),
        RefusedSaying({self(), Arg::Ints({2, 3, 4}), Arg::Int(kChannelsLast)}, TSR_INVALID_ARGUMENT,
                      "required rank 4 tensor to use channels_last format"),
        RefusedSaying({self(), Arg::Ints({2, 3, 4, 5}), Arg::Int(kChannelsLast3d)},
                      TSR_INVALID_ARGUMENT,
                      "required rank 5 tensor to use channels_last_3d format"),
    };
  };
  db.push_back(std::move(op));
}

void AddResizeAs(std::vector<OpInfo>& db) {
  OpInfo op;
  op.name = "resize_as";
  op.out = "resize_as.out";
  op.inplace = "resize_as_";
  op.dtypes = kAllMask;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    // sample_inputs_resize_ops for resize_as_: a template of self's own shape.
    for (const Shape& shape : {Shape{5, 5, 5}, Shape{}}) {
      s.push_back(
          {{Arg::Tensor(MakeTensor(shape, dtype, rng)), Arg::Tensor(MakeTensor(shape, dtype, rng))},
           ShapeString(shape) + " like " + ShapeString(shape)});
    }
    for (const ResizeCase& c : Cases()) {
      std::vector<Arg> args = {Arg::Tensor(MakeTensor(c.self, dtype, rng)),
                               Arg::Tensor(MakeTensor(c.size, dtype, rng))};
      if (c.format) args.push_back(Arg::Int(*c.format));
      s.push_back({std::move(args), ShapeString(c.self) + " like " + ShapeString(c.size) + c.note});
    }
    // The template's dtype does not matter, only its sizes (and strides, for Preserve).
    s.push_back({{Arg::Tensor(MakeTensor({7}, dtype, rng)),
                  Arg::Tensor(MakeTensor({2, 3}, TSR_DTYPE_INT64, rng))},
                 "[7] like int64[2, 3]"});
    s.push_back({{Arg::Tensor(MakeTensor({4}, dtype, rng)),
                  Arg::Tensor(MakeTensor({2, 3}, TSR_DTYPE_BOOL, rng)), FormatOrNone(std::nullopt)},
                 "[4] like bool[2, 3] memory_format None (grows)"});
    // Preserve: the template's suggested format, contiguous for every layout the harness makes.
    s.push_back({{Arg::Tensor(MakeTensor({30}, dtype, rng)),
                  Arg::Tensor(MakeTensor({2, 3, 1, 4}, dtype, rng)), Arg::Int(kPreserveFormat)},
                 "[30] like [2, 3, 1, 4] preserve_format"});
    return s;
  };
  op.reference = [](const Sample& s) {
    std::optional<int64_t> format = FormatArg(s, 2);
    if (format == kPreserveFormat) format = kContiguousFormat;  // see the Preserve sample
    return std::vector<HostTensor>{ResizedClone(s.args[0].tensor, s.args[1].tensor.shape, format)};
  };
  op.specified_elements = [](const Sample& s) {
    return Grown(s.args[0].tensor, s.args[1].tensor.shape);
  };
  op.errors = [](Rng& rng) {
    auto t = [&rng](Shape shape) {
      return Arg::Tensor(MakeTensor(std::move(shape), TSR_DTYPE_FLOAT32, rng));
    };
    return std::vector<ErrorInput>{
        RefusedSaying({t({2, 3}), t({2, 3, 4}), Arg::Int(kChannelsLast)}, TSR_INVALID_ARGUMENT,
                      "required rank 4 tensor to use channels_last format"),
        RefusedSaying({t({2, 3}), t({2, 3, 4, 5}), Arg::Int(kChannelsLast3d)}, TSR_INVALID_ARGUMENT,
                      "required rank 5 tensor to use channels_last_3d format"),
    };
  };
  db.push_back(std::move(op));
}

}  // namespace

void AddResizeOps(std::vector<OpInfo>& db) {
  AddResize(db);
  AddResizeAs(db);
}

}  // namespace conformance
}  // namespace tessera
