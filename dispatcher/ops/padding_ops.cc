// Op set 1.9's padding and pixel-shuffle ops, composites every backend gets without a kernel:
// reflection_pad{1,2,3}d and replication_pad{1,2,3}d (one index_select per padded dim, with an
// index vector computed on self's device from an arange), pad (ATen's PadNd.cpp: the mode picks
// constant_pad_nd, the reflection or replication op, or circular padding as narrow + cat), and
// pixel_shuffle and pixel_unshuffle (reshape, permute and a contiguous copy, as ATen's math
// composites in PixelShuffle.cpp). Checks and messages are current PyTorch's (Padding.h,
// PadNd.cpp, PixelShuffle.h); where PyTorch 1.13 differs, the comment says so. Errors name the
// op called.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "core/shape.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"
#include "dispatcher/ops/padding_support.h"

namespace tessera {
namespace ops {
namespace {

// PadShape: ATen's padding::pad_shape_check for an op that pads the last `dims` dims: self is
// (dims + 1)-D, or (dims + 2)-D with a batch dim first that alone may be empty; a reflection
// pads by less than the dim's size on each side; every padded size ends up at least 1. Returns
// the output's shape.
//
// PyTorch 1.13 differs: it allowed a 0-channel non-batch input to reflection_pad1d, refused a
// padding list of the wrong length only in some ops, accepted an empty padded dim in the 2-D and
// 3-D ops (it checked that *some* output size is >= 1), and some messages lacked a space or
// printed the rank in place of the sizes.
absl::StatusOr<DimVector> PadShape(const OperatorHandle& op, const Tensor& self, const IntList& pad,
                                   int64_t dims, PadKind kind) {
  TSR_RETURN_IF_ERROR(CheckPadLength(op, pad, dims));
  const int64_t nd = self.dim();
  const IntArrayRef sizes = self.sizes();
  const bool batch = nd == dims + 2;
  bool valid = batch || nd == dims + 1;
  for (int64_t d = batch ? 1 : 0; valid && d < nd; ++d) valid = sizes[d] != 0;
  if (!valid) {
    return Invalid(op, absl::StrFormat("Expected %dD or %dD (batch mode) tensor with possibly 0 "
                                       "batch size and other non-zero dimensions for input, but "
                                       "got: %s",
                                       dims + 1, dims + 2, ShapeToString(sizes)));
  }
  if (kind == PadKind::kReflect) TSR_RETURN_IF_ERROR(CheckReflectPadding(op, sizes, pad, dims));
  DimVector shape(sizes.begin(), sizes.end());
  bool valid_output = true;
  for (int64_t i = 0; i < dims; ++i) {
    const int64_t d = nd - 1 - i;
    TSR_ASSIGN_OR_RETURN(shape[d], PaddedSize(op, sizes[d], PairOf(pad, i), d));
    valid_output = valid_output && shape[d] >= 1;
  }
  if (!valid_output) {
    const int64_t* in = sizes.data() + nd - dims;
    const int64_t* out = shape.data() + nd - dims;
    if (dims == 1) {
      return Invalid(op, absl::StrFormat("input (W: %d) is too small. Calculated output W: %d",
                                         in[0], out[0]));
    }
    if (dims == 2) {
      return Invalid(op, absl::StrFormat("Calculated output H: %d W: %d must be >= 1 in every "
                                         "dimension (input H: %d, W: %d)",
                                         out[0], out[1], in[0], in[1]));
    }
    return Invalid(op, absl::StrFormat("Calculated output D: %d H: %d W: %d must be >= 1 in every "
                                       "dimension (input D: %d, H: %d, W: %d)",
                                       out[0], out[1], out[2], in[0], in[1], in[2]));
  }
  return shape;
}

// ReflectOrReplicate: reflection_pad{dims}d or replication_pad{dims}d of self: one index_select
// per padded dim.
absl::StatusOr<Tensor> ReflectOrReplicate(const OperatorHandle& op, const Tensor& self,
                                          const IntList& pad, int64_t dims, PadKind kind) {
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(const DimVector shape, PadShape(op, self, pad, dims, kind));
  // Current PyTorch's CPU kernels take every dtype but bool (1.13's only the floating ones, and
  // 16-bit floats only in reflection_pad3d).
  if (self.dtype() == ScalarType::kBool) {
    return absl::UnimplementedError(absl::StrFormat("%s: not implemented for dtype %s", op.name(),
                                                    ScalarTypeName(self.dtype())));
  }
  if (self.numel() == 0) return EmptyOf(r, self, shape);  // an empty batch: nothing to read
  Tensor out = self;
  for (int64_t i = 0; i < dims; ++i) {
    const PadPair p = PairOf(pad, i);
    if (p.before == 0 && p.after == 0) continue;
    const int64_t d = self.dim() - 1 - i;
    TSR_ASSIGN_OR_RETURN(Tensor index, PadIndex(op, self.sizes()[d], d, p, kind, self.device()));
    TSR_ASSIGN_OR_RETURN(out, CallOne(r, "index_select", {Value(out), Value(d), Value(index)}));
  }
  // No padding at all: a new tensor all the same, as ATen's kernels write one.
  if (out.impl() == self.impl()) return CallOne(r, "clone", {Value(self), kMemoryFormatContiguous});
  return out;
}

template <int64_t kDims, PadKind kKind>
absl::StatusOr<Tensor> PadNdOf(const OperatorHandle& op, const Stack& s) {
  return ReflectOrReplicate(op, s[0].tensor(), s[1].int_list(), kDims, kKind);
}

// CircularPad: ATen's _pad_circular: self's last pad.size() / 2 dims padded by wrapping around,
// after 1 or 2 dims kept as they are. A negative padding crops first, and the wrap then reads the
// cropped dim (ATen copies from the already-written core of the output).
//
// ATen checks only that each padding is at most the dim's size; a wrap longer than the cropped
// dim then reads its own output (PyTorch raises "unsupported operation: some elements of the
// input tensor and the written-to tensor refer to a single memory location" where it detects the
// overlap, and returns uninitialized memory where it does not). Both are refused here, with the
// message of ATen's own wrap check. An empty output is returned as it is (ATen returns it too,
// except where a crop past the dim's end trips its slicing into a size mismatch).
absl::StatusOr<Tensor> CircularPad(const OperatorHandle& op, const Tensor& self,
                                   const IntList& pad) {
  OpRegistry& r = op.registry();
  const int64_t nd = self.dim(), padded = static_cast<int64_t>(pad.size() / 2);
  const int64_t kept = nd - padded;
  if (kept != 1 && kept != 2) {
    return Invalid(op, absl::StrFormat("Invalid padding size, expected 1 or 2 non-padded "
                                       "dimensions, which would be equivalent to padding of length "
                                       "%d or %d respectively but got %d",
                                       (nd - 1) * 2, (nd - 2) * 2, pad.size()));
  }
  const IntArrayRef sizes = self.sizes();
  DimVector shape(sizes.begin(), sizes.end());
  for (int64_t d = kept; d < nd; ++d) {
    const PadPair p = PairOf(pad, nd - 1 - d);
    TSR_ASSIGN_OR_RETURN(shape[d], PaddedSize(op, sizes[d], p, d));
    if (p.before > sizes[d] || p.after > sizes[d]) {
      return Invalid(op, "Padding value causes wrapping around more than once.");
    }
    if (shape[d] < 0) {
      return Invalid(op, "Negative padding value is resulting in an empty dimension");
    }
  }
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return EmptyOf(r, self, shape);
  Tensor core = self;  // self cropped by the negative paddings
  for (int64_t d = kept; d < nd; ++d) {
    const PadPair p = PairOf(pad, nd - 1 - d);
    const int64_t crop_before = std::max<int64_t>(-p.before, 0);
    const int64_t left = sizes[d] - crop_before - std::max<int64_t>(-p.after, 0);
    if ((p.before > 0 && p.before > left) || (p.after > 0 && p.after > left)) {
      return Invalid(op, absl::StrFormat("Padding value causes wrapping around more than once. "
                                         "(padding (%d, %d) of dimension %d wraps around the %d "
                                         "elements its negative padding leaves)",
                                         p.before, p.after, d, std::max<int64_t>(left, 0)));
    }
    TSR_ASSIGN_OR_RETURN(core, Narrow(core, d, crop_before, left));
  }
  Tensor out = core;
  bool wrapped = false;
  for (int64_t d = kept; d < nd; ++d) {
    const PadPair p = PairOf(pad, nd - 1 - d);
    if (p.before <= 0 && p.after <= 0) continue;
    // Along d: the last `before` elements, all of them, then the first `after`. `out` is already
    // padded along the dims before d, so the corners come out right.
    const int64_t len = out.sizes()[d];
    std::vector<Tensor> parts;
    if (p.before > 0) {
      TSR_ASSIGN_OR_RETURN(Tensor tail, Narrow(out, d, len - p.before, p.before));
      parts.push_back(tail);
    }
    parts.push_back(out);
    if (p.after > 0) {
      TSR_ASSIGN_OR_RETURN(Tensor head, Narrow(out, d, 0, p.after));
      parts.push_back(head);
    }
    TSR_ASSIGN_OR_RETURN(out, CallOne(r, "cat", {Value(std::move(parts)), Value(d)}));
    wrapped = true;
  }
  if (!wrapped) return CallOne(r, "clone", {Value(core), kMemoryFormatContiguous});
  return out;
}

// pad(self, pad, mode="constant", value=None): ATen's pad and _pad_enum.
//
// PyTorch raises NotImplementedError for an unknown mode and for a non-constant padding of dims
// it has no op for: UNIMPLEMENTED here, as other refusals PyTorch makes with that error.
absl::StatusOr<Tensor> PadOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  const IntList& pad = s[1].int_list();
  const std::string& mode = s[2].string();
  const std::optional<double> value =
      s[3].is_none() ? std::nullopt : std::optional<double>(s[3].to_double());
  if (mode != "constant" && mode != "reflect" && mode != "replicate" && mode != "circular") {
    return absl::UnimplementedError(
        absl::StrFormat("%s: Unrecognised padding mode %s", op.name(), mode));
  }
  const int64_t nd = self.dim();
  if (pad.size() % 2 != 0) return Invalid(op, "Padding length must be divisible by 2");
  if (static_cast<int64_t>(pad.size()) > nd * 2) {
    // 1.13's message was "Padding length too large".
    return Invalid(op, absl::StrFormat("Padding length should be less than or equal to two times "
                                       "the input dimension but got padding length %d and input "
                                       "of dimension %d",
                                       pad.size(), nd));
  }
  if (mode == "constant") {
    return CallOne(r, "constant_pad_nd", {s[0], s[1], Value(Scalar(value.value_or(0.0)))});
  }
  if (value && *value != 0) {
    return Invalid(op, absl::StrFormat("Padding mode \"%s\" doesn't take in value argument", mode));
  }
  const int64_t padded = static_cast<int64_t>(pad.size() / 2);
  if (padded >= 1 && padded <= 3 && (nd == padded + 1 || nd == padded + 2)) {
    if (mode == "circular") return CircularPad(op, self, pad);
    const std::string name =
        absl::StrFormat("%s_pad%dd", mode == "reflect" ? "reflection" : "replication", padded);
    return CallOne(r, name, {s[0], s[1]});
  }
  return absl::UnimplementedError(absl::StrFormat(
      "%s: Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now",
      op.name()));
}

// Shuffled: `self` reshaped to `split`, its dims permuted by `perm`, copied contiguously and
// viewed as `shape`: a new tensor, never a view of self (ATen's math composites clone too).
absl::StatusOr<Tensor> Shuffled(OpRegistry& r, const Tensor& self, DimVector split,
                                IntArrayRef perm, IntArrayRef shape) {
  TSR_ASSIGN_OR_RETURN(
      Tensor t, CallOne(r, "reshape", {Value(self), Value(IntList(split.begin(), split.end()))}));
  TSR_ASSIGN_OR_RETURN(t, Permute(t, perm));
  TSR_ASSIGN_OR_RETURN(t, CallOne(r, "clone", {Value(t), kMemoryFormatContiguous}));
  return View(t, shape);
}

// BatchPermutation: the identity over self's batch dims (all but its last 3), then `tail`
// (dims counted from the first after the batch).
DimVector BatchPermutation(int64_t batch, std::initializer_list<int64_t> tail) {
  DimVector perm;
  for (int64_t d = 0; d < batch; ++d) perm.push_back(d);
  for (int64_t t : tail) perm.push_back(batch + t);
  return perm;
}

// pixel_shuffle(self, upscale_factor): [..., c * f * f, h, w] -> [..., c, h * f, w * f], channel
// c * f * f + i * f + j going to row h * f + i, column w * f + j.
absl::StatusOr<Tensor> PixelShuffleOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  const int64_t f = s[1].to_int();
  if (self.dim() < 3) {
    return Invalid(op, absl::StrFormat("pixel_shuffle expects input to have at least 3 dimensions, "
                                       "but got input with %d dimension(s)",
                                       self.dim()));
  }
  if (f <= 0) {
    return Invalid(
        op, absl::StrFormat("pixel_shuffle expects a positive upscale_factor, but got %d", f));
  }
  int64_t squared = 0;
  // Current PyTorch's check (its message as it spells it); 1.13 divided by the wrapped square.
  if (__builtin_mul_overflow(f, f, &squared)) {
    return Invalid(op,
                   absl::StrFormat("upscale factor is too large, (upscale_factor}^2 overflowed: "
                                   "upscale_factor=%d",
                                   f));
  }
  const int64_t batch = self.dim() - 3;
  const int64_t c = self.sizes()[batch], h = self.sizes()[batch + 1], w = self.sizes()[batch + 2];
  if (c % squared != 0) {
    return Invalid(op, absl::StrFormat("pixel_shuffle expects its input's 'channel' dimension to "
                                       "be divisible by the square of upscale_factor, but "
                                       "input.size(-3)=%d is not divisible by %d",
                                       c, squared));
  }
  TSR_ASSIGN_OR_RETURN(const int64_t oh, CheckedMul(h, f, op.name(), "the output height"));
  TSR_ASSIGN_OR_RETURN(const int64_t ow, CheckedMul(w, f, op.name(), "the output width"));
  DimVector split(self.sizes().begin(), self.sizes().begin() + batch);
  DimVector shape = split;
  split.insert(split.end(), {c / squared, f, f, h, w});
  shape.insert(shape.end(), {c / squared, oh, ow});
  // [oc, f_h, f_w, h, w] -> [oc, h, f_h, w, f_w]
  return Shuffled(op.registry(), self, std::move(split), BatchPermutation(batch, {0, 3, 1, 4, 2}),
                  shape);
}

// pixel_unshuffle(self, downscale_factor): the inverse, [..., c, h * f, w * f] ->
// [..., c * f * f, h, w]. An empty self gets that shape too, as from ATen's math composite, its
// meta function and its CUDA kernel (its CPU kernel returns a copy of self as it is, a known
// divergence: pytorch/pytorch#192816).
absl::StatusOr<Tensor> PixelUnshuffleOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  const int64_t f = s[1].to_int();
  if (self.dim() < 3) {
    return Invalid(op, absl::StrFormat("pixel_unshuffle expects input to have at least 3 "
                                       "dimensions, but got input with %d dimension(s)",
                                       self.dim()));
  }
  if (f <= 0) {
    return Invalid(
        op, absl::StrFormat("pixel_unshuffle expects a positive downscale_factor, but got %d", f));
  }
  const int64_t batch = self.dim() - 3;
  const int64_t c = self.sizes()[batch], h = self.sizes()[batch + 1], w = self.sizes()[batch + 2];
  if (h % f != 0) {
    return Invalid(op, absl::StrFormat("pixel_unshuffle expects height to be divisible by "
                                       "downscale_factor, but input.size(-2)=%d is not divisible "
                                       "by %d",
                                       h, f));
  }
  if (w % f != 0) {
    return Invalid(op, absl::StrFormat("pixel_unshuffle expects width to be divisible by "
                                       "downscale_factor, but input.size(-1)=%d is not divisible "
                                       "by %d",
                                       w, f));
  }
  // ATen does not check this product; an empty channel dim stays empty whatever the factor.
  int64_t oc = 0;
  if (c != 0 && (__builtin_mul_overflow(c, f, &oc) || __builtin_mul_overflow(oc, f, &oc))) {
    return Invalid(op,
                   absl::StrFormat("the output's channels, %d * %d * %d, overflow int64", c, f, f));
  }
  DimVector split(self.sizes().begin(), self.sizes().begin() + batch);
  DimVector shape = split;
  split.insert(split.end(), {c, h / f, f, w / f, f});
  shape.insert(shape.end(), {oc, h / f, w / f});
  // [c, oh, f_h, ow, f_w] -> [c, f_h, f_w, oh, ow]
  return Shuffled(op.registry(), self, std::move(split), BatchPermutation(batch, {0, 2, 4, 1, 3}),
                  shape);
}

}  // namespace

absl::Status DefinePaddingOps(OpRegistry& registry) {
  constexpr PadKind kReflect = PadKind::kReflect, kReplicate = PadKind::kReplicate;
  return DefineAll(
      registry,
      {
          {"reflection_pad1d(Tensor self, SymInt[2] padding) -> Tensor",
           MakeKernel<Named<ComputeOne<PadNdOf<1, kReflect>>>>("core::reflection_pad1d")},
          {"reflection_pad1d.out(Tensor self, SymInt[2] padding, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<PadNdOf<1, kReflect>, 2>>>(
               "core::reflection_pad1d_out")},
          {"reflection_pad2d(Tensor self, SymInt[4] padding) -> Tensor",
           MakeKernel<Named<ComputeOne<PadNdOf<2, kReflect>>>>("core::reflection_pad2d")},
          {"reflection_pad2d.out(Tensor self, SymInt[4] padding, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<PadNdOf<2, kReflect>, 2>>>(
               "core::reflection_pad2d_out")},
          {"reflection_pad3d(Tensor self, SymInt[6] padding) -> Tensor",
           MakeKernel<Named<ComputeOne<PadNdOf<3, kReflect>>>>("core::reflection_pad3d")},
          {"reflection_pad3d.out(Tensor self, SymInt[6] padding, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<PadNdOf<3, kReflect>, 2>>>(
               "core::reflection_pad3d_out")},
          {"replication_pad1d(Tensor self, SymInt[2] padding) -> Tensor",
           MakeKernel<Named<ComputeOne<PadNdOf<1, kReplicate>>>>("core::replication_pad1d")},
          {"replication_pad1d.out(Tensor self, SymInt[2] padding, *, Tensor(a!) out) -> "
           "Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<PadNdOf<1, kReplicate>, 2>>>(
               "core::replication_pad1d_out")},
          {"replication_pad2d(Tensor self, SymInt[4] padding) -> Tensor",
           MakeKernel<Named<ComputeOne<PadNdOf<2, kReplicate>>>>("core::replication_pad2d")},
          {"replication_pad2d.out(Tensor self, SymInt[4] padding, *, Tensor(a!) out) -> "
           "Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<PadNdOf<2, kReplicate>, 2>>>(
               "core::replication_pad2d_out")},
          {"replication_pad3d(Tensor self, SymInt[6] padding) -> Tensor",
           MakeKernel<Named<ComputeOne<PadNdOf<3, kReplicate>>>>("core::replication_pad3d")},
          {"replication_pad3d.out(Tensor self, SymInt[6] padding, *, Tensor(a!) out) -> "
           "Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<PadNdOf<3, kReplicate>, 2>>>(
               "core::replication_pad3d_out")},
          {"pad(Tensor self, SymInt[] pad, str mode=\"constant\", float? value=None) -> Tensor",
           MakeKernel<Named<ComputeOne<PadOf>>>("core::pad")},
          // pixel_shuffle.out is ATen's generated out= form, which copy_s the result into out:
          // out may have any dtype the result casts to.
          {"pixel_shuffle(Tensor self, int upscale_factor) -> Tensor",
           MakeKernel<Named<ComputeOne<PixelShuffleOf>>>("core::pixel_shuffle")},
          {"pixel_shuffle.out(Tensor self, int upscale_factor, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<PixelShuffleOf, 2, /*kCastable=*/true>>>(
               "core::pixel_shuffle_out")},
          {"pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor",
           MakeKernel<Named<ComputeOne<PixelUnshuffleOf>>>("core::pixel_unshuffle")},
          {"pixel_unshuffle.out(Tensor self, int downscale_factor, *, Tensor(a!) out) -> "
           "Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<PixelUnshuffleOf, 2, /*kCastable=*/true>>>(
               "core::pixel_unshuffle_out")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera
