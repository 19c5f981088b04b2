#include "conformance/cases_library.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

#include "conformance/code_name.h"
#include "tessera/conformance/cases.h"

// tsr_cases_sink: what one callback of a cases library makes (tessera/conformance/cases.h). A
// host function that gets something malformed records the first such error, which the caller
// throws once the callback returns: a library that ignores the codes still gets its error.
struct tsr_cases_sink {
  enum class Mode { kSamples, kErrors, kReference };
  explicit tsr_cases_sink(Mode m) : mode(m) {}
  const Mode mode;
  std::string where;  // "cases library 'x', op 'y', samples for float32": for messages
  tessera::conformance::Rng* rng = nullptr;
  std::vector<tessera::conformance::Sample> samples;
  std::vector<tessera::conformance::ErrorInput> errors;
  std::vector<tessera::conformance::HostTensor> results;
  std::string error;    // the first malformed call
  std::string message;  // host->message
};

namespace tessera {
namespace conformance {
namespace {

// The 1.0 layouts: a struct_size below these is not the struct it claims to be.
constexpr size_t kTensorSize1_0 = offsetof(tsr_cases_tensor, numel) + sizeof(size_t);
constexpr size_t kOpSize1_0 = offsetof(tsr_cases_op, context) + sizeof(void*);
constexpr size_t kLibrarySize1_0 = offsetof(tsr_cases_library, num_ops) + sizeof(size_t);
constexpr size_t kRandomSize1_0 = offsetof(tsr_cases_random, positive) + sizeof(int32_t);
constexpr size_t kMaxDim = 16;
constexpr int64_t kMaxNumel = int64_t{1} << 24;
constexpr uint32_t kAllDtypeBits = (1u << 10) - 1;  // bool .. float64
constexpr size_t kMaxOps = 100000;

std::string Str(tsr_string s) {
  return s.data == nullptr ? std::string() : std::string(s.data, s.size);
}

int32_t Fail(tsr_cases_sink* sink, tsr_code code, const std::string& what) {
  if (sink->error.empty()) sink->error = what;
  return code;
}

bool ValidDtype(int32_t d) { return d >= 0 && d < 10; }

// ReadTensor checks a tensor the library hands over and copies it, its values rounded to its
// dtype; false (with *why) when it is malformed.
bool ReadTensor(const tsr_cases_tensor* t, HostTensor* out, std::string* why) {
  if (t == nullptr) {
    *why = "expected a tsr_cases_tensor, got NULL";
    return false;
  }
  if (t->struct_size < kTensorSize1_0) {
    *why = "the tensor's struct_size is " + std::to_string(t->struct_size) +
           ", expected at least " + std::to_string(kTensorSize1_0) + " (the 1.0 tsr_cases_tensor)";
    return false;
  }
  if (!ValidDtype(t->dtype)) {
    *why = "the tensor's dtype is " + std::to_string(t->dtype) +
           ", expected a tsr_dtype from 0 (bool) to 9 (float64)";
    return false;
  }
  if (t->dim > kMaxDim) {
    *why = "the tensor has " + std::to_string(t->dim) + " dims, expected at most " +
           std::to_string(kMaxDim);
    return false;
  }
  if (t->dim > 0 && t->sizes == nullptr) {
    *why = "the tensor has " + std::to_string(t->dim) + " dims but sizes is NULL";
    return false;
  }
  int64_t numel = 1;
  for (size_t d = 0; d < t->dim; ++d) {
    if (t->sizes[d] < 0 || t->sizes[d] > kMaxNumel) {
      *why = "the tensor's size " + std::to_string(t->sizes[d]) + " at dim " + std::to_string(d) +
             " is out of range (expected 0 to 2^24)";
      return false;
    }
    numel *= t->sizes[d];
    if (numel > kMaxNumel) {
      *why = "the tensor has more than 2^24 elements";
      return false;
    }
  }
  if (t->numel != static_cast<size_t>(numel)) {
    *why = "the tensor's numel is " + std::to_string(t->numel) + ", expected " +
           std::to_string(numel) + " (the product of its sizes)";
    return false;
  }
  if (numel > 0 && t->values == nullptr) {
    *why = "the tensor has " + std::to_string(numel) + " elements but values is NULL";
    return false;
  }
  const auto dtype = static_cast<tsr_dtype>(t->dtype);
  out->dtype = dtype;
  out->shape.assign(t->sizes, t->sizes + t->dim);
  out->values.resize(static_cast<size_t>(numel));
  for (int64_t i = 0; i < numel; ++i) {
    const double v = t->values[i];
    if (!std::isfinite(v) && !IsFloating(dtype)) {
      *why = "the " + std::string(DtypeName(dtype)) + " tensor's value " + std::to_string(i) +
             " is " + std::to_string(v) + ", expected a finite number";
      return false;
    }
    out->values[i] = RoundTo(dtype, v);
  }
  return true;
}

// Arguments go to the sample begun last; one begun by `sample` in `samples`, by `error_sample`
// in `errors`.
Sample* Current(tsr_cases_sink* sink, const char* fn) {
  if (sink->mode == tsr_cases_sink::Mode::kSamples && !sink->samples.empty())
    return &sink->samples.back();
  if (sink->mode == tsr_cases_sink::Mode::kErrors && !sink->errors.empty())
    return &sink->errors.back().sample;
  Fail(sink, TSR_FAILED_PRECONDITION,
       std::string(fn) + " before any " +
           (sink->mode == tsr_cases_sink::Mode::kErrors ? "error_sample" : "sample") +
           (sink->mode == tsr_cases_sink::Mode::kReference ? " (a reference gives results only)"
                                                           : ""));
  return nullptr;
}

// ---- the host functions (tsr_cases_host) ----

int32_t HostSample(tsr_cases_sink* sink, tsr_string description) {
  if (sink->mode != tsr_cases_sink::Mode::kSamples)
    return Fail(sink, TSR_FAILED_PRECONDITION, "sample() outside samples()");
  Sample s;
  s.desc = Str(description);
  sink->samples.push_back(std::move(s));
  return TSR_OK;
}

int32_t HostErrorSample(tsr_cases_sink* sink, tsr_string description, int32_t code) {
  if (sink->mode != tsr_cases_sink::Mode::kErrors)
    return Fail(sink, TSR_FAILED_PRECONDITION, "error_sample() outside errors()");
  if (code <= TSR_OK || code > TSR_UNAUTHENTICATED) {
    return Fail(sink, TSR_INVALID_ARGUMENT,
                "error_sample(\"" + Str(description) + "\"): the expected code is " +
                    std::to_string(code) + ", expected a tsr_code from 1 to 16");
  }
  ErrorInput e;
  e.sample.desc = Str(description);
  e.code = static_cast<tsr_code>(code);
  sink->errors.push_back(std::move(e));
  return TSR_OK;
}

int32_t Push(tsr_cases_sink* sink, const char* fn, Arg arg) {
  Sample* s = Current(sink, fn);
  if (s == nullptr) return TSR_FAILED_PRECONDITION;
  s->args.push_back(std::move(arg));
  return TSR_OK;
}

int32_t HostArgTensor(tsr_cases_sink* sink, const tsr_cases_tensor* tensor) {
  HostTensor t;
  std::string why;
  if (!ReadTensor(tensor, &t, &why)) return Fail(sink, TSR_INVALID_ARGUMENT, "arg_tensor: " + why);
  return Push(sink, "arg_tensor", Arg::Tensor(std::move(t)));
}

int32_t HostArgRandomTensor(tsr_cases_sink* sink, int32_t dtype, const int64_t* sizes, size_t dim,
                            const tsr_cases_random* options) {
  // The shape is checked as a tensor's would be, with no values yet.
  tsr_cases_tensor shape{};
  shape.struct_size = sizeof shape;
  shape.dtype = dtype;
  shape.sizes = sizes;
  shape.dim = dim;
  int64_t numel = 1;
  for (size_t d = 0; sizes != nullptr && d < dim && d < kMaxDim; ++d) {
    numel = sizes[d] < 0 || sizes[d] > kMaxNumel ? -1 : numel * sizes[d];
    if (numel < 0 || numel > kMaxNumel) break;
  }
  const std::vector<double> zeros(numel > 0 && numel <= kMaxNumel ? numel : 0);
  shape.values = zeros.data();
  shape.numel = numel < 0 ? 0 : static_cast<size_t>(numel);
  HostTensor t;
  std::string why;
  if (!ReadTensor(&shape, &t, &why))
    return Fail(sink, TSR_INVALID_ARGUMENT, "arg_random_tensor: " + why);
  MakeOptions o;
  if (options != nullptr) {
    if (options->struct_size < kRandomSize1_0) {
      return Fail(sink, TSR_INVALID_ARGUMENT,
                  "arg_random_tensor: options->struct_size is " +
                      std::to_string(options->struct_size) + ", expected at least " +
                      std::to_string(kRandomSize1_0) + " (the 1.0 tsr_cases_random)");
    }
    if (!std::isfinite(options->low) || !std::isfinite(options->high)) {
      return Fail(sink, TSR_INVALID_ARGUMENT,
                  "arg_random_tensor: options' range must be finite, got [" +
                      std::to_string(options->low) + ", " + std::to_string(options->high) + ")");
    }
    o.low = options->low;
    o.high = options->high;
    o.exclude_zero = options->exclude_zero != 0;
    o.positive = options->positive != 0;
  }
  if (sink->rng == nullptr)
    return Fail(sink, TSR_FAILED_PRECONDITION, "arg_random_tensor outside samples() or errors()");
  return Push(sink, "arg_random_tensor", Arg::Tensor(MakeTensor(t.shape, t.dtype, *sink->rng, o)));
}

int32_t HostArgTensorList(tsr_cases_sink* sink, const tsr_cases_tensor* const* tensors,
                          size_t count) {
  if (count > 0 && tensors == nullptr)
    return Fail(sink, TSR_INVALID_ARGUMENT, "arg_tensor_list: tensors is NULL");
  if (count > 4096) {
    return Fail(sink, TSR_INVALID_ARGUMENT,
                "arg_tensor_list: " + std::to_string(count) + " tensors, expected at most 4096");
  }
  std::vector<HostTensor> list(count);
  for (size_t i = 0; i < count; ++i) {
    std::string why;
    if (!ReadTensor(tensors[i], &list[i], &why)) {
      return Fail(sink, TSR_INVALID_ARGUMENT,
                  "arg_tensor_list: tensor " + std::to_string(i) + ": " + why);
    }
  }
  return Push(sink, "arg_tensor_list", Arg::Tensors(std::move(list)));
}

int32_t HostArgNone(tsr_cases_sink* sink) { return Push(sink, "arg_none", Arg::None()); }

int32_t HostArgScalar(tsr_cases_sink* sink, tsr_scalar value) {
  switch (value.kind) {
    case TSR_SCALAR_BOOL:
      return Push(sink, "arg_scalar", Arg::ScalarBool(value.i != 0));
    case TSR_SCALAR_INT:
      return Push(sink, "arg_scalar", Arg::ScalarInt(value.i));
    case TSR_SCALAR_DOUBLE:
      return Push(sink, "arg_scalar", Arg::ScalarDouble(value.d));
  }
  return Fail(sink, TSR_INVALID_ARGUMENT,
              "arg_scalar: the scalar's kind is " + std::to_string(value.kind) +
                  ", expected TSR_SCALAR_BOOL (0), TSR_SCALAR_INT (1) or TSR_SCALAR_DOUBLE (2)");
}

int32_t HostArgInt(tsr_cases_sink* sink, int64_t value) {
  return Push(sink, "arg_int", Arg::Int(value));
}
int32_t HostArgBool(tsr_cases_sink* sink, int32_t value) {
  return Push(sink, "arg_bool", Arg::Bool(value != 0));
}
int32_t HostArgDouble(tsr_cases_sink* sink, double value) {
  return Push(sink, "arg_double", Arg::Double(value));
}

int32_t HostArgIntList(tsr_cases_sink* sink, const int64_t* values, size_t count) {
  if (count > 0 && values == nullptr)
    return Fail(sink, TSR_INVALID_ARGUMENT, "arg_int_list: values is NULL");
  if (count > kMaxNumel) return Fail(sink, TSR_INVALID_ARGUMENT, "arg_int_list: too long");
  return Push(sink, "arg_int_list", Arg::Ints(std::vector<int64_t>(values, values + count)));
}

int32_t HostArgString(tsr_cases_sink* sink, tsr_string value) {
  if (value.size > 0 && value.data == nullptr)
    return Fail(sink, TSR_INVALID_ARGUMENT, "arg_string: data is NULL");
  return Push(sink, "arg_string", Arg::String(Str(value)));
}

int32_t HostArgDtype(tsr_cases_sink* sink, int32_t dtype) {
  if (!ValidDtype(dtype)) {
    return Fail(sink, TSR_INVALID_ARGUMENT,
                "arg_dtype: " + std::to_string(dtype) +
                    ", expected a tsr_dtype from 0 (bool) to 9 (float64)");
  }
  return Push(sink, "arg_dtype", Arg::Dtype(static_cast<tsr_dtype>(dtype)));
}

int32_t HostArgDevice(tsr_cases_sink* sink) { return Push(sink, "arg_device", Arg::Device()); }

int32_t HostResult(tsr_cases_sink* sink, const tsr_cases_tensor* tensor) {
  if (sink->mode != tsr_cases_sink::Mode::kReference)
    return Fail(sink, TSR_FAILED_PRECONDITION, "result() outside reference()");
  HostTensor t;
  std::string why;
  if (!ReadTensor(tensor, &t, &why)) {
    return Fail(sink, TSR_INVALID_ARGUMENT,
                "result " + std::to_string(sink->results.size()) + ": " + why);
  }
  sink->results.push_back(std::move(t));
  return TSR_OK;
}

void HostMessage(tsr_cases_sink* sink, tsr_string text) {
  if (text.size > 0 && text.data == nullptr) return;
  sink->message = Str(text).substr(0, 4096);
}

const tsr_cases_host& Host() {
  static const tsr_cases_host host = [] {
    tsr_cases_host h{};
    h.struct_size = sizeof h;
    h.version_major = TSR_CASES_VERSION_MAJOR;
    h.version_minor = TSR_CASES_VERSION_MINOR;
    h.sample = &HostSample;
    h.error_sample = &HostErrorSample;
    h.arg_tensor = &HostArgTensor;
    h.arg_random_tensor = &HostArgRandomTensor;
    h.arg_tensor_list = &HostArgTensorList;
    h.arg_none = &HostArgNone;
    h.arg_scalar = &HostArgScalar;
    h.arg_int = &HostArgInt;
    h.arg_bool = &HostArgBool;
    h.arg_double = &HostArgDouble;
    h.arg_int_list = &HostArgIntList;
    h.arg_string = &HostArgString;
    h.arg_dtype = &HostArgDtype;
    h.arg_device = &HostArgDevice;
    h.result = &HostResult;
    h.message = &HostMessage;
    return h;
  }();
  return host;
}

// CodeText: "INVALID_ARGUMENT (3)", for messages about what a callback returned.
std::string CodeText(int32_t code) {
  return code >= 0 && code <= 16 ? std::string(CodeName(static_cast<tsr_code>(code))) + " (" +
                                       std::to_string(code) + ")"
                                 : std::to_string(code);
}

// Check throws what went wrong in a callback: the first malformed host call, else its code.
void Check(const tsr_cases_sink& sink, int32_t code) {
  if (!sink.error.empty()) {
    throw CasesLibraryError(sink.where + ": " + sink.error +
                            (sink.message.empty() ? "" : " (" + sink.message + ")"));
  }
  if (code != TSR_OK) {
    throw CasesLibraryError(sink.where + " returned " + CodeText(code) +
                            (sink.message.empty() ? "" : ": " + sink.message));
  }
}

// SampleView: a sample as a reference reads it (tsr_cases_sample), over the Sample's storage.
class SampleView {
 public:
  explicit SampleView(const Sample& s) {
    size_t tensors = 0;
    for (const Arg& a : s.args) tensors += a.kind == Arg::Kind::kTensor ? 1 : a.tensors.size();
    tensors_.reserve(tensors);
    tensor_ptrs_.reserve(tensors);
    args_.reserve(s.args.size());
    for (const Arg& a : s.args) {
      tsr_cases_arg c{};
      c.struct_size = sizeof c;
      const size_t first = tensor_ptrs_.size();
      switch (a.kind) {
        case Arg::Kind::kTensor:
          c.kind = TSR_CASES_ARG_TENSOR;
          AddTensor(a.tensor);
          c.count = 1;
          break;
        case Arg::Kind::kTensorList:
          c.kind = TSR_CASES_ARG_TENSOR_LIST;
          // A None element (Tensor?[]) is a NULL entry, as in the C ABI's tensor lists. A
          // library's own samples have none (arg_tensor_list refuses NULL elements).
          for (size_t i = 0; i < a.tensors.size(); ++i) {
            if (a.Absent(i)) {
              tensor_ptrs_.push_back(nullptr);
            } else {
              AddTensor(a.tensors[i]);
            }
          }
          c.count = a.tensors.size();
          break;
        case Arg::Kind::kScalar:
          c.kind = TSR_CASES_ARG_SCALAR;
          c.scalar.kind = a.scalar_kind == Arg::ScalarKind::kDouble ? TSR_SCALAR_DOUBLE
                          : a.scalar_kind == Arg::ScalarKind::kBool ? TSR_SCALAR_BOOL
                                                                    : TSR_SCALAR_INT;
          c.scalar.i = static_cast<int64_t>(a.number);
          c.scalar.d = a.number;
          break;
        case Arg::Kind::kInt:
          c.kind = TSR_CASES_ARG_INT;
          c.i = a.integer;
          break;
        case Arg::Kind::kBool:
          c.kind = TSR_CASES_ARG_BOOL;
          c.i = a.boolean;
          break;
        case Arg::Kind::kDouble:
          c.kind = TSR_CASES_ARG_DOUBLE;
          c.d = a.number;
          break;
        case Arg::Kind::kIntList:
        case Arg::Kind::kBoolList:
          c.kind = a.kind == Arg::Kind::kIntList ? TSR_CASES_ARG_INT_LIST : TSR_CASES_ARG_BOOL_LIST;
          c.ints = a.ints.data();
          c.count = a.ints.size();
          break;
        case Arg::Kind::kString:
          c.kind = TSR_CASES_ARG_STRING;
          c.string = tsr_string{a.string.data(), a.string.size()};
          break;
        case Arg::Kind::kNone:
          c.kind = TSR_CASES_ARG_NONE;
          break;
        case Arg::Kind::kDtype:
          c.kind = TSR_CASES_ARG_DTYPE;
          c.i = a.dtype;
          break;
        case Arg::Kind::kDevice:
          c.kind = TSR_CASES_ARG_DEVICE;
          break;
        case Arg::Kind::kGenerator:
          // A cases library's samples never hold one (tsr_cases_host has no generator
          // argument), and its references read only its own samples.
          c.kind = TSR_CASES_ARG_NONE;
          break;
      }
      if (c.count > 0 && c.kind != TSR_CASES_ARG_INT_LIST && c.kind != TSR_CASES_ARG_BOOL_LIST)
        c.tensors = tensor_ptrs_.data() + first;
      args_.push_back(c);
    }
    for (const tsr_cases_arg& c : args_) arg_ptrs_.push_back(&c);
    view_.struct_size = sizeof view_;
    view_.description = tsr_string{s.desc.data(), s.desc.size()};
    view_.args = arg_ptrs_.data();
    view_.num_args = arg_ptrs_.size();
  }
  SampleView(const SampleView&) = delete;
  SampleView& operator=(const SampleView&) = delete;
  const tsr_cases_sample* get() const { return &view_; }

 private:
  void AddTensor(const HostTensor& h) {
    tsr_cases_tensor t{};
    t.struct_size = sizeof t;
    t.dtype = h.dtype;
    t.sizes = h.shape.data();
    t.dim = h.shape.size();
    t.values = h.values.data();
    t.numel = h.values.size();
    tensors_.push_back(t);
    tensor_ptrs_.push_back(&tensors_.back());  // reserved: no reallocation
  }

  std::vector<tsr_cases_tensor> tensors_;
  std::vector<const tsr_cases_tensor*> tensor_ptrs_;
  std::vector<tsr_cases_arg> args_;
  std::vector<const tsr_cases_arg*> arg_ptrs_;
  tsr_cases_sample view_{};
};

// An op of a library: what its OpInfo's functions call. Kept for the process.
struct LibraryOp {
  std::string where;  // "cases library 'x', op 'y'"
  tsr_cases_op op{};  // the library's, within its struct_size, zero beyond
};

// Guarded calls a callback of the library: an exception escaping it (a C++ library that breaks
// the C interface) is the library's failure, not a crash or a skipped case.
template <typename Callback>
int32_t Guarded(const tsr_cases_sink& sink, const Callback& callback) {
  try {
    return callback();
  } catch (const std::exception& e) {
    throw CasesLibraryError(sink.where + " threw an exception across the C interface: " + e.what());
  } catch (...) {
    throw CasesLibraryError(sink.where + " threw an exception across the C interface");
  }
}

OpInfo MakeOpInfo(const std::string& name, std::shared_ptr<const LibraryOp> lop) {
  OpInfo info;
  info.family = "cases";
  info.name = name;
  info.dtypes = lop->op.dtypes;
  info.elementwise = lop->op.elementwise != 0;
  info.tolerance_scale = lop->op.tolerance_scale == 0 ? 1 : lop->op.tolerance_scale;
  info.samples = [lop](tsr_dtype dtype, Rng& rng) {
    tsr_cases_sink sink(tsr_cases_sink::Mode::kSamples);
    sink.where = lop->where + ", samples for " + DtypeName(dtype);
    sink.rng = &rng;
    const uint64_t seed = rng();
    Check(sink, Guarded(sink, [&] {
            return lop->op.samples(lop->op.context, &Host(), &sink, dtype, seed);
          }));
    return std::move(sink.samples);
  };
  info.reference = [lop](const Sample& s) {
    tsr_cases_sink sink(tsr_cases_sink::Mode::kReference);
    sink.where = lop->where + ", reference for sample '" + s.desc + "'";
    const SampleView view(s);
    const int32_t code = Guarded(
        sink, [&] { return lop->op.reference(lop->op.context, &Host(), &sink, view.get()); });
    if (code == TSR_UNIMPLEMENTED && sink.error.empty()) {
      // No reference for this sample: its cases are skipped, as the database's own.
      throw std::runtime_error(sink.message.empty() ? "the cases library has none" : sink.message);
    }
    Check(sink, code);
    if (sink.results.empty()) throw CasesLibraryError(sink.where + " gave no result");
    return std::move(sink.results);
  };
  if (lop->op.errors != nullptr) {
    info.errors = [lop](Rng& rng) {
      tsr_cases_sink sink(tsr_cases_sink::Mode::kErrors);
      sink.where = lop->where + ", errors";
      sink.rng = &rng;
      const uint64_t seed = rng();
      Check(sink,
            Guarded(sink, [&] { return lop->op.errors(lop->op.context, &Host(), &sink, seed); }));
      return std::move(sink.errors);
    };
  }
  return info;
}

// DefinedNear: the defined ops of `name`'s namespace ("vnd::a, vnd::b"), for an error about an
// op that is not defined.
std::string DefinedNear(const std::string& name) {
  const size_t colons = name.find("::");
  const std::string ns = colons == std::string::npos ? "" : name.substr(0, colons + 2);
  size_t count = 0;
  if (ns.empty() || tsr_op_list(nullptr, 0, &count) != nullptr) return "";
  std::vector<const tsr_op*> ops(count);
  if (tsr_op_list(ops.data(), ops.size(), &count) != nullptr) return "";
  std::string near;
  for (size_t i = 0; i < count && i < ops.size(); ++i) {
    const std::string op = Str(tsr_op_name(ops[i]));
    if (op.rfind(ns, 0) == 0) near += (near.empty() ? "" : ", ") + op;
  }
  return near.empty() ? "; no op of namespace '" + ns.substr(0, ns.size() - 2) + "' is defined"
                      : "; defined in its namespace: " + near;
}

}  // namespace

bool LoadCasesLibrary(const std::string& path, const std::set<std::string>& taken,
                      std::vector<OpInfo>* ops, std::string* error) {
  const std::string lib = "cases library '" + path + "'";
  auto refuse = [&](const std::string& why) {
    *error = lib + ": " + why;
    return false;
  };
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    *error = "cannot load " + lib + ": " + (why ? why : "dlopen failed");
    return false;
  }
  // Never closed: its functions stay in the OpInfos for the process.
  auto entry = reinterpret_cast<tsr_cases_entry_fn>(dlsym(handle, TSR_CASES_ENTRY));
  if (entry == nullptr) {
    return refuse(std::string("no entry point '") + TSR_CASES_ENTRY +
                  "' (expected the function of tessera/conformance/cases.h, exported with C "
                  "linkage and default visibility: TSR_CASES_EXPORT)");
  }
  const tsr_cases_library* desc = nullptr;
  try {
    desc = entry(&Host());
  } catch (...) {
    return refuse(std::string(TSR_CASES_ENTRY) + " threw an exception across the C interface");
  }
  if (desc == nullptr) return refuse(std::string(TSR_CASES_ENTRY) + " returned NULL (it refused)");
  if (desc->struct_size < kLibrarySize1_0) {
    return refuse("its tsr_cases_library has struct_size " + std::to_string(desc->struct_size) +
                  ", expected at least " + std::to_string(kLibrarySize1_0) +
                  " (the 1.0 tsr_cases_library)");
  }
  if (desc->version_major != TSR_CASES_VERSION_MAJOR) {
    return refuse("built against the cases interface " + std::to_string(desc->version_major) + "." +
                  std::to_string(desc->version_minor) + ", but this conformance reads " +
                  std::to_string(TSR_CASES_VERSION_MAJOR) + "." +
                  std::to_string(TSR_CASES_VERSION_MINOR) +
                  " (the major version must match: tessera/conformance/cases.h)");
  }
  if (desc->num_ops == 0 || desc->num_ops > kMaxOps || desc->ops == nullptr) {
    return refuse("it describes " + std::to_string(desc->num_ops) + " ops" +
                  (desc->ops == nullptr ? " (ops is NULL)" : "") + ", expected 1 to " +
                  std::to_string(kMaxOps));
  }
  std::set<std::string> names = taken;
  std::vector<OpInfo> added;
  for (size_t i = 0; i < desc->num_ops; ++i) {
    const tsr_cases_op* op = desc->ops[i];
    const std::string which = "ops[" + std::to_string(i) + "]";
    if (op == nullptr) return refuse(which + " is NULL, expected a tsr_cases_op");
    if (op->struct_size < kOpSize1_0) {
      return refuse(which + " has struct_size " + std::to_string(op->struct_size) +
                    ", expected at least " + std::to_string(kOpSize1_0) +
                    " (the 1.0 tsr_cases_op)");
    }
    auto lop = std::make_shared<LibraryOp>();
    // Read within both sizes: a library built against a newer minor has fields we skip.
    std::memcpy(&lop->op, op, std::min(sizeof lop->op, op->struct_size));
    const tsr_cases_op& c = lop->op;
    const std::string name = Str(c.name);
    if (name.empty()) return refuse(which + " has an empty name, expected an op's name");
    const tsr_op* found = nullptr;
    if (tsr_error* e = tsr_op_find(tsr_string{name.data(), name.size()}, &found)) {
      tsr_error_release(e);
      return refuse("op '" + name + "' (" + which +
                    ") is not defined: expected an op that a loaded plugin (--plugin) defines" +
                    DefinedNear(name));
    }
    const std::string full = Str(tsr_op_name(found));
    const std::string where = lib + ", op '" + full + "'";
    if (!names.insert(full).second) {
      return refuse("op '" + full + "' (" + which +
                    ") is already in the op database (the suite's own, or an earlier entry)");
    }
    if (c.dtypes == 0) {
      return refuse("op '" + full +
                    "' declares no dtype: expected dtype bits (1u << tsr_dtype), "
                    "bits 0 (bool) to 9 (float64)");
    }
    if ((c.dtypes & ~kAllDtypeBits) != 0) {
      char bits[160];
      std::snprintf(bits, sizeof bits,
                    "0x%x: expected bits 0 (bool) to 9 (float64) only (mask "
                    "0x3ff), found 0x%x beyond them",
                    c.dtypes, c.dtypes & ~kAllDtypeBits);
      return refuse("op '" + full + "' declares dtypes " + bits + ", which name no tsr_dtype");
    }
    if (c.samples == nullptr)
      return refuse("op '" + full + "': samples is NULL, expected a function");
    if (c.reference == nullptr)
      return refuse("op '" + full + "': reference is NULL, expected a function");
    if (!std::isfinite(c.tolerance_scale) || c.tolerance_scale < 0) {
      return refuse("op '" + full + "': tolerance_scale is " + std::to_string(c.tolerance_scale) +
                    ", expected a finite number >= 0 (0 means 1)");
    }
    lop->where = where;
    added.push_back(MakeOpInfo(full, lop));
  }
  for (OpInfo& o : added) ops->push_back(std::move(o));
  return true;
}

}  // namespace conformance
}  // namespace tessera
