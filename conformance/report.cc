#include "conformance/report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace tessera {
namespace conformance {

const char* CoverageName(Coverage c) {
  return c == Coverage::kFull ? "full" : c == Coverage::kPartial ? "partial" : "none";
}

namespace {
// The oracles whose cases run the op's values on the device: what coverage counts. (meta runs
// on the Meta device, cross-backend compares results computed by the others, dtype claims and
// error inputs check refusals.)
bool IsValueOracle(const std::string& oracle) {
  return oracle == "reference" || oracle == "layouts" || oracle == "variants_out" ||
         oracle == "variants_inplace" || oracle == "memory" || oracle == "process";
}
}  // namespace

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
    ++ops[it->second].counts[static_cast<int>(c.status)];
    if (IsFailure(c.status)) failed[c.op] = true;
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

Json ToJson(const RunInfo& info, const std::vector<OpSummary>& ops,
            const std::vector<CaseResult>& cases) {
  Json root = Json::Object();
  Json summary = Json::Object();
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
  Json plugins = Json::Array();
  for (const std::string& p : info.plugins) plugins.push(p);
  summary.set("plugin", plugins);
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
    per_op.push(o);
  }
  root.set("ops", per_op);
  Json records = Json::Array();
  for (const CaseResult& c : cases) {
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
    if (!c.message.empty()) r.set("message", c.message);
    r.set("repro", ReproCommand(info, c));
    records.push(r);
  }
  root.set("cases", records);
  return root;
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
  return c;
}

std::string ToJUnit(const RunInfo& info, const std::vector<OpSummary>& ops,
                    const std::vector<CaseResult>& cases) {
  std::ostringstream out;
  int failures = 0, skipped = 0;
  for (const CaseResult& c : cases) {
    failures += IsFailure(c.status);
    skipped += c.status == Status::kSkipped || c.status == Status::kUnsupported;
  }
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << "<testsuites name=\"tessera-conformance\" tests=\"" << cases.size() << "\" failures=\""
      << failures << "\" skipped=\"" << skipped << "\">\n";
  for (const OpSummary& s : ops) {
    int op_cases = 0, op_failures = 0;
    for (const CaseResult& c : cases) {
      if (c.op != s.op) continue;
      ++op_cases;
      op_failures += IsFailure(c.status);
    }
    out << "  <testsuite name=\"" << XmlEscape(s.op) << "\" tests=\"" << op_cases
        << "\" failures=\"" << op_failures << "\">\n";
    for (const CaseResult& c : cases) {
      if (c.op != s.op) continue;
      out << "    <testcase classname=\"" << XmlEscape(info.device + "." + c.op) << "\" name=\""
          << XmlEscape(c.dtype + " " + c.oracle + " " + c.layout + " " + c.sample) << "\">";
      if (IsFailure(c.status)) {
        out << "<failure message=\"" << XmlEscape(c.message) << "\" type=\"" << StatusName(c.status)
            << "\">" << XmlEscape(ReproCommand(info, c)) << "</failure>";
      } else if (c.status == Status::kSkipped || c.status == Status::kUnsupported) {
        out << "<skipped message=\"" << StatusName(c.status) << ": " << XmlEscape(c.message)
            << "\"/>";
      } else if (c.status != Status::kPass) {
        out << "<system-out>" << StatusName(c.status) << "</system-out>";
      }
      out << "</testcase>\n";
    }
    out << "  </testsuite>\n";
  }
  out << "</testsuites>\n";
  return out.str();
}

std::string ToMarkdown(const RunInfo& info, const std::vector<OpSummary>& ops,
                       const std::vector<CaseResult>& cases) {
  static const char* const kDtypes[] = {"bool",  "uint8",   "int8",     "int16",   "int32",
                                        "int64", "float16", "bfloat16", "float32", "float64"};
  std::map<std::pair<std::string, std::string>, std::set<std::string>> cell;
  for (const CaseResult& c : cases) {
    if (c.dtype == "*") continue;
    std::string st = StatusName(c.status);
    if (c.oracle == "dtype_claims") st = c.status == Status::kPass ? "refused" : "fail";
    cell[{c.op, c.dtype}].insert(st);
  }
  std::ostringstream out;
  out << "# Conformance of `" << info.device << "`\n\n";
  out << "Legend: ✓ every case passed natively · F passed through the CPU fallback · ✗ a case "
         "failed · U unsupported (not implemented) · x expected failure · ~ mixed · – dtype not "
         "supported by the op (refused, as it must be)\n\n";
  out << "| op | coverage |";
  for (const char* d : kDtypes) out << " " << d << " |";
  out << "\n|---|---|";
  for (size_t i = 0; i < 10; ++i) out << "---|";
  out << "\n";
  for (const OpSummary& s : ops) {
    out << "| `" << s.op << "` | " << CoverageName(s.coverage) << " |";
    for (const char* d : kDtypes) {
      auto it = cell.find({s.op, d});
      std::string mark = " ";
      if (it != cell.end()) {
        const std::set<std::string>& st = it->second;
        if (st.count("fail") || st.count("crash") || st.count("timeout")) {
          mark = "✗";
        } else if (st == std::set<std::string>{"pass"}) {
          mark = "✓";
        } else if (st == std::set<std::string>{"refused"}) {
          mark = "–";
        } else if (st == std::set<std::string>{"fallback"}) {
          mark = "F";
        } else if (st == std::set<std::string>{"unsupported"}) {
          mark = "U";
        } else if (st.count("xfail")) {
          mark = "x";
        } else {
          mark = "~";
        }
      }
      out << " " << mark << " |";
    }
    out << "\n";
  }
  return out.str();
}

std::string ToTerminal(const RunInfo& info, const std::vector<OpSummary>& ops) {
  std::ostringstream out;
  char line[256];
  std::snprintf(line, sizeof line, "%-28s %-8s %s\n", "op", "coverage", "cases");
  out << "conformance of " << info.device << " (seed " << info.seed << ")\n" << line;
  int full = 0, partial = 0, none = 0;
  int64_t totals[kNumStatuses] = {};
  for (const OpSummary& s : ops) {
    std::string counts;
    for (int i = 0; i < kNumStatuses; ++i) {
      totals[i] += s.counts[i];
      if (s.counts[i])
        counts += std::string(StatusName(static_cast<Status>(i))) + " " +
                  std::to_string(s.counts[i]) + "  ";
    }
    std::snprintf(line, sizeof line, "%-28s %-8s %s\n", s.op.c_str(), CoverageName(s.coverage),
                  counts.c_str());
    out << line;
    (s.coverage == Coverage::kFull ? full : s.coverage == Coverage::kPartial ? partial : none)++;
  }
  out << "\ncoverage: " << ops.size() << " ops: " << full << " full, " << partial << " partial, "
      << none << " none\ncases:";
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
    if (IsFailure(c.status) && (it == before.end() || !IsFailure(it->second))) {
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
