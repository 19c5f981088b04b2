#include "conformance/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "conformance/host_tensor.h"
#include "conformance/op_db.h"

namespace tessera {
namespace conformance {

const char* CoverageName(Coverage c) {
  return c == Coverage::kFull ? "full" : c == Coverage::kPartial ? "partial" : "none";
}

PassTotals TotalPasses(const std::vector<OpSummary>& ops) {
  PassTotals t;
  for (const OpSummary& s : ops) {
    t.native += s.native;
    t.fallback += s.fallback;
    t.checks += s.checks;
  }
  return t;
}

bool NothingNative(const std::vector<CaseResult>& cases) {
  bool ran = false;
  for (const CaseResult& c : cases) {
    if (!IsValueOracle(c.oracle)) continue;
    if (c.status == Status::kPass || c.status == Status::kXpass) return false;
    ran = true;
  }
  return ran;
}

bool IsValueOracle(const std::string& oracle) {
  return oracle == "reference" || oracle == "layouts" || oracle == "variants_out" ||
         oracle == "variants_inplace" || oracle == "memory" || oracle == "process" ||
         oracle == "recorded";
}

std::vector<OpSummary> Summarize(const std::vector<CaseResult>& cases) {
  std::vector<OpSummary> ops;
  std::map<std::string, size_t> index;
  std::map<std::string, std::pair<int, int>> value;  // native passes, other value cases
  std::map<std::string, bool> failed;
  for (const CaseResult& c : cases) {
    auto it = index.find(c.op);
    if (it == index.end()) {
      it = index.emplace(c.op, ops.size()).first;
      ops.push_back(OpSummary{c.op});
    }
    OpSummary& op = ops[it->second];
    ++op.counts[static_cast<int>(c.status)];
    if (IsFailure(c.status)) failed[c.op] = true;
    const bool passed = c.status == Status::kPass || c.status == Status::kFallback;
    if (!IsValueOracle(c.oracle)) {
      op.checks += passed;
    } else {
      op.native += c.status == Status::kPass;
      op.fallback += c.status == Status::kFallback;
    }
    if (IsValueOracle(c.oracle)) {
      if (c.status == Status::kPass) {
        ++value[c.op].first;
      } else if (c.status != Status::kSkipped) {
        ++value[c.op].second;
      }
    }
  }
  for (OpSummary& s : ops) {
    const auto [native, other] = value[s.op];
    s.coverage = native == 0                     ? Coverage::kNone
                 : (other == 0 && !failed[s.op]) ? Coverage::kFull
                                                 : Coverage::kPartial;
  }
  return ops;
}

std::string ReproCommand(const RunInfo& info, const CaseResult& c) {
  std::string cmd = "conformance";
  for (const std::string& p : info.plugins) cmd += " --plugin " + p;
  for (const std::string& p : info.cases_libraries) cmd += " --cases " + p;
  if (c.oracle == "recorded") {  // the recordings alone, their values drawn from the same seed
    cmd += " --device " + info.device;
    for (const std::string& p : info.recordings) cmd += " --cases-from " + p;
    return cmd + " --seed " + std::to_string(info.seed);
  }
  std::string pattern;
  for (char ch : c.op) {
    if (ch == '.' || ch == '_') pattern += '\\';
    pattern += ch;
  }
  cmd += " --device " + info.device + " --op '^" + pattern + "$'";
  if (c.dtype != "*") cmd += " --dtype " + c.dtype;
  cmd += " --seed " + std::to_string(info.seed);
  return cmd;
}

bool InJsonDetail(JsonDetail detail, Status s) {
  return detail == JsonDetail::kAll || IsFailure(s) || s == Status::kXfail || s == Status::kXpass ||
         s == Status::kFlaky;
}

namespace {
Json Passes(int native, int fallback, int checks) {
  Json p = Json::Object();
  p.set("native", native);
  p.set("fallback", fallback);
  p.set("checks", checks);
  return p;
}
}  // namespace

Json ToJson(const RunInfo& info, const std::vector<OpSummary>& ops,
            const std::vector<CaseResult>& cases, JsonDetail detail) {
  Json root = Json::Object();
  Json summary = Json::Object();
  // The report's layout, raised when a field is added (docs/conformance.md, The JSON report).
  summary.set("report_version", kReportVersion);
  int full = 0, partial = 0, none = 0;
  for (const OpSummary& s : ops) {
    (s.coverage == Coverage::kFull ? full : s.coverage == Coverage::kPartial ? partial : none)++;
  }
  summary.set("ops_total", static_cast<int64_t>(ops.size()));
  summary.set("ops_full", full);
  summary.set("ops_partial", partial);
  summary.set("ops_none", none);
  Json counts = Json::Object();
  int64_t totals[kNumStatuses] = {};
  for (const CaseResult& c : cases) ++totals[static_cast<int>(c.status)];
  for (int i = 0; i < kNumStatuses; ++i) counts.set(StatusName(static_cast<Status>(i)), totals[i]);
  summary.set("cases", counts);
  const PassTotals passes = TotalPasses(ops);
  summary.set("passes", Passes(passes.native, passes.fallback, passes.checks));
  summary.set("nothing_native", NothingNative(cases));
  summary.set("cases_listed", detail == JsonDetail::kAll ? "all" : "failures");
  Json plugins = Json::Array();
  for (const std::string& p : info.plugins) plugins.push(p);
  summary.set("plugin", plugins);
  Json libraries = Json::Array();
  for (const std::string& p : info.cases_libraries) libraries.push(p);
  summary.set("cases_libraries", libraries);
  summary.set("abi_version", info.abi_version);
  summary.set("device", info.device);
  summary.set("seed", static_cast<int64_t>(info.seed));
  root.set("summary", summary);
  Json per_op = Json::Array();
  for (const OpSummary& s : ops) {
    Json o = Json::Object();
    o.set("op", s.op);
    o.set("coverage", CoverageName(s.coverage));
    for (int i = 0; i < kNumStatuses; ++i) {
      if (s.counts[i]) o.set(StatusName(static_cast<Status>(i)), s.counts[i]);
    }
    o.set("passes", Passes(s.native, s.fallback, s.checks));
    per_op.push(o);
  }
  root.set("ops", per_op);
  Json records = Json::Array();
  for (const CaseResult& c : cases) {
    if (!InJsonDetail(detail, c.status)) continue;
    Json r = CaseToJson(c);
    r.set("repro", ReproCommand(info, c));
    records.push(r);
  }
  root.set("cases", records);
  return root;
}

Json CaseToJson(const CaseResult& c) {
  Json r = Json::Object();
  const size_t dot = c.op.find('.');
  r.set("op", c.op.substr(0, dot));
  r.set("overload", dot == std::string::npos ? "" : c.op.substr(dot + 1));
  r.set("dtype", c.dtype);
  r.set("layout", c.layout);
  r.set("oracle", c.oracle);
  r.set("sample", c.sample);
  r.set("status", StatusName(c.status));
  r.set("max_abs_error", c.max_abs);
  r.set("max_rel_error", c.max_rel);
  Json tol = Json::Object();
  tol.set("atol", c.atol);
  tol.set("rtol", c.rtol);
  r.set("tolerance", tol);
  if (!std::isnan(c.snr_db)) r.set("snr_db", c.snr_db);  // "inf" for an exact match
  if (!c.message.empty()) r.set("message", c.message);
  if (!c.running_dtype.empty()) r.set("running_dtype", c.running_dtype);
  return r;
}

CaseResult CaseFromJson(const Json& j) {
  CaseResult c;
  c.op = j["op"].as_string();
  if (!j["overload"].as_string().empty()) c.op += "." + j["overload"].as_string();
  c.dtype = j["dtype"].as_string();
  c.layout = j["layout"].as_string();
  c.oracle = j["oracle"].as_string();
  c.sample = j["sample"].as_string();
  StatusFromName(j["status"].as_string(), &c.status);
  c.message = j["message"].as_string();
  c.max_abs = j["max_abs_error"].as_number();
  c.max_rel = j["max_rel_error"].as_number();
  c.atol = j["tolerance"]["atol"].as_number();
  c.rtol = j["tolerance"]["rtol"].as_number();
  c.running_dtype = j["running_dtype"].as_string();
  if (const Json* snr = j.find("snr_db")) {
    c.snr_db = snr->kind() == Json::Kind::kNumber ? snr->as_number()
               : snr->as_string() == "inf"        ? INFINITY
               : snr->as_string() == "-inf"       ? -INFINITY
                                                  : NAN;
  }
  return c;
}

// JUnit XML as its consumers (Jenkins, GitLab, the Surefire schema) read it: a case counts as
// passed only when it passed on the device's own kernels. `fallback` (passed through the CPU
// fallback), `unsupported`, `skipped` and `xfail` cases are <skipped> with the status in the
// message; fail, crash and timeout are <failure>s; an xpass passes, with a note; a flaky case
// passes with a <flakyFailure> (Maven Surefire's element for a test that failed, then passed
// when rerun) holding its first failure. Test names are
// unique per op: a repeated dtype/oracle/layout/sample gets " (#2)", " (#3)", ... in the order
// of the cases.
std::string ToJUnit(const RunInfo& info, const std::vector<OpSummary>& ops,
                    const std::vector<CaseResult>& cases, const std::string& extra_suites,
                    int extra_tests, int extra_failures, int extra_skipped) {
  auto skipped_status = [](Status s) {
    return s == Status::kSkipped || s == Status::kUnsupported || s == Status::kFallback ||
           s == Status::kXfail;
  };
  std::map<std::string, std::vector<const CaseResult*>> by_op;
  int failures = 0, skipped = 0;
  for (const CaseResult& c : cases) {
    by_op[c.op].push_back(&c);
    failures += IsFailure(c.status);
    skipped += skipped_status(c.status);
  }
  std::ostringstream out;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << "<testsuites name=\"tessera-conformance\" tests=\"" << cases.size() + extra_tests
      << "\" failures=\"" << failures + extra_failures << "\" skipped=\"" << skipped + extra_skipped
      << "\">\n";
  for (const OpSummary& s : ops) {
    const std::vector<const CaseResult*>& op_cases = by_op[s.op];
    int op_failures = 0, op_skipped = 0;
    for (const CaseResult* c : op_cases) {
      op_failures += IsFailure(c->status);
      op_skipped += skipped_status(c->status);
    }
    out << "  <testsuite name=\"" << XmlEscape(s.op) << "\" tests=\"" << op_cases.size()
        << "\" failures=\"" << op_failures << "\" skipped=\"" << op_skipped << "\">\n";
    std::map<std::string, int> seen;
    for (const CaseResult* c : op_cases) {
      std::string name = c->dtype + " " + c->oracle + " " + c->layout + " " + c->sample;
      if (const int n = ++seen[name]; n > 1) name += " (#" + std::to_string(n) + ")";
      out << "    <testcase classname=\"" << XmlEscape(info.device + "." + c->op) << "\" name=\""
          << XmlEscape(name) << "\">";
      if (IsFailure(c->status)) {
        out << "<failure message=\"" << XmlEscape(c->message) << "\" type=\""
            << StatusName(c->status) << "\">" << XmlEscape(ReproCommand(info, *c)) << "</failure>";
      } else if (c->status == Status::kFlaky) {
        out << "<flakyFailure message=\"" << XmlEscape(c->message) << "\" type=\"flaky\">"
            << XmlEscape(ReproCommand(info, *c)) << "</flakyFailure>";
      } else if (c->status == Status::kFallback) {
        out << "<skipped message=\"fallback: passed through the CPU fallback, not on the "
               "device's own kernel\"/>";
      } else if (skipped_status(c->status)) {
        out << "<skipped message=\"" << StatusName(c->status) << ": " << XmlEscape(c->message)
            << "\"/>";
      } else if (c->status != Status::kPass) {
        out << "<system-out>" << StatusName(c->status) << ": " << XmlEscape(c->message)
            << "</system-out>";
      }
      out << "</testcase>\n";
    }
    out << "  </testsuite>\n";
  }
  out << extra_suites << "</testsuites>\n";
  return out.str();
}

namespace {
// MarkdownCell: the mark of one op x dtype cell, from its cases' oracles and statuses.
// A dtype the op does not declare has only dtype_claims cases: refused is right, whether the
// device refused it or the CPU backend did through the fallback. A declared dtype is judged by
// its value cases (IsValueOracle) that were not skipped: every one passed natively (✓), or
// through the fallback (F), or was unsupported (U); the other oracles' passes (meta runs on
// the Meta device) say nothing of the device's own kernels. The dtype an op's process crashed
// or timed out in (--isolate) is C or T, whatever its other cases did; x when expected.
std::string MarkdownCell(const std::vector<const CaseResult*>& cases) {
  if (cases.empty()) return " ";
  for (const CaseResult* c : cases) {
    if (c->oracle != "process") continue;
    if (c->status == Status::kCrash) return "C";
    if (c->status == Status::kTimeout) return "T";
    if (c->status == Status::kXfail) return "x";
  }
  std::set<Status> value, claims, all;
  for (const CaseResult* c : cases) {
    all.insert(c->status);
    if (c->oracle == "dtype_claims") {
      claims.insert(c->status);
    } else if (IsValueOracle(c->oracle) && c->status != Status::kSkipped) {
      value.insert(c->status);
    }
  }
  for (Status s : all) {
    if (IsFailure(s)) return "✗";
  }
  if (all.count(Status::kXfail)) return "x";
  if (!claims.empty() && claims.size() == all.size()) {
    for (Status s : claims) {
      if (s != Status::kPass && s != Status::kFallback) return "~";
    }
    return "–";
  }
  if (value == std::set<Status>{Status::kPass}) return "✓";
  if (value == std::set<Status>{Status::kFallback}) return "F";
  if (value == std::set<Status>{Status::kUnsupported}) return "U";
  return "~";
}

std::string MarkdownText(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out;
}
}  // namespace

std::string ToMarkdown(const RunInfo& info, const std::vector<OpSummary>& ops,
                       const std::vector<CaseResult>& cases) {
  std::map<std::pair<std::string, std::string>, std::vector<const CaseResult*>> cell;
  std::map<std::string, std::vector<const CaseResult*>> process;  // crash and timeout cases
  for (const CaseResult& c : cases) {
    if (c.oracle == "process") {
      process[c.op].push_back(&c);
      // A crash or timeout marks the dtype its process was running.
      if (!c.running_dtype.empty() && c.running_dtype != "*")
        cell[{c.op, c.running_dtype}].push_back(&c);
    }
    if (c.dtype == "*") continue;
    cell[{c.op, c.dtype}].push_back(&c);
  }
  std::ostringstream out;
  out << "# Conformance of `" << info.device << "`\n\n";
  out << "Legend: ✓ every value case passed natively · F passed through the CPU fallback · ✗ a "
         "case failed · U unsupported (not implemented) · x expected failure · ~ mixed · – "
         "dtype not supported by the op (refused, as it must be) · C the op crashed while "
         "running this dtype · T the op timed out while running this dtype · blank: not run "
         "(the op crashed or timed out first, or the dtype was not selected)\n\n";
  out << "| op | coverage |";
  for (tsr_dtype d : kAllDtypes) out << " " << DtypeName(d) << " |";
  out << "\n|---|---|";
  for (size_t i = 0; i < std::size(kAllDtypes); ++i) out << "---|";
  out << "\n";
  for (const OpSummary& s : ops) {
    std::string coverage = CoverageName(s.coverage);
    for (const CaseResult* c : process[s.op]) {
      const char* what = c->status == Status::kCrash     ? "crashed"
                         : c->status == Status::kTimeout ? "timed out"
                         : c->status == Status::kXfail   ? "crashed or timed out (expected)"
                                                         : nullptr;
      if (what) coverage += std::string(", **") + what + "**: " + MarkdownText(c->message);
    }
    out << "| `" << s.op << "` | " << coverage << " |";
    for (tsr_dtype d : kAllDtypes) {
      auto it = cell.find({s.op, DtypeName(d)});
      out << " " << (it == cell.end() ? " " : MarkdownCell(it->second)) << " |";
    }
    out << "\n";
  }
  return out.str();
}

// The terminal table: per op its coverage, then its passing cases split as OpSummary splits
// them (native, fallback, checks: a `pass` count would read as native for an op whose value
// cases all went through the fallback), then the count of every other status.
std::string ToTerminal(const RunInfo& info, const std::vector<OpSummary>& ops) {
  std::ostringstream out;
  char line[512];
  std::snprintf(line, sizeof line, "%-28s %-8s %7s %8s %6s  %s\n", "op", "coverage", "native",
                "fallback", "checks", "other cases");
  out << "conformance of " << info.device << " (seed " << info.seed << ")\n"
      << "native: value cases passed on the device's own kernels; fallback: value cases passed "
         "through the CPU fallback; checks: meta, cross_backend, dtype_claims and error_inputs "
         "cases passed\n"
      << line;
  int full = 0, partial = 0, none = 0;
  int64_t totals[kNumStatuses] = {};
  int64_t native = 0, fallback = 0, checks = 0;
  for (const OpSummary& s : ops) {
    std::string others;
    for (int i = 0; i < kNumStatuses; ++i) {
      totals[i] += s.counts[i];
      const Status st = static_cast<Status>(i);
      if (s.counts[i] && st != Status::kPass && st != Status::kFallback)
        others += std::string(StatusName(st)) + " " + std::to_string(s.counts[i]) + "  ";
    }
    native += s.native;
    fallback += s.fallback;
    checks += s.checks;
    std::snprintf(line, sizeof line, "%-28s %-8s %7d %8d %6d  %s\n", s.op.c_str(),
                  CoverageName(s.coverage), s.native, s.fallback, s.checks, others.c_str());
    out << line;
    (s.coverage == Coverage::kFull ? full : s.coverage == Coverage::kPartial ? partial : none)++;
  }
  out << "\ncoverage: " << ops.size() << " ops: " << full << " full, " << partial << " partial, "
      << none << " none\npassed: native " << native << ", fallback " << fallback << ", checks "
      << checks << "\ncases:";
  for (int i = 0; i < kNumStatuses; ++i) {
    if (totals[i]) out << " " << StatusName(static_cast<Status>(i)) << " " << totals[i];
  }
  out << "\n";
  return out.str();
}

bool ParseExpectations(const std::string& text, std::vector<Expectation>* out, std::string* error) {
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    const size_t hash = line.find('#');
    std::string fields = line.substr(0, hash);
    std::istringstream f(fields);
    Expectation e;
    e.line = n;
    if (!(f >> e.op)) continue;  // blank or comment-only line
    if (!(f >> e.dtype >> e.oracle)) {
      *error =
          "line " + std::to_string(n) + ": expected 'OP DTYPE ORACLE # reason', got '" + line + "'";
      return false;
    }
    if (e.op == "*") {
      *error = "line " + std::to_string(n) +
               ": an expected failure must name its op, not '*' (which would expect every "
               "failure of every op)";
      return false;
    }
    if (hash == std::string::npos || line.find_first_not_of(" \t", hash + 1) == std::string::npos) {
      *error = "line " + std::to_string(n) + ": an expected failure needs a reason after '#'";
      return false;
    }
    e.reason = line.substr(line.find_first_not_of(" \t", hash + 1));
    out->push_back(e);
  }
  return true;
}

void ApplyExpectations(const std::vector<Expectation>& expectations,
                       std::vector<CaseResult>* cases) {
  auto match = [](const std::string& pattern, const std::string& value) {
    return pattern == "*" || pattern == value;
  };
  for (CaseResult& c : *cases) {
    for (const Expectation& e : expectations) {
      if (!match(e.op, c.op) || !match(e.dtype, c.dtype) || !match(e.oracle, c.oracle)) continue;
      // A crash or a timeout is expected only by a line that names the `process` oracle.
      if ((c.status == Status::kCrash || c.status == Status::kTimeout) && e.oracle != "process")
        continue;
      if (IsFailure(c.status)) {
        c.message = "expected failure (" + e.reason + "): " + c.message;
        c.status = Status::kXfail;
      } else if (c.status == Status::kPass || c.status == Status::kFallback) {
        c.message = "expected to fail (" + e.reason + ") but passed";
        c.status = Status::kXpass;
      }
      break;
    }
  }
}

BaselineDiff CompareBaseline(const Json& baseline, const std::vector<CaseResult>& cases) {
  std::map<std::string, Status> before;
  for (const Json& j : baseline["cases"].items()) {
    const CaseResult c = CaseFromJson(j);
    before[c.Key()] = c.status;
  }
  BaselineDiff d;
  for (const CaseResult& c : cases) {
    auto it = before.find(c.Key());
    const std::string what = c.Key() + ": " +
                             (it == before.end() ? "new" : StatusName(it->second)) + " -> " +
                             StatusName(c.status);
    // A case that turned flaky, or was flaky, changed how reliably it passes: neither a
    // regression nor a fix (a rerun-less run fails what a rerun would have called flaky).
    const bool flaky =
        c.status == Status::kFlaky || (it != before.end() && it->second == Status::kFlaky);
    if (flaky && it != before.end() && it->second != c.status) {
      d.flakes.push_back(what);
    } else if (IsFailure(c.status) && (it == before.end() || !IsFailure(it->second))) {
      d.regressions.push_back(what);
    } else if (it != before.end() && IsFailure(it->second) && !IsFailure(c.status)) {
      d.fixes.push_back(what);
    } else if (it != before.end() && it->second != c.status) {
      d.flakes.push_back(what);
    }
  }
  return d;
}

}  // namespace conformance
}  // namespace tessera
