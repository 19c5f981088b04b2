#include "conformance/oracles.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iterator>

#include "conformance/cases_library.h"
#include "conformance/compare.h"
#include "conformance/crash_handler.h"
#include "conformance/gradcheck.h"
#include "conformance/invoke.h"
#include "tessera/c/determinism.h"
#include "tessera/sdk/promotion.hpp"

namespace tessera {
namespace conformance {

const char* StatusName(Status s) {
  static const char* const kNames[] = {"pass",  "fail",    "unsupported", "fallback", "xfail",
                                       "xpass", "skipped", "crash",       "timeout",  "flaky"};
  static_assert(std::size(kNames) == kNumStatuses, "a name per status");
  return kNames[static_cast<int>(s)];
}

bool StatusFromName(const std::string& name, Status* out) {
  for (int i = 0; i < kNumStatuses; ++i) {
    if (name == StatusName(static_cast<Status>(i))) {
      *out = static_cast<Status>(i);
      return true;
    }
  }
  return false;
}

bool IsFailure(Status s) {
  return s == Status::kFail || s == Status::kCrash || s == Status::kTimeout;
}

std::string CaseResult::Key() const {
  return op + "|" + dtype + "|" + oracle + "|" + layout + "|" + sample;
}

namespace {

const tsr_device kMetaDevice{TSR_DEVICE_META, 0};
const tsr_device kCpuDevice{TSR_DEVICE_CPU, 0};

// Fallback calls, summed over every op the suite may reach (composites call native ops), and
// the ops of cases libraries.
int64_t FallbackTotal(const RunConfig& config) {
  static const std::vector<std::string>* names = [] {
    auto* v = new std::vector<std::string>{"_softmax",
                                           "_log_softmax",
                                           "_softmax.out",
                                           "_log_softmax.out",
                                           "convolution",
                                           "max_pool2d_with_indices",
                                           "native_layer_norm",
                                           "native_batch_norm",
                                           "copy_",
                                           "clone",
                                           "mm",
                                           "bmm",
                                           "mm.out",
                                           "bmm.out",
                                           "addmm",
                                           "index_select",
                                           "cumsum",
                                           "fill_.Scalar",
                                           "sort",
                                           "mul.Tensor",
                                           "sum",
                                           "add.Tensor",
                                           "add.Scalar",
                                           "sub.Scalar",
                                           "mul.Scalar",
                                           "lt.Scalar",
                                           "where.self",
                                           "reshape",
                                           "_to_copy"};
    for (const OpInfo& op : OpDatabase()) {
      for (const std::string& n : {op.name, op.out, op.inplace}) {
        if (!n.empty()) v->push_back(n);
      }
    }
    return v;
  }();
  int64_t total = 0;
  for (const std::string& n : *names) total += tsr_fallback_count(sdk::to_c(n));
  for (const std::string& n : config.vendor_ops) total += tsr_fallback_count(sdk::to_c(n));
  return total;
}

// DeclaredNondeterministic: what the plugins providing `device_type` declare about the kernels of
// `forms` (an op's functional, out= and in-place names) there: "plugin 'cuda' declares
// scatter_add.out nondeterministic: atomic adds ...", or "" when no kernel is declared
// (tsr_kernel_info.nondeterministic, ABI 1.2); with no forms, the first declaration of any
// kernel on the device. Read once per process from the kernel listings.
std::string DeclaredNondeterministic(int32_t device_type, const std::vector<std::string>& forms) {
  struct Declaration {
    int32_t device_type;
    std::string op, text;
  };
  static const std::vector<Declaration>* declarations = [] {
    auto* v = new std::vector<Declaration>();
    const tsr_load_report* const* reports = nullptr;
    size_t count = 0;
    tsr_load_reports(&reports, &count);
    for (size_t i = 0; i < count; ++i) {
      if (!reports[i]->loaded) continue;
      size_t n = 0;
      if (tsr_error* e = tsr_plugin_kernels(reports[i]->plugin_name, nullptr, 0, &n)) {
        tsr_error_release(e);  // unloaded since: nothing of it runs
        continue;
      }
      std::vector<tsr_kernel_info> infos(n);
      for (tsr_kernel_info& info : infos) info.struct_size = sizeof info;
      if (tsr_error* e = tsr_plugin_kernels(reports[i]->plugin_name, infos.data(), n, &n)) {
        tsr_error_release(e);
        continue;
      }
      const std::string plugin(sdk::from_c(reports[i]->plugin_name));
      for (const tsr_kernel_info& k : infos) {
        if (k.nondeterministic.size == 0 || k.status == TSR_KERNEL_REFUSED) continue;
        const std::string op(sdk::from_c(k.op_name));
        v->push_back({k.device_type, op,
                      "plugin '" + plugin + "' declares " + op +
                          " nondeterministic: " + std::string(sdk::from_c(k.nondeterministic))});
      }
    }
    return v;
  }();
  for (const Declaration& d : *declarations) {
    if (d.device_type != device_type) continue;
    if (forms.empty()) return d.text;
    for (const std::string& form : forms) {
      if (!form.empty() && form == d.op) return d.text;
    }
  }
  return "";
}

// Rows made equal along dim 0, so the inputs can be expanded views (the layouts oracle).
Sample Expandable(const Sample& s) {
  Sample e = s;
  for (Arg& a : e.args) {
    if (a.kind != Arg::Kind::kTensor || a.tensor.dim() == 0 || a.tensor.shape[0] <= 1) continue;
    const int64_t row = a.tensor.numel() / a.tensor.shape[0];
    for (int64_t i = row; i < a.tensor.numel(); ++i) a.tensor.values[i] = a.tensor.values[i % row];
  }
  return e;
}

bool HasData(const Sample& s) {
  for (const Arg& a : s.args) {
    if (a.kind == Arg::Kind::kTensor && a.tensor.numel() > 0) return true;
    if (a.kind == Arg::Kind::kTensorList) return true;
  }
  return false;
}

}  // namespace

// RunBody: one run of a case's body, its exceptions as statuses; a pass that went through the
// CPU fallback is a fallback.
static Status RunBody(const RunConfig& config, const CaseBody& body, std::string* message,
                      Comparison* cmp, Tolerance* tol) {
  const int64_t before = FallbackTotal(config);
  Status status;
  try {
    status = body(message, cmp, tol);
  } catch (const sdk::Error& e) {
    status = e.code() == TSR_UNIMPLEMENTED ? Status::kUnsupported : Status::kFail;
    *message = e.what();
  } catch (const std::exception& e) {
    status = Status::kFail;
    *message = std::string("exception: ") + e.what();
  }
  if (status == Status::kPass && FallbackTotal(config) != before) status = Status::kFallback;
  return status;
}

CaseOutcome RunCase(const RunConfig& config, const CaseBody& body, bool may_rerun) {
  CaseOutcome o;
  o.status = RunBody(config, body, &o.message, &o.cmp, &o.tol);
  // --rerun-failures: a failure that passes when run again is flaky, reported with the
  // failure it gave first (PyTorch CI's rule: visible and counted, never silently a pass).
  for (int k = 1; may_rerun && k <= config.rerun_failures && IsFailure(o.status); ++k) {
    Comparison again_cmp;
    Tolerance again_tol;
    std::string again;
    const Status rerun = RunBody(config, body, &again, &again_cmp, &again_tol);
    if (rerun == Status::kPass || rerun == Status::kFallback) {
      o.status = Status::kFlaky;
      o.message = "failed, then passed on rerun " + std::to_string(k) + " of " +
                  std::to_string(config.rerun_failures) + ": " + o.message;
    }
  }
  return o;
}

void KeepSpecified(int64_t specified, HostTensor* actual, HostTensor* expected) {
  if (specified < 0 || actual->dtype != expected->dtype || actual->shape != expected->shape ||
      actual->numel() <= specified) {
    return;
  }
  for (HostTensor* t : {actual, expected}) {
    t->values.resize(static_cast<size_t>(specified));
    t->shape = {specified};
  }
}

Status CompareReturns(const std::vector<Tensor>& actual, const std::vector<HostTensor>& expected,
                      int compare_returns, double tolerance_scale, const std::string& what,
                      std::string* message, Comparison* cmp, Tolerance* tol, int64_t specified) {
  const size_t n = compare_returns < 0 ? expected.size() : static_cast<size_t>(compare_returns);
  // All returns compared: their number too (a split returning a piece too many fails).
  if (actual.size() < n || (compare_returns < 0 && actual.size() != n)) {
    *message =
        what + ": expected " + std::to_string(n) + " returns, got " + std::to_string(actual.size());
    return Status::kFail;
  }
  for (size_t k = 0; k < n; ++k) {
    if (!actual[k].defined()) {
      *message = what + (n > 1 ? " return " + std::to_string(k) : "") +
                 ": expected a tensor, got None (an undefined tensor)";
      return Status::kFail;
    }
    *tol = ToleranceFor(expected[k].dtype, tolerance_scale);
    HostTensor got = FromDevice(actual[k]), want = expected[k];
    KeepSpecified(specified, &got, &want);
    Comparison c = Compare(got, want, *tol, what + (n > 1 ? " return " + std::to_string(k) : ""));
    cmp->max_abs = std::max(cmp->max_abs, c.max_abs);
    cmp->max_rel = std::max(cmp->max_rel, c.max_rel);
    if (!std::isnan(c.snr_db) && !(cmp->snr_db <= c.snr_db)) cmp->snr_db = c.snr_db;
    if (!c.ok) {
      *message = c.message;
      return Status::kFail;
    }
  }
  return Status::kPass;
}

namespace {

class OpRunner {
 public:
  OpRunner(const OpInfo& op, const RunConfig& config, const CaseSink& sink)
      : op_(op), config_(config), sink_(sink) {}

  void Run() {
    NoteRunningOp(op_.name, "*");
    const tsr_op* found = nullptr;
    if (tsr_error* e = sdk::api().op_find(sdk::to_c(op_.name), &found)) {
      Report({"*", "contiguous", "definition", ""}, Status::kFail,
             std::string(sdk::from_c(sdk::api().error_message(e))));
      sdk::api().error_release(e);
      return;
    }
    for (tsr_dtype dtype : config_.dtypes) RunDtype(dtype);
    RunGradients();
    RunErrors();
  }

 private:
  struct Where {
    std::string dtype, layout, oracle, sample;
  };

  void Report(const Where& w, Status status, const std::string& message,
              const Comparison* cmp = nullptr, const Tolerance* tol = nullptr) {
    CaseResult r;
    r.op = op_.name;
    r.dtype = w.dtype;
    r.layout = w.layout;
    r.oracle = w.oracle;
    r.sample = w.sample;
    r.status = status;
    r.message = message;
    if (cmp) {
      r.max_abs = cmp->max_abs;
      r.max_rel = cmp->max_rel;
      r.snr_db = cmp->snr_db;
    }
    if (tol) {
      r.atol = tol->atol;
      r.rtol = tol->rtol;
    }
    sink_(r);
  }

  uint64_t SeedFor(tsr_dtype dtype) const { return SampleSeed(op_.name, config_.seed, dtype); }

  // Case runs `body` (RunCase) and reports it. A rerun (--rerun-failures) would hide the
  // failures of the oracles whose failures are what differs from run to run (different bits
  // from identical calls, a stray write past an output).
  void Case(const Where& w, const CaseBody& body) {
    NoteRunningCase(op_.name, w.dtype, w.layout, w.oracle, w.sample);
    const bool rerun_hides_it = w.oracle == "determinism" || w.oracle == "memory";
    const CaseOutcome o = RunCase(config_, body, !rerun_hides_it);
    NoteCaseDone();
    Report(w, o.status, o.message, &o.cmp, &o.tol);
  }

  // `s`: the sample, for OpInfo::specified_elements (none: every element compared).
  Status CompareAll(const std::vector<Tensor>& actual, const std::vector<HostTensor>& expected,
                    std::string* message, Comparison* cmp, Tolerance* tol, const std::string& what,
                    const Sample* s = nullptr) {
    return CompareReturns(actual, expected, op_.compare_returns, op_.tolerance_scale, what, message,
                          cmp, tol, Specified(s));
  }

  int64_t Specified(const Sample* s) const {
    return s != nullptr && op_.specified_elements ? op_.specified_elements(*s) : -1;
  }

  // Samples: the op's for `dtype`; a cases library's that fails to make them fails the dtype
  // (the database's own never throw).
  bool MakeSamples(tsr_dtype dtype, Rng& rng, std::vector<Sample>* samples) {
    try {
      *samples = op_.samples(dtype, rng);
      return true;
    } catch (const std::exception& e) {
      Report({DtypeName(dtype), "contiguous", "samples", ""}, Status::kFail, e.what());
      return false;
    }
  }

  void RunDtype(tsr_dtype dtype) {
    NoteRunningOp(op_.name, DtypeName(dtype));
    Rng rng(SeedFor(dtype));
    std::vector<Sample> samples;
    if (!MakeSamples(dtype, rng, &samples)) return;
    const std::string dt = DtypeName(dtype);
    if ((op_.dtypes & Bit(dtype)) == 0) {
      // dtype claims, the other way: an undeclared dtype must be refused, not computed.
      if (samples.empty()) return;
      const Sample& s = samples.front();
      Case({dt, "contiguous", "dtype_claims", s.desc},
           [&](std::string* msg, Comparison*, Tolerance*) {
             try {
               Invoke(op_.name, s, config_.device, Layout::kContiguous);
             } catch (const sdk::Error&) {
               return Status::kPass;  // refused with an error, as it must be
             }
             *msg = std::string("accepted dtype ") + DtypeName(dtype) +
                    ", which the op does not support (PyTorch refuses it)";
             return Status::kFail;
           });
      return;
    }
    for (const Sample& s : samples) {
      std::vector<HostTensor> expected;
      try {
        expected = op_.reference(s);
      } catch (const CasesLibraryError& e) {
        // A cases library's reference that is malformed or fails: not a skip.
        Report({dt, "contiguous", "reference", s.desc}, Status::kFail, e.what());
        continue;
      } catch (const std::exception& e) {
        Report({dt, "contiguous", "reference", s.desc}, Status::kSkipped,
               std::string("no reference: ") + e.what());
        continue;
      }
      // The expected values of the arguments updated in place trail the returns.
      std::vector<HostTensor> expected_mutated;
      for (size_t i : op_.mutated_args) {
        if (i < s.args.size() && s.args[i].kind == Arg::Kind::kTensor) {
          expected_mutated.insert(expected_mutated.begin(), expected.back());
          expected.pop_back();
        }
      }
      std::vector<Tensor> real;
      // reference (and variants: functional inputs unchanged)
      Case({dt, "contiguous", "reference", s.desc},
           [&](std::string* msg, Comparison* cmp, Tolerance* tol) {
             std::vector<Tensor> inputs;
             real = Invoke(op_.name, s, config_.device, Layout::kContiguous, {}, &inputs);
             const Status st = CompareAll(real, expected, msg, cmp, tol, "result", &s);
             if (st != Status::kPass) return st;
             // Functional ops leave their inputs unchanged.
             size_t k = 0;
             for (size_t i = 0; i < s.args.size(); ++i) {
               const Arg& a = s.args[i];
               if (i == 0 && op_.mutates_self && a.kind == Arg::Kind::kTensor) {
                 ++k;  // an in-place op's self is meant to change
                 continue;
               }
               const auto m = std::find(op_.mutated_args.begin(), op_.mutated_args.end(), i);
               if (m != op_.mutated_args.end() && a.kind == Arg::Kind::kTensor) {
                 // Updated in place: compare with the reference's value for it.
                 size_t j = 0;
                 for (auto it = op_.mutated_args.begin(); it != m; ++it) {
                   j += s.args[*it].kind == Arg::Kind::kTensor ? 1 : 0;
                 }
                 *tol = ToleranceFor(expected_mutated[j].dtype, op_.tolerance_scale);
                 const Comparison c =
                     Compare(FromDevice(inputs[k++]), expected_mutated[j], *tol, "input");
                 if (!c.ok) {
                   *msg = "argument " + std::to_string(i) + " updated in place: " + c.message;
                   return Status::kFail;
                 }
                 continue;
               }
               std::vector<const HostTensor*> hs;
               if (a.kind == Arg::Kind::kTensor) hs.push_back(&a.tensor);
               if (a.kind == Arg::Kind::kTensorList) {
                 for (size_t e = 0; e < a.tensors.size(); ++e) {
                   if (!a.Absent(e)) hs.push_back(&a.tensors[e]);  // None is no input (Push)
                 }
               }
               for (const HostTensor* h : hs) {
                 const Comparison c = Compare(FromDevice(inputs[k++]), *h, Tolerance{}, "input");
                 if (!c.ok) {
                   *msg = "the functional form changed an input (" + c.message + ")";
                   return Status::kFail;
                 }
               }
             }
             return Status::kPass;
           });
      if (HasData(s)) RunLayouts(dt, s, expected);
      RunVariants(dt, s, expected);
      RunMeta(dt, s, real);
      RunDeterminism(dt, s);
      RunMemory(dt, s, expected);
      RunCrossBackend(dt, s, real);
    }
  }

  void RunLayouts(const std::string& dt, const Sample& s, const std::vector<HostTensor>& expected) {
    for (Layout layout :
         {Layout::kInterleaved, Layout::kOffset, Layout::kTransposed, Layout::kExpanded}) {
      if (layout == Layout::kExpanded && !op_.elementwise) continue;
      Case({dt, LayoutName(layout), "layouts", s.desc},
           [&](std::string* msg, Comparison* cmp, Tolerance* tol) {
             if (layout == Layout::kExpanded) {
               const Sample e = Expandable(s);
               const std::vector<HostTensor> want = op_.reference(e);
               return CompareAll(Invoke(op_.name, e, config_.device, layout), want, msg, cmp, tol,
                                 "result", &e);
             }
             return CompareAll(Invoke(op_.name, s, config_.device, layout), expected, msg, cmp, tol,
                               "result", &s);
           });
    }
  }

  void RunVariants(const std::string& dt, const Sample& s,
                   const std::vector<HostTensor>& expected) {
    if (!op_.out.empty()) {
      Case({dt, "contiguous", "variants_out", s.desc},
           [&](std::string* msg, Comparison* cmp, Tolerance* tol) {
             // Outputs of the wrong shape ([0]): the out= form must resize them.
             std::vector<Tensor> outs;
             for (const HostTensor& e : expected)
               outs.push_back(EmptyOn({0}, e.dtype, config_.device));
             const std::vector<Tensor> returned = Invoke(op_.out, WithDefaults(op_.name, s),
                                                         config_.device, Layout::kContiguous, outs);
             if (returned.size() != outs.size()) {
               *msg = "the out= form returned " + std::to_string(returned.size()) + " tensors";
               return Status::kFail;
             }
             return CompareAll(outs, expected, msg, cmp, tol, "out", &s);
           });
      Case({dt, "transposed", "variants_out", s.desc},
           [&](std::string* msg, Comparison* cmp, Tolerance* tol) {
             // Outputs of the result's shape but not contiguous (transposed; 1-D interleaved):
             // the out= form writes through their strides and keeps them (ATen's
             // resize_output), so the caller's memory holds the result in its own order.
             std::vector<Tensor> outs;
             std::vector<std::vector<int64_t>> strides;
             for (const HostTensor& e : expected) {
               HostTensor poisoned{e.dtype, e.shape,
                                   std::vector<double>(static_cast<size_t>(e.numel()),
                                                       Poison(e.dtype))};
               outs.push_back(ToDevice(poisoned, config_.device, Layout::kTransposed));
               strides.push_back(outs.back().strides().vec());
             }
             const std::vector<Tensor> returned = Invoke(op_.out, WithDefaults(op_.name, s),
                                                         config_.device, Layout::kContiguous, outs);
             if (returned.size() != outs.size()) {
               *msg = "the out= form returned " + std::to_string(returned.size()) + " tensors";
               return Status::kFail;
             }
             for (size_t k = 0; k < outs.size(); ++k) {
               if (outs[k].strides().vec() != strides[k]) {
                 *msg = "out " + std::to_string(k) + " of the result's shape " +
                        ShapeString(expected[k].shape) + " was restrided from " +
                        ShapeString(strides[k]) + " to " + ShapeString(outs[k].strides().vec()) +
                        " (an out= of the right shape keeps its strides)";
                 return Status::kFail;
               }
             }
             return CompareAll(outs, expected, msg, cmp, tol, "out", &s);
           });
    }
    if (!op_.inplace.empty() && !s.args.empty() && s.args[0].kind == Arg::Kind::kTensor) {
      const HostTensor& self = s.args[0].tensor;
      const HostTensor& e = expected[0];
      if (e.shape != self.shape || !sdk::can_cast(e.dtype, self.dtype)) return;
      Case({dt, "contiguous", "variants_inplace", s.desc},
           [&](std::string* msg, Comparison* cmp, Tolerance* tol) {
             std::vector<Tensor> inputs;
             const std::vector<Tensor> returned =
                 Invoke(op_.inplace, s, config_.device, Layout::kContiguous, {}, &inputs);
             HostTensor want = e;
             want.dtype = self.dtype;
             for (double& v : want.values) v = RoundTo(self.dtype, v);
             *tol = ToleranceFor(self.dtype, op_.tolerance_scale);
             const Comparison c = Compare(FromDevice(inputs[0]), want, *tol, "self");
             *cmp = c;
             if (!c.ok) {
               *msg = c.message;
               return Status::kFail;
             }
             return Status::kPass;
           });
    }
  }

  // Determinism: the same call twice gives the same bits, with the runtime on 1 thread and on
  // 2 (a sum whose partial results are combined in the order threads finish is not), and the
  // same bits on 1 thread as on 2 (DESIGN: "at two thread counts"). On a device whose plugin
  // declares any kernel nondeterministic (DeclaredNondeterministic), every case runs with
  // deterministic algorithms on instead, so that a declared kernel is held to its deterministic
  // path (a composite, the CPU fallback) wherever it is reached, also from inside another op's
  // composite (embedding_dense_backward calls scatter_add): the same bits, or a refusal with
  // FAILED_PRECONDITION (skipped, with the declaration). The thread count and the mode are put
  // back afterwards.
  void RunDeterminism(const std::string& dt, const Sample& s) {
    static const bool device_declares = !DeclaredNondeterministic(config_.device.type, {}).empty();
    const std::string declared =
        DeclaredNondeterministic(config_.device.type, {op_.name, op_.out, op_.inplace});
    Case({dt, "contiguous", "determinism", s.desc}, [&](std::string* msg, Comparison*, Tolerance*) {
      struct RestoreThreads {
        int32_t threads = tsr_num_threads();
        int32_t mode = tsr_deterministic_algorithms();
        ~RestoreThreads() {
          tsr_error_release(tsr_set_num_threads(threads));
          tsr_error_release(tsr_set_deterministic_algorithms(mode));
        }
      } restore;
      if (device_declares) {
        sdk::check(tsr_set_deterministic_algorithms(TSR_DETERMINISTIC_ON));
        try {
          Returns(s);
        } catch (const sdk::Error& e) {
          if (e.code() != TSR_FAILED_PRECONDITION) throw;
          *msg = (declared.empty() ? std::string() : declared + "; ") +
                 "with deterministic algorithms on it is refused: " + e.what();
          return Status::kSkipped;
        }
      }
      std::vector<HostTensor> on_one_thread;
      for (const int32_t threads : {1, 2}) {
        sdk::check(tsr_set_num_threads(threads));
        const std::vector<HostTensor> first = Returns(s), second = Returns(s);
        const std::string run = std::to_string(threads) + (threads == 1 ? " thread" : " threads");
        if (!SameBits(first, second, "two identical calls on " + run, msg)) return Status::kFail;
        if (threads == 1) {
          on_one_thread = first;
        } else if (!SameBits(on_one_thread, first, "the call on 1 thread and on 2", msg)) {
          return Status::kFail;
        }
      }
      if (!declared.empty()) *msg = declared + "; the same bits with deterministic algorithms on";
      return Status::kPass;
    });
  }

  // Returns: the op's returns for the sample, read back (the ones the oracles compare).
  std::vector<HostTensor> Returns(const Sample& s) {
    const size_t n = op_.compare_returns < 0 ? SIZE_MAX : static_cast<size_t>(op_.compare_returns);
    const int64_t specified = Specified(&s);
    std::vector<HostTensor> out;
    for (const Tensor& t : Invoke(op_.name, s, config_.device, Layout::kContiguous)) {
      if (out.size() == n) break;
      out.push_back(FromDevice(t));
      if (specified >= 0 && out.back().numel() > specified) {  // the rest was never written
        out.back().values.resize(static_cast<size_t>(specified));
        out.back().shape = {specified};
      }
    }
    return out;
  }

  // SameBits: `a` and `b` hold the same dtypes, shapes and bits; else says where they differ.
  static bool SameBits(const std::vector<HostTensor>& a, const std::vector<HostTensor>& b,
                       const std::string& what, std::string* msg) {
    if (a.size() != b.size()) {
      *msg = what + " gave " + std::to_string(a.size()) + " and " + std::to_string(b.size()) +
             " returns";
      return false;
    }
    for (size_t k = 0; k < a.size(); ++k) {
      if (a[k].dtype != b[k].dtype || a[k].shape != b[k].shape) {
        *msg = what + " gave return " + std::to_string(k) + " as " + DtypeName(a[k].dtype) +
               ShapeString(a[k].shape) + " and " + DtypeName(b[k].dtype) + ShapeString(b[k].shape);
        return false;
      }
      for (size_t i = 0; i < a[k].values.size(); ++i) {
        if (std::memcmp(&a[k].values[i], &b[k].values[i], sizeof(double)) == 0) continue;
        char values[96];
        std::snprintf(values, sizeof values, "%.17g, then %.17g", a[k].values[i], b[k].values[i]);
        *msg = what + " gave different bits: return " + std::to_string(k) + " element " +
               std::to_string(i) + " is " + values;
        return false;
      }
    }
    return true;
  }

  // SameLayout: equal strides wherever they matter: a dim of size 1 is never stepped along, so
  // its stride is free (a copy may give it any), as PyTorch's contiguity ignores it.
  static bool SameLayout(const Tensor& a, const Tensor& b) {
    const std::vector<int64_t> sizes = a.sizes().vec();
    const std::vector<int64_t> sa = a.strides().vec(), sb = b.strides().vec();
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d] != 1 && sa[d] != sb[d]) return false;
    }
    return true;
  }

  void RunMeta(const std::string& dt, const Sample& s, const std::vector<Tensor>& real) {
    if (real.empty()) return;  // the real call failed: nothing to compare with
    Case({dt, "contiguous", "meta", s.desc}, [&](std::string* msg, Comparison*, Tolerance*) {
      std::vector<Tensor> meta;
      try {
        meta = Invoke(op_.name, s, kMetaDevice, Layout::kContiguous);
      } catch (const sdk::Error& e) {
        // An op whose shapes depend on values may refuse a meta tensor (ATen's meta does); one
        // that gives a shape must give the device's.
        if (op_.shape_from_values && e.code() == TSR_UNIMPLEMENTED) return Status::kPass;
        throw;
      }
      if (meta.size() != real.size()) {  // a list return (split) of another length
        *msg = "meta gives " + std::to_string(meta.size()) + " returns, the device " +
               std::to_string(real.size());
        return Status::kFail;
      }
      for (size_t k = 0; k < real.size(); ++k) {
        if (meta[k].dtype() != real[k].dtype() || meta[k].sizes().vec() != real[k].sizes().vec()) {
          *msg = "return " + std::to_string(k) + ": meta says " + DtypeName(meta[k].dtype()) +
                 ShapeString(meta[k].sizes().vec()) + ", the device returned " +
                 DtypeName(real[k].dtype()) + ShapeString(real[k].sizes().vec());
          return Status::kFail;
        }
        if (real[k].numel() > 1 && !SameLayout(meta[k], real[k])) {
          *msg = "return " + std::to_string(k) + ": meta strides " +
                 ShapeString(meta[k].strides().vec()) + ", device strides " +
                 ShapeString(real[k].strides().vec());
          return Status::kFail;
        }
      }
      return Status::kPass;
    });
  }

  // Guard bytes: out= outputs placed inside a poisoned buffer; the poison must survive.
  void RunMemory(const std::string& dt, const Sample& s, const std::vector<HostTensor>& expected) {
    if (op_.out.empty()) return;
    Case({dt, "contiguous", "memory", s.desc}, [&](std::string* msg, Comparison*, Tolerance*) {
      constexpr int64_t kGuard = 16;
      std::vector<Tensor> buffers, outs;
      std::vector<HostTensor> poison;
      for (const HostTensor& e : expected) {
        HostTensor p;
        p.dtype = e.dtype;
        p.shape = {e.numel() + 2 * kGuard};
        p.values.assign(static_cast<size_t>(p.shape[0]), e.dtype == TSR_DTYPE_BOOL ? 1 : 77);
        Tensor buffer = ToDevice(p, config_.device);
        std::vector<int64_t> strides(e.shape.size(), 1);
        for (int64_t d = static_cast<int64_t>(e.shape.size()) - 2; d >= 0; --d)
          strides[d] = strides[d + 1] * std::max<int64_t>(e.shape[d + 1], 1);
        outs.push_back(call1(find_op("as_strided"), buffer, e.shape, strides, kGuard));
        buffers.push_back(buffer);
        poison.push_back(p);
      }
      Invoke(op_.out, WithDefaults(op_.name, s), config_.device, Layout::kContiguous, outs);
      for (size_t k = 0; k < buffers.size(); ++k) {
        const HostTensor after = FromDevice(buffers[k]);
        const int64_t n = after.numel();
        for (int64_t i = 0; i < n; ++i) {
          if (i >= kGuard && i < n - kGuard) continue;
          if (after.values[i] != poison[k].values[i]) {
            *msg = "the out= kernel wrote outside its output: guard element " +
                   std::to_string(i < kGuard ? i - kGuard : i - (n - kGuard)) +
                   (i < kGuard ? " before" : " after") + " the output changed";
            return Status::kFail;
          }
        }
      }
      return Status::kPass;
    });
  }

  void RunCrossBackend(const std::string& dt, const Sample& s, const std::vector<Tensor>& real) {
    if (real.empty() || config_.device.type == TSR_DEVICE_CPU || !config_.cpu_available) return;
    std::vector<HostTensor> cpu;
    try {
      for (const Tensor& t : Invoke(op_.name, s, kCpuDevice, Layout::kContiguous))
        cpu.push_back(FromDevice(t));
    } catch (const sdk::Error&) {
      return;  // the CPU backend does not run it either: nothing to compare
    }
    Case({dt, "contiguous", "cross_backend", s.desc},
         [&](std::string* msg, Comparison* cmp, Tolerance* tol) {
           return CompareAll(real, cpu, msg, cmp, tol, "device vs cpu", &s);
         });
  }

  // Mixed devices: a second tensor argument on the CPU (not 0-dim) must be refused, or, for an
  // op that works across devices (copy_), give the reference with either tensor on the CPU.
  void RunMixedDevices() {
    if (config_.device.type == TSR_DEVICE_CPU || (op_.dtypes & Bit(TSR_DTYPE_FLOAT32)) == 0) return;
    Rng rng(SeedFor(TSR_DTYPE_FLOAT32) + 11);
    if (op_.across_devices) {
      for (const Sample& s : op_.samples(TSR_DTYPE_FLOAT32, rng)) {
        const std::vector<HostTensor> expected = op_.reference(s);
        for (int on_cpu : {1, 2}) {  // the first or the second tensor argument on the CPU
          Case({"float32", "contiguous", "reference",
                s.desc + (on_cpu == 1 ? " (self on the cpu)" : " (an input on the cpu)")},
               [&](std::string* msg, Comparison* cmp, Tolerance* tol) {
                 Call call;
                 int seen = 0;
                 for (const Arg& a : s.args) {
                   const bool move = a.kind == Arg::Kind::kTensor && ++seen == on_cpu;
                   Push(a, move ? kCpuDevice : config_.device, Layout::kContiguous, &call);
                 }
                 sdk::check(sdk::api().op_call(find_op(op_.name), call.stack.get()));
                 return CompareAll({call.tensors[0]}, expected, msg, cmp, tol, "self");
               });
        }
      }
      return;
    }
    std::vector<Sample> samples;
    try {
      samples = op_.samples(TSR_DTYPE_FLOAT32, rng);
    } catch (const std::exception&) {
      return;  // a cases library's failure, reported with the float32 cases
    }
    for (const Sample& s : samples) {
      int tensors = 0;
      for (const Arg& a : s.args) tensors += a.kind == Arg::Kind::kTensor && a.tensor.dim() > 0;
      if (tensors < 2) continue;
      Case({"*", "contiguous", "error_inputs", s.desc + " (an input on the cpu)"},
           [&](std::string* msg, Comparison*, Tolerance*) {
             const tsr_op* op = find_op(op_.name);
             Call call;
             int seen = 0;
             for (const Arg& a : s.args) {
               const bool move = a.kind == Arg::Kind::kTensor && a.tensor.dim() > 0 && ++seen == 2;
               Push(a, move ? kCpuDevice : config_.device, Layout::kContiguous, &call);
             }
             tsr_error* e = sdk::api().op_call(op, call.stack.get());
             if (e == nullptr) {
               *msg = "expected an error for tensors on two devices, but the call succeeded";
               return Status::kFail;
             }
             const tsr_code code = sdk::api().error_code(e);
             const std::string text(sdk::from_c(sdk::api().error_message(e)));
             sdk::api().error_release(e);
             if (code == TSR_INVALID_ARGUMENT) return Status::kPass;
             *msg = "expected INVALID_ARGUMENT for tensors on two devices, got code " +
                    std::to_string(code) + ": " + text;
             return Status::kFail;
           });
      return;  // one such case per op
    }
  }

  // The gradient oracle (GradientSpec, gradcheck.h): a backward op's returns against central
  // differences of its forward op, both on the device, in float64; elementwise ("gradient") and
  // along a random direction ("gradient_fast"). The gradients must have their inputs' dtype and
  // shape.
  void RunGradients() {
    if (!op_.gradient || (op_.dtypes & Bit(TSR_DTYPE_FLOAT64)) == 0 ||
        std::find(config_.dtypes.begin(), config_.dtypes.end(), TSR_DTYPE_FLOAT64) ==
            config_.dtypes.end()) {
      return;
    }
    NoteRunningOp(op_.name, "float64");
    const GradientSpec& spec = *op_.gradient;
    Rng rng(SeedFor(TSR_DTYPE_FLOAT64) + kGradientSeedOffset);
    for (const Sample& s : spec.samples(rng)) {
      for (const bool fast : {false, true}) {
        Case({"float64", "contiguous", fast ? "gradient_fast" : "gradient", s.desc},
             [&](std::string* msg, Comparison* cmp, Tolerance* tol) {
               // The forward, an incoming gradient for its return, and the backward's gradients.
               std::vector<HostTensor> returns;
               for (const Tensor& t : Invoke(spec.forward, s, config_.device, Layout::kContiguous))
                 returns.push_back(FromDevice(t));
               const HostTensor& out = returns.at(spec.output);
               const HostTensor grad = MakeTensor(out.shape, out.dtype, rng);
               const Sample backward{spec.backward_args(s, returns, grad), s.desc};
               std::vector<HostTensor> analytic;
               for (const Tensor& t :
                    Invoke(op_.name, backward, config_.device, Layout::kContiguous)) {
                 analytic.push_back(FromDevice(t));
               }
               // L(x) = sum(grad * forward(x)[output]), at other values of the wrt inputs.
               const GradLoss loss = [&](const std::vector<HostTensor>& inputs) {
                 Sample at = s;
                 for (size_t k = 0; k < spec.wrt.size(); ++k)
                   at.args[spec.wrt[k]].tensor = inputs[k];
                 const HostTensor y = FromDevice(
                     Invoke(spec.forward, at, config_.device, Layout::kContiguous).at(spec.output));
                 long double sum = 0;
                 for (size_t i = 0; i < y.values.size(); ++i) sum += y.values[i] * grad.values[i];
                 return static_cast<double>(sum);
               };
               std::vector<HostTensor> inputs;
               std::vector<std::string> names;  // the forward's argument names, for messages
               const std::vector<std::string> decls = SchemaArguments(
                   std::string(sdk::from_c(sdk::api().op_schema(find_op(spec.forward)))));
               for (size_t i : spec.wrt) {
                 inputs.push_back(s.args[i].tensor);
                 const std::string decl =
                     i < decls.size() ? decls[i].substr(0, decls[i].find('=')) : "";
                 names.push_back(decl.empty() ? "argument " + std::to_string(i)
                                              : "'" + decl.substr(decl.rfind(' ') + 1) + "'");
               }
               const GradCheck check = fast ? CheckProjection(loss, inputs, analytic, names, rng)
                                            : CheckElementwise(loss, inputs, analytic, names, rng);
               cmp->max_abs = check.max_abs;
               cmp->max_rel = check.max_rel;
               *tol = Tolerance{kGradAtol, kGradRtol};
               if (check.ok) return Status::kPass;
               *msg = check.message;
               return Status::kFail;
             });
      }
      RunUndefinedGradients(s, rng);
    }
  }

  // The undefined-gradient cases (PyTorch's check_undefined_grad, for explicit backward ops): a
  // backward op with a `bool[N] output_mask` asked for only some of its gradients returns None
  // (an undefined tensor) for each one it was not asked for (but its unmasked_returns, which it
  // gives regardless), and for each one it was, what it returns when asked for all.
  void RunUndefinedGradients(const Sample& s, Rng& rng) {
    const int mask_at = OutputMaskIndex(op_.name);
    if (mask_at < 0) return;
    const GradientSpec& spec = *op_.gradient;
    std::vector<HostTensor> returns;
    Sample all;
    std::vector<Tensor> full;
    try {
      for (const Tensor& t : Invoke(spec.forward, s, config_.device, Layout::kContiguous))
        returns.push_back(FromDevice(t));
      const HostTensor& out = returns.at(spec.output);
      all = Sample{spec.backward_args(s, returns, MakeTensor(out.shape, out.dtype, rng)), s.desc};
      full = Invoke(op_.name, all, config_.device, Layout::kContiguous);
    } catch (const std::exception&) {
      return;  // the gradient cases above report what fails here
    }
    // Every mask of the op's length (bool[3], bool[2]) but all True, which `full` is.
    const size_t n = all.args.at(static_cast<size_t>(mask_at)).ints.size();
    std::vector<std::vector<bool>> masks;
    for (uint32_t bits = (1u << n) - 1; bits-- > 0;) {
      std::vector<bool> mask(n);
      for (size_t k = 0; k < n; ++k) mask[k] = (bits >> (n - 1 - k)) & 1u;
      masks.push_back(std::move(mask));
    }
    for (const std::vector<bool>& mask : masks) {
      std::string desc = s.desc + " output_mask [";
      for (size_t k = 0; k < mask.size(); ++k)
        desc += std::string(k ? ", " : "") + (mask[k] ? "True" : "False");
      Case({"float64", "contiguous", "undefined_grad", desc + "]"},
           [&](std::string* msg, Comparison* cmp, Tolerance* tol) {
             Sample asked = all;
             asked.args.at(static_cast<size_t>(mask_at)) = Arg::Bools(mask);
             const std::vector<Tensor> got =
                 Invoke(op_.name, asked, config_.device, Layout::kContiguous);
             if (got.size() != mask.size() || full.size() != mask.size()) {
               *msg = "expected " + std::to_string(mask.size()) + " returns, got " +
                      std::to_string(got.size()) + " (and " + std::to_string(full.size()) +
                      " when asked for every gradient)";
               return Status::kFail;
             }
             for (size_t k = 0; k < mask.size(); ++k) {
               const std::string which = "return " + std::to_string(k);
               const bool unmasked =
                   std::find(op_.unmasked_returns.begin(), op_.unmasked_returns.end(), k) !=
                   op_.unmasked_returns.end();
               if (!mask[k] && !unmasked) {
                 if (got[k].defined()) {
                   *msg =
                       which + ": output_mask[" + std::to_string(k) +
                       "] is False, expected None (an undefined tensor), got a tensor of shape " +
                       ShapeString(got[k].sizes().vec());
                   return Status::kFail;
                 }
                 continue;
               }
               if (!got[k].defined() || !full[k].defined()) {
                 if (got[k].defined() == full[k].defined())
                   continue;  // None either way (no weight)
                 *msg = got[k].defined() ? which +
                                               ": asked for, got a tensor, where asking for "
                                               "every gradient gives None"
                                         : which +
                                               ": asked for, got None, where asking for every "
                                               "gradient gives a tensor";
                 return Status::kFail;
               }
               *tol = ToleranceFor(TSR_DTYPE_FLOAT64, op_.tolerance_scale);
               const Comparison c = Compare(FromDevice(got[k]), FromDevice(full[k]), *tol,
                                            which + " against asking for every gradient");
               cmp->max_abs = std::max(cmp->max_abs, c.max_abs);
               cmp->max_rel = std::max(cmp->max_rel, c.max_rel);
               if (!c.ok) {
                 *msg = c.message;
                 return Status::kFail;
               }
             }
             return Status::kPass;
           });
    }
  }

  void RunErrors() {
    NoteRunningOp(op_.name, "*");
    RunMixedDevices();
    if (!op_.errors) return;
    Rng rng(SeedFor(TSR_DTYPE_FLOAT32) + kErrorInputsSeedOffset);
    std::vector<ErrorInput> errors;
    try {
      errors = op_.errors(rng);
    } catch (const std::exception& e) {
      Report({"*", "contiguous", "error_inputs", ""}, Status::kFail, e.what());
      return;
    }
    for (const ErrorInput& e : errors) {
      Case({"*", "contiguous", "error_inputs",
            e.what.empty() ? e.sample.desc : e.sample.desc + " (" + e.what + ")"},
           [&](std::string* msg, Comparison*, Tolerance*) {
             try {
               Invoke(op_.name, e.sample, config_.device, Layout::kContiguous);
             } catch (const sdk::Error& err) {
               if (err.code() != e.code) {
                 *msg = std::string("expected error code ") + std::to_string(e.code) + ", got " +
                        std::to_string(err.code()) + ": " + err.what();
                 return Status::kFail;
               }
               // Refused for the right reason: the message names what the input gets wrong
               // (a sample refused by an earlier check with the same code would pass otherwise).
               if (!e.message.empty() &&
                   std::string(err.what()).find(e.message) == std::string::npos) {
                 *msg = "expected the error's message to contain \"" + e.message +
                        "\", got: " + err.what();
                 return Status::kFail;
               }
               return Status::kPass;
             }
             *msg = "expected an error for " + e.what + ", but the call succeeded";
             return Status::kFail;
           });
    }
  }

  const OpInfo& op_;
  const RunConfig& config_;
  const CaseSink& sink_;
};

}  // namespace

void RunOp(const OpInfo& op, const RunConfig& config, const CaseSink& sink) {
  OpRunner(op, config, sink).Run();
}

}  // namespace conformance
}  // namespace tessera
