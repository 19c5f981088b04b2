// The backward ops of reflection and replication padding of op set 1.10
// (dispatcher/ops/padding_backward_ops.cc): reflection_pad{1,2,3}d_backward and
// replication_pad{1,2,3}d_backward, each with its .grad_input form.
//
// After current PyTorch's ReflectionPad.cpp, ReplicationPadding.cpp (their checks and messages)
// and cpu/PaddingKernel.cpp (which element of self each output position reads; the backward
// kernels add each grad_output element there), with the samples of the nn.functional.pad OpInfos
// (reflect, replicate, replicate_negative), whose gradients are what these ops compute. The
// reference walks grad_output and adds each element into the element of self the forward read:
// per padded dim, output position j reads self's j - before (relative to the uncropped self),
// reflected at self's edges (-i before the first, 2 (n - 1) - i past the last) or clamped to
// them; a negative padding crops, its positions starting inside self.
//
// Floating dtypes (current ATen's backward kernels; the 16-bit ones are added up in float32 here
// and rounded once). PyTorch 1.13 (what /usr/bin/python3 runs) differs: its CPU kernels take
// float32 and float64 only, and some of its messages differ from current ATen's, which these
// follow. Error codes: PyTorch's RuntimeError is TSR_INVALID_ARGUMENT; a dtype the kernels
// do not take is TSR_UNIMPLEMENTED.
#include <algorithm>
#include <cmath>
#include <cstdint>
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

enum class Mode { kReflect, kReplicate };

// SourceOf: the position of a dim of self of size n, padded by `before`, that output position j
// reads.
int64_t SourceOf(Mode mode, int64_t n, int64_t before, int64_t j) {
  const int64_t i = j - before;
  if (mode == Mode::kReplicate) return std::clamp<int64_t>(i, 0, n - 1);
  if (i < 0) return -i;
  if (i > n - 1) return 2 * (n - 1) - i;
  return i;
}

Shape PaddedShape(const Shape& self, const Shape& pad) {
  Shape out = self;
  for (size_t p = 0; p < pad.size() / 2; ++p) {
    out[self.size() - 1 - p] += pad[2 * p] + pad[2 * p + 1];
  }
  return out;
}

// PadBackward: grad (of the padded shape) added into zeros of self's shape where the forward
// read each of its elements.
HostTensor PadBackward(const HostTensor& grad, const HostTensor& self, const Shape& pad,
                       Mode mode) {
  std::vector<long double> acc(static_cast<size_t>(self.numel()), 0);
  const size_t nd = self.shape.size(), dims = pad.size() / 2;
  for (int64_t f = 0; f < grad.numel(); ++f) {
    Shape at = Unravel(f, grad.shape);
    for (size_t p = 0; p < dims; ++p) {
      const size_t d = nd - 1 - p;
      at[d] = SourceOf(mode, self.shape[d], pad[2 * p], at[d]);
    }
    acc[static_cast<size_t>(Ravel(at, self.shape))] += grad.values[static_cast<size_t>(f)];
  }
  return FromLong(self.shape, self.dtype, acc);
}

struct PadCase {
  Shape shape, pad;
  std::string note;
};

// The cases for an op padding `dims` dims: batched and non-batch selves, asymmetric and zero
// paddings, the largest a reflection takes (size - 1), negative paddings (a crop), and an empty
// batch.
std::vector<PadCase> PadCases(int64_t dims) {
  if (dims == 1) {
    return {{{2, 3, 5}, {1, 2}, ""},
            {{3, 5}, {2, 0}, " (non-batch)"},
            {{1, 2, 4}, {3, 3}, " (padding size - 1)"},
            {{2, 6}, {-1, 2}, " (negative padding)"},
            {{1, 1, 5}, {0, 0}, " (no padding)"},
            {{0, 2, 4}, {1, 1}, " (empty batch)"}};
  }
  if (dims == 2) {
    return {{{2, 2, 3, 4}, {1, 2, 2, 1}, ""},
            {{2, 4, 3}, {0, 2, 1, 0}, " (non-batch)"},
            {{1, 1, 3, 3}, {2, 2, 2, 2}, " (padding size - 1)"},
            {{1, 2, 4, 5}, {-1, 2, 1, -2}, " (negative padding)"},
            {{0, 1, 3, 3}, {1, 1, 1, 1}, " (empty batch)"}};
  }
  return {{{1, 2, 2, 3, 4}, {1, 2, 1, 0, 1, 1}, ""},
          {{2, 3, 3, 2}, {1, 1, 0, 2, 2, 1}, " (non-batch)"},
          {{1, 1, 3, 3, 3}, {2, 2, 2, 2, 2, 2}, " (padding size - 1)"},
          {{1, 1, 4, 3, 4}, {-1, 2, 1, 1, 2, -1}, " (negative padding)"},
          {{0, 1, 2, 2, 2}, {1, 1, 1, 1, 1, 1}, " (empty batch)"}};
}

HostTensor F64(Shape shape, Rng& rng) {
  MakeOptions range;
  range.low = -4;
  range.high = 4;
  return MakeTensor(std::move(shape), TSR_DTYPE_FLOAT64, rng, range);
}

// The messages of each op's size check of grad_output, as ATen spells them.
std::string WidthMessage(int64_t dims, Mode mode, int64_t expected, int64_t got) {
  const bool underscore = mode == Mode::kReflect && dims != 2;
  const bool comma = !(mode == Mode::kReplicate && dims == 1);
  return std::string(underscore ? "grad_output" : "gradOutput") +
         " width unexpected. Expected: " + std::to_string(expected) + (comma ? ", " : " ") +
         "Got: " + std::to_string(got);
}

void AddPadBackward(std::vector<OpInfo>& db, int64_t dims, Mode mode) {
  const std::string forward = std::string(mode == Mode::kReflect ? "reflection" : "replication") +
                              "_pad" + std::to_string(dims) + "d";
  OpInfo op;
  op.name = forward + "_backward";
  op.out = op.name + ".grad_input";
  op.dtypes = kFloatingMask;
  op.samples = [dims](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> samples;
    for (const PadCase& c : PadCases(dims)) {
      const HostTensor self = MakeTensor(c.shape, dtype, rng);
      samples.push_back(Described({Arg::Tensor(MakeTensor(PaddedShape(c.shape, c.pad), dtype, rng)),
                                   Arg::Tensor(self), Arg::Ints(c.pad)},
                                  c.note));
    }
    return samples;
  };
  op.reference = [mode](const Sample& s) {
    return std::vector<HostTensor>{
        PadBackward(s.args[0].tensor, s.args[1].tensor, s.args[2].ints, mode)};
  };
  op.errors = [dims, mode](Rng& rng) {
    const Shape self_shape = dims == 1   ? Shape{2, 4}
                             : dims == 2 ? Shape{2, 4, 4}
                                         : Shape{1, 4, 4, 4};
    const HostTensor self = MakeTensor(self_shape, TSR_DTYPE_FLOAT32, rng);
    const Shape pad(static_cast<size_t>(2 * dims), 1);
    const Shape out = PaddedShape(self_shape, pad);
    Shape wide = out;
    wide.back() += 1;
    HostTensor long_self = self, long_grad = MakeTensor(out, TSR_DTYPE_FLOAT32, rng);
    long_self.dtype = long_grad.dtype = TSR_DTYPE_INT64;
    for (double& v : long_self.values) v = std::round(v);
    for (double& v : long_grad.values) v = std::round(v);
    Shape short_pad = pad;
    short_pad.pop_back();
    Shape big_pad = pad;
    big_pad[0] = 4;
    Shape other_batch = out;
    other_batch[0] += 1;
    std::vector<ErrorInput> errors{
        RefusedSaying({Arg::Tensor(MakeTensor(wide, TSR_DTYPE_FLOAT32, rng)), Arg::Tensor(self),
                       Arg::Ints(pad)},
                      TSR_INVALID_ARGUMENT, WidthMessage(dims, mode, out.back(), wide.back())),
        RefusedSaying({Arg::Tensor(MakeTensor(out, TSR_DTYPE_FLOAT32, rng)), Arg::Tensor(self),
                       Arg::Ints(short_pad)},
                      TSR_INVALID_ARGUMENT,
                      "padding size is expected to be " + std::to_string(2 * dims)),
        RefusedSaying({Arg::Tensor(long_grad), Arg::Tensor(long_self), Arg::Ints(pad)},
                      TSR_UNIMPLEMENTED, "not implemented for dtype int64"),
        RefusedSaying({Arg::Tensor(MakeTensor(out, TSR_DTYPE_FLOAT64, rng)), Arg::Tensor(self),
                       Arg::Ints(pad)},
                      TSR_INVALID_ARGUMENT, "expected scalar type float32 but found float64"),
        RefusedSaying({Arg::Tensor(MakeTensor(other_batch, TSR_DTYPE_FLOAT32, rng)),
                       Arg::Tensor(self), Arg::Ints(pad)},
                      TSR_INVALID_ARGUMENT,
                      "expected grad_output of shape " + ShapeString(out) +
                          " (the padded self), got " + ShapeString(other_batch)),
        RefusedSaying({Arg::Tensor(MakeTensor({4}, TSR_DTYPE_FLOAT32, rng)),
                       Arg::Tensor(MakeTensor({4}, TSR_DTYPE_FLOAT32, rng)), Arg::Ints(pad)},
                      TSR_INVALID_ARGUMENT, "(batch mode) tensor for self"),
    };
    if (mode == Mode::kReflect) {
      errors.push_back(RefusedSaying(
          {Arg::Tensor(MakeTensor(PaddedShape(self_shape, big_pad), TSR_DTYPE_FLOAT32, rng)),
           Arg::Tensor(self), Arg::Ints(big_pad)},
          TSR_INVALID_ARGUMENT,
          "Argument #4: Padding size should be less than the corresponding "
          "input dimension, but got: padding (4, 1) at dimension " +
              std::to_string(self_shape.size() - 1)));
    }
    if (dims >= 2) {
      Shape tall = out;
      tall[tall.size() - 2] += 1;
      const bool underscore = mode == Mode::kReflect && dims != 2;
      errors.push_back(
          RefusedSaying({Arg::Tensor(MakeTensor(tall, TSR_DTYPE_FLOAT32, rng)), Arg::Tensor(self),
                         Arg::Ints(pad)},
                        TSR_INVALID_ARGUMENT,
                        std::string(underscore ? "grad_output" : "gradOutput") +
                            " height unexpected. Expected: " + std::to_string(out[out.size() - 2]) +
                            ", Got: " + std::to_string(tall[tall.size() - 2])));
    }
    return errors;
  };
  GradientSpec spec;
  spec.forward = forward;
  spec.samples = [dims](Rng& rng) {
    std::vector<Sample> samples;
    const std::vector<PadCase> cases = PadCases(dims);
    for (size_t i : {size_t{0}, size_t{1}, size_t{3}}) {  // batched, non-batch, negative
      samples.push_back(Described({Arg::Tensor(F64(cases[i].shape, rng)), Arg::Ints(cases[i].pad)},
                                  cases[i].note));
    }
    return samples;
  };
  spec.wrt = {0};
  spec.backward_args = [](const Sample& s, const std::vector<HostTensor>&, const HostTensor& g) {
    return Args{Arg::Tensor(g), s.args[0], s.args[1]};
  };
  op.gradient = std::move(spec);
  db.push_back(std::move(op));
}

}  // namespace

void AddPaddingBackwardOps(std::vector<OpInfo>& db) {
  for (const Mode mode : {Mode::kReflect, Mode::kReplicate}) {
    for (int64_t dims = 1; dims <= 3; ++dims) AddPadBackward(db, dims, mode);
  }
}

}  // namespace conformance
}  // namespace tessera
