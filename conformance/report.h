// Reports of a conformance run: the per-op roll-up, the terminal table, JSON, JUnit XML and
// the Markdown coverage grid; expectation files and baselines.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "conformance/json.h"
#include "conformance/oracles.h"

namespace tessera {
namespace conformance {

struct RunInfo {
  std::vector<std::string> plugins;          // as given with --plugin
  std::vector<std::string> cases_libraries;  // as given with --cases
  std::vector<std::string> recordings;       // as given with --cases-from
  std::string device;
  std::string abi_version;
  uint64_t seed = 0;
};

enum class Coverage { kFull, kPartial, kNone };
const char* CoverageName(Coverage c);

struct OpSummary {
  std::string op;
  Coverage coverage = Coverage::kNone;
  int counts[kNumStatuses] = {};  // cases per status
  // The passing cases split by what they show: `native`, value cases (IsValueOracle) that
  // passed on the device's own kernels; `fallback`, value cases that passed through the CPU
  // fallback; `checks`, cases of the other oracles that passed (meta, cross_backend,
  // dtype_claims, error_inputs), natively or through the fallback.
  int native = 0, fallback = 0, checks = 0;
};

// IsValueOracle: the oracles whose cases compute the op's values on the device (reference,
// layouts, variants_out, variants_inplace, memory, recorded, and an --isolate child's `process`):
// what coverage counts. meta runs on the Meta device, cross_backend compares results the others
// computed, dtype_claims and error_inputs check refusals.
bool IsValueOracle(const std::string& oracle);

// PassTotals: the ops' passing cases summed (OpSummary's native, fallback and checks).
struct PassTotals {
  int native = 0, fallback = 0, checks = 0;
};
PassTotals TotalPasses(const std::vector<OpSummary>& ops);

// NothingNative: value cases ran (IsValueOracle) and not one passed on the device's own
// kernels (each fell back, was unsupported or failed): the run tested nothing of the backend,
// which `conformance` does not let pass without --allow-fallback-only. A run of nothing but
// refusals (an undeclared dtype's) has no value case and is not such a run.
bool NothingNative(const std::vector<CaseResult>& cases);

// Summarize rolls cases up per op, in the order ops first appear. An op is full when every
// value case passed natively and nothing failed; none when no value case passed natively;
// partial otherwise.
std::vector<OpSummary> Summarize(const std::vector<CaseResult>& cases);

std::string ReproCommand(const RunInfo& info, const CaseResult& c);

// Which cases the JSON report lists (--json-detail): all of them, or only those that failed or
// were expected to (fail, crash, timeout, xfail, xpass), and the flaky ones. The summary and the
// per-op roll-up always count every case.
enum class JsonDetail { kAll, kFailures };
bool InJsonDetail(JsonDetail detail, Status s);
Json ToJson(const RunInfo& info, const std::vector<OpSummary>& ops,
            const std::vector<CaseResult>& cases, JsonDetail detail = JsonDetail::kAll);
CaseResult CaseFromJson(const Json& j);
// CaseToJson: one case as a record of the report's "cases" (without its "repro"); CaseFromJson
// reads it back.
Json CaseToJson(const CaseResult& c);
// The JSON report's summary.report_version: 2 added the device contract (`device_contract`) and
// this field itself; reports before it have none (version 1); 3 added the recordings
// (`recordings`) and the `recorded` oracle's cases. Fields are only ever added.
inline constexpr int64_t kReportVersion = 3;

// extra_suites: more <testsuite> elements (the models', the device contract's), with their
// tests, failures and skipped tests.
std::string ToJUnit(const RunInfo& info, const std::vector<OpSummary>& ops,
                    const std::vector<CaseResult>& cases, const std::string& extra_suites = "",
                    int extra_tests = 0, int extra_failures = 0, int extra_skipped = 0);
std::string ToMarkdown(const RunInfo& info, const std::vector<OpSummary>& ops,
                       const std::vector<CaseResult>& cases);
std::string ToTerminal(const RunInfo& info, const std::vector<OpSummary>& ops);

// Expectations: lines "OP DTYPE ORACLE # reason" ('*' matches any dtype or oracle; the op is
// named; a crash or timeout only matches an ORACLE of `process`); a failing case that
// matches becomes xfail, a passing one xpass. Every line must give a reason.
struct Expectation {
  std::string op, dtype, oracle, reason;
  int line = 0;
};
bool ParseExpectations(const std::string& text, std::vector<Expectation>* out, std::string* error);
void ApplyExpectations(const std::vector<Expectation>& expectations,
                       std::vector<CaseResult>* cases);

// Baseline comparison: cases failing now that did not before (regressions), cases passing
// now that failed before (fixes), and other status changes (flakes: a case whose status moved
// between two non-failing states, or between two failing ones).
struct BaselineDiff {
  std::vector<std::string> regressions, fixes, flakes;
};
BaselineDiff CompareBaseline(const Json& baseline, const std::vector<CaseResult>& cases);

}  // namespace conformance
}  // namespace tessera
