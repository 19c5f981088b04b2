// Fill and factory ops of op set 1.8: fill (a Scalar or a 0-dim Tensor value), scalar_tensor,
// logspace, and new_empty, new_zeros, new_ones, new_full (composites,
// dispatcher/ops/factory_composites.cc).
//
// After ATen's Fill.cpp (fill, fill_), TensorFactories.cpp (scalar_tensor, logspace, new_*) and
// RangeFactories.cpp (logspace_out), with the samples and error inputs of their OpInfos
// (sample_inputs_fill_, sample_inputs_scalar_tensor, sample_inputs_logspace,
// sample_inputs_new_fns, sample_inputs_new_full). Factories make their result on the device under
// test (Arg::Device()), as op_db_index.cc's do; the new_* ops without a device argument make it on
// self's device, which is the same one.
//
// Note [Checked fill values]: a Scalar written into a tensor goes through Scalar::to<T>, which
// refuses a value the dtype cannot hold (c10::overflows), even when the tensor is empty: a
// fraction truncates into an integer dtype, a negative int down to -255 wraps into uint8 but a
// negative double does not, anything goes into bool, infinities go into floating dtypes, NaN
// into no integer one. fill.Scalar, scalar_tensor, new_full, and logspace's bounds (and its
// single step) all go through it: their samples stay inside the rule and their error inputs
// step outside it. fill.Tensor with the value on self's device is self.copy_(value) in current
// PyTorch (a plain cast, no check) but value.item() and the check in 1.13, so its samples keep to
// values on which both agree.
//
// new_empty's values are unspecified, and the suite has no way to compare a return's dtype and
// shape alone: its samples ask for zero-element results, whose dtype and shape the oracles check
// with no value to compare.
//
// Error codes: every refusal here is a RuntimeError in PyTorch: TSR_INVALID_ARGUMENT.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "conformance/op_db.h"

namespace tessera {
namespace conformance {
namespace {

using Shape = std::vector<int64_t>;

OpInfo Entry(const std::string& name, const std::string& out, const std::string& inplace,
             DtypeMask dtypes) {
  OpInfo op;
  op.name = name;
  op.out = out;
  op.inplace = inplace;
  op.dtypes = dtypes;
  return op;
}

// FillValue: a value of `dtype`'s own kind that it holds, as the OpInfos make one per dtype.
Arg FillValue(tsr_dtype dtype) {
  return dtype == TSR_DTYPE_BOOL ? Arg::ScalarBool(true)
         : IsFloating(dtype)     ? Arg::ScalarDouble(-2.5)
                                 : Arg::ScalarInt(3);
}

// ConvertedValues: values of other kinds that `dtype` still holds (Note [Checked fill values]).
std::vector<Arg> ConvertedValues(tsr_dtype dtype) {
  if (dtype == TSR_DTYPE_BOOL) {
    return {Arg::ScalarDouble(0.5), Arg::ScalarInt(0), Arg::ScalarInt(-7), Arg::ScalarDouble(NAN)};
  }
  if (dtype == TSR_DTYPE_UINT8) {
    return {Arg::ScalarDouble(2.7), Arg::ScalarInt(-1), Arg::ScalarInt(-255),
            Arg::ScalarBool(true)};
  }
  if (IsIntegral(dtype, false)) {
    return {Arg::ScalarDouble(2.7), Arg::ScalarDouble(-2.7), Arg::ScalarBool(true)};
  }
  return {Arg::ScalarInt(-3), Arg::ScalarBool(true), Arg::ScalarDouble(1.0 / 3),
          Arg::ScalarDouble(-INFINITY), Arg::ScalarDouble(NAN)};
}

// Overflowing: values Scalar::to refuses for the dtype beside them.
std::vector<std::pair<tsr_dtype, Arg>> Overflowing() {
  return {
      {TSR_DTYPE_INT8, Arg::ScalarInt(300)},      {TSR_DTYPE_UINT8, Arg::ScalarDouble(-1)},
      {TSR_DTYPE_UINT8, Arg::ScalarInt(-256)},    {TSR_DTYPE_INT16, Arg::ScalarDouble(NAN)},
      {TSR_DTYPE_FLOAT16, Arg::ScalarInt(70000)}, {TSR_DTYPE_FLOAT32, Arg::ScalarDouble(3.5e38)}};
}

std::string Describe(tsr_dtype dtype, const Shape& shape, const Arg& value) {
  return std::string(DtypeName(dtype)) + ShapeString(shape) + " value " + value.ToString();
}

// OverflowMessage: the part of the checked conversion's refusal (core/scalar.cc) naming `dtype`.
std::string OverflowMessage(tsr_dtype dtype) {
  return std::string("cannot be converted to ") + DtypeName(dtype) + " without overflow";
}

// Bound: a logspace bound as PyTorch's OpInfo passes it: an int where it is whole, else a double.
Arg Bound(double v) {
  return v == std::trunc(v) ? Arg::ScalarInt(static_cast<int64_t>(v)) : Arg::ScalarDouble(v);
}

// WithOptions: `args` then a factory's keyword options: dtype (None: the op's default), layout
// None, and the device under test or None (self's device, for the new_* ops).
std::vector<Arg> WithOptions(std::vector<Arg> args, const Arg& dtype, bool on_device = true) {
  args.push_back(dtype);
  args.push_back(Arg::None());
  args.push_back(on_device ? Arg::Device() : Arg::None());
  return args;
}

// DtypeAt: the dtype argument at `i`, or `fallback` where it is None or left to its default.
tsr_dtype DtypeAt(const Sample& s, size_t i, tsr_dtype fallback) {
  return i < s.args.size() && s.args[i].kind == Arg::Kind::kDtype ? s.args[i].dtype : fallback;
}

void AddFillOps(std::vector<OpInfo>& db) {
  {
    // fill.Scalar: empty_like(self).fill_(value), in self's dtype (never the value's).
    OpInfo op = Entry("fill.Scalar", "fill.Scalar_out", "fill_.Scalar", kAllMask);
    op.elementwise = true;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      for (const Shape& shape : UnaryShapes()) {
        s.push_back(
            {{Arg::Tensor(MakeTensor(shape, dtype, rng)), FillValue(dtype)}, ShapeString(shape)});
      }
      for (const Arg& value : ConvertedValues(dtype)) {
        s.push_back({{Arg::Tensor(MakeTensor({4, 3}, dtype, rng)), value},
                     "[4, 3] value " + value.ToString()});
      }
      return s;
    };
    op.reference = [](const Sample& s) {
      const HostTensor& self = s.args[0].tensor;
      return std::vector<HostTensor>{Full(self.shape, self.dtype, s.args[1].number)};
    };
    op.errors = [](Rng& rng) {
      std::vector<ErrorInput> e;
      for (const auto& [dtype, value] : Overflowing()) {
        for (const Shape& shape : {Shape{3}, Shape{0}}) {
          e.push_back(
              {{{Arg::Tensor(MakeTensor(shape, dtype, rng)), value}, Describe(dtype, shape, value)},
               TSR_INVALID_ARGUMENT,
               "a value self's dtype cannot hold",
               "argument 'value' (" + value.ToString() + ") " + OverflowMessage(dtype)});
        }
      }
      return e;
    };
    db.push_back(std::move(op));
  }
  {
    // fill.Tensor: the value must be 0-dim (Fill.cpp checks value.dim() == 0, so neither [1] nor
    // an empty [0] will do), of any dtype: it is cast to self's.
    OpInfo op = Entry("fill.Tensor", "fill.Tensor_out", "fill_.Tensor", kAllMask);
    op.elementwise = true;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      for (const Shape& shape : UnaryShapes()) {
        s.push_back(
            {{Arg::Tensor(MakeTensor(shape, dtype, rng)), Arg::Tensor(MakeTensor({}, dtype, rng))},
             ShapeString(shape)});
      }
      // Values of other dtypes that every dtype holds (Note [Checked fill values]): -3 wraps
      // into uint8 either way.
      for (const auto& [value, desc] : std::vector<std::pair<HostTensor, std::string>>{
               {Full({}, TSR_DTYPE_FLOAT64, 2.75), "float64 2.75"},
               {Full({}, TSR_DTYPE_INT64, -3), "int64 -3"},
               {Full({}, TSR_DTYPE_BOOL, 1), "bool true"},
               {Full({}, TSR_DTYPE_FLOAT32, 0.5), "float32 0.5"}}) {
        s.push_back({{Arg::Tensor(MakeTensor({4, 3}, dtype, rng)), Arg::Tensor(value)},
                     "[4, 3] value " + desc});
      }
      return s;
    };
    op.reference = [](const Sample& s) {
      const HostTensor& self = s.args[0].tensor;
      return std::vector<HostTensor>{Full(self.shape, self.dtype, s.args[1].tensor.values[0])};
    };
    op.errors = [](Rng& rng) {
      std::vector<ErrorInput> e;
      for (const auto& [self, value] : std::vector<std::pair<Shape, Shape>>{
               {{3}, {1}}, {{3}, {1, 1}}, {{3}, {0}}, {{0}, {2}}, {{}, {1}}}) {
        e.push_back({{{Arg::Tensor(MakeTensor(self, TSR_DTYPE_FLOAT32, rng)),
                       Arg::Tensor(MakeTensor(value, TSR_DTYPE_FLOAT32, rng))},
                      ShapeString(self) + " value " + ShapeString(value)},
                     TSR_INVALID_ARGUMENT,
                     "a value tensor that is not 0-dim",
                     "fill_ only supports 0-dimension value tensor"});
      }
      return e;
    };
    db.push_back(std::move(op));
  }
}

// scalar_tensor(s, *, dtype, layout, device, pin_memory): empty({}).fill_(s). Without a dtype it
// is the default dtype, float32, whatever the Scalar's kind (unlike full, which infers int64 or
// bool from it). Its out= form takes (s, out) alone, not the functional's options, so the out=
// oracle cannot call it.
void AddScalarTensor(std::vector<OpInfo>& db) {
  OpInfo op = Entry("scalar_tensor", "", "", kAllMask);
  op.samples = [](tsr_dtype dtype, Rng&) {
    std::vector<Sample> s;
    // The OpInfo's values; -5 wraps into uint8 (251).
    std::vector<Arg> values = {Arg::ScalarInt(-5), Arg::ScalarInt(0), Arg::ScalarInt(1),
                               FillValue(dtype)};
    for (const Arg& v : ConvertedValues(dtype)) values.push_back(v);
    for (const Arg& v : values) {
      s.push_back({WithOptions({v}, Arg::Dtype(dtype)), v.ToString() + " " + DtypeName(dtype)});
    }
    if (dtype == TSR_DTYPE_FLOAT32) {
      for (const Arg& v : {Arg::ScalarInt(3), Arg::ScalarBool(true), Arg::ScalarDouble(0.1)})
        s.push_back({WithOptions({v}, Arg::None()), v.ToString() + ", dtype None"});
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    return std::vector<HostTensor>{Full({}, DtypeAt(s, 1, TSR_DTYPE_FLOAT32), s.args[0].number)};
  };
  op.errors = [](Rng&) {
    std::vector<ErrorInput> e;
    for (const auto& [dtype, value] : Overflowing()) {
      e.push_back({{WithOptions({value}, Arg::Dtype(dtype)), Describe(dtype, {}, value)},
                   TSR_INVALID_ARGUMENT,
                   "a value the dtype cannot hold",
                   OverflowMessage(dtype)});
    }
    // float32 by default: a double that float32 cannot hold is refused.
    e.push_back({{WithOptions({Arg::ScalarDouble(1e39)}, Arg::None()), "1e39, dtype None"},
                 TSR_INVALID_ARGUMENT,
                 "a value the default dtype (float32) cannot hold",
                 OverflowMessage(TSR_DTYPE_FLOAT32)});
    return e;
  };
  db.push_back(std::move(op));
}

// Note [logspace's arithmetic]: RangeFactories.cpp's logspace_out on the CPU, for real dtypes:
// - 0 steps: nothing is computed and nothing converted.
// - 1 step: fill_(pow(base, start)), start as a double: not converted to the dtype first (an
//   integer dtype truncates the power, not start: pytorch/pytorch#82242), and the power goes
//   through the checked fill (Note [Checked fill values]).
// - more: start and end converted to the dtype by Scalar::to (checked: a fraction truncates into
//   an integer dtype), their difference taken in the dtype's arithmetic (float16 and bfloat16
//   round it to themselves, float32 to float; integers are exact), then in double
//   step = diff / (steps - 1) and element i = pow(base, start + step * i) for the first half,
//   pow(base, end - step * (steps - 1 - i)) for the rest, cast to the dtype (truncation for
//   integers, unchecked).
HostTensor LogspaceReference(const Sample& s) {
  const double start = s.args[0].number, end = s.args[1].number, base = s.args[3].number;
  const int64_t n = s.args[2].integer;
  const tsr_dtype dtype = DtypeAt(s, 4, TSR_DTYPE_FLOAT32);
  HostTensor out = Full({n}, dtype, 0);
  if (n == 1) out.values[0] = RoundTo(dtype, std::pow(base, start));
  if (n <= 1) return out;
  const bool integral = IsIntegral(dtype, true);
  const double a = RoundTo(dtype, integral ? std::trunc(start) : start);
  const double b = RoundTo(dtype, integral ? std::trunc(end) : end);
  const double diff = integral ? b - a : RoundTo(dtype, b - a);
  const double step = diff / static_cast<double>(n - 1);
  for (int64_t i = 0; i < n; ++i) {
    const double exponent =
        i < n / 2 ? a + step * static_cast<double>(i) : b - step * static_cast<double>(n - 1 - i);
    out.values[static_cast<size_t>(i)] = RoundTo(dtype, std::pow(base, exponent));
  }
  return out;
}

// logspace(start, end, steps, base=10., *, dtype, layout, device, pin_memory): the numeric
// dtypes (the CPU kernel dispatches all types with float16 and bfloat16; bool only passes with 0
// or 1 step, which never reach the dispatch). Its out= form takes no options: the out= oracle
// cannot call it.
void AddLogspace(std::vector<OpInfo>& db) {
  OpInfo op = Entry("logspace", "", "", kNumericMask);
  op.samples = [](tsr_dtype dtype, Rng&) {
    auto steps = [&](double start, double end, int64_t n, double base, const std::string& desc,
                     const Arg& dt) {
      return Sample{WithOptions({Bound(start), Bound(end), Arg::Int(n), Arg::Double(base)}, dt),
                    desc};
    };
    const Arg dt = Arg::Dtype(dtype);
    // The first sample has several steps, so bool (the dtype claims oracle) is refused.
    std::vector<Sample> s = {
        steps(0, 3, 4, 2, "[0, 3] in 4, base 2", dt),
        // Integer dtypes truncate the bounds first: [0, 2] in 3, base 4 is 1, 4, 16.
        steps(0.5, 2.5, 3, 4, "fractional bounds", dt),
        // One step is pow(base, start) with start as given: 4^0.5 = 2 in every dtype.
        steps(0.5, 9, 1, 4, "1 step, fractional start", dt),
        // One step converts no bound, so -1 is fine even for uint8 (2^-1 truncates to 0); 0
        // steps convert nothing.
        steps(-1, 2, 1, 2, "1 step, start -1", dt),
        steps(-1, 300, 0, 2, "0 steps, bounds outside the dtype", dt),
        // Exponents 0, 0.5, ..., 2: the odd ones truncate to 1 and 2 for integer dtypes.
        steps(0, 2, 5, 2, "half-integer exponents", dt), steps(3, 0, 4, 2, "descending", dt),
        steps(0, 2, 3, 10, "base 10 (the default)", dt), steps(0, 4, 3, 1.1, "base 1.1", dt),
        // Integer dtypes: [4, 0] with step -4/3: 81, 18, 4, 1.
        steps(4.3, 0, 4, 3, "fractional start, descending, base 3", dt)};
    // Not uint8: a negative double bound is refused there, a negative int one wraps to a huge
    // exponent, and a negative power's cast to it is undefined.
    if (dtype != TSR_DTYPE_UINT8) {
      s.push_back(steps(2, -1, 4, 2, "negative end", dt));
      s.push_back(steps(-2, 1.2, 5, 2, "negative fractional start", dt));
      s.push_back(steps(0, 3, 4, -2, "negative base, integer exponents", dt));
    }
    // 2^62: exact in int64 and double; inf in float16 (the cast is not checked with several
    // steps). The narrower integers cannot hold it (their cast is undefined).
    if (dtype == TSR_DTYPE_INT64 || IsFloating(dtype)) {
      s.push_back(steps(0, 62, 2, 2, "[1, 2^62]", dt));
    }
    if (dtype == TSR_DTYPE_FLOAT32) s.push_back(steps(0, 2, 3, 10, "dtype None", Arg::None()));
    return s;
  };
  op.reference = [](const Sample& s) { return std::vector<HostTensor>{LogspaceReference(s)}; };
  op.errors = [](Rng&) {
    auto call = [](const Arg& start, const Arg& end, int64_t n, double base, tsr_dtype dtype,
                   const std::string& desc, const std::string& what, const std::string& message) {
      return ErrorInput{
          {WithOptions({start, end, Arg::Int(n), Arg::Double(base)}, Arg::Dtype(dtype)), desc},
          TSR_INVALID_ARGUMENT,
          what,
          message};
    };
    const std::string bound = "a bound the dtype cannot hold (Scalar::to, several steps)";
    const std::string power = "1 step: base^start, which the dtype cannot hold";
    return std::vector<ErrorInput>{
        call(Arg::ScalarInt(0), Arg::ScalarInt(1), -1, 10, TSR_DTYPE_FLOAT32, "steps -1",
             "a negative number of steps", "number of steps must be non-negative"),
        call(Arg::ScalarDouble(-1), Arg::ScalarDouble(2), 3, 2, TSR_DTYPE_UINT8, "-1.0 into uint8",
             bound, "argument 'start' (-1) " + OverflowMessage(TSR_DTYPE_UINT8)),
        call(Arg::ScalarInt(0), Arg::ScalarInt(200), 3, 1.01, TSR_DTYPE_INT8, "200 into int8",
             bound, "argument 'end' (200) " + OverflowMessage(TSR_DTYPE_INT8)),
        call(Arg::ScalarInt(3), Arg::ScalarInt(3), 1, 10, TSR_DTYPE_INT8, "10^3 into int8", power,
             "argument 'base ** start' (1000) " + OverflowMessage(TSR_DTYPE_INT8)),
        call(Arg::ScalarInt(5), Arg::ScalarInt(5), 1, 10, TSR_DTYPE_FLOAT16, "10^5 into float16",
             power, "argument 'base ** start' (100000) " + OverflowMessage(TSR_DTYPE_FLOAT16))};
  };
  db.push_back(std::move(op));
}

// The new_* ops: self.new_empty(size, options) (empty with self's dtype, layout and device for
// each option left None), then zero_, fill_(1.) or fill_(fill_value). new_full's value is
// converted to the result's dtype, never inferring one from it (unlike full).
struct NewCase {
  Shape self, size;
  std::optional<tsr_dtype> dtype;  // nullopt: None
  bool device;                     // the device under test given, or None
  bool options;                    // false: none given at all (the schema's defaults)
};

// Emptied: `size` with no element (new_empty's values are unspecified): its last dim 0, or [0]
// for [].
Shape Emptied(Shape size) {
  if (size.empty()) return {0};
  size.back() = 0;
  return size;
}

void AddNewFactories(std::vector<OpInfo>& db) {
  for (const char* op_name : {"new_empty", "new_zeros", "new_ones", "new_full"}) {
    const std::string name = op_name;
    const bool full = name == "new_full", empty = name == "new_empty";
    const double constant = name == "new_ones" ? 1 : 0;
    OpInfo op = Entry(name, "", "", kAllMask);
    op.samples = [full, empty](tsr_dtype dtype, Rng& rng) {
      // sample_inputs_new_fns's cases (its CPU device is the device under test here).
      const std::vector<NewCase> cases = {{{}, {}, std::nullopt, false, false},
                                          {{5, 5}, {2, 0}, std::nullopt, false, false},
                                          {{0, 5, 0}, {3, 2, 2}, std::nullopt, false, false},
                                          {{5}, {2, 3}, dtype, true, true},
                                          {{5}, {10}, TSR_DTYPE_FLOAT64, false, true},
                                          {{5}, {1, 1, 12}, std::nullopt, true, true},
                                          {{5}, {2, 2, 2}, TSR_DTYPE_FLOAT64, true, true},
                                          {{2, 3}, {4, 1}, TSR_DTYPE_INT32, false, true},
                                          {{3}, {3}, TSR_DTYPE_BOOL, true, true}};
      std::vector<Sample> s;
      for (const NewCase& c : cases) {
        const Shape size = empty ? Emptied(c.size) : c.size;
        Sample sample{{Arg::Tensor(MakeTensor(c.self, dtype, rng)), Arg::Ints(size)},
                      ShapeString(c.self) + " size " + ShapeString(size)};
        if (full) sample.args.push_back(FillValue(c.dtype.value_or(dtype)));
        if (c.options) {
          sample.args =
              WithOptions(sample.args, c.dtype ? Arg::Dtype(*c.dtype) : Arg::None(), c.device);
          sample.desc += std::string(" dtype ") + (c.dtype ? DtypeName(*c.dtype) : "None") +
                         (c.device ? ", device" : "");
        }
        s.push_back(std::move(sample));
      }
      if (!full) return s;
      // The value converted to self's dtype (Note [Checked fill values]), or checked against the
      // dtype given instead: 300 into int16 whatever self's dtype.
      for (const Arg& value : ConvertedValues(dtype)) {
        s.push_back({{Arg::Tensor(MakeTensor({3}, dtype, rng)), Arg::Ints({2, 2}), value},
                     "[3] size [2, 2] value " + value.ToString()});
      }
      s.push_back({WithOptions({Arg::Tensor(MakeTensor({3}, dtype, rng)), Arg::Ints({2}),
                                Arg::ScalarInt(300)},
                               Arg::Dtype(TSR_DTYPE_INT16), false),
                   "[3] size [2] value 300 dtype int16"});
      return s;
    };
    op.reference = [full, constant](const Sample& s) {
      const HostTensor& self = s.args[0].tensor;
      return std::vector<HostTensor>{Full(s.args[1].ints, DtypeAt(s, full ? 3 : 2, self.dtype),
                                          full ? s.args[2].number : constant)};
    };
    op.errors = [full](Rng& rng) {
      auto args = [full](HostTensor self, Shape size, const Arg& value) {
        std::vector<Arg> a = {Arg::Tensor(std::move(self)), Arg::Ints(std::move(size))};
        if (full) a.push_back(value);
        return a;
      };
      std::vector<ErrorInput> e = {
          {{args(MakeTensor({3}, TSR_DTYPE_FLOAT32, rng), {2, -1}, Arg::ScalarInt(1)),
            "size [2, -1]"},
           TSR_INVALID_ARGUMENT,
           "a negative size",
           "expected all sizes to be non-negative, but got size -1 at dimension 1"}};
      if (!full) return e;
      for (const auto& [dtype, value] : Overflowing()) {
        for (const Shape& size : {Shape{2}, Shape{0}}) {
          e.push_back(
              {{args(MakeTensor({3}, dtype, rng), size, value),
                std::string(DtypeName(dtype)) + "[3] size " + ShapeString(size) + " value " +
                    value.ToString()},
               TSR_INVALID_ARGUMENT,
               "a value the result's dtype cannot hold",
               "argument 'fill_value' (" + value.ToString() + ") " + OverflowMessage(dtype)});
        }
      }
      // The dtype given decides, not self's: 300 fits int16 self but not int8.
      e.push_back(
          {{WithOptions(args(MakeTensor({3}, TSR_DTYPE_INT16, rng), {2}, Arg::ScalarInt(300)),
                        Arg::Dtype(TSR_DTYPE_INT8)),
            "int16[3] value 300 dtype int8"},
           TSR_INVALID_ARGUMENT,
           "a value the dtype given cannot hold",
           "argument 'fill_value' (300) " + OverflowMessage(TSR_DTYPE_INT8)});
      return e;
    };
    db.push_back(std::move(op));
  }
}

}  // namespace

void AddFillFactoryOps(std::vector<OpInfo>& db) {
  AddFillOps(db);
  AddScalarTensor(db);
  AddLogspace(db);
  AddNewFactories(db);
}

}  // namespace conformance
}  // namespace tessera
