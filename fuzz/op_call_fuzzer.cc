// Fuzz target: boxed calls of every op through tsr_op_call, on the CPU plugin that default
// discovery loads, with arguments generated from the op's schema.
//
// The input picks the op and drives the generator: small tensors of every dtype (up to 3
// dims of up to 4 elements, contiguous, transposed, expanded or gapped strides), ints near the
// edges (0, ±1, INT64_MAX, ...), lists of those, None for optionals (and sometimes where None
// is wrong), the strings the ops know, and now and then a value of the wrong kind. The only
// oracle is the runtime's promise: every call returns OK or a clean error — no crash, no
// sanitizer report, no hang. Sizes stay small so that an input runs in milliseconds; an int
// argument that is a size (empty, arange, ...) can still ask for a lot, which ASan's
// max_allocation_size_mb (set below) turns into a failed allocation the runtime must report.
//
// Built a second time as the op_meta target (TESSERA_FUZZ_META_TENSORS=1): the tensors are
// Meta tensors, which have shapes and no data, so their sizes and strides may be anything in
// int64 (edges included) at no cost. That drives every op's Meta function (the dispatcher's
// shape, stride and dtype arithmetic, where overflow hides) with shapes no real tensor could
// have; the calls run no kernel.
#include <fuzzer/FuzzedDataProvider.h>

#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dispatcher/op_registry.h"
#include "dispatcher/schema.h"
#include "tessera/c/tessera.h"

#ifndef TESSERA_FUZZ_META_TENSORS
#define TESSERA_FUZZ_META_TENSORS 0
#endif
// op_meta: the tensors (and mostly the Device arguments) are Meta, else CPU.
constexpr bool kMetaTensors = TESSERA_FUZZ_META_TENSORS != 0;
constexpr int32_t kTensorDevice = kMetaTensors ? TSR_DEVICE_META : TSR_DEVICE_CPU;

// Failed allocations are an outcome the runtime must report, not a crash; 64 MB is the most
// an input may allocate at once, since filling more (arange.out to 2^31) takes seconds on one
// thread under ASan and reads as a hang. intercept_tls_get_addr=0 for the reason given in
// cmake/TesseraHelpers.cmake (oneDNN's thread-local data). detect_odr_violation=0: the
// dispatcher is linked twice on purpose (Ops() below), its copy in libtessera.so hidden.
extern "C" const char* __asan_default_options() {
  return "allocator_may_return_null=1:max_allocation_size_mb=64:intercept_tls_get_addr=0:"
         "detect_odr_violation=0";
}

namespace {

using tessera::BaseType;
using tessera::FunctionSchema;
using tessera::SchemaType;

struct Op {
  const tsr_op* handle;
  FunctionSchema schema;
};

// Strings the ops accept (rounding modes, approximations, reductions, padding modes), plus a
// few they must refuse.
const char* const kStrings[] = {"none", "tanh", "trunc",   "floor",    "sum", "mean", "amax",
                                "amin", "prod", "reflect", "constant", "cpu", "",     "\xff\x00x"};

constexpr int64_t kEdgeInts[] = {0,
                                 1,
                                 -1,
                                 2,
                                 3,
                                 -2,
                                 4,
                                 7,
                                 64,
                                 std::numeric_limits<int32_t>::max(),
                                 std::numeric_limits<int32_t>::min(),
                                 int64_t{1} << 32,
                                 int64_t{1} << 62,
                                 std::numeric_limits<int64_t>::max(),
                                 std::numeric_limits<int64_t>::max() - 1,
                                 std::numeric_limits<int64_t>::min(),
                                 std::numeric_limits<int64_t>::min() + 1};

constexpr double kEdgeDoubles[] = {0.0,     -0.0,         1.0,      -1.0,      0.5,     2.0,
                                   1e-7,    NAN,          INFINITY, -INFINITY, DBL_MAX, -DBL_MAX,
                                   DBL_MIN, DBL_TRUE_MIN, 9.3e18,   -9.3e18};

const std::vector<Op>& Ops() {
  static const std::vector<Op>* ops = [] {
    // One thread: each input runs the same way every time, and the machine is shared.
    setenv("TESSERA_NUM_THREADS", "1", 0);
    setenv("OMP_NUM_THREADS", "1", 0);
    tsr_error_release(tsr_plugin_load_default());
    auto* list = new std::vector<Op>();
    // The names come from a registry of this executable's own (the core ops are defined the
    // same way in every registry); the calls go to libtessera.so's global one, which has the
    // CPU plugin's kernels.
    for (const std::string& name : tessera::OpRegistry::Global().ListOps()) {
      const tsr_op* op = nullptr;
      tsr_error* error = tsr_op_find(tsr_string{name.data(), name.size()}, &op);
      if (error != nullptr) {
        tsr_error_release(error);
        continue;
      }
      const tsr_string text = tsr_op_schema(op);
      absl::StatusOr<FunctionSchema> schema =
          tessera::ParseSchema(std::string_view(text.data, text.size));
      if (!schema.ok()) {
        std::fprintf(stderr, "op_call fuzzer: the schema of %s does not parse: %s\n", name.c_str(),
                     std::string(schema.status().message()).c_str());
        std::abort();
      }
      list->push_back(Op{op, *std::move(schema)});
    }
    std::fprintf(stderr, "op_call fuzzer: %zu ops\n", list->size());
    return list;
  }();
  return *ops;
}

// TESSERA_FUZZ_VERBOSE=1: name each call and its error (for replaying a crash by hand).
bool Verbose() {
  static const bool on = [] {
    const char* value = std::getenv("TESSERA_FUZZ_VERBOSE");
    return value != nullptr && std::strcmp(value, "1") == 0;
  }();
  return on;
}

// Transcript: with TESSERA_FUZZ_TRANSCRIPT=FILE, one line per input: the input's hash, the op,
// and the call's outcome (its error, or each return's kind, dtype, sizes, strides and a hash of
// its bytes). scripts/fuzz.sh replays the grown corpus with the unboxed fast path on and off
// (TESSERA_FAST_PATH=0) and requires the same lines (Note [The unboxed fast path]).
FILE* Transcript() {
  static FILE* const file = [] {
    const char* path = std::getenv("TESSERA_FUZZ_TRANSCRIPT");
    return path == nullptr ? nullptr : std::fopen(path, "a");
  }();
  return file;
}

uint64_t Fnv1a(const void* data, size_t n, uint64_t h = 14695981039346656037ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

// Outcome: the call's outcome as the transcript writes it.
std::string Outcome(tsr_error* error, const tsr_stack* stack) {
  if (error != nullptr) {
    const tsr_string message = tsr_error_message(error);
    return "error " + std::to_string(tsr_error_code(error)) + " " +
           std::string(message.data, message.size);
  }
  std::string out = "ok";
  for (size_t i = 0; i < tsr_stack_size(stack); ++i) {
    out += " | kind " + std::to_string(tsr_stack_kind(stack, i));
    tsr_tensor* t = nullptr;
    if (tsr_stack_kind(stack, i) != TSR_VALUE_TENSOR ||
        tsr_stack_get_tensor(stack, i, &t) != nullptr || t == nullptr) {
      continue;
    }
    const int64_t dim = tsr_tensor_dim(t);
    out += " dtype " + std::to_string(tsr_tensor_dtype(t)) + " sizes";
    for (int64_t d = 0; d < dim; ++d) out += " " + std::to_string(tsr_tensor_sizes(t)[d]);
    out += " strides";
    for (int64_t d = 0; d < dim; ++d) out += " " + std::to_string(tsr_tensor_strides(t)[d]);
    // The elements, read through the strides (a dense copy would be another call to compare).
    // Only the dims that move through memory: a dim of stride 0 repeats the others (expand
    // makes a view of 10^12 elements over a few, which took minutes to hash), and the sizes
    // and strides above say how. At most kMaxHashed of them (an as_strided view whose strides
    // overlap can be as large): the first ones, the same on both paths.
    constexpr int64_t kMaxHashed = int64_t{1} << 24;
    const tsr_device device = tsr_tensor_device(t);
    if (device.type != TSR_DEVICE_CPU || tsr_tensor_numel(t) == 0) continue;
    std::vector<int64_t> sizes, strides;
    for (int64_t d = 0; d < dim; ++d) {
      if (tsr_tensor_strides(t)[d] == 0 || tsr_tensor_sizes(t)[d] == 1) continue;
      sizes.push_back(tsr_tensor_sizes(t)[d]);
      strides.push_back(tsr_tensor_strides(t)[d]);
    }
    int64_t moving = 1;
    for (int64_t size : sizes) moving = size > kMaxHashed / moving ? kMaxHashed : moving * size;
    const size_t item = tsr_dtype_size(tsr_tensor_dtype(t));
    const char* base = static_cast<const char*>(tsr_tensor_data_ptr(t));
    uint64_t h = Fnv1a(nullptr, 0);
    std::vector<int64_t> index(sizes.size(), 0);
    for (int64_t e = 0; e < moving; ++e) {
      int64_t offset = 0;
      for (size_t d = 0; d < sizes.size(); ++d) offset += index[d] * strides[d];
      h = Fnv1a(base + offset * static_cast<int64_t>(item), item, h);
      for (size_t d = sizes.size(); d-- > 0;) {
        if (++index[d] < sizes[d]) break;
        index[d] = 0;
      }
    }
    out += " data " + std::to_string(h);
  }
  return out;
}

class Generator {
 public:
  explicit Generator(FuzzedDataProvider& in) : in_(in) {}
  ~Generator() {
    for (tsr_tensor* t : tensors_) tsr_tensor_release(t);
  }

  int64_t Int() {
    switch (in_.ConsumeIntegralInRange(0, 3)) {
      case 0:
        return in_.ConsumeIntegralInRange<int64_t>(-4, 4);
      case 1:
        return in_.PickValueInArray(kEdgeInts);
      case 2:
        return in_.ConsumeIntegralInRange<int64_t>(0, 2);
      default:
        return in_.ConsumeIntegral<int64_t>();
    }
  }

  // ListInt: an element of an int list (sizes, strides, dims, kernel sizes), drawn as Int().
  int64_t ListInt() { return Int(); }

  double Double() {
    if (in_.ConsumeBool()) return in_.PickValueInArray(kEdgeDoubles);
    return static_cast<double>(in_.ConsumeIntegralInRange<int64_t>(-8, 8)) / 2;
  }

  tsr_dtype Dtype() { return static_cast<tsr_dtype>(in_.ConsumeIntegralInRange(0, 9)); }

  // Tensor: a CPU tensor of at most 3 dims of at most 4 elements, filled from the input (bool
  // tensors with 0 and 1 only: any other byte is not a bool, in the runtime or in PyTorch); in
  // op_meta, a Meta tensor of any shape.
  tsr_tensor* Tensor() {
    if (kMetaTensors) return MetaTensor();
    const tsr_dtype dtype = Dtype();
    const size_t ndim = in_.ConsumeIntegralInRange<size_t>(0, 3);
    int64_t sizes[3], strides[3];
    for (size_t i = 0; i < ndim; ++i) sizes[i] = in_.ConsumeIntegralInRange<int64_t>(0, 4);
    const int layout = in_.ConsumeIntegralInRange(0, 3);
    int64_t stride = layout == 3 ? 2 : 1;  // 3: every other element (gaps)
    for (size_t i = ndim; i-- > 0;) {
      strides[i] = stride;
      stride *= sizes[i] > 0 ? sizes[i] : 1;
    }
    if (layout == 1 && ndim >= 2) std::swap(strides[0], strides[ndim - 1]);  // transposed-like
    if (layout == 2 && ndim >= 1) strides[in_.ConsumeIntegralInRange<size_t>(0, ndim - 1)] = 0;
    tsr_tensor* t = nullptr;
    tsr_error* error =
        tsr_tensor_empty_strided(sizes, strides, ndim, dtype, tsr_device{TSR_DEVICE_CPU, 0}, &t);
    if (error != nullptr) {
      tsr_error_release(error);
      return nullptr;
    }
    tensors_.push_back(t);
    const size_t nbytes = static_cast<size_t>(tsr_tensor_numel(t)) * tsr_dtype_size(dtype);
    std::vector<uint8_t> bytes = in_.ConsumeBytes<uint8_t>(nbytes);
    bytes.resize(nbytes);
    if (dtype == TSR_DTYPE_BOOL) {
      for (uint8_t& b : bytes) b &= 1;
    }
    tsr_error_release(tsr_tensor_copy_from_host(t, bytes.data(), bytes.size()));
    return t;
  }

  // Push one argument of `type` (or, now and then, something else) onto `stack`.
  void Push(tsr_stack* stack, const tessera::Argument& arg) {
    const SchemaType& type = arg.type;
    const int twist = in_.ConsumeIntegralInRange(0, 31);
    if (twist == 0 || (type.optional && twist < 6)) {
      tsr_error_release(tsr_stack_push_none(stack));
      return;
    }
    if (twist == 1) {  // a value of some other kind: must be refused cleanly
      PushElement(stack, static_cast<BaseType>(in_.ConsumeIntegralInRange(0, 10)), arg);
      return;
    }
    if (!type.is_list) {
      PushElement(stack, type.base, arg);
      return;
    }
    size_t n = in_.ConsumeIntegralInRange<size_t>(0, 4);
    if (type.list_size && in_.ConsumeBool()) n = static_cast<size_t>(*type.list_size);
    if (n > 8) n = 8;
    switch (type.base) {
      case BaseType::kTensor: {
        std::vector<tsr_tensor*> list;
        for (size_t i = 0; i < n; ++i) {
          tsr_tensor* t =
              type.element_optional && in_.ConsumeIntegralInRange(0, 3) == 0 ? nullptr : Tensor();
          list.push_back(t);
        }
        tsr_error_release(tsr_stack_push_tensor_list(stack, list.data(), list.size()));
        return;
      }
      case BaseType::kFloat: {
        std::vector<double> list;
        for (size_t i = 0; i < n; ++i) list.push_back(Double());
        tsr_error_release(tsr_stack_push_double_list(stack, list.data(), list.size()));
        return;
      }
      case BaseType::kInt:
      default: {
        // int[N] takes a bare int too (broadcast to N), as in PyTorch.
        if (type.list_size && in_.ConsumeIntegralInRange(0, 3) == 0) {
          tsr_error_release(tsr_stack_push_int(stack, Int()));
          return;
        }
        std::vector<int64_t> list;
        for (size_t i = 0; i < n; ++i) list.push_back(ListInt());
        tsr_error_release(tsr_stack_push_int_list(stack, list.data(), list.size()));
        return;
      }
    }
  }

 private:
  // MetaTensor: a Meta tensor of up to 4 dims whose sizes and strides are mostly small and
  // one time in four any int (the runtime refuses a negative size or stride, or an element
  // count past int64), with contiguous strides or those; no data.
  tsr_tensor* MetaTensor() {
    const tsr_dtype dtype = Dtype();
    const size_t ndim = in_.ConsumeIntegralInRange<size_t>(0, 4);
    int64_t sizes[4], strides[4];
    for (size_t i = 0; i < ndim; ++i) {
      sizes[i] =
          in_.ConsumeIntegralInRange(0, 3) != 0 ? in_.ConsumeIntegralInRange<int64_t>(0, 4) : Int();
      strides[i] = in_.ConsumeIntegralInRange(0, 3) != 0
                       ? in_.ConsumeIntegralInRange<int64_t>(0, 16)
                       : Int();
    }
    const bool strided = in_.ConsumeBool();
    const tsr_device meta{TSR_DEVICE_META, 0};
    tsr_tensor* t = nullptr;
    tsr_error* error = strided ? tsr_tensor_empty_strided(sizes, strides, ndim, dtype, meta, &t)
                               : tsr_tensor_empty(sizes, ndim, dtype, meta, &t);
    if (error != nullptr) {
      tsr_error_release(error);
      return nullptr;
    }
    tensors_.push_back(t);
    return t;
  }

  void PushElement(tsr_stack* stack, BaseType base, const tessera::Argument& arg) {
    switch (base) {
      case BaseType::kTensor:
        if (tsr_tensor* t = Tensor()) {
          tsr_error_release(tsr_stack_push_tensor(stack, t));
        } else {
          tsr_error_release(tsr_stack_push_none(stack));
        }
        return;
      case BaseType::kInt:
      case BaseType::kLayout:
      case BaseType::kMemoryFormat:
        tsr_error_release(tsr_stack_push_int(stack, Int()));
        return;
      case BaseType::kFloat:
        tsr_error_release(tsr_stack_push_double(stack, Double()));
        return;
      case BaseType::kBool:
        tsr_error_release(tsr_stack_push_bool(stack, in_.ConsumeBool()));
        return;
      case BaseType::kStr: {
        std::string s = in_.ConsumeBool() ? std::string(in_.PickValueInArray(kStrings))
                                          : in_.ConsumeRandomLengthString(8);
        if (arg.default_value && arg.default_value->is_string() && in_.ConsumeBool()) {
          s = arg.default_value->string();
        }
        tsr_error_release(tsr_stack_push_string(stack, tsr_string{s.data(), s.size()}));
        return;
      }
      case BaseType::kScalar: {
        tsr_scalar s{};
        s.kind = in_.ConsumeIntegralInRange(0, 2);
        if (s.kind == TSR_SCALAR_BOOL) s.i = in_.ConsumeBool();
        if (s.kind == TSR_SCALAR_INT) s.i = Int();
        if (s.kind == TSR_SCALAR_DOUBLE) s.d = Double();
        tsr_error_release(tsr_stack_push_scalar(stack, s));
        return;
      }
      case BaseType::kScalarType:
        // Mostly valid dtypes; sometimes one past the end or negative.
        tsr_error_release(tsr_stack_push_dtype(
            stack, static_cast<tsr_dtype>(in_.ConsumeIntegralInRange(-1, 11))));
        return;
      case BaseType::kDevice: {
        tsr_device d{in_.ConsumeIntegralInRange(0, 7), in_.ConsumeIntegralInRange(-1, 1)};
        // Mostly the device the tensors are on.
        if (in_.ConsumeBool()) d = tsr_device{kTensorDevice, 0};
        tsr_error_release(tsr_stack_push_device(stack, d));
        return;
      }
      case BaseType::kGenerator:
        tsr_error_release(tsr_stack_push_none(stack));
        return;
    }
  }

  FuzzedDataProvider& in_;
  std::vector<tsr_tensor*> tensors_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<Op>& ops = Ops();
  if (ops.empty() || size > 4096) return 0;
  FuzzedDataProvider in(data, size);
  const Op& op = ops[in.ConsumeIntegralInRange<size_t>(0, ops.size() - 1)];
  Generator gen(in);
  tsr_stack* stack = nullptr;
  if (tsr_error* error = tsr_stack_create(&stack)) {
    tsr_error_release(error);
    return 0;
  }
  // Trailing arguments with defaults may be left out; sometimes more are dropped (a clean
  // "missing argument" error) or one is added (a clean "too many" error).
  const size_t nargs = op.schema.arguments.size();
  size_t pushed = nargs;
  const int shape = in.ConsumeIntegralInRange(0, 15);
  if (shape == 0 && nargs > 0) pushed = in.ConsumeIntegralInRange<size_t>(0, nargs - 1);
  if (shape == 1) {
    while (pushed > 0 && op.schema.arguments[pushed - 1].default_value) --pushed;
  }
  for (size_t i = 0; i < pushed; ++i) gen.Push(stack, op.schema.arguments[i]);
  if (shape == 2) tsr_error_release(tsr_stack_push_int(stack, 1));
  if (Verbose()) {
    std::fprintf(stderr, "op_call: %s with %zu values on the stack\n", op.schema.FullName().c_str(),
                 tsr_stack_size(stack));
  }
  tsr_error* error = tsr_op_call(op.handle, stack);
  if (FILE* transcript = Transcript()) {
    std::fprintf(transcript, "%016llx %s %s\n", static_cast<unsigned long long>(Fnv1a(data, size)),
                 op.schema.FullName().c_str(), Outcome(error, stack).c_str());
    std::fflush(transcript);
  }
  if (Verbose() && error != nullptr) {
    const tsr_string message = tsr_error_message(error);
    std::fprintf(stderr, "op_call:   -> %.*s\n", static_cast<int>(message.size), message.data);
  }
  tsr_error_release(error);
  tsr_stack_release(stack);
  return 0;
}
