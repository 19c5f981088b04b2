#include "conformance/recorded_calls.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "conformance/case_json.h"
#include "conformance/code_name.h"
#include "conformance/crash_handler.h"
#include "conformance/invoke.h"

namespace tessera {
namespace conformance {
namespace {

constexpr int64_t kFormatVersion = 1;
const tsr_device kCpu{TSR_DEVICE_CPU, 0};

std::string BaseName(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  const size_t dot = name.rfind(".jsonl");
  if (dot != std::string::npos && dot + 6 == name.size()) name.resize(dot);
  return name;
}

bool OpExists(const std::string& name) {
  const tsr_op* found = nullptr;
  if (tsr_error* e = sdk::api().op_find(sdk::to_c(name), &found)) {
    sdk::api().error_release(e);
    return false;
  }
  return true;
}

size_t SchemaArgumentCount(const std::string& op) {
  const tsr_op* found = nullptr;
  sdk::check(sdk::api().op_find(sdk::to_c(op), &found));
  return SchemaArguments(std::string(sdk::from_c(sdk::api().op_schema(found)))).size();
}

// ReadCall: one line of calls; a malformed one throws CaseJsonError.
RecordedCall ReadCall(const Json& j, int line, Rng& rng) {
  RecordedCall c;
  c.line = line;
  if (j.kind() != Json::Kind::kObject || j["op"].kind() != Json::Kind::kString) {
    throw CaseJsonError("expected a call: an object with \"op\", \"count\" and \"args\"");
  }
  c.op = j["op"].as_string();
  c.count = IntegerFrom(j["count"], "\"count\"");
  if (c.count < 1) {
    throw CaseJsonError("expected \"count\" to be an integer >= 1, found " +
                        std::to_string(c.count));
  }
  if (j["args"].kind() != Json::Kind::kArray) {
    throw CaseJsonError("expected \"args\" to be an array");
  }
  c.dtype = "*";
  for (const Json& a : j["args"].items()) {
    try {
      c.sample.args.push_back(ArgFrom(a, &rng));
    } catch (const CaseNotReplayable& e) {  // well-formed, but no case can be made of it
      c.unreplayable = "argument '" + a["name"].as_string() + "': " + e.what();
      c.sample.args.clear();
      break;
    }
    const Arg& arg = c.sample.args.back();
    if (c.dtype == "*" && arg.kind == Arg::Kind::kTensor) c.dtype = DtypeName(arg.tensor.dtype);
  }
  if (const Json* error = j.find("error")) {
    if ((*error)["code"].kind() != Json::Kind::kString) {
      throw CaseJsonError("expected \"error\" to have a \"code\" string");
    }
    c.error_code = (*error)["code"].as_string();
  }
  std::string desc;
  for (const Arg& a : c.sample.args) desc += (desc.empty() ? "" : ", ") + a.ToString();
  c.sample.desc = desc;
  return c;
}

// How a recorded op relates to the op database: its entry and which of its forms it is.
struct Found {
  const OpInfo* info = nullptr;
  enum class Form { kFunctional, kOut, kInplace } form = Form::kFunctional;
};

Found FindInDatabase(const std::string& op) {
  for (const OpInfo& info : OpDatabase()) {
    if (info.name == op) return {&info, Found::Form::kFunctional};
    if (info.out == op) return {&info, Found::Form::kOut};
    if (info.inplace == op) return {&info, Found::Form::kInplace};
  }
  return {};
}

// The expected returns of a call from the database's reference: for an out= form, of its
// functional form's arguments; the values of arguments updated in place that trail the
// reference's returns are left out (the call's returns are compared).
bool Expected(const Found& found, const Sample& call, std::vector<HostTensor>* expected,
              std::string* why) {
  Sample functional = call;
  if (found.form == Found::Form::kOut) {
    functional.args.resize(std::min(functional.args.size(), SchemaArgumentCount(found.info->name)));
  }
  try {
    *expected = found.info->reference(functional);
  } catch (const std::exception& e) {
    *why = e.what();
    return false;
  }
  for (size_t i : found.info->mutated_args) {
    if (i < functional.args.size() && functional.args[i].kind == Arg::Kind::kTensor &&
        !expected->empty()) {
      expected->pop_back();
    }
  }
  return true;
}

enum class Outcome { kNative, kUnchecked, kFallback, kUnsupported, kFailed, kFlaky, kNotReplayed };

void Tally(CallTally* t, Outcome o, int64_t count) {
  t->calls += count;
  t->distinct += 1;
  switch (o) {
    case Outcome::kNative:
      t->native += count;
      break;
    case Outcome::kUnchecked:
      t->unchecked += count;
      break;
    case Outcome::kFallback:
      t->fallback += count;
      break;
    case Outcome::kUnsupported:
      t->unsupported += count;
      break;
    case Outcome::kFailed:
      t->failed += count;
      break;
    case Outcome::kFlaky:
      t->flaky += count;
      break;
    case Outcome::kNotReplayed:
      t->not_replayed += count;
      break;
  }
}

constexpr const char* kUnchecked = "ran on the device's own kernels; nothing to compare with: ";

// OnlyAsked leaves out the returns a backward op's output_mask did not ask for (None, as ATen
// gives them; the undefined_grad oracle checks that), from what the call returned and what it
// is compared with.
void OnlyAsked(const RecordedCall& call, std::vector<Tensor>* real,
               std::vector<HostTensor>* expected) {
  const int at = OutputMaskIndex(call.op);
  if (at < 0 || static_cast<size_t>(at) >= call.sample.args.size()) return;
  const Arg& mask = call.sample.args[at];
  if (mask.kind != Arg::Kind::kBoolList) return;
  for (size_t k = std::min(mask.ints.size(), real->size()); k-- > 0;) {
    if (mask.ints[k] != 0) continue;
    real->erase(real->begin() + static_cast<std::ptrdiff_t>(k));
    if (k < expected->size()) expected->erase(expected->begin() + static_cast<std::ptrdiff_t>(k));
  }
}

// ReplayCall runs one recorded call as a case; returns its status and message.
CaseOutcome ReplayCall(const RecordedCall& call, const RunConfig& config) {
  const Found found = FindInDatabase(call.op);
  std::vector<HostTensor> expected;
  std::string no_reference = "the op database has no " + call.op;
  bool has_reference = call.error_code.empty() && found.info != nullptr &&
                       Expected(found, call.sample, &expected, &no_reference);
  const bool on_cpu = config.device.type == TSR_DEVICE_CPU;
  const CaseBody body = [&](std::string* msg, Comparison* cmp, Tolerance* tol) -> Status {
    if (!call.error_code.empty()) {
      try {
        Invoke(call.op, call.sample, config.device, Layout::kContiguous);
      } catch (const sdk::Error& e) {
        if (call.error_code == CodeName(e.code())) return Status::kPass;
        *msg = "recorded failing with " + call.error_code + ", failed with " + CodeName(e.code()) +
               ": " + e.what();
        return Status::kFail;
      }
      *msg = "recorded failing with " + call.error_code + ", ran without an error";
      return Status::kFail;
    }
    // A random op without a generator argument (rand, dropout) draws from its device's default
    // generator, which the recording does not carry: each side of a comparison starts it at
    // the same state, and no database reference (which knows only its own samples' draws)
    // applies to such a call.
    manual_seed(config.seed);
    std::vector<Tensor> real = Invoke(call.op, call.sample, config.device, Layout::kContiguous);
    if (Generator::default_for(config.device).state().offset != 0) {
      no_reference = call.op + " draws from its device's default generator";
      has_reference = false;
    }
    if (has_reference) {
      std::vector<HostTensor> asked = expected;
      OnlyAsked(call, &real, &asked);
      return CompareReturns(real, asked, found.info->compare_returns, found.info->tolerance_scale,
                            "result", msg, cmp, tol);
    }
    if (on_cpu || !config.cpu_available) {
      *msg = kUnchecked + no_reference +
             (on_cpu ? ", and the device under test is the CPU" : ", and no CPU plugin is loaded");
      return Status::kSkipped;
    }
    std::vector<HostTensor> cpu;
    manual_seed(config.seed);
    for (const Tensor& t : Invoke(call.op, call.sample, kCpu, Layout::kContiguous)) {
      cpu.push_back(t.defined() ? FromDevice(t) : HostTensor());
    }
    OnlyAsked(call, &real, &cpu);
    const Status st =
        CompareReturns(real, cpu, -1, 1, "result against the CPU plugin's", msg, cmp, tol);
    if (st == Status::kPass) *msg = no_reference + "; compared with the CPU plugin's result";
    return st;
  };
  return RunCase(config, body, /*may_rerun=*/true);
}

Json TallyJson(const CallTally& t) {
  Json j = Json::Object();
  j.set("calls", t.calls);
  j.set("distinct", t.distinct);
  j.set("native", t.native);
  j.set("unchecked", t.unchecked);
  j.set("fallback", t.fallback);
  j.set("unsupported", t.unsupported);
  j.set("failed", t.failed);
  j.set("flaky", t.flaky);
  j.set("not_replayed", t.not_replayed);
  // The weighted coverage: the share of calls that ran on the device's own kernels.
  j.set("native_share", t.calls == 0 ? 0.0 : double(t.native + t.unchecked) / double(t.calls));
  return j;
}

std::string Percent(int64_t part, int64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%",
                whole == 0 ? 0.0 : 100.0 * double(part) / double(whole));
  return buf;
}

}  // namespace

bool ReadRecording(const std::string& path, uint64_t seed, Recording* out, std::string* error) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    *error = path + ": cannot read it (" + std::strerror(errno) + ")";
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *error = path + ": expected a recording (a file), found " +
             (S_ISDIR(st.st_mode) ? "a directory" : "something that is not a regular file");
    return false;
  }
  std::ifstream in(path);
  if (!in) {
    *error = path + ": cannot read it (" + std::strerror(errno) + ")";
    return false;
  }
  std::vector<std::pair<int, std::string>> lines;  // the non-blank ones, numbered
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    if (text.find_first_not_of(" \t\r") != std::string::npos) lines.emplace_back(line, text);
  }
  Recording r;
  r.path = path;
  r.name = BaseName(path);
  Rng rng(seed);
  bool header = false;
  for (size_t k = 0; k < lines.size(); ++k) {
    const auto& [line, text] = lines[k];
    Json j;
    std::string why;
    if (!Json::Parse(text, &j, &why)) {
      // A process killed while it appended its last line leaves that line cut off: what the
      // recording holds before it is kept (its counts are lower bounds anyway).
      if (header && !r.complete && k + 1 == lines.size()) {
        std::fprintf(stderr,
                     "conformance: %s: line %d is cut off (the recording's process did not "
                     "finish it); left out\n",
                     path.c_str(), line);
        break;
      }
      *error = path + ": line " + std::to_string(line) +
               ": expected a JSON object, found text that is not JSON (" + why +
               " within the line)";
      return false;
    }
    if (!header) {
      if (j["format"].kind() != Json::Kind::kString ||
          j["format"].as_string() != "tessera.recording") {
        *error = path + ": line " + std::to_string(line) +
                 ": expected a recording's header ({\"format\": \"tessera.recording\", "
                 "\"format_version\": 1, ...}, as TESSERA_RECORD writes), found " +
                 text.substr(0, 80);
        return false;
      }
      const Json& version = j["format_version"];
      if (version.kind() != Json::Kind::kNumber || version.as_number() != kFormatVersion) {
        *error = path + ": expected format_version " + std::to_string(kFormatVersion) +
                 " (what this conformance reads), found " + version.Dump() +
                 (version.kind() == Json::Kind::kNumber && version.as_number() > kFormatVersion
                      ? " (written by a newer Tessera)"
                      : "");
        return false;
      }
      r.complete = j["complete"].kind() == Json::Kind::kBool && j["complete"].as_bool();
      header = true;
      continue;
    }
    try {
      r.calls.push_back(ReadCall(j, line, rng));
    } catch (const CaseJsonError& e) {
      *error = path + ": line " + std::to_string(line) + ": " + e.what();
      return false;
    }
    RecordedCall& c = r.calls.back();
    if (c.unreplayable.empty() && !OpExists(c.op))
      c.unreplayable = "this runtime has no op " + c.op;
  }
  if (!header) {
    *error = path + ": expected a recording's header line, found an empty file";
    return false;
  }
  *out = std::move(r);
  return true;
}

RecordingResult RunRecording(const Recording& recording, const RunConfig& config,
                             const CaseSink& sink) {
  RecordingResult result;
  result.path = recording.path;
  result.name = recording.name;
  result.complete = recording.complete;
  // Calls of the recorded ops through the CPU fallback make their cases `fallback`.
  RunConfig run = config;
  for (const RecordedCall& c : recording.calls) {
    if (std::find(run.vendor_ops.begin(), run.vendor_ops.end(), c.op) == run.vendor_ops.end()) {
      run.vendor_ops.push_back(c.op);
    }
  }
  std::map<std::string, size_t> op_index;
  for (const RecordedCall& call : recording.calls) {
    CaseResult r;
    r.op = call.op;
    r.dtype = call.dtype;
    r.layout = "recorded";
    r.oracle = "recorded";
    r.sample = recording.name + ":" + std::to_string(call.line) + " x" +
               std::to_string(call.count) + " (" + call.sample.desc + ")";
    Outcome outcome;
    if (!call.unreplayable.empty()) {
      r.status = Status::kSkipped;
      r.message = "not replayed: " + call.unreplayable;
      outcome = Outcome::kNotReplayed;
    } else {
      NoteRunningCase(call.op, call.dtype, r.layout, r.oracle, r.sample);
      const CaseOutcome o = ReplayCall(call, run);
      NoteCaseDone();
      r.status = o.status;
      r.message = o.message;
      r.max_abs = o.cmp.max_abs;
      r.max_rel = o.cmp.max_rel;
      r.snr_db = o.cmp.snr_db;
      r.atol = o.tol.atol;
      r.rtol = o.tol.rtol;
      switch (o.status) {
        case Status::kPass:
          outcome = Outcome::kNative;
          break;
        case Status::kSkipped:
          outcome = Outcome::kUnchecked;
          break;
        case Status::kFallback:
          outcome = Outcome::kFallback;
          break;
        case Status::kUnsupported:
          outcome = Outcome::kUnsupported;
          break;
        case Status::kFlaky:
          outcome = Outcome::kFlaky;
          break;
        default:
          outcome = Outcome::kFailed;
      }
    }
    sink(r);
    Tally(&result.total, outcome, call.count);
    auto [it, added] = op_index.try_emplace(call.op, result.by_op.size());
    if (added) result.by_op.emplace_back(call.op, CallTally());
    Tally(&result.by_op[it->second].second, outcome, call.count);
  }
  return result;
}

Json RecordingsJson(const std::vector<RecordingResult>& results) {
  Json all = Json::Array();
  for (const RecordingResult& r : results) {
    Json j = TallyJson(r.total);
    j.set("recording", r.name);
    j.set("path", r.path);
    j.set("complete", r.complete);
    Json ops = Json::Array();
    for (const auto& [op, tally] : r.by_op) {
      Json o = TallyJson(tally);
      o.set("op", op);
      ops.push(o);
    }
    j.set("by_op", ops);
    all.push(j);
  }
  return all;
}

std::string RecordingsMarkdown(const std::vector<RecordingResult>& results) {
  std::ostringstream md;
  md << "\n## Recordings\n\n"
     << "Calls by outcome, each distinct call weighing its count; native share: (native + "
        "unchecked) / calls.\n\n"
     << "| recording | calls | distinct | native | unchecked | fallback | unsupported | failed | "
        "flaky | not replayed | native share |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const RecordingResult& r : results) {
    const CallTally& t = r.total;
    md << "| " << r.name << (r.complete ? "" : " (counts are lower bounds)") << " | " << t.calls
       << " | " << t.distinct << " | " << t.native << " | " << t.unchecked << " | " << t.fallback
       << " | " << t.unsupported << " | " << t.failed << " | " << t.flaky << " | " << t.not_replayed
       << " | " << Percent(t.native + t.unchecked, t.calls) << " |\n";
  }
  return md.str();
}

std::string RecordingsTerminal(const std::vector<RecordingResult>& results) {
  std::ostringstream out;
  for (const RecordingResult& r : results) {
    const CallTally& t = r.total;
    out << "recording " << r.name << ": " << t.calls << " calls (" << t.distinct
        << " distinct): " << Percent(t.native + t.unchecked, t.calls) << " native (" << t.unchecked
        << " of them unchecked), " << Percent(t.fallback, t.calls) << " fallback, " << t.unsupported
        << " unsupported, " << t.failed << " failed";
    if (t.flaky) out << ", " << t.flaky << " flaky";
    if (t.not_replayed) out << ", " << t.not_replayed << " not replayed";
    out << "\n";
    if (!r.complete) {
      out << "  its process did not exit normally: each call's count is a lower bound\n";
    }
    for (const auto& [op, o] : r.by_op) {
      if (o.native + o.unchecked == o.calls) continue;
      out << "  " << op << ": " << o.calls << " calls, " << Percent(o.native + o.unchecked, o.calls)
          << " native\n";
    }
  }
  return out.str();
}

}  // namespace conformance
}  // namespace tessera
