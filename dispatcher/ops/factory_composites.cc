// Op set 1.8's fills and factories that ATen writes over others, defined the same way so every
// backend has them: fill (a new tensor like self, filled; fill_.Tensor, a 0-dim value copied
// into self, cast as copy_ casts, with no sync to read it), scalar_tensor (full of shape [],
// float32 unless a dtype is given, whatever the Scalar's kind), logspace (as ATen's CPU kernel
// computes it, below), and new_empty / new_zeros / new_ones / new_full
// (self's dtype and device unless given); op set 1.9's copy (the functional copy_),
// tril_indices and triu_indices.
#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>

#include "absl/strings/str_format.h"
#include "core/dtype.h"
#include "core/half.h"
#include "core/host_copy.h"
#include "core/scalar.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {
namespace {

using Out = absl::StatusOr<std::vector<Tensor>>;

// fill.Scalar(self, value)
absl::StatusOr<Tensor> FillScalarOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Tensor out, EmptyOf(r, s[0].tensor(), s[0].tensor().sizes()));
  return CallOne(r, "fill_.Scalar", {Value(out), s[1]});
}

// `value` of fill.Tensor: one element, 0-dim (ATen's rule).
absl::Status CheckFillValue(const OperatorHandle& op, const Tensor& value) {
  if (value.dim() == 0) return absl::OkStatus();
  return Invalid(op, absl::StrFormat("fill_ only supports 0-dimension value tensor but got tensor "
                                     "with %d dimensions",
                                     value.dim()));
}

// fill_.Tensor(self, value): value broadcast over self by copy_, which casts it to self's dtype.
absl::StatusOr<Tensor> FillInto(const OperatorHandle& op, const Tensor& self, const Tensor& value) {
  TSR_RETURN_IF_ERROR(CheckFillValue(op, value));
  if (self.numel() == 0) return self;
  Tensor source = value;
  if (value.IsSameStorage(self)) {  // x.fill_(x[2]): a copy first, as ATen's fill_ makes one
    TSR_ASSIGN_OR_RETURN(source, CallOne(op.registry(), "clone", {value, Value(std::nullopt)}));
  }
  TSR_ASSIGN_OR_RETURN(Tensor spread, Expand(source, self.sizes()));
  return CallOne(op.registry(), "copy_", {self, spread});
}

Out FillInplaceTensorK(const OperatorHandle& op, const Stack& s) {
  return One(FillInto(op, s[0].tensor(), s[1].tensor()));
}

// fill.Tensor(self, value)
absl::StatusOr<Tensor> FillTensorOf(const OperatorHandle& op, const Stack& s) {
  TSR_RETURN_IF_ERROR(CheckFillValue(op, s[1].tensor()));
  TSR_ASSIGN_OR_RETURN(Tensor out, EmptyOf(op.registry(), s[0].tensor(), s[0].tensor().sizes()));
  return FillInto(op, out, s[1].tensor());
}

// scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None): full of [],
// float32 by default (the default dtype, not the Scalar's).
Out ScalarTensorK(const OperatorHandle& op, const Stack& s) {
  const Value dtype = s[1].is_none() ? Value(ScalarType::kFloat32) : s[1];
  return One(CallOne(op.registry(), "full", {Value(IntList{}), s[0], dtype, s[2], s[3], s[4]}));
}

// scalar_tensor.out(s, *, out): out resized to [] and filled.
Out ScalarTensorOutK(const OperatorHandle& op, const Stack& s) {
  return One(CallOne(op.registry(), "full.out", {Value(IntList{}), s[0], s[1]}));
}

// InDtype: `v` as `dtype` holds it (checked: a value the dtype cannot hold is refused, as ATen's
// Scalar::to), back as a double: truncated for the integral dtypes, rounded for the floating.
absl::StatusOr<double> InDtype(const OperatorHandle& op, const Scalar& v, ScalarType dtype,
                               const char* arg) {
  TSR_RETURN_IF_ERROR(CheckScalarFits(v, dtype, op.name(), arg));
  switch (dtype) {
    case ScalarType::kFloat64:
      return v.to_double();
    case ScalarType::kFloat32:
      return static_cast<double>(static_cast<float>(v.to_double()));
    case ScalarType::kFloat16:
      return static_cast<double>(static_cast<float>(Half(static_cast<float>(v.to_double()))));
    case ScalarType::kBFloat16:
      return static_cast<double>(static_cast<float>(BFloat16(static_cast<float>(v.to_double()))));
    default:
      return static_cast<double>(v.to_int());
  }
}

// logspace(start, end, steps, base=10, *, dtype, ...), as ATen's CPU kernel computes it: one
// step is base ** start, converted (checked) to the dtype; with more, start and end are first
// converted to the dtype and their difference rounded there, element i is
// base ** (start + step * i) in the first half and base ** (end - step * (steps - 1 - i)) in the
// second, in float64 (base as a float32 for the integral dtypes), then cast to the dtype.
absl::StatusOr<Tensor> Logspace(const OperatorHandle& op, const Scalar& start, const Scalar& end,
                                int64_t steps, double base, ScalarType dtype, const Value& device) {
  OpRegistry& r = op.registry();
  if (steps < 0) return Invalid(op, "number of steps must be non-negative");
  const Value no_layout = Value(std::nullopt);
  if (steps <= 1) {
    const Scalar value = Scalar(std::pow(base, start.to_double()));
    if (steps == 1) TSR_RETURN_IF_ERROR(CheckScalarFits(value, dtype, op.name(), "base ** start"));
    return CallOne(r, "full",
                   {Value(IntList{steps}), Value(value), Value(dtype), no_layout, device});
  }
  if (dtype == ScalarType::kBool) {
    return absl::UnimplementedError(
        absl::StrFormat("%s: not implemented for dtype bool with more than one step", op.name()));
  }
  TSR_ASSIGN_OR_RETURN(const double from, InDtype(op, start, dtype, "start"));
  TSR_ASSIGN_OR_RETURN(const double to, InDtype(op, end, dtype, "end"));
  double difference = to - from;
  if (IsFloatingType(dtype)) {
    TSR_ASSIGN_OR_RETURN(difference, InDtype(op, Scalar(difference), dtype, "end - start"));
  }
  const double step = difference / static_cast<double>(steps - 1);
  const double power_base =
      IsFloatingType(dtype) ? base : static_cast<double>(static_cast<float>(base));
  // The exponents in one float64 buffer, each half computed in place: the first
  // from + step * i, the second to + step * (i - (steps - 1)), as ATen's kernel writes them.
  const Value f64 = Value(ScalarType::kFloat64);
  TSR_ASSIGN_OR_RETURN(Tensor exponents,
                       CallOne(r, "arange", {Value(Scalar(steps)), f64, no_layout, device}));
  const int64_t half = steps / 2;
  auto in_place = [&](const char* name, const Tensor& t, double v) -> absl::Status {
    Stack args{Value(t), Value(Scalar(v))};
    if (std::string_view(name) == "add_.Scalar") args.push_back(Value(Scalar(int64_t{1})));
    return CallOne(r, name, std::move(args)).status();
  };
  TSR_ASSIGN_OR_RETURN(Tensor first, Narrow(exponents, 0, 0, half));
  TSR_RETURN_IF_ERROR(in_place("mul_.Scalar", first, step));
  TSR_RETURN_IF_ERROR(in_place("add_.Scalar", first, from));
  TSR_ASSIGN_OR_RETURN(Tensor second, Narrow(exponents, 0, half, steps - half));
  TSR_RETURN_IF_ERROR(in_place("add_.Scalar", second, -static_cast<double>(steps - 1)));
  TSR_RETURN_IF_ERROR(in_place("mul_.Scalar", second, step));
  TSR_RETURN_IF_ERROR(in_place("add_.Scalar", second, to));
  TSR_ASSIGN_OR_RETURN(Tensor powers,
                       CallOne(r, "pow.Scalar", {Value(Scalar(power_base)), Value(exponents)}));
  exponents = Tensor();  // freed before the cast's buffer is made
  if (dtype == ScalarType::kFloat64) return powers;
  return CallOne(r, "_to_copy", {Value(powers), Value(dtype)});
}

absl::StatusOr<Tensor> LogspaceOf(const OperatorHandle& op, const Stack& s) {
  const ScalarType dtype = s[4].is_none() ? ScalarType::kFloat32 : s[4].scalar_type();
  return Logspace(op, s[0].scalar(), s[1].scalar(), s[2].to_int(), s[3].to_double(), dtype, s[6]);
}

// logspace.out(start, end, steps, base=10, *, out): computed in out's dtype, on its device.
Out LogspaceOutK(const OperatorHandle& op, const Stack& s) {
  const Tensor& out = s[4].tensor();
  TSR_ASSIGN_OR_RETURN(Tensor result, Logspace(op, s[0].scalar(), s[1].scalar(), s[2].to_int(),
                                               s[3].to_double(), out.dtype(), Value(out.device())));
  TSR_RETURN_IF_ERROR(CopyIntoOut(op, 4, result, out, /*castable=*/false));
  return std::vector<Tensor>{out};
}

// new_empty / new_zeros / new_ones (self, size, *, dtype, layout, device, pin_memory) and
// new_full (self, size, fill_value, *, ...): the factory `factory`, with self's dtype and device
// where the call gives none.
enum class NewFill { kEmpty, kZeros, kOnes, kFull };

template <NewFill kFill>
Out NewK(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  constexpr bool kFull = kFill == NewFill::kFull;
  const size_t options = kFull ? 3 : 2;  // where dtype is (new_full has fill_value before it)
  const Value dtype = s[options].is_none() ? Value(self.dtype()) : s[options];
  const Value device = s[options + 2].is_none() ? Value(self.device()) : s[options + 2];
  Stack args{s[1]};
  if constexpr (kFull) args.push_back(s[2]);
  args.insert(args.end(), {dtype, s[options + 1], device, s[options + 3]});
  const char* factory = kFill == NewFill::kEmpty   ? "empty.memory_format"
                        : kFill == NewFill::kZeros ? "zeros"
                        : kFill == NewFill::kOnes  ? "ones"
                                                   : "full";
  return One(CallOne(op.registry(), factory, std::move(args)));
}

// copy(self, src, non_blocking=False): the functional copy_, a clone of self (its layout kept)
// with src copied in (broadcast, cast, from any device), as ATen's.
absl::StatusOr<Tensor> CopyOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Tensor out, CallOne(r, "clone", {s[0], Value(std::nullopt)}));
  TSR_RETURN_IF_ERROR(CallOne(r, "copy_", {Value(out), s[1], s[2]}).status());
  return out;
}

// tril_indices / triu_indices(row, col, offset=0, *, dtype=long, layout, device, pin_memory):
// the coordinates of a row x col matrix's lower (j <= i + offset) or upper (j >= i + offset)
// triangle, [2, N] in row-major order: computed on the host, in chunks, and copied to the
// device. N comes from a closed form first, so the tensor is allocated (or refused) before any
// host loop, and the loops visit only rows that hold coordinates.

// LowerCount: sum over rows i < row of clamp(i + a, 0, col), the coordinates of rows with
// j < i + a (wide: row * col may exceed int64 before the check).
__int128 LowerCount(int64_t row, int64_t col, int64_t a) {
  const __int128 first = std::clamp<__int128>(__int128{1} - a, 0, row);       // i + a >= 1
  const __int128 full = std::clamp<__int128>(__int128{col} - a, first, row);  // i + a >= col
  const __int128 middle = (full - first) * a + (first + full - 1) * (full - first) / 2;
  return middle + (row - full) * col;
}

template <bool kUpper>
absl::StatusOr<Tensor> TriangleIndicesOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const int64_t row = s[0].to_int(), col = s[1].to_int(), offset = s[2].to_int();
  if (row < 0) return Invalid(op, absl::StrFormat("row must be non-negative, got %d", row));
  if (col < 0) return Invalid(op, absl::StrFormat("col must be non-negative, got %d", col));
  const ScalarType dtype = s[3].is_none() ? ScalarType::kInt64 : s[3].scalar_type();
  if (dtype != ScalarType::kInt64 && dtype != ScalarType::kInt32) {
    return absl::UnimplementedError(
        absl::StrFormat("%s: not implemented for dtype %s (expected int64 or int32)", op.name(),
                        ScalarTypeName(dtype)));
  }
  // Lower: j < i + offset + 1. Upper: the rest of the matrix, i.e. not j < i + offset.
  const __int128 wide =
      kUpper ? __int128{row} * col - LowerCount(row, col, offset)
             : LowerCount(row, col, offset + __int128{1} > INT64_MAX ? INT64_MAX : offset + 1);
  if (wide > INT64_MAX / 2) {
    return Invalid(
        op, absl::StrFormat("a %d x %d triangle has too many coordinates for int64", row, col));
  }
  const int64_t n = static_cast<int64_t>(wide);
  const Device device = s[5].is_none() ? Device(DeviceType::kCPU) : s[5].device();
  TSR_ASSIGN_OR_RETURN(Tensor flat, CallOne(r, "empty.memory_format",
                                            {Value(IntList{2 * n}), Value(ScalarType::kInt64),
                                             Value(), Value(device)}));
  // Rows holding coordinates: lower i >= -offset; upper i < col - offset.
  constexpr int64_t kChunk = int64_t{1} << 20;
  std::vector<int64_t> rows, cols;
  int64_t written = 0;
  auto flush = [&]() -> absl::Status {
    if (rows.empty()) return absl::OkStatus();
    const int64_t len = rows.size();
    TSR_ASSIGN_OR_RETURN(Tensor row_part, Narrow(flat, 0, written, len));
    TSR_ASSIGN_OR_RETURN(Tensor col_part, Narrow(flat, 0, n + written, len));
    TSR_RETURN_IF_ERROR(CopyHostToTensor(rows.data(), row_part));
    TSR_RETURN_IF_ERROR(CopyHostToTensor(cols.data(), col_part));
    written += len;
    rows.clear();
    cols.clear();
    return absl::OkStatus();
  };
  const bool values = device.type != DeviceType::kMeta;  // a meta tensor is a shape only
  // -offset in 128 bits: an offset of INT64_MIN has no 64-bit negation.
  const int64_t first_row =
      kUpper ? 0 : static_cast<int64_t>(std::clamp<__int128>(-__int128{offset}, 0, row));
  for (int64_t i = first_row; values && i < row && written + static_cast<int64_t>(rows.size()) < n;
       ++i) {
    // [begin, end): this row's columns.
    const __int128 diagonal = __int128{i} + offset;
    const int64_t begin = kUpper ? static_cast<int64_t>(std::clamp<__int128>(diagonal, 0, col)) : 0;
    const int64_t end =
        kUpper ? col : static_cast<int64_t>(std::clamp<__int128>(diagonal + 1, 0, col));
    for (int64_t j = begin; j < end; ++j) {
      rows.push_back(i);
      cols.push_back(j);
      if (static_cast<int64_t>(rows.size()) == kChunk) TSR_RETURN_IF_ERROR(flush());
    }
  }
  TSR_RETURN_IF_ERROR(flush());
  TSR_ASSIGN_OR_RETURN(Tensor indices, View(flat, {2, n}));
  if (dtype == ScalarType::kInt64) return indices;
  return CallOne(r, "_to_copy", {Value(indices), Value(dtype)});
}

}  // namespace

absl::Status DefineFactoryComposites(OpRegistry& registry) {
  const std::string opts =
      "*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None";
  const std::string texts[] = {
      "scalar_tensor(Scalar s, " + opts + ") -> Tensor",
      "logspace(Scalar start, Scalar end, int steps, float base=10., " + opts + ") -> Tensor",
      "new_empty(Tensor self, SymInt[] size, " + opts + ") -> Tensor",
      "new_zeros(Tensor self, SymInt[] size, " + opts + ") -> Tensor",
      "new_ones(Tensor self, SymInt[] size, " + opts + ") -> Tensor",
      "new_full(Tensor self, SymInt[] size, Scalar fill_value, " + opts + ") -> Tensor",
      "tril_indices(int row, int col, int offset=0, *, ScalarType? dtype=long, Layout? "
      "layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
      "triu_indices(int row, int col, int offset=0, *, ScalarType? dtype=long, Layout? "
      "layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
  };
  TSR_RETURN_IF_ERROR(DefineAll(
      registry,
      {
          {"fill.Scalar(Tensor self, Scalar value) -> Tensor",
           MakeKernel<Named<ComputeOne<FillScalarOf>>>("core::fill")},
          {"fill.Scalar_out(Tensor self, Scalar value, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<FillScalarOf, 2>>>("core::fill_out")},
          {"fill.Tensor(Tensor self, Tensor value) -> Tensor",
           MakeKernel<Named<ComputeOne<FillTensorOf>>>("core::fill")},
          {"fill.Tensor_out(Tensor self, Tensor value, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<FillTensorOf, 2>>>("core::fill_out")},
          {"fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)",
           MakeKernel<Named<FillInplaceTensorK>>("core::fill_")},
          {texts[0].c_str(), MakeKernel<Named<ScalarTensorK>>("core::scalar_tensor")},
          {"scalar_tensor.out(Scalar s, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ScalarTensorOutK>>("core::scalar_tensor_out")},
          {texts[1].c_str(), MakeKernel<Named<ComputeOne<LogspaceOf>>>("core::logspace")},
          {"logspace.out(Scalar start, Scalar end, int steps, float base=10., *, Tensor(a!) out) "
           "-> Tensor(a!)",
           MakeKernel<Named<LogspaceOutK>>("core::logspace_out")},
          {texts[2].c_str(), MakeKernel<Named<NewK<NewFill::kEmpty>>>("core::new_empty")},
          {texts[3].c_str(), MakeKernel<Named<NewK<NewFill::kZeros>>>("core::new_zeros")},
          {texts[4].c_str(), MakeKernel<Named<NewK<NewFill::kOnes>>>("core::new_ones")},
          {texts[5].c_str(), MakeKernel<Named<NewK<NewFill::kFull>>>("core::new_full")},
          {"copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor",
           MakeKernel<Named<ComputeOne<CopyOf>>>("core::copy")},
          {"copy.out(Tensor self, Tensor src, bool non_blocking=False, *, Tensor(a!) out) -> "
           "Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<CopyOf, 3, /*kCastable=*/true>>>("core::copy_out")},
          {texts[6].c_str(),
           MakeKernel<Named<ComputeOne<TriangleIndicesOf<false>>>>("core::tril_indices")},
          {texts[7].c_str(),
           MakeKernel<Named<ComputeOne<TriangleIndicesOf<true>>>>("core::triu_indices")},
      },
      KernelSlot::kComposite));
  // fill_.Tensor reads its value (copying it when it is an element of self) before it writes.
  return registry.SetOutputAliasing("fill_.Tensor", OutputAliasing::kReadsFirst);
}

}  // namespace ops
}  // namespace tessera
