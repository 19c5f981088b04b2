#include "runtime/call_recorder.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "core/dtype.h"
#include "core/generator.h"
#include "core/status_macros.h"
#include "dispatcher/argument_binding.h"
#include "runtime/device_registry.h"

// Note [Recording calls]
// A vendor asks "does my backend run *these* models", so the suite replays the calls a real
// program made (issue 33; ggml's backend test does the same with a model's op calls). With
// TESSERA_RECORD=FILE, every op call that enters through the C ABI (tsr_op_call,
// tsr_op_call_values: the C++ SDK's calls too) or is a node of a compiled model is recorded:
// the op, its schema, each argument bound to schema order (defaults filled in) with a tensor's
// dtype, shape, strides, storage offset and device, the values of tensors of at most
// TESSERA_RECORD_VALUES elements (4,096 unless set: indices, masks, a batch norm's statistics;
// larger ones are drawn again at replay), and the error of a call that failed. Calls with the
// same metadata are one line with a count; the values are the first call's.
//
// Calls a kernel makes while a recorded call runs (a plugin calling ops through its table)
// are the plugin's business, not the application's, and are not recorded (a depth count per
// thread). While recording, the entry points take the boxed path (their fast-path test asks
// CallsRecorded), which gives the same results bit for bit (the unboxed path's differential
// test), so one hook in each boxed entry sees every call; a process that does not record pays
// one flag test. A random op's None generator is recorded as its device's default generator at
// the call's state, so the replay draws the same numbers. Integers beyond 2^53 are written as
// strings of their digits (a JSON reader's double would round them).
//
// The file is never left without what was seen: its header line says `"complete": false` and
// each new distinct call is appended (and flushed) as it first returns, with a count of 1;
// when the process exits (or libtessera is unloaded), the file is rewritten whole (written
// beside it, then renamed over it) with the final counts and `"complete": true`. A process
// that dies keeps every distinct call, each counted once, and the replay says the counts are
// lower bounds. A forked child records nothing (its parent owns the file).

namespace tessera {

bool g_calls_recorded = false;

namespace {

constexpr int kFormatVersion = 1;
constexpr int64_t kDefaultValuesUpTo = 4096;

std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppendFormat(&out, "\\u%04x", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// Integer: an int argument as JSON: a number, or a string of its digits beyond 2^53, where a
// JSON reader's double would round it (the replay reads both exactly).
std::string Integer(int64_t v) {
  constexpr int64_t kExact = int64_t{1} << 53;
  return v >= -kExact && v <= kExact ? absl::StrCat(v) : absl::StrCat("\"", v, "\"");
}

std::string Ints(IntArrayRef v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) absl::StrAppend(&out, i ? "," : "", Integer(v[i]));
  return out + "]";
}

// A number as JSON holds it; NaN and infinities as the strings the case files use.
std::string Number(double v, int digits) {
  if (std::isnan(v)) return "\"nan\"";
  if (std::isinf(v)) return v > 0 ? "\"inf\"" : "\"-inf\"";
  return absl::StrFormat("%.*g", digits, v);
}

template <ScalarType T>
void AppendElements(const std::vector<char>& bytes, int64_t n, int digits, std::string* out) {
  using C = typename CppTypeFor<T>::type;
  const C* p = reinterpret_cast<const C*>(bytes.data());
  for (int64_t i = 0; i < n; ++i) {
    absl::StrAppend(out, i ? "," : "", Number(static_cast<double>(p[i]), digits));
  }
}

// Values: the tensor's elements in row-major order as a JSON array (digits enough to read
// each back exactly), or an error if they cannot be read.
absl::StatusOr<std::string> Values(const Tensor& t) {
  std::vector<char> bytes(static_cast<size_t>(t.numel()) * ElementSize(t.dtype()));
  TSR_RETURN_IF_ERROR(capi::CopyToHost(t, bytes.data()));
  std::string out = "[";
  const int64_t n = t.numel();
  switch (t.dtype()) {
    case ScalarType::kBool:
      AppendElements<ScalarType::kBool>(bytes, n, 1, &out);
      break;
    case ScalarType::kUInt8:
      AppendElements<ScalarType::kUInt8>(bytes, n, 3, &out);
      break;
    case ScalarType::kInt8:
      AppendElements<ScalarType::kInt8>(bytes, n, 3, &out);
      break;
    case ScalarType::kInt16:
      AppendElements<ScalarType::kInt16>(bytes, n, 5, &out);
      break;
    case ScalarType::kInt32:
      AppendElements<ScalarType::kInt32>(bytes, n, 10, &out);
      break;
    case ScalarType::kInt64:
      AppendElements<ScalarType::kInt64>(bytes, n, 19, &out);
      break;
    case ScalarType::kFloat16:
      AppendElements<ScalarType::kFloat16>(bytes, n, 5, &out);
      break;
    case ScalarType::kBFloat16:
      AppendElements<ScalarType::kBFloat16>(bytes, n, 4, &out);
      break;
    case ScalarType::kFloat32:
      AppendElements<ScalarType::kFloat32>(bytes, n, 9, &out);
      break;
    case ScalarType::kFloat64:
      AppendElements<ScalarType::kFloat64>(bytes, n, 17, &out);
      break;
  }
  return out + "]";
}

// Describes one call as the recording's line says it, with the values of tensors of at most
// `values_up_to` elements (< 0: none) ...
class CallWriter {
 public:
  explicit CallWriter(int64_t values_up_to) : values_up_to_(values_up_to) {}
  // ... or, as the key that tells distinct calls apart: no values, no generator state (every
  // call with an explicit generator is at another offset, and is still the same call).
  static CallWriter Key() {
    CallWriter w(-1);
    w.key_ = true;
    return w;
  }

  std::string Arguments(const FunctionSchema& schema, const Stack& args) {
    std::string out = "[";
    for (size_t i = 0; i < args.size(); ++i) {
      if (i) out += ",";
      const bool generator =
          i < schema.arguments.size() && schema.arguments[i].type.base == BaseType::kGenerator;
      const std::string name = i < schema.arguments.size() ? schema.arguments[i].name : "";
      out += "{\"name\":" + Quote(name) + "," +
             (generator && args[i].is_none() && !key_ ? DefaultGeneratorState(args)
                                                      : Argument(args[i])) +
             "}";
    }
    return out + "]";
  }

 private:
  std::string TensorFields(const Tensor& t) {
    std::string out =
        absl::StrCat("\"dtype\":", Quote(ScalarTypeName(t.dtype())), ",\"shape\":", Ints(t.sizes()),
                     ",\"strides\":", Ints(t.strides()), ",\"storage_offset\":", t.storage_offset(),
                     ",\"device\":", Quote(DeviceToString(t.device())));
    if (values_up_to_ >= 0 && t.numel() <= values_up_to_) {
      absl::StatusOr<std::string> values = Values(t);
      if (values.ok()) {
        absl::StrAppend(&out, ",\"values\":", *values);
      } else {  // drawn at replay, and said why
        absl::StrAppend(&out, ",\"values_unread\":", Quote(values.status().ToString()));
      }
    }
    return out;
  }

  std::string Argument(const Value& v) {
    switch (v.kind()) {
      case Value::Kind::kNone:
        return "\"kind\":\"none\"";
      case Value::Kind::kTensor:
        if (!v.tensor().defined()) return "\"kind\":\"none\"";
        return "\"kind\":\"tensor\"," + TensorFields(v.tensor());
      case Value::Kind::kTensorList: {
        std::string out = "\"kind\":\"tensor_list\",\"tensors\":[";
        const std::vector<Tensor>& ts = v.tensor_list();
        for (size_t i = 0; i < ts.size(); ++i) {
          if (i) out += ",";
          out += ts[i].defined() ? "{" + TensorFields(ts[i]) + "}" : "null";
        }
        return out + "]";
      }
      case Value::Kind::kInt:
        return "\"kind\":\"int\",\"value\":" + Integer(v.to_int());
      case Value::Kind::kDouble:
        return "\"kind\":\"double\",\"value\":" + Number(v.to_double(), 17);
      case Value::Kind::kBool:
        return absl::StrCat("\"kind\":\"bool\",\"value\":", v.to_bool() ? "true" : "false");
      case Value::Kind::kString:
        return "\"kind\":\"string\",\"value\":" + Quote(v.string());
      case Value::Kind::kIntList:
        return "\"kind\":\"int_list\",\"value\":" + Ints(v.int_list());
      case Value::Kind::kBoolList: {
        std::string out = "\"kind\":\"bool_list\",\"value\":[";
        const BoolList& bs = v.bool_list();
        for (size_t i = 0; i < bs.size(); ++i) absl::StrAppend(&out, i ? "," : "", bs[i] ? 1 : 0);
        return out + "]";
      }
      case Value::Kind::kScalar: {
        const Scalar& s = v.scalar();
        if (s.is_bool())
          return absl::StrCat("\"kind\":\"scalar\",\"scalar_kind\":\"bool\",\"value\":",
                              s.to_int());
        if (s.is_integral())
          return "\"kind\":\"scalar\",\"scalar_kind\":\"int\",\"value\":" + Integer(s.to_int());
        return "\"kind\":\"scalar\",\"scalar_kind\":\"double\",\"value\":" +
               Number(s.to_double(), 17);
      }
      case Value::Kind::kScalarType:
        return "\"kind\":\"dtype\",\"value\":" + Quote(ScalarTypeName(v.scalar_type()));
      case Value::Kind::kDevice:
        return "\"kind\":\"device\",\"value\":" + Quote(DeviceToString(v.device()));
      case Value::Kind::kGenerator: {
        if (key_) return "\"kind\":\"generator\"";
        const PhiloxState state = v.generator()->state();
        return absl::StrFormat("\"kind\":\"generator\",\"seed\":\"%d\",\"offset\":\"%d\"",
                               state.seed, state.offset);
      }
      case Value::Kind::kDoubleList:
      case Value::Kind::kDefault:
      case Value::Kind::kName:
        break;
    }
    // What a replay cannot rebuild: said, so that the replay names it.
    return "\"kind\":\"unsupported\",\"what\":" + Quote(ValueKindName(v.kind()));
  }

  // A random op's None generator is its device's default one (Note [Random numbers] in
  // core/generator.h): recorded as that generator at the call's state, so the replay draws
  // what the call drew. The device: a device argument's, else the first tensor's not 0-dim on
  // the CPU (as the dispatcher's ResultDevice), else the CPU.
  static std::string DefaultGeneratorState(const Stack& args) {
    std::optional<Device> device;
    for (const Value& v : args) {
      if (v.is_device()) {
        device = v.device();
        break;
      }
    }
    for (const Value& v : args) {
      if (device) break;
      if (v.is_tensor() && v.tensor().defined() &&
          !(v.tensor().dim() == 0 && v.tensor().device().type == DeviceType::kCPU)) {
        device = v.tensor().device();
      }
    }
    const PhiloxState state = DefaultGenerator(device.value_or(Device(DeviceType::kCPU)))->state();
    return absl::StrFormat("\"kind\":\"generator\",\"seed\":\"%d\",\"offset\":\"%d\"", state.seed,
                           state.offset);
  }

  int64_t values_up_to_;
  bool key_ = false;
};

// ValuesUpTo reads TESSERA_RECORD_VALUES: "all", "none" or a count of elements.
int64_t ValuesUpTo() {
  const char* v = std::getenv("TESSERA_RECORD_VALUES");
  if (v == nullptr || *v == '\0') return kDefaultValuesUpTo;
  if (std::strcmp(v, "all") == 0) return INT64_MAX;
  if (std::strcmp(v, "none") == 0) return -1;
  int64_t n = 0;
  if (absl::SimpleAtoi(v, &n) && n >= 0) return n;
  std::fprintf(stderr,
               "tessera: TESSERA_RECORD_VALUES: expected all, none or a count of elements, got "
               "'%s'; recording the values of tensors of at most %lld elements\n",
               v, static_cast<long long>(kDefaultValuesUpTo));
  return kDefaultValuesUpTo;
}

class Recorder {
 public:
  static Recorder* Open() {
    const char* path = std::getenv("TESSERA_RECORD");
    if (path == nullptr || *path == '\0') return nullptr;
    // Absolute: the final rewrite at exit goes where the file was opened, whatever the
    // application's working directory is by then.
    std::string absolute = path;
    if (absolute.front() != '/') {
      char cwd[4096];
      if (getcwd(cwd, sizeof cwd) != nullptr) absolute = std::string(cwd) + "/" + absolute;
    }
    auto* r = new Recorder(std::move(absolute), ValuesUpTo());
    if (r->file_ == nullptr) {
      std::fprintf(stderr,
                   "tessera: TESSERA_RECORD: cannot write '%s' (%s); calls are not recorded\n",
                   path, std::strerror(errno));
      delete r;
      return nullptr;
    }
    return r;
  }

  // Finish: the final counts, written whole beside the file and renamed over it; later calls
  // are not recorded. Run once, when the process exits or libtessera is unloaded (atexit);
  // the recorder itself is never destroyed, since a call may still be running then.
  void Finish() {
    if (!owned_here()) return;  // before the lock: a fork may have copied it held
    absl::MutexLock lock(&mu_);
    if (finished_) return;
    finished_ = true;
    std::fclose(file_);
    file_ = nullptr;
    const std::string tmp = path_ + ".tmp";
    std::FILE* f = std::fopen(tmp.c_str(), "w");
    bool ok = f != nullptr && std::fputs(Header(true).c_str(), f) >= 0;
    for (const Entry& e : entries_) {
      if (e.head.empty()) continue;  // a first call still running at exit: not described yet
      ok = ok && std::fputs(Line(e).c_str(), f) >= 0;
    }
    if (f != nullptr) ok = std::fclose(f) == 0 && ok;
    if (!ok || std::rename(tmp.c_str(), path_.c_str()) != 0) {
      std::fprintf(stderr,
                   "tessera: TESSERA_RECORD: cannot write the final counts to '%s' (%s); it "
                   "keeps each distinct call counted once\n",
                   path_.c_str(), std::strerror(errno));
      std::remove(tmp.c_str());
    }
  }

  int64_t values_up_to() const { return values_up_to_; }
  bool owned_here() const { return getpid() == owner_; }

  // Count: one more call with this key; true when it is the first (the caller then Adds it).
  // After Finish, nothing is counted.
  bool Count(const std::string& key) {
    absl::MutexLock lock(&mu_);
    if (finished_) return false;
    auto [it, first] = index_.try_emplace(key, entries_.size());
    if (first) {
      entries_.emplace_back();
      return true;
    }
    ++entries_[it->second].count;
    return false;
  }

  // Add: the first call with this key, described, appended to the file at once.
  void Add(const std::string& key, std::string head, std::string tail) {
    absl::MutexLock lock(&mu_);
    if (finished_) return;
    Entry& e = entries_[index_.at(key)];
    e.head = std::move(head);
    e.tail = std::move(tail);
    std::fputs(Line(e).c_str(), file_);
    std::fflush(file_);
  }

 private:
  struct Entry {
    std::string head;  // {"op":...,"schema":...,
    std::string tail;  // ,"args":[...]...}
    int64_t count = 1;
  };

  Recorder(std::string path, int64_t values_up_to)
      : path_(std::move(path)), values_up_to_(values_up_to), owner_(getpid()) {
    file_ = std::fopen(path_.c_str(), "w");
    if (file_ != nullptr) {
      std::fputs(Header(false).c_str(), file_);
      std::fflush(file_);
    }
  }

  std::string Header(bool complete) const {
    return absl::StrFormat(
        "{\"format\":\"tessera.recording\",\"format_version\":%d,\"complete\":%s,"
        "\"values_up_to\":%d}\n",
        kFormatVersion, complete ? "true" : "false",
        values_up_to_ == INT64_MAX ? int64_t{-2} : values_up_to_);
  }

  static std::string Line(const Entry& e) {
    return absl::StrCat(e.head, "\"count\":", e.count, e.tail, "\n");
  }

  const std::string path_;
  const int64_t values_up_to_;
  const pid_t owner_;
  absl::Mutex mu_;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  std::FILE* file_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::vector<Entry> entries_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, size_t> index_ ABSL_GUARDED_BY(mu_);
};

// The recorder of this process, or NULL; made when libtessera loads and never destroyed.
Recorder* TheRecorder() {
  static Recorder* const recorder = [] {
    Recorder* r = Recorder::Open();
    if (r != nullptr) std::atexit([] { TheRecorder()->Finish(); });
    return r;
  }();
  return recorder;
}

// Calls a kernel makes while a recorded call runs are not the application's (Note [Recording
// calls]): a depth per thread, kept by a guard.
thread_local int t_recorded_depth = 0;
struct RecordedDepth {
  RecordedDepth() { ++t_recorded_depth; }
  ~RecordedDepth() { --t_recorded_depth; }
};

[[maybe_unused]] const bool g_recorder_opened = (g_calls_recorded = TheRecorder() != nullptr);

}  // namespace

absl::Status CallRecorded(const OperatorHandle& op, Stack* stack) {
  Recorder* recorder = TheRecorder();
  if (recorder == nullptr || t_recorded_depth > 0 || !recorder->owned_here()) {
    return op.registry().Call(op, stack);
  }
  // The arguments in schema order with their defaults, as the replay passes them; a call that
  // cannot be bound is recorded as it came (its error says why).
  Stack bound = *stack;
  if (!BindArguments(op.schema(), op.name(), &bound).ok()) bound = *stack;
  const std::string key = absl::StrCat(op.name(), CallWriter::Key().Arguments(op.schema(), bound));
  const bool first = recorder->Count(key);
  std::string args;  // before the call: an in-place op changes its inputs
  if (first) args = CallWriter(recorder->values_up_to()).Arguments(op.schema(), bound);
  bound.clear();
  absl::Status status;
  {
    RecordedDepth inside;
    status = op.registry().Call(op, stack);
  }
  if (first) {
    std::string tail = ",\"args\":" + args;
    if (!status.ok()) {
      absl::StrAppend(&tail,
                      ",\"error\":{\"code\":", Quote(absl::StatusCodeToString(status.code())),
                      ",\"message\":", Quote(std::string(status.message())), "}");
    }
    recorder->Add(
        key,
        absl::StrCat("{\"op\":", Quote(op.name()), ",\"schema\":", Quote(op.schema_text()), ","),
        tail + "}");
  }
  return status;
}

}  // namespace tessera
