// The `conformance` CLI: loads plugins through the public embedding API, runs the op database
// against one device, and reports coverage (terminal, JSON, JUnit, Markdown). docs/conformance.md
// documents every flag.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>

#include "conformance/cases_library.h"
#include "conformance/crash_handler.h"
#include "conformance/device_contract.h"
#include "conformance/exit_codes.h"
#include "conformance/isolate.h"
#include "conformance/model_checks.h"
#include "conformance/oracles.h"
#include "conformance/recorded_calls.h"
#include "conformance/report.h"

namespace tessera {
namespace conformance {
namespace {

struct Options {
  std::vector<std::string> plugins;
  std::vector<std::string> cases;  // --cases: cases libraries
  std::string device;
  std::string op_regex = ".*";
  std::set<std::string> families;  // --family: empty, every family
  std::vector<tsr_dtype> dtypes;
  uint64_t seed = 0;
  int jobs = 1;
  bool isolate = false;
  double timeout = 60;
  std::string expect, baseline, json, junit, markdown;
  JsonDetail json_detail = JsonDetail::kAll;
  bool list = false;
  std::string models;                   // --models: a model file or a folder of them
  std::vector<std::string> recordings;  // --cases-from: recordings (TESSERA_RECORD)
  bool op_given = false;
  bool allow_fallback_only = false;  // --allow-fallback-only
  int rerun_failures = 0;            // --rerun-failures
  bool device_contract = false;      // --device-contract
};

// A device-contract check hung: its thread is still inside the plugin, so the process ends
// with std::_Exit once the reports are written (no static destructor runs under it).
bool g_contract_hung = false;

const char* kUsage =
    "usage: conformance [--plugin PATH]... [--cases PATH]... [--device NAME] [--op REGEX]\n"
    "                   [--family LIST] [--dtype LIST] [--seed N] [--jobs N] [--isolate]\n"
    "                   [--timeout S]\n"
    "                   [--expect FILE]\n"
    "                   [--baseline FILE] [--json FILE] [--json-detail all|failures]\n"
    "                   [--junit FILE] [--markdown FILE] [--list] [--models PATH]\n"
    "                   [--allow-fallback-only] [--rerun-failures N] [--device-contract]\n"
    "                   [--cases-from FILE]...\n"
    "Runs Tessera's op database against one device and reports its coverage. --models runs\n"
    "each model file in PATH (a file or a folder of .tsrm files) on the device against\n"
    "PyTorch's stored outputs and the CPU plugin's; alone (no --op), it runs the models only.\n"
    "--device-contract checks the device's interface itself (allocation, copies, streams,\n"
    "events, unloading); alone (no --op), it runs those checks only.\n"
    "--cases-from replays the op calls a program made (recorded with TESSERA_RECORD=FILE) as\n"
    "cases, weighted by how often each occurred; alone (no --op), it runs those only.\n"
    "Exit codes: 0 no failure, 1 failures (or regressions against --baseline, or ops run with no "
    "value case passing on the device's own kernels, unless --allow-fallback-only), 2 usage or "
    "load error, 77 the device is not present on this machine (nothing was tested).\n";

// PrintUsage says what was wrong and how the CLI is used; Usage then ends the run (exit 2).
void PrintUsage(const std::string& error) {
  std::fprintf(stderr, "conformance: %s\n%s", error.c_str(), kUsage);
}
[[noreturn]] void Usage(const std::string& error) {
  PrintUsage(error);
  std::exit(kExitUsage);
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage("missing value after " + a);
      return argv[++i];
    };
    auto number = [&](const std::string& v) -> double {
      char* end = nullptr;
      const double d = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end != '\0' || !std::isfinite(d))
        Usage("expected a finite number after " + a + ", got '" + v + "'");
      return d;
    };
    // integer: decimal digits only (no sign, fraction or exponent), at most `max`.
    auto integer = [&](const std::string& v, uint64_t max) -> uint64_t {
      errno = 0;
      char* end = nullptr;
      const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || *end != '\0' ||
          errno == ERANGE || n > max) {
        Usage("expected an integer from 0 to " + std::to_string(max) + " after " + a + ", got '" +
              v + "'");
      }
      return n;
    };
    if (a == "--plugin") {
      o.plugins.push_back(value());
    } else if (a == "--cases") {
      o.cases.push_back(value());
    } else if (a == "--device") {
      o.device = value();
    } else if (a == "--op") {
      o.op_regex = value();
      o.op_given = true;
    } else if (a == "--family") {
      std::stringstream list(value());
      std::string name;
      while (std::getline(list, name, ',')) {
        std::string known;
        for (const char* family : kOpFamilies) {
          if (name == family) o.families.insert(name);
          known += std::string(known.empty() ? "" : ", ") + family;
        }
        if (o.families.count(name) == 0)
          Usage("--family: unknown family '" + name + "' (expected " + known + ")");
      }
      if (o.families.empty()) Usage("--family: expected a family name, got an empty list");
      o.op_given = true;
    } else if (a == "--dtype") {
      std::stringstream list(value());
      std::string name;
      while (std::getline(list, name, ',')) {
        bool found = false;
        for (tsr_dtype d : kAllDtypes) {
          if (name == DtypeName(d)) {
            o.dtypes.push_back(d);
            found = true;
          }
        }
        if (!found)
          Usage("unknown dtype '" + name +
                "' (expected bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32 or "
                "float64)");
      }
    } else if (a == "--seed") {
      o.seed = integer(value(), UINT64_MAX);
    } else if (a == "--jobs") {
      o.jobs = static_cast<int>(integer(value(), 1024));
      if (o.jobs < 1) Usage("--jobs must be at least 1");
    } else if (a == "--isolate") {
      o.isolate = true;
    } else if (a == "--timeout") {
      o.timeout = number(value());
      if (o.timeout <= 0) Usage("--timeout must be a positive number of seconds");
    } else if (a == "--expect") {
      o.expect = value();
    } else if (a == "--baseline") {
      o.baseline = value();
    } else if (a == "--json") {
      o.json = value();
    } else if (a == "--json-detail") {
      const std::string v = value();
      if (v == "all") {
        o.json_detail = JsonDetail::kAll;
      } else if (v == "failures") {
        o.json_detail = JsonDetail::kFailures;
      } else {
        Usage("--json-detail: expected 'all' or 'failures', got '" + v + "'");
      }
    } else if (a == "--junit") {
      o.junit = value();
    } else if (a == "--markdown") {
      o.markdown = value();
    } else if (a == "--list") {
      o.list = true;
    } else if (a == "--allow-fallback-only") {
      o.allow_fallback_only = true;
    } else if (a == "--rerun-failures") {
      o.rerun_failures = static_cast<int>(integer(value(), 100));
    } else if (a == "--device-contract") {
      o.device_contract = true;
    } else if (a == "--models") {
      o.models = value();
    } else if (a == "--cases-from") {
      o.recordings.push_back(value());
    } else if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(kExitOk);
    } else {
      Usage("unknown argument '" + a + "'");
    }
  }
  if (o.dtypes.empty()) o.dtypes.assign(std::begin(kAllDtypes), std::end(kAllDtypes));
  // Jobs are child processes: --jobs N above 1 runs isolated (it was silently ignored without
  // --isolate).
  if (o.jobs > 1) o.isolate = true;
  return o;
}

// ReadFile reads an --expect or --baseline file: a regular file of sensible size (not a
// directory, a device such as /dev/zero, or a FIFO, which would read as empty or forever).
std::string ReadFile(const std::string& flag, const std::string& path) {
  constexpr off_t kMaxBytes = off_t{1} << 30;
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    Usage(flag + ": cannot read '" + path + "': " + strerror(errno));
  if (!S_ISREG(st.st_mode)) {
    Usage(flag + ": '" + path + "' is " +
          (S_ISDIR(st.st_mode) ? "a directory" : "not a regular file") + " (expected a file)");
  }
  if (st.st_size > kMaxBytes) {
    Usage(flag + ": '" + path + "' has " + std::to_string(st.st_size) +
          " bytes, more than the 1 GiB a report or expectation file may have");
  }
  std::ifstream in(path);
  if (!in) Usage(flag + ": cannot read '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// CheckRegex refuses patterns whose std::regex compilation would recurse without bound (deeply
// nested groups overflow the stack of libstdc++'s recursive-descent compiler).
void CheckRegex(const std::string& pattern) {
  constexpr size_t kMaxLength = 1000;
  constexpr int kMaxDepth = 32;
  if (pattern.size() > kMaxLength) {
    Usage("--op: the pattern has " + std::to_string(pattern.size()) + " characters, more than " +
          std::to_string(kMaxLength));
  }
  int depth = 0, deepest = 0;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\') {
      ++i;  // an escaped character is no group
    } else if (pattern[i] == '(' || pattern[i] == '[') {
      deepest = std::max(deepest, ++depth);
    } else if ((pattern[i] == ')' || pattern[i] == ']') && depth > 0) {
      --depth;
    }
  }
  if (deepest > kMaxDepth) {
    Usage("--op: groups nested " + std::to_string(deepest) + " deep, more than " +
          std::to_string(kMaxDepth));
  }
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) {
    std::fprintf(stderr, "conformance: cannot write '%s'\n", path.c_str());
    std::exit(kExitUsage);
  }
}

std::string LoadReportText(const tsr_load_report* r) {
  char buf[2048];
  tsr_load_report_format(r, buf, sizeof buf);
  return buf;
}

// Progress: a bar on a terminal, one line per op otherwise.
class Progress {
 public:
  explicit Progress(size_t total) : total_(total), tty_(isatty(STDERR_FILENO)) {}
  void Done(const std::string& op, const std::vector<CaseResult>& cases) {
    ++done_;
    int fails = 0, n = 0;
    for (const CaseResult& c : cases) {
      if (c.op != op) continue;
      ++n;
      fails += IsFailure(c.status);
    }
    if (tty_) {
      const int width = 30, filled = static_cast<int>(width * done_ / std::max<size_t>(total_, 1));
      std::fprintf(stderr, "\r[%s%s] %zu/%zu %-30s", std::string(filled, '#').c_str(),
                   std::string(width - filled, '.').c_str(), done_, total_, op.c_str());
      if (done_ == total_) std::fprintf(stderr, "\n");
    } else {
      std::fprintf(stderr, "[%zu/%zu] %s: %d cases, %d failing\n", done_, total_, op.c_str(), n,
                   fails);
    }
  }

 private:
  size_t total_, done_ = 0;
  bool tty_;
};

// LoadUnderTest loads what the run tests in this process: the runtime's default plugins (the
// CPU backend), the plugins under test, then the cases libraries (vendor op database entries,
// whose ops the plugins define); and checks the device. 0 with `*config`, `*device_name` and
// `*vendor_ops` (kept for the process: their functions call into the libraries), else the
// run's exit code, having said why. A crash while loading names what was loading (the crash
// handler's notes).
int LoadUnderTest(const Options& o, RunConfig* config, std::string* device_name,
                  std::vector<OpInfo>* vendor_ops) {
  NoteLoading("the default plugins", "");
  if (tsr_error* e = tsr_plugin_load_default()) {
    std::fprintf(stderr, "conformance: loading the default plugins failed: %s\n",
                 std::string(sdk::from_c(sdk::api().error_message(e))).c_str());
    sdk::api().error_release(e);
    return kExitUsage;
  }
  *device_name = o.device;
  for (const std::string& path : o.plugins) {
    NoteLoading("plugin", path);
    const tsr_load_report* report = nullptr;
    tsr_error* e = tsr_plugin_load(sdk::to_c(path), &report);
    if (e != nullptr) {
      const std::string why =
          report ? LoadReportText(report) : std::string(sdk::from_c(sdk::api().error_message(e)));
      sdk::api().error_release(e);
      std::fprintf(stderr, "conformance: cannot load plugin '%s'\n%s\n", path.c_str(), why.c_str());
      return kExitUsage;
    }
    if (o.device.empty()) *device_name = std::string(sdk::from_c(report->device_name));
  }
  std::set<std::string> taken;
  for (const OpInfo& op : OpDatabase()) taken.insert(op.name);
  for (const std::string& path : o.cases) {
    NoteLoading("cases library", path);
    std::string error;
    if (!LoadCasesLibrary(path, taken, vendor_ops, &error)) {
      std::fprintf(stderr, "conformance: %s\n", error.c_str());
      return kExitUsage;
    }
    for (const OpInfo& op : *vendor_ops) taken.insert(op.name);
  }
  NoteIdle();
  if (o.list) return kExitOk;
  if (device_name->empty()) *device_name = "cpu";
  try {
    config->device = parse_device(*device_name);
  } catch (const sdk::Error& e) {
    // Returned, not exited: under --isolate this runs in the probing child, whose exit status
    // other than 0 the parent reads as a crash while loading.
    PrintUsage(std::string("--device: ") + e.what());
    return kExitUsage;
  }
  config->seed = o.seed;
  config->dtypes = o.dtypes;
  config->rerun_failures = o.rerun_failures;
  for (const OpInfo& op : *vendor_ops) config->vendor_ops.push_back(op.name);
  config->cpu_available = false;
  const tsr_load_report* const* reports = nullptr;
  size_t count = 0;
  tsr_load_reports(&reports, &count);
  for (size_t i = 0; i < count; ++i) {
    if (reports[i]->loaded && sdk::from_c(reports[i]->plugin_name) == "cpu")
      config->cpu_available = true;
  }
  // A loaded plugin provides the device type, but this machine lacks the device (a GPU plugin
  // without a GPU): say so with its own exit code instead of failing every case.
  int32_t present = 0;
  if (tsr_error* e = tsr_device_count(config->device.type, &present)) sdk::api().error_release(e);
  for (size_t i = 0; i < count; ++i) {
    if (!reports[i]->loaded || reports[i]->device_type != config->device.type) continue;
    if (config->device.index < present) break;
    char name[64];
    tsr_device_format(config->device, name, sizeof name);
    std::printf(
        "conformance: no device %s is present on this machine (plugin '%s' reports %d); "
        "nothing was tested\n",
        name, std::string(sdk::from_c(reports[i]->plugin_name)).c_str(), present);
    return kExitNoDevice;
  }
  return kExitOk;
}

// List prints the ops with their forms and declared dtypes (--list).
int List(const std::vector<const OpInfo*>& ops) {
  for (const OpInfo* op : ops) {
    std::string dtypes;
    for (tsr_dtype d : kAllDtypes) {
      if (op->dtypes & Bit(d)) dtypes += std::string(dtypes.empty() ? "" : ",") + DtypeName(d);
    }
    std::printf("%-26s out=%-24s inplace=%-20s %s\n", op->name.c_str(),
                op->out.empty() ? "-" : op->out.c_str(),
                op->inplace.empty() ? "-" : op->inplace.c_str(), dtypes.c_str());
  }
  return kExitOk;
}

int Main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  CheckRegex(o.op_regex);
  std::regex pattern;
  try {
    pattern = std::regex(o.op_regex);
  } catch (const std::regex_error& e) {
    Usage("--op: not a valid regular expression: " + o.op_regex);
  }
  // --models, --cases-from or --device-contract without --op: those alone.
  const bool models_only =
      (!o.models.empty() || !o.recordings.empty() || o.device_contract) && !o.op_given;
  auto selected = [&](const std::string& name, const std::string& family) {
    return !models_only && std::regex_search(name, pattern) &&
           (o.families.empty() || o.families.count(family) > 0);
  };
  std::vector<const OpInfo*> ops;
  for (const OpInfo& op : OpDatabase()) {
    if (selected(op.name, op.family)) ops.push_back(&op);
  }
  // --list without cases libraries needs no plugin; with them it lists their ops too, after
  // loading them below.
  if (o.list && o.cases.empty()) return List(ops);
  std::vector<Expectation> expectations;
  if (!o.expect.empty()) {
    std::string error;
    if (!ParseExpectations(ReadFile("--expect", o.expect), &expectations, &error))
      Usage(o.expect + ": " + error);
  }
  Json baseline;
  if (!o.baseline.empty()) {
    std::string error;
    if (!Json::Parse(ReadFile("--baseline", o.baseline), &baseline, &error))
      Usage(o.baseline + ": not JSON: " + error);
    if (baseline.kind() != Json::Kind::kObject || baseline["cases"].kind() != Json::Kind::kArray)
      Usage(o.baseline +
            ": not a conformance report (expected a JSON object with a 'cases' array, "
            "as --json writes)");
  }
  RunInfo info;
  info.plugins = o.plugins;
  info.seed = o.seed;
  info.cases_libraries = o.cases;
  info.recordings = o.recordings;
  sdk::api_slot() = tsr_runtime_api_get();
  info.abi_version =
      std::to_string(sdk::api().abi_major) + "." + std::to_string(sdk::api().abi_minor);
  const LoadFn load = [&o](RunConfig* config, std::string* device_name,
                           std::vector<OpInfo>* vendor_ops) {
    return LoadUnderTest(o, config, device_name, vendor_ops);
  };
  // The plugins under test are loaded here, or (--isolate) in child processes only: Note
  // [Children load the plugins themselves] in isolate.h.
  const bool isolate = o.isolate && !o.list;
  RunConfig config;
  static std::vector<OpInfo>* vendor_ops = new std::vector<OpInfo>();
  std::vector<std::string> names;  // the ops to run
  for (const OpInfo* op : ops) names.push_back(op->name);
  bool loaded = false;
  if (isolate) {
    const Probe probe = ProbeLoad(load, o.timeout, info);
    if (probe.exit_code != kExitOk) return probe.exit_code;
    info.device = probe.device_name;
    for (const std::string& name : probe.vendor_ops) {
      if (selected(name, "cases")) names.push_back(name);
    }
  } else {
    // A crash while loading names what was loading.
    InstallCrashHandler(CrashReport::kTerminal, STDERR_FILENO, info);
    std::string device_name;
    if (const int code = load(&config, &device_name, vendor_ops); code != kExitOk) return code;
    loaded = true;
    for (const OpInfo& op : *vendor_ops) {
      if (selected(op.name, op.family)) {
        ops.push_back(&op);
        names.push_back(op.name);
      }
    }
    if (o.list) return List(ops);
    info.device = device_name;
  }

  std::vector<CaseResult> cases;
  Progress progress(names.size());
  const auto start = std::chrono::steady_clock::now();
  if (isolate) {
    RunIsolated(names, load, o.jobs, o.timeout, info, &cases,
                [&](const std::string& op) { progress.Done(op, cases); });
  } else {
    // A crash ends the run: the handler says which op and case it was, and about --isolate
    // (installed again: this gives it the device for its repro lines).
    InstallCrashHandler(CrashReport::kTerminal, STDERR_FILENO, info);
    for (const OpInfo* op : ops) {
      RunOp(*op, config, [&](const CaseResult& c) { cases.push_back(c); });
      progress.Done(op->name, cases);
    }
    NoteIdle();
  }
  // Recorded calls, models and the device contract run in this process, after the op cases
  // (under --isolate, with the plugins loaded here only now, after the last child was forked).
  auto load_here = [&]() {
    if (loaded) return kExitOk;
    InstallCrashHandler(CrashReport::kTerminal, STDERR_FILENO, info);
    std::string device_name;
    const int code = load(&config, &device_name, vendor_ops);
    loaded = code == kExitOk;
    return code;
  };
  // Recorded calls (--cases-from): one case each, among the op cases' in every report.
  std::vector<RecordingResult> recordings;
  if (!o.recordings.empty()) {
    if (const int code = load_here(); code != kExitOk) return code;
    for (const std::string& path : o.recordings) {
      Recording recording;
      std::string error;
      if (!ReadRecording(path, o.seed, &recording, &error)) {
        // The file's fault, not the command line's: the message alone, no usage text.
        std::fprintf(stderr, "conformance: --cases-from: %s\n", error.c_str());
        return kExitUsage;
      }
      if (o.op_given) {  // --op narrows the recorded calls too
        std::vector<RecordedCall>& calls = recording.calls;
        calls.erase(std::remove_if(
                        calls.begin(), calls.end(),
                        [&](const RecordedCall& c) { return !std::regex_search(c.op, pattern); }),
                    calls.end());
      }
      recordings.push_back(
          RunRecording(recording, config, [&](const CaseResult& c) { cases.push_back(c); }));
    }
    NoteIdle();
  }
  // The model checks (--models).
  std::vector<ModelResult> models;
  if (!o.models.empty()) {
    if (const int code = load_here(); code != kExitOk) return code;
    std::string error;
    const std::vector<std::string> files = ModelFiles(o.models, &error);
    if (!error.empty()) Usage(error);
    for (const std::string& file : files) {
      NoteLoading("model", file);
      models.push_back(CheckModel(file, config.device, config.cpu_available, 3));
      std::printf("model %s: %s\n", models.back().model.c_str(), models.back().status.c_str());
    }
    NoteIdle();
  }
  // The device contract (--device-contract): last, in this process; its last check unloads the
  // device's plugin.
  std::vector<ContractResult> contract;
  if (o.device_contract) {
    if (const int code = load_here(); code != kExitOk) return code;
    const ContractRun run = RunDeviceContract(config.device, o.timeout);
    contract = run.results;
    g_contract_hung = run.hung;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ApplyExpectations(expectations, &cases);
  const std::vector<OpSummary> summary = Summarize(cases);

  if (!summary.empty()) std::fputs(ToTerminal(info, summary).c_str(), stdout);
  if (!recordings.empty()) std::fputs(RecordingsTerminal(recordings).c_str(), stdout);
  if (!models.empty()) std::fputs(ModelsTerminal(models).c_str(), stdout);
  if (!contract.empty()) std::fputs(DeviceContractTerminal(contract).c_str(), stdout);
  std::printf("time: %.1f s\n", seconds);
  int failures = 0;
  int model_failures = 0;
  for (const ModelResult& m : models) model_failures += ModelFailed(m);
  int contract_failures = 0, contract_skipped = 0;
  for (const ContractResult& r : contract) {
    contract_failures += ContractFailed(r);
    contract_skipped += r.status == Status::kSkipped;
  }
  for (const CaseResult& c : cases) {
    if (!IsFailure(c.status)) continue;
    if (++failures <= 20) {
      std::printf("FAIL %s %s %s [%s] %s: %s\n", c.op.c_str(), c.dtype.c_str(), c.oracle.c_str(),
                  c.layout.c_str(), c.sample.c_str(), c.message.c_str());
    }
  }
  if (failures > 20) std::printf("... and %d more failing cases (see --json)\n", failures - 20);
  for (const CaseResult& c : cases) {
    if (c.status == Status::kXpass)
      std::printf("XPASS %s %s %s: %s\n", c.op.c_str(), c.dtype.c_str(), c.oracle.c_str(),
                  c.message.c_str());
  }
  int flaky = 0;
  for (const CaseResult& c : cases) {
    if (c.status != Status::kFlaky || ++flaky > 20) continue;
    std::printf("FLAKY %s %s %s [%s] %s: %s\n", c.op.c_str(), c.dtype.c_str(), c.oracle.c_str(),
                c.layout.c_str(), c.sample.c_str(), c.message.c_str());
  }
  if (flaky > 20) std::printf("... and %d more flaky cases (see --json)\n", flaky - 20);
  if (!o.json.empty()) {
    Json report = ToJson(info, summary, cases, o.json_detail);
    if (!o.recordings.empty()) report.set("recordings", RecordingsJson(recordings));
    if (!o.models.empty()) report.set("models", ModelsJson(models));
    if (o.device_contract) report.set("device_contract", DeviceContractJson(contract));
    WriteFile(o.json, report.Dump(1) + "\n");
  }
  if (!o.junit.empty()) {
    WriteFile(o.junit,
              ToJUnit(info, summary, cases,
                      (models.empty() ? "" : ModelsJUnitSuite(info.device, models)) +
                          (contract.empty() ? "" : DeviceContractJUnitSuite(info.device, contract)),
                      static_cast<int>(models.size() + contract.size()),
                      model_failures + contract_failures, contract_skipped));
  }
  if (!o.markdown.empty()) {
    WriteFile(o.markdown, ToMarkdown(info, summary, cases) +
                              (recordings.empty() ? "" : RecordingsMarkdown(recordings)) +
                              (models.empty() ? "" : ModelsMarkdown(models)) +
                              (contract.empty() ? "" : DeviceContractMarkdown(contract)));
  }
  // A run whose every value case passed through the CPU fallback, or none passed at all, tested
  // nothing of the backend: it must not read as green (ggml's suite once reported OK over zero
  // executed cases and hid a corruption for months).
  bool nothing_native = false;
  if (NothingNative(cases)) {
    std::printf(
        "no value case passed on %s's own kernels (%d passed through the CPU fallback): "
        "nothing native was tested%s\n",
        info.device.c_str(), TotalPasses(summary).fallback,
        o.allow_fallback_only ? " (--allow-fallback-only)"
                              : "; pass --allow-fallback-only to accept such a run");
    nothing_native = !o.allow_fallback_only;
  }
  if (!o.baseline.empty()) {
    const BaselineDiff d = CompareBaseline(baseline, cases);
    std::printf("against the baseline: %zu new failures, %zu fixes, %zu flakes\n",
                d.regressions.size(), d.fixes.size(), d.flakes.size());
    for (const std::string& s : d.regressions) std::printf("  NEW FAILURE %s\n", s.c_str());
    for (const std::string& s : d.fixes) std::printf("  FIXED %s\n", s.c_str());
    for (const std::string& s : d.flakes) std::printf("  CHANGED %s\n", s.c_str());
    return d.regressions.empty() && model_failures == 0 && contract_failures == 0 && !nothing_native
               ? kExitOk
               : kExitFailures;
  }
  return failures == 0 && model_failures == 0 && contract_failures == 0 && !nothing_native
             ? kExitOk
             : kExitFailures;
}

}  // namespace
}  // namespace conformance
}  // namespace tessera

int main(int argc, char** argv) {
  const int code = tessera::conformance::Main(argc, argv);
  if (tessera::conformance::g_contract_hung) {
    std::fflush(nullptr);
    std::_Exit(code);
  }
  return code;
}