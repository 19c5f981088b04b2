// The oracles of DESIGN.md ("Conformance"), each a template applied to every op of the
// database: reference, layouts, cross-backend, variants (and unchanged inputs), meta, dtype
// claims, error inputs, memory (guard bytes). RunOp turns one OpInfo into cases.
#pragma once

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "conformance/compare.h"
#include "conformance/op_db.h"

namespace tessera {
namespace conformance {

enum class Status {
  kPass,
  kFail,
  kUnsupported,
  kFallback,
  kXfail,
  kXpass,
  kSkipped,
  kCrash,
  kTimeout,
  // kFlaky: failed, then passed when run again (--rerun-failures): neither a failure nor a
  // pass; counted and reported with the failure it first gave.
  kFlaky
};
constexpr int kNumStatuses = 10;
const char* StatusName(Status s);
bool StatusFromName(const std::string& name, Status* out);
// IsFailure: fail, crash, timeout (what sets the exit code, unless expected).
bool IsFailure(Status s);

struct CaseResult {
  std::string op;      // the functional op as the database names it: "add.Tensor"
  std::string dtype;   // "float32", or "*" for cases of the whole op (error inputs, crashes)
  std::string layout;  // "contiguous", "interleaved", ...
  std::string oracle;  // "reference", "layouts", "variants", "meta", ...
  std::string sample;  // the sample's description
  Status status = Status::kPass;
  std::string message;  // why it failed (or what was unsupported)
  double max_abs = 0, max_rel = 0, atol = 0, rtol = 0;
  double snr_db = NAN;  // float16, bfloat16 value cases: Comparison::snr_db (the worst return's)
  // running_dtype: for a crash or timeout (--isolate), the dtype the op's process was running
  // when it died or was killed: "*" in the op's whole-op cases (error inputs), "" unknown.
  std::string running_dtype;
  std::string Key() const;  // op|dtype|oracle|layout|sample: identifies the case across runs
};

struct RunConfig {
  tsr_device device{TSR_DEVICE_CPU, 0};
  bool cpu_available = true;  // the CPU backend is loaded: cross-backend cases run
  uint64_t seed = 0;
  std::vector<tsr_dtype> dtypes;  // which dtypes to run
  // The ops of cases libraries (--cases): their calls through the CPU fallback count too.
  std::vector<std::string> vendor_ops;
  // --rerun-failures: how many more times a failing case runs; one that passes then is flaky.
  int rerun_failures = 0;
};

using CaseSink = std::function<void(const CaseResult&)>;

// CaseBody: one case's check, which returns its status and says why in `message`, filling in
// the comparison and tolerance where it compared values.
using CaseBody = std::function<Status(std::string* message, Comparison*, Tolerance*)>;
struct CaseOutcome {
  Status status = Status::kPass;
  std::string message;
  Comparison cmp;
  Tolerance tol;
};
// RunCase runs `body` as every case runs: an sdk::Error from the plugin becomes `unsupported`
// (UNIMPLEMENTED) or `fail`, a pass through the CPU fallback `fallback`, and (--rerun-failures,
// where `may_rerun`) a failure that passes when run again `flaky`.
CaseOutcome RunCase(const RunConfig& config, const CaseBody& body, bool may_rerun);
// CompareReturns compares the first `compare_returns` of `actual` (-1: as many as expected)
// with `expected` under assert_close's tolerance for each dtype times `tolerance_scale`,
// keeping the worst differences in `cmp`; `what` names them in a failure's message. Where
// `specified` >= 0, only that many leading row-major elements of each return are compared by
// value (OpInfo::specified_elements).
Status CompareReturns(const std::vector<Tensor>& actual, const std::vector<HostTensor>& expected,
                      int compare_returns, double tolerance_scale, const std::string& what,
                      std::string* message, Comparison* cmp, Tolerance* tol,
                      int64_t specified = -1);
// KeepSpecified: `actual` and `expected` cut to their first `specified` row-major elements
// (shape [specified]) when both have the same dtype and shape and more elements than that;
// otherwise unchanged, so that a dtype or shape mismatch is still reported.
void KeepSpecified(int64_t specified, HostTensor* actual, HostTensor* expected);

// RunOp runs every case of `op` on the configured device, reporting each through `sink`.
// Exceptions from the plugin become failing cases; a crash ends the process (see --isolate).
void RunOp(const OpInfo& op, const RunConfig& config, const CaseSink& sink);

}  // namespace conformance
}  // namespace tessera
