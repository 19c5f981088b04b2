// tessera-run: runs a model file (docs/model_format.md) on a device, through the public
// embedding API only (tessera/sdk/model.hpp). docs/tessera_run.md.
//
//   tessera-run MODEL [--device D] [--plugin P]... [--input NAME=FILE.npy]... [--check]
//               [--rtol R --atol A] [--bench N] [--save-outputs DIR]
//
// It compiles the model, prints how its nodes run on the device (native, composite, fallback),
// runs the file's example inputs (or .npy files given for them), and with --check compares the
// outputs with the PyTorch outputs the file stores (exit 1 on a mismatch); --bench N times N
// more runs; --save-outputs writes each output as DIR/NAME.npy.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "conformance/compare.h"
#include "conformance/host_tensor.h"
#include "tessera/sdk/model.hpp"
#include "tools/tessera_run/npy.h"

namespace {

// Progress: on a long loop, one line on stderr, rewritten about once a second ("bench: 12 of
// 200 runs, 3 s"), and erased when the loop ends or is left by an error (the destructor), so
// that what follows starts a clean line; only when stderr is a terminal, so logs and pipes get
// the results alone. Erased with spaces, which every terminal understands.
class Progress {
 public:
  Progress(const char* what, int total)
      : what_(what),
        total_(total),
        shown_(isatty(STDERR_FILENO) != 0),
        start_(std::chrono::steady_clock::now()),
        next_(start_ + std::chrono::seconds(1)) {}
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress() { Erase(); }

  void Done(int count) {
    if (!shown_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now < next_) return;
    next_ = now + std::chrono::seconds(1);
    const int length = std::fprintf(stderr, "\r%s: %d of %d runs, %.0f s", what_, count, total_,
                                    std::chrono::duration<double>(now - start_).count());
    if (length > 1 && length - 1 < width_) {  // a shorter line than the last: cover its tail
      std::fprintf(stderr, "%*s", width_ - (length - 1), "");
    }
    width_ = std::max(width_, length - 1);
    std::fflush(stderr);
  }
  void Erase() {
    if (width_ == 0) return;
    std::fprintf(stderr, "\r%*s\r", width_, "");
    std::fflush(stderr);
    width_ = 0;
  }

 private:
  const char* what_;
  int total_;
  bool shown_;
  int width_ = 0;  // the widest line written, 0 when none is shown
  std::chrono::steady_clock::time_point start_, next_;
};

constexpr const char* kUsage =
    "usage: tessera-run MODEL [--device D] [--plugin P]... [--input NAME=FILE.npy]... [--check] "
    "[--rtol R] [--atol A] [--bench N] [--save-outputs DIR]\n";

struct Options {
  std::string model;
  std::string device = "cpu";
  std::vector<std::string> plugins;
  bool check = false;
  double rtol = -1, atol = -1;  // < 0: the dtype's default (PyTorch's assert_close)
  int bench = 0;
  std::map<std::string, std::string> inputs;  // input name -> .npy path
  std::string save_outputs;
};

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(stderr, "tessera-run: %s\n%s", why.c_str(), kUsage);
  std::exit(2);
}

double ParseNumber(const std::string& flag, const char* text, bool integer) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(v >= 0) || (integer && v != std::floor(v))) {
    Usage(flag + ": expected a non-negative " + (integer ? "integer" : "number") + ", got '" +
          text + "'");
  }
  return v;
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) Usage(a + ": expected a value");
      return argv[++i];
    };
    if (a == "--device") {
      o.device = value();
    } else if (a == "--plugin") {
      o.plugins.push_back(value());
    } else if (a == "--check") {
      o.check = true;
    } else if (a == "--rtol") {
      o.rtol = ParseNumber(a, value(), false);
    } else if (a == "--atol") {
      o.atol = ParseNumber(a, value(), false);
    } else if (a == "--input") {
      const std::string spec = value();
      const size_t eq = spec.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
        Usage("--input: expected NAME=FILE.npy, got '" + spec + "'");
      }
      if (!o.inputs.emplace(spec.substr(0, eq), spec.substr(eq + 1)).second) {
        Usage("--input: input '" + spec.substr(0, eq) + "' given twice");
      }
    } else if (a == "--save-outputs") {
      o.save_outputs = value();
    } else if (a == "--bench") {
      o.bench = static_cast<int>(ParseNumber(a, value(), true));
    } else if (a == "-h" || a == "--help") {
      std::printf("%s", kUsage);
      std::exit(0);
    } else if (!a.empty() && a[0] == '-') {
      Usage("unknown option '" + a + "'");
    } else if (o.model.empty()) {
      o.model = a;
    } else {
      Usage("expected one MODEL, got '" + o.model + "' and '" + a + "'");
    }
  }
  if (o.model.empty()) Usage("expected a MODEL file");
  return o;
}

// Compare: whether `got` matches `want` as torch.testing.assert_close decides, with the
// conformance suite's comparison (dtype, shape, |got - want| <= atol + rtol * |want|, NaN equal
// to NaN, infinities exactly; --rtol/--atol replace the dtype's defaults); prints the outcome.
bool Compare(const std::string& name, const tessera::Tensor& got, const tessera::Tensor& want,
             const Options& o) {
  using tessera::conformance::FromDevice;
  tessera::conformance::Tolerance tol = tessera::conformance::ToleranceFor(want.dtype(), 1);
  if (o.rtol >= 0) tol.rtol = o.rtol;
  if (o.atol >= 0) tol.atol = o.atol;
  const tessera::conformance::Comparison c =
      tessera::conformance::Compare(FromDevice(got), FromDevice(want), tol, name);
  if (c.ok) {
    std::printf("  %s: ok (max abs diff %.3g; rtol %g, atol %g)\n", name.c_str(), c.max_abs,
                tol.rtol, tol.atol);
  } else {
    std::printf("  MISMATCH %s (rtol %g, atol %g)\n", c.message.c_str(), tol.rtol, tol.atol);
  }
  return c.ok;
}

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "tessera-run: %s\n", message.c_str());
  std::exit(1);
}

tessera::Tensor LoadNpy(const std::string& path) {
  tessera_run::NpyArray array;
  std::string error;
  if (!tessera_run::ReadNpy(path, &array, &error)) Die(error);
  tessera::Tensor t =
      tessera::Tensor::empty(array.shape, array.dtype, tessera::parse_device("cpu"));
  t.copy_from_host(array.data.data(), array.data.size());
  return t;
}

void SaveNpy(const std::string& path, const tessera::Tensor& t) {
  static const tsr_op* contiguous = tessera::find_op("contiguous");
  tessera::Tensor host = tessera::to(tessera::call1(contiguous, t), "cpu");
  tessera_run::NpyArray array;
  array.dtype = host.dtype();
  array.shape = host.sizes().vec();
  array.data.resize(static_cast<size_t>(host.numel()) * host.itemsize());
  host.copy_to_host(array.data.data(), array.data.size());
  std::string error;
  if (!tessera_run::WriteNpy(path, array, &error)) Die(error);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  try {
    tessera::Runtime runtime;
    for (const std::string& p : o.plugins) runtime.load_plugin(p);
    const tsr_device device = tessera::parse_device(o.device);

    auto t0 = std::chrono::steady_clock::now();
    tessera::Model model = tessera::Model::load(o.model);
    auto t1 = std::chrono::steady_clock::now();
    tessera::CompiledModel compiled = model.compile(device);
    auto t2 = std::chrono::steady_clock::now();
    auto ms = [](auto a, auto b) {
      return std::chrono::duration<double, std::milli>(b - a).count();
    };
    std::printf(
        "model %s: %zu inputs, %zu nodes, %zu outputs; loaded in %.1f ms, compiled for "
        "%s in %.1f ms\n",
        model.name().c_str(), model.num_inputs(), model.num_nodes(), model.num_outputs(),
        ms(t0, t1), o.device.c_str(), ms(t1, t2));
    // A model with dynamic dims takes any size in their ranges (--input gives other sizes).
    if (std::vector<tessera::Model::Dim> dims = model.dims(); !dims.empty()) {
      std::string text;
      for (const tessera::Model::Dim& d : dims) {
        text += (text.empty() ? "" : ", ") + d.name + " " + std::to_string(d.min) + ".." +
                (d.max == INT64_MAX ? std::string("") : std::to_string(d.max));
      }
      std::printf("dynamic dims: %s\n", text.c_str());
    }

    std::map<std::string, int> fallback_ops;
    int routes[5] = {0, 0, 0, 0, 0};
    for (size_t i = 0; i < compiled.num_nodes(); ++i) {
      const tsr_node_route r = compiled.node_route(i);
      if (r < 0 || r > TSR_NODE_CLAIMED) continue;  // no route of this runtime's
      ++routes[r];
      if (r == TSR_NODE_FALLBACK) ++fallback_ops[compiled.node_op(i)];
    }
    std::printf("nodes on %s: %d native, %d composite, %d fallback, %d folded, %d claimed\n",
                o.device.c_str(), routes[TSR_NODE_NATIVE], routes[TSR_NODE_COMPOSITE],
                routes[TSR_NODE_FALLBACK], routes[TSR_NODE_FOLDED], routes[TSR_NODE_CLAIMED]);
    for (const auto& [op, n] : fallback_ops) std::printf("  fallback: %s x%d\n", op.c_str(), n);

    if (!o.save_outputs.empty() && mkdir(o.save_outputs.c_str(), 0777) != 0 && errno != EEXIST) {
      std::fprintf(stderr, "tessera-run: --save-outputs %s: cannot make the folder: %s\n",
                   o.save_outputs.c_str(), std::strerror(errno));
      return 1;
    }
    std::vector<tessera::Tensor> inputs;
    std::map<std::string, std::string> npy = o.inputs;
    for (size_t i = 0; i < model.num_inputs(); ++i) {
      auto it = npy.find(model.input_name(i));
      if (it == npy.end()) {
        inputs.push_back(tessera::to(model.example_input(i), device));
        continue;
      }
      inputs.push_back(tessera::to(LoadNpy(it->second), device));
      npy.erase(it);
    }
    if (!npy.empty()) {
      std::fprintf(stderr, "tessera-run: --input %s: the model has no input of that name\n",
                   npy.begin()->first.c_str());
      return 2;
    }
    if (o.check && !o.inputs.empty()) {
      std::fprintf(stderr,
                   "tessera-run: --check compares the file's example inputs' outputs; "
                   "it does not go with --input\n");
      return 2;
    }
    auto r0 = std::chrono::steady_clock::now();
    std::vector<tessera::Tensor> outputs = compiled.run(inputs);
    auto r1 = std::chrono::steady_clock::now();
    std::printf("first run: %.2f ms\n", ms(r0, r1));
    // Then kProfiledRuns runs, measured: memory of the intermediates and the slowest ops, each
    // node's time the least of its runs (the first runs pay for first-touch pages and oneDNN's
    // primitive creation, which a replay does not).
    constexpr int kProfiledRuns = 10;
    tessera::CompiledModel::Stats stats;
    std::vector<uint64_t> node_ns;
    for (int run = 0; run < kProfiledRuns; ++run) {
      compiled.run_profiled(inputs, stats);
      if (run == 0) node_ns = stats.node_ns;
      for (size_t i = 0; i < node_ns.size() && i < stats.node_ns.size(); ++i) {
        node_ns[i] = std::min(node_ns[i], stats.node_ns[i]);
      }
    }
    stats.node_ns = node_ns;
    std::printf("intermediates: peak %.2f MB alive at once, %.2f MB in all (%.2fx)\n",
                stats.peak_intermediate_bytes / 1e6, stats.total_intermediate_bytes / 1e6,
                stats.total_intermediate_bytes
                    ? double(stats.peak_intermediate_bytes) / stats.total_intermediate_bytes
                    : 0.0);
    std::map<std::string, std::pair<uint64_t, int>> by_op;  // op -> (ns, nodes)
    uint64_t all_ns = 0;
    for (size_t i = 0; i < stats.node_ns.size(); ++i) {
      const tsr_node_route route = compiled.node_route(i);
      if (route == TSR_NODE_FOLDED) continue;  // no call of its own
      // A claimed run's time is its first node's (tsr_node_route): counted as the runs'.
      auto& [ns, count] = by_op[route == TSR_NODE_CLAIMED ? "(claimed runs)" : compiled.node_op(i)];
      ns += stats.node_ns[i];
      ++count;
      all_ns += stats.node_ns[i];
    }
    std::vector<std::pair<uint64_t, std::string>> slowest;
    for (const auto& [op, t] : by_op) slowest.emplace_back(t.first, op);
    std::sort(slowest.rbegin(), slowest.rend());
    std::printf("slowest ops (each node's least of %d profiled runs, %.2f ms):\n", kProfiledRuns,
                all_ns / 1e6);
    for (size_t i = 0; i < slowest.size() && i < 5; ++i) {
      std::printf("  %-28s %8.3f ms  %5.1f%%  (%d nodes)\n", slowest[i].second.c_str(),
                  slowest[i].first / 1e6, 100.0 * slowest[i].first / (all_ns ? all_ns : 1),
                  by_op[slowest[i].second].second);
    }

    if (!o.save_outputs.empty()) {
      for (size_t i = 0; i < outputs.size(); ++i) {
        SaveNpy(o.save_outputs + "/" + model.output_name(i) + ".npy", outputs[i]);
      }
      std::printf("outputs saved in %s\n", o.save_outputs.c_str());
    }
    bool ok = true;
    if (o.check) {
      std::printf("check against the file's PyTorch outputs:\n");
      for (size_t i = 0; i < outputs.size(); ++i) {
        ok = Compare(model.output_name(i), outputs[i], model.expected_output(i), o) && ok;
      }
    }
    if (o.bench > 0) {
      std::vector<double> times;
      Progress progress("bench", o.bench);
      for (int i = 0; i < o.bench; ++i) {
        auto b0 = std::chrono::steady_clock::now();
        compiled.run(inputs);
        times.push_back(ms(b0, std::chrono::steady_clock::now()));
        progress.Done(i + 1);
      }
      progress.Erase();
      std::sort(times.begin(), times.end());
      std::printf("bench: %d runs on %s, %d threads: median %.3f ms, min %.3f ms\n", o.bench,
                  o.device.c_str(), tsr_num_threads(), times[times.size() / 2], times[0]);
    }
    if (!ok) {
      std::printf("check: FAILED\n");
      return 1;
    }
    if (o.check) std::printf("check: passed\n");
    return 0;
  } catch (const tessera::sdk::Error& e) {
    std::fprintf(stderr, "tessera-run: %s\n", e.what());
    return 1;
  }
}
