// tessera_ops_lock: checks the op registry's schemas against dispatcher/ops.lock, records
// additive and backward-compatible changes, and generates the op-set headers. Every flag and
// rule: docs/op_schema_policy.md.
//
//   tessera_ops_lock --check LOCK [--allow FILE] [--headers DIR] [--sdk-ops FILE]
//                    [--today YYYY-MM-DD] [--op-set MAJOR.MINOR]
//   tessera_ops_lock --update LOCK [--allow FILE] [--emit-headers DIR] [--sdk-ops FILE]
//                    [--today YYYY-MM-DD] [--op-set MAJOR.MINOR]
//   tessera_ops_lock --emit-headers DIR [--sdk-ops FILE] --lock LOCK
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "dispatcher/op_registry.h"
#include "dispatcher/op_set.h"
#include "dispatcher/tools/cpp_ops_header.h"
#include "dispatcher/tools/ops_lock.h"

namespace tessera::ops_lock {
namespace {

constexpr std::string_view kUsage =
    "usage: tessera_ops_lock --check LOCK [--allow FILE] [--headers DIR] [--sdk-ops FILE] "
    "[--today YYYY-MM-DD] [--op-set MAJOR.MINOR]\n"
    "       tessera_ops_lock --update LOCK [--allow FILE] [--emit-headers DIR] [--sdk-ops FILE] "
    "[--today YYYY-MM-DD] [--op-set MAJOR.MINOR]\n"
    "       tessera_ops_lock --emit-headers DIR [--sdk-ops FILE] --lock LOCK\n"
    "(docs/op_schema_policy.md)\n";

struct Options {
  std::string program;
  std::string mode;  // "check", "update" or "emit"
  std::string lock, allow, headers, emit_dir, today;
  std::string sdk_ops;  // tessera/sdk/ops.hpp: checked with --check, written otherwise
  OpSetVersion op_set{kOpSetVersionMajor, kOpSetVersionMinor};
};

bool ReadFile(const std::string& path, std::string* text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  *text = s.str();
  return true;
}

bool WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return static_cast<bool>(out);
}

std::string Today() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[16];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%d", &utc);
  return buffer;
}

std::map<std::string, FunctionSchema> RegistrySchemas() {
  std::map<std::string, FunctionSchema> out;
  OpRegistry& registry = OpRegistry::Global();
  for (const std::string& name : registry.ListOps()) {
    out.emplace(name, registry.Find(name)->schema());
  }
  return out;
}

std::string UpdateCommand(const Options& o) {
  std::string cmd = absl::StrCat(o.program, " --update ", o.lock);
  if (!o.allow.empty()) absl::StrAppend(&cmd, " --allow ", o.allow);
  const std::string dir = o.mode == "check" ? o.headers : o.emit_dir;
  if (!dir.empty()) absl::StrAppend(&cmd, " --emit-headers ", dir);
  if (!o.sdk_ops.empty()) absl::StrAppend(&cmd, " --sdk-ops ", o.sdk_ops);
  return cmd;
}

void PrintDifference(const Difference& d, std::ostream& out) {
  out << DifferenceKindName(d.kind);
  if (d.kind == Difference::Kind::kBackwardCompatible) {
    out << (d.forward_compatible ? " (and forward compatible)" : " (not forward compatible)");
  }
  out << " " << d.op << ": " << absl::StrJoin(d.findings, "; ") << "\n";
  if (d.expected) {
    out << "  expected (lock, op set " << d.expected->since.ToString()
        << "): " << d.expected->schema.ToString() << "\n";
  } else {
    out << "  expected (lock): none\n";
  }
  out << "  found (registry):        " << (d.found ? d.found->ToString() : "none") << "\n";
}

// Verdict: what the differences and the allow-list add up to. Each failure is printed.
struct Verdict {
  int unrecorded = 0;  // additive or backward-compatible differences
  int failures = 0;    // unallowed breaking differences, expired or stale entries, op set
};

Verdict Judge(const Options& o, const Lock& lock, const std::vector<Difference>& diffs,
              const std::vector<AllowEntry>& allow, std::ostream& out) {
  Verdict v;
  std::map<std::string, const AllowEntry*> allowed;
  for (const AllowEntry& e : allow) allowed[e.op] = &e;
  std::set<std::string> breaking_ops;
  for (const Difference& d : diffs) {
    PrintDifference(d, out);
    if (d.kind != Difference::Kind::kBreaking) {
      ++v.unrecorded;
      continue;
    }
    breaking_ops.insert(d.op);
    auto it = allowed.find(d.op);
    if (it == allowed.end()) {
      ++v.failures;
      out << "  not allow-listed: restore the schema the lock records, or add a line `" << d.op
          << " <YYYY-MM-DD> <reason>` to " << (o.allow.empty() ? "the allow-list" : o.allow)
          << " (docs/op_schema_policy.md)\n";
    } else if (it->second->expires >= o.today) {
      out << "  allowed until " << it->second->expires << " by " << o.allow << ":"
          << it->second->line << " (" << it->second->reason << ")\n";
    }
  }
  for (const AllowEntry& e : allow) {
    if (e.expires < o.today) {
      ++v.failures;
      out << absl::StrFormat(
          "%s:%d: the entry for %s expired on %s (today is %s): restore the schema the lock "
          "records and remove the entry; an entry is not renewed\n",
          o.allow, e.line, e.op, e.expires, o.today);
    } else if (!breaking_ops.count(e.op)) {
      ++v.failures;
      out << absl::StrFormat(
          "%s:%d: stale entry: %s has no breaking difference from the lock (expected one, found "
          "none): remove the entry\n",
          o.allow, e.line, e.op);
    }
  }
  const std::optional<OpSetVersion> newest = lock.Newest();
  if (newest && o.op_set < *newest) {
    ++v.failures;
    out << "the lock records op set " << newest->ToString() << ", newer than this runtime's op set "
        << o.op_set.ToString() << " (dispatcher/op_set.h): expected at most " << o.op_set.ToString()
        << "\n";
  } else if (newest && *newest < o.op_set && v.unrecorded == 0) {
    ++v.failures;
    out << "op set " << o.op_set.ToString() << " (dispatcher/op_set.h) records no change: the "
        << "newest op set in the lock is " << newest->ToString()
        << "; bump the op set in the change that needs it\n";
  }
  return v;
}

// BumpAdvice: when `version` is already recorded, what must happen before --update.
std::string BumpAdvice(const Lock& lock, const OpSetVersion& version) {
  const std::optional<OpSetVersion> newest = lock.Newest();
  if (!newest || *newest < version) return "";
  return absl::StrFormat(
      "op set %s is already recorded in the lock, and a recorded op set never changes: first "
      "bump kOpSetVersionMinor in dispatcher/op_set.h (to %d.%d), then run",
      version.ToString(), newest->major, newest->minor + 1);
}

absl::StatusOr<Lock> LoadLock(const std::string& path, bool missing_is_empty) {
  std::string text;
  if (!ReadFile(path, &text)) {
    if (missing_is_empty && !std::filesystem::exists(path)) return Lock{};
    return absl::NotFoundError(absl::StrCat("cannot read the lock ", path));
  }
  return ParseLock(text, path);
}

absl::StatusOr<std::vector<AllowEntry>> LoadAllow(const std::string& path) {
  if (path.empty()) return std::vector<AllowEntry>{};
  std::string text;
  if (!ReadFile(path, &text)) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  return ParseAllowList(text, path);
}

// SdkOps: the C++ SDK's generated texts for the lock at `lock_path`, with the Tensor methods
// its tensor_methods.txt (beside it) lists.
absl::StatusOr<CppOps> SdkOps(const Lock& lock, const std::string& lock_path) {
  const std::string list = (std::filesystem::path(lock_path).parent_path() / kTensorMethodsList)
                               .string();
  std::string text;
  if (!ReadFile(list, &text)) {
    return absl::NotFoundError(absl::StrCat("cannot read ", list, " (the Tensor methods' list)"));
  }
  absl::StatusOr<std::set<std::string>> methods = ParseTensorMethods(text, list);
  if (!methods.ok()) return methods.status();
  return GenerateCppOps(lock, "dispatcher/ops.lock", *methods);
}

// TensorMethodsPath: tensor_methods.inc, beside ops.hpp at `sdk_ops`.
std::string TensorMethodsPath(const std::string& sdk_ops) {
  return (std::filesystem::path(sdk_ops).parent_path() / kTensorMethodsInc).string();
}

// EmitSdkOps writes tessera/sdk/ops.hpp (cpp_ops_header.h) to `o.sdk_ops`, if one is given, and
// tensor_methods.inc beside it.
int EmitSdkOps(const Options& o, const Lock& lock) {
  if (o.sdk_ops.empty()) return 0;
  absl::StatusOr<CppOps> texts = SdkOps(lock, o.lock);
  const std::string inc = TensorMethodsPath(o.sdk_ops);
  if (!texts.ok()) {
    std::cerr << "tessera_ops_lock: " << texts.status().message() << "\n";
    return 1;
  }
  if (!WriteFile(o.sdk_ops, texts->ops_hpp) || !WriteFile(inc, texts->tensor_methods_inc)) {
    std::cerr << "tessera_ops_lock: cannot write " << o.sdk_ops << " and " << inc << "\n";
    return 1;
  }
  std::cout << "wrote " << o.sdk_ops << " and " << inc << "\n";
  return 0;
}

// CheckSdkOps: `o.sdk_ops` and tensor_methods.inc beside it hold what EmitSdkOps writes (no
// drift).
int CheckSdkOps(const Options& o, const Lock& lock) {
  absl::StatusOr<CppOps> texts = SdkOps(lock, o.lock);
  if (!texts.ok()) {
    std::cout << texts.status().message() << "\n";
    return 1;
  }
  int status = 0;
  for (const auto& [path, text] : {std::pair(o.sdk_ops, &texts->ops_hpp),
                                   std::pair(TensorMethodsPath(o.sdk_ops),
                                             &texts->tensor_methods_inc)}) {
    std::string found;
    if (ReadFile(path, &found) && found == *text) continue;
    std::cout << path << ": expected what --sdk-ops writes from the lock, found "
              << (found.empty() ? "no file" : "another text") << "; regenerate it with\n  "
              << o.program << " --emit-headers " << (o.headers.empty() ? "DIR" : o.headers)
              << " --sdk-ops " << o.sdk_ops << " --lock " << o.lock << "\n";
    status = 1;
  }
  return status;
}

int EmitHeaders(const Lock& lock, const std::string& lock_name, const std::string& dir) {
  absl::StatusOr<std::map<std::string, std::string>> files = GenerateHeaders(lock, lock_name);
  if (!files.ok()) {
    std::cerr << "tessera_ops_lock: " << files.status().message() << "\n";
    return 1;
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  for (const auto& [name, text] : *files) {
    const std::string path = (std::filesystem::path(dir) / name).string();
    if (!WriteFile(path, text)) {
      std::cerr << "tessera_ops_lock: cannot write " << path << "\n";
      return 1;
    }
  }
  std::cout << "wrote " << files->size() << " headers to " << dir << "\n";
  return 0;
}

// CheckHeaders: DIR holds exactly the headers the lock generates (no drift).
int CheckHeaders(const Options& o, const Lock& lock) {
  absl::StatusOr<std::map<std::string, std::string>> files =
      GenerateHeaders(lock, "dispatcher/ops.lock");
  if (!files.ok()) {
    std::cout << files.status().message() << "\n";
    return 1;
  }
  int drift = 0;
  for (const auto& [name, text] : *files) {
    std::string found;
    const std::string path = (std::filesystem::path(o.headers) / name).string();
    if (!ReadFile(path, &found)) {
      std::cout << path << ": expected the generated header, found no file\n";
      ++drift;
    } else if (found != text) {
      std::cout << path << ": expected what --emit-headers generates from the lock, found "
                << "another text\n";
      ++drift;
    }
  }
  std::error_code ec;
  for (const auto& f : std::filesystem::directory_iterator(o.headers, ec)) {
    if (!files->count(f.path().filename().string())) {
      std::cout << f.path().string() << ": expected no such file (the lock generates none), "
                << "found one\n";
      ++drift;
    }
  }
  if (drift) {
    std::cout << "the op-set headers are out of date: regenerate them with\n  " << o.program
              << " --emit-headers " << o.headers << " --lock " << o.lock << "\n";
  }
  return drift ? 1 : 0;
}

int Run(const Options& o) {
  if (o.mode == "emit") {
    absl::StatusOr<Lock> lock = LoadLock(o.lock, false);
    if (!lock.ok()) {
      std::cerr << lock.status().message() << "\n";
      return 1;
    }
    if (EmitSdkOps(o, *lock) != 0) return 1;
    return EmitHeaders(*lock, "dispatcher/ops.lock", o.emit_dir);
  }
  absl::StatusOr<Lock> lock = LoadLock(o.lock, o.mode == "update");
  absl::StatusOr<std::vector<AllowEntry>> allow = LoadAllow(o.allow);
  if (!lock.ok() || !allow.ok()) {
    if (!lock.ok()) std::cout << lock.status().message() << "\n";
    if (!allow.ok()) std::cout << allow.status().message() << "\n";
    return 1;
  }
  const std::map<std::string, FunctionSchema> registry = RegistrySchemas();
  const std::vector<Difference> diffs = Diff(*lock, registry);

  if (o.mode == "check") {
    std::ostringstream report;
    const Verdict v = Judge(o, *lock, diffs, *allow, report);
    std::cout << report.str();
    int status = v.failures ? 1 : 0;
    if (v.unrecorded) {
      status = 1;
      const std::string advice = BumpAdvice(*lock, o.op_set);
      std::cout << v.unrecorded << " additive or backward-compatible change(s) are not recorded "
                << "in the lock yet; "
                << (advice.empty() ? "record them (stamped op set " + o.op_set.ToString() + ") with"
                                   : advice)
                << "\n  " << UpdateCommand(o) << "\n";
    }
    if (status == 0) {
      std::string text;
      ReadFile(o.lock, &text);
      if (text != RenderLock(*lock)) {
        std::cout << o.lock << ": expected the form --update writes (sorted, with its header "
                  << "comment), found another: rewrite it with\n  " << UpdateCommand(o) << "\n";
        status = 1;
      }
    }
    if (!o.headers.empty() && CheckHeaders(o, *lock) != 0) status = 1;
    if (!o.sdk_ops.empty() && CheckSdkOps(o, *lock) != 0) status = 1;
    if (status == 0) {
      std::cout << "ok: the registry's " << registry.size() << " op schemas match " << o.lock
                << " (op set " << o.op_set.ToString() << ")\n";
    }
    return status;
  }

  // --update: record what is additive or backward compatible; never a breaking change.
  std::ostringstream report;
  Verdict v = Judge(o, *lock, diffs, *allow, report);
  std::cout << report.str();
  if (v.failures) {
    std::cout << "not updated: the failures above are not changes --update records\n";
    return 1;
  }
  if (v.unrecorded) {
    const std::string advice = BumpAdvice(*lock, o.op_set);
    if (!advice.empty()) {
      std::cout << "not updated: " << advice << "\n  " << UpdateCommand(o) << "\n";
      return 1;
    }
    Record(diffs, o.op_set, &*lock);
  }
  if (!WriteFile(o.lock, RenderLock(*lock))) {
    std::cout << "cannot write " << o.lock << "\n";
    return 1;
  }
  std::cout << "updated " << o.lock << ": " << v.unrecorded << " change(s) recorded at op set "
            << o.op_set.ToString() << "\n";
  if (EmitSdkOps(o, *lock) != 0) return 1;
  if (!o.emit_dir.empty()) return EmitHeaders(*lock, "dispatcher/ops.lock", o.emit_dir);
  return 0;
}

}  // namespace
}  // namespace tessera::ops_lock

int main(int argc, char** argv) {
  using namespace tessera::ops_lock;
  Options o;
  o.program = argv[0];
  auto fail = [](std::string_view message) {
    std::cerr << "tessera_ops_lock: " << message << "\n" << kUsage;
    return 2;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::cout << kUsage;
      return 0;
    }
    if (i + 1 >= argc) return fail(absl::StrCat(std::string(flag), " expects a value"));
    const std::string value = argv[++i];
    if (flag == "--check" || flag == "--update") {
      if (!o.mode.empty() && o.mode != "emit")
        return fail("--check and --update exclude each other");
      o.mode = flag.substr(2);
      o.lock = value;
    } else if (flag == "--lock") {
      o.lock = value;
    } else if (flag == "--allow") {
      o.allow = value;
    } else if (flag == "--headers") {
      o.headers = value;
    } else if (flag == "--emit-headers") {
      o.emit_dir = value;
      if (o.mode.empty()) o.mode = "emit";
    } else if (flag == "--sdk-ops") {
      o.sdk_ops = value;
    } else if (flag == "--today") {
      if (!IsValidDate(value))
        return fail(absl::StrCat("--today expects YYYY-MM-DD, found ", value));
      o.today = value;
    } else if (flag == "--op-set") {
      const std::optional<OpSetVersion> v = ParseOpSetVersion(value);
      if (!v) return fail(absl::StrCat("--op-set expects MAJOR.MINOR, found ", value));
      o.op_set = *v;
    } else {
      return fail(absl::StrCat("unknown flag ", std::string(flag)));
    }
  }
  if (o.mode.empty()) return fail("expected --check, --update or --emit-headers");
  if (o.lock.empty()) return fail("--emit-headers alone expects --lock LOCK");
  if (o.mode == "check" && !o.emit_dir.empty()) {
    return fail("--emit-headers goes with --update or alone; --check takes --headers DIR");
  }
  if (o.mode != "check" && !o.headers.empty()) return fail("--headers goes with --check");
  if (o.today.empty()) o.today = Today();
  return Run(o);
}
