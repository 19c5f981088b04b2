// tessera_dump_cases: every sample of the op database run through the CPU backend as the
// reference oracle runs it, one JSON line per case: the op, its schema, the dtype, the sample,
// every argument in schema order, and Tessera's returns or its error. The suite's references
// are our reading of PyTorch (issue 9); conformance/tools/torch_side_by_side.py replays these
// lines through PyTorch itself to find where the reading was wrong. A development tool, built
// with the tests and never installed: Tessera does not depend on PyTorch.
// docs/conformance.md ("Side by side with PyTorch") documents the flags and the line format.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "conformance/case_json.h"
#include "conformance/code_name.h"
#include "conformance/invoke.h"
#include "conformance/json.h"
#include "conformance/op_db.h"

namespace tessera {
namespace conformance {
namespace {

const char* kUsage =
    "usage: tessera_dump_cases --out FILE [--op REGEX] [--dtype LIST] [--seed N] [--forms]\n"
    "       tessera_dump_cases --out FILE --replay CASES\n"
    "Runs every sample of the op database on the CPU backend and writes one JSON line per case\n"
    "(arguments, Tessera's returns or error) for conformance/tools/torch_side_by_side.py.\n"
    "--replay runs the cases of a file of such lines instead (their op and args), for inputs\n"
    "that come from elsewhere, such as PyTorch's own OpInfo samples.\n"
    "--forms also runs each case's out= form (into outputs of shape [0]) and in-place form.\n";

[[noreturn]] void Usage(const std::string& error) {
  std::fprintf(stderr, "tessera_dump_cases: %s\n%s", error.c_str(), kUsage);
  std::exit(2);
}

struct Options {
  std::string out;
  std::string op_regex = ".*";
  std::vector<tsr_dtype> dtypes;
  uint64_t seed = 0;
  std::string replay;
  bool forms = false;  // also the out= and in-place forms of each case
};

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage("missing value after " + a);
      return argv[++i];
    };
    if (a == "--out") {
      o.out = value();
    } else if (a == "--op") {
      o.op_regex = value();
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
        if (!found) Usage("unknown dtype '" + name + "'");
      }
    } else if (a == "--seed") {
      char* end = nullptr;
      const std::string v = value();
      o.seed = std::strtoull(v.c_str(), &end, 10);
      if (end == v.c_str() || *end != '\0') Usage("expected a number after --seed, got " + v);
    } else if (a == "--replay") {
      o.replay = value();
    } else if (a == "--forms") {
      o.forms = true;
    } else if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else {
      Usage("unknown argument '" + a + "'");
    }
  }
  if (o.out.empty()) Usage("--out FILE is required");
  if (o.dtypes.empty()) o.dtypes.assign(std::begin(kAllDtypes), std::end(kAllDtypes));
  return o;
}

// A tensor as dtype, shape and row-major values; Json writes NaN and infinities as the strings
// "nan", "inf" and "-inf" (JSON has no such numbers).
Json TensorJson(const HostTensor& t) {
  Json j = Json::Object();
  j.set("dtype", DtypeName(t.dtype));
  Json shape = Json::Array();
  for (int64_t s : t.shape) shape.push(s);
  j.set("shape", shape);
  Json values = Json::Array();
  for (double v : t.values) values.push(v);
  j.set("values", values);
  return j;
}

Json TensorsJson(const std::vector<HostTensor>& ts) {
  Json j = Json::Array();
  for (const HostTensor& t : ts) j.push(TensorJson(t));
  return j;
}

// The argument's name in a schema declaration: "int[1]? dim=None" -> "dim".
std::string DeclName(const std::string& decl) {
  std::string d = decl.substr(0, decl.find('='));
  while (!d.empty() && d.back() == ' ') d.pop_back();
  return d.substr(d.rfind(' ') + 1);
}

Json ArgJson(const Arg& a, const std::string& name) {
  Json j = Json::Object();
  j.set("name", name);
  switch (a.kind) {
    case Arg::Kind::kTensor: {
      j.set("kind", "tensor");
      const Json tensor = TensorJson(a.tensor);
      for (const auto& [k, v] : tensor.members()) j.set(k, v);
      break;
    }
    case Arg::Kind::kTensorList: {
      j.set("kind", "tensor_list");
      Json tensors = Json::Array();  // None (Tensor?[]) is null
      for (size_t i = 0; i < a.tensors.size(); ++i)
        tensors.push(a.Absent(i) ? Json() : TensorJson(a.tensors[i]));
      j.set("tensors", tensors);
      break;
    }
    case Arg::Kind::kScalar:
      j.set("kind", "scalar");
      j.set("scalar_kind", a.scalar_kind == Arg::ScalarKind::kInt    ? "int"
                           : a.scalar_kind == Arg::ScalarKind::kBool ? "bool"
                                                                     : "double");
      j.set("value", a.number);
      break;
    case Arg::Kind::kInt:
      j.set("kind", "int");
      j.set("value", a.integer);
      break;
    case Arg::Kind::kBool:
      j.set("kind", "bool");
      j.set("value", a.boolean);
      break;
    case Arg::Kind::kDouble:
      j.set("kind", "double");
      j.set("value", a.number);
      break;
    case Arg::Kind::kIntList:
    case Arg::Kind::kBoolList: {
      j.set("kind", a.kind == Arg::Kind::kIntList ? "int_list" : "bool_list");
      Json ints = Json::Array();
      for (int64_t v : a.ints) ints.push(v);
      j.set("value", ints);
      break;
    }
    case Arg::Kind::kString:
      j.set("kind", "string");
      j.set("value", a.string);
      break;
    case Arg::Kind::kNone:
      j.set("kind", "none");
      break;
    case Arg::Kind::kDtype:
      j.set("kind", "dtype");
      j.set("value", DtypeName(a.dtype));
      break;
    case Arg::Kind::kDevice:
      j.set("kind", "device");
      j.set("value", "cpu");  // the device under test; this tool runs the CPU backend
      break;
    case Arg::Kind::kGenerator:  // Philox at (seed, offset): PyTorch cannot draw the same
      j.set("kind", "generator");
      j.set("seed", std::to_string(a.seed));
      j.set("offset", std::to_string(a.offset));
      break;
  }
  return j;
}

const tsr_device kCpu{TSR_DEVICE_CPU, 0};

Json ErrorJson(const std::string& code, const std::string& message) {
  Json error = Json::Object();
  error.set("code", code);
  error.set("message", message);
  Json j = Json::Object();
  j.set("error", error);
  return j;
}

// Outcome: what `call` returns as {"outputs": [...]}, or its error as {"error": {"code",
// "message"}}.
Json Outcome(const std::function<std::vector<Tensor>()>& call) {
  try {
    std::vector<HostTensor> outs;
    for (const Tensor& t : call()) outs.push_back(FromDevice(t));
    Json j = Json::Object();
    j.set("outputs", TensorsJson(outs));
    return j;
  } catch (const sdk::Error& e) {
    return ErrorJson(CodeName(e.code()), e.what());
  } catch (const std::exception& e) {
    return ErrorJson("EXCEPTION", e.what());
  }
}

// Tessera's side of a case: the functional form's Outcome.
Json RunOnTessera(const std::string& op_name, const Sample& s) {
  return Outcome([&] { return Invoke(op_name, s, kCpu, Layout::kContiguous); });
}

// RunForms adds to `j` the case's out= form ("tessera_out": what it wrote into outputs of
// shape [0], which it must resize, of the functional results' dtypes) and its in-place form
// ("tessera_inplace": self afterwards), each as an Outcome.
void RunForms(const OpInfo& op, const Sample& s, Json* j) {
  if (!op.out.empty()) {
    j->set("tessera_out", Outcome([&] {
             std::vector<tsr_dtype> dtypes;
             try {
               for (const Tensor& t : Invoke(op.name, s, kCpu, Layout::kContiguous))
                 dtypes.push_back(t.dtype());
             } catch (const sdk::Error&) {
               // The functional form fails: one output of the first tensor's dtype meets the error.
               dtypes.push_back(TSR_DTYPE_FLOAT32);
               for (const Arg& a : s.args) {
                 if (a.kind == Arg::Kind::kTensor) {
                   dtypes.back() = a.tensor.dtype;
                   break;
                 }
               }
             }
             std::vector<Tensor> outs;
             for (tsr_dtype d : dtypes) outs.push_back(EmptyOn({0}, d, kCpu));
             Invoke(op.out, WithDefaults(op.name, s), kCpu, Layout::kContiguous, outs);
             return outs;
           }));
  }
  if (!op.inplace.empty() && !s.args.empty() && s.args[0].kind == Arg::Kind::kTensor) {
    j->set("tessera_inplace", Outcome([&] {
             std::vector<Tensor> inputs;
             Invoke(op.inplace, s, kCpu, Layout::kContiguous, {}, &inputs);
             return std::vector<Tensor>{inputs[0]};
           }));
  }
}

// --replay: each line's op and args run on Tessera; the line comes back with "tessera" (and
// "schema") set and every other field kept, ready for torch_side_by_side.py.
int Replay(const Options& o, std::ofstream& out) {
  std::ifstream in(o.replay);
  if (!in) Usage("cannot read '" + o.replay + "'");
  int64_t cases = 0, unreadable = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    Json j;
    std::string error;
    if (!Json::Parse(line, &j, &error)) {
      ++unreadable;
      std::fprintf(stderr, "tessera_dump_cases: --replay: not JSON (%s): %.80s\n", error.c_str(),
                   line.c_str());
      continue;
    }
    const std::string name = j["op"].as_string();
    const tsr_op* found = nullptr;
    if (tsr_error* e = sdk::api().op_find(sdk::to_c(name), &found)) {
      sdk::api().error_release(e);
      j.set("tessera", ErrorJson("NOT_FOUND", "Tessera has no op " + name));
    } else {
      j.set("schema", std::string(sdk::from_c(sdk::api().op_schema(found))));
      try {
        Sample s;
        for (const Json& a : j["args"].items()) s.args.push_back(ArgFrom(a));
        j.set("tessera", RunOnTessera(name, s));
      } catch (const std::runtime_error& e) {
        ++unreadable;
        std::fprintf(stderr, "tessera_dump_cases: --replay: %s: %s\n", name.c_str(), e.what());
        continue;
      }
    }
    out << j.Dump() << '\n';
    ++cases;
  }
  std::fprintf(stderr, "tessera_dump_cases: %lld cases replayed (%lld unreadable) to %s\n",
               static_cast<long long>(cases), static_cast<long long>(unreadable), o.out.c_str());
  return 0;
}

// One case: the sample's arguments as passed (not completed with our defaults, so that
// PyTorch applies its own and a difference in defaults shows), Tessera's returns or error, and
// the suite's fp64 reference where it has one, to tell a wrong kernel from a wrong reference.
Json CaseJson(const OpInfo& op, const std::string& schema, const std::string& dtype,
              const std::string& kind, const Sample& s, bool forms) {
  const std::vector<std::string> decls = SchemaArguments(schema);
  Json j = Json::Object();
  j.set("op", op.name);
  j.set("schema", schema);
  j.set("dtype", dtype);
  j.set("kind", kind);
  j.set("sample", s.desc);
  j.set("compare_returns", op.compare_returns);
  Json args = Json::Array();
  for (size_t i = 0; i < s.args.size(); ++i)
    args.push(ArgJson(s.args[i], i < decls.size() ? DeclName(decls[i]) : ""));
  j.set("args", args);
  j.set("tessera", RunOnTessera(op.name, s));
  if (forms) RunForms(op, s, &j);
  if (kind == "sample") {
    try {
      j.set("reference", TensorsJson(op.reference(s)));
    } catch (const std::exception&) {
      // No reference for this sample (the reference oracle skips it too).
    }
  }
  return j;
}

int Main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  std::regex pattern;
  try {
    pattern = std::regex(o.op_regex);
  } catch (const std::regex_error&) {
    Usage("--op: not a valid regular expression: " + o.op_regex);
  }
  std::ofstream out(o.out);
  if (!out) Usage("cannot write '" + o.out + "'");

  sdk::api_slot() = tsr_runtime_api_get();
  if (tsr_error* e = tsr_plugin_load_default()) {
    std::fprintf(stderr, "tessera_dump_cases: loading the default plugins failed: %s\n",
                 std::string(sdk::from_c(sdk::api().error_message(e))).c_str());
    sdk::api().error_release(e);
    return 2;
  }
  if (!o.replay.empty()) return Replay(o, out);

  int64_t ops = 0, cases = 0;
  for (const OpInfo& op : OpDatabase()) {
    if (!std::regex_search(op.name, pattern)) continue;
    const tsr_op* found = nullptr;
    if (tsr_error* e = sdk::api().op_find(sdk::to_c(op.name), &found)) {
      sdk::api().error_release(e);
      std::fprintf(stderr, "tessera_dump_cases: %s is not a registered op; skipped\n",
                   op.name.c_str());
      continue;
    }
    ++ops;
    const std::string schema(sdk::from_c(sdk::api().op_schema(found)));
    auto emit = [&](const Json& j) {
      out << j.Dump() << '\n';
      ++cases;
    };
    for (tsr_dtype dtype : o.dtypes) {
      // The same generator and seed as the conformance run's oracles: the very same inputs.
      Rng rng(SampleSeed(op.name, o.seed, dtype));
      const std::vector<Sample> samples = op.samples(dtype, rng);
      if ((op.dtypes & Bit(dtype)) == 0) {
        // As the dtype_claims oracle: the first sample of a dtype the op does not declare,
        // which Tessera must refuse; PyTorch says whether it refuses it too.
        if (!samples.empty())
          emit(
              CaseJson(op, schema, DtypeName(dtype), "undeclared_dtype", samples.front(), o.forms));
        continue;
      }
      for (const Sample& s : samples)
        emit(CaseJson(op, schema, DtypeName(dtype), "sample", s, o.forms));
    }
    if (op.errors) {
      Rng rng(SampleSeed(op.name, o.seed, TSR_DTYPE_FLOAT32) + kErrorInputsSeedOffset);
      for (const ErrorInput& e : op.errors(rng)) {
        Json j = CaseJson(op, schema, "*", "error_input", e.sample, o.forms);
        j.set("sample", e.sample.desc + " (" + e.what + ")");
        j.set("expected_code", CodeName(e.code));
        if (!e.message.empty()) j.set("expected_message", e.message);
        emit(j);
      }
    }
  }
  out.close();
  if (!out) {
    std::fprintf(stderr, "tessera_dump_cases: cannot write '%s'\n", o.out.c_str());
    return 2;
  }
  std::fprintf(stderr, "tessera_dump_cases: %lld cases of %lld ops written to %s\n",
               static_cast<long long>(cases), static_cast<long long>(ops), o.out.c_str());
  return 0;
}

}  // namespace
}  // namespace conformance
}  // namespace tessera

int main(int argc, char** argv) { return tessera::conformance::Main(argc, argv); }
