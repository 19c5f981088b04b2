// The op schema lock, dispatcher/ops.lock: its file format, the allow-list of breaking changes,
// the comparison with a registry, and the op-set headers generated from it. The CLI is
// tessera_ops_lock (ops_lock_main.cc); the policy is docs/op_schema_policy.md.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "dispatcher/schema.h"

namespace tessera::ops_lock {

// OpSetVersion: MAJOR.MINOR, ordered.
struct OpSetVersion {
  int major = 0;
  int minor = 0;
  std::string ToString() const;  // "1.0"
  std::string Mangled() const;   // "1_0", for file and macro names
  friend bool operator<(const OpSetVersion& a, const OpSetVersion& b) {
    return a.major != b.major ? a.major < b.major : a.minor < b.minor;
  }
  friend bool operator==(const OpSetVersion& a, const OpSetVersion& b) {
    return a.major == b.major && a.minor == b.minor;
  }
  friend bool operator<=(const OpSetVersion& a, const OpSetVersion& b) { return !(b < a); }
};
std::optional<OpSetVersion> ParseOpSetVersion(std::string_view text);

// LockEntry: one line of the lock: `schema` has been the op's schema since op set `since`.
struct LockEntry {
  OpSetVersion since;
  FunctionSchema schema;
  int line = 0;  // 0 for entries not read from a file
};

// Lock: every op's schema history, oldest first; the last entry is its current schema.
struct Lock {
  std::map<std::string, std::vector<LockEntry>> ops;
  std::optional<OpSetVersion> Newest() const;
  std::vector<OpSetVersion> Versions() const;  // every op set a line names, ascending
};

// ParseLock reads a lock (`path` only names it in errors, which are line-numbered). It refuses
// malformed lines, schemas not in canonical form, two lines of one op at one op set, and a
// history in which a schema is not a backward-compatible change of the one before it.
absl::StatusOr<Lock> ParseLock(std::string_view text, std::string_view path);
// RenderLock writes the lock as --update does: the format comment, then one line per entry,
// sorted by op name, then op set version.
std::string RenderLock(const Lock& lock);

// AllowEntry: one line of the allow-list: `op` may differ from the lock in a breaking way
// until (and including) `expires` (YYYY-MM-DD), for `reason`.
struct AllowEntry {
  std::string op;
  std::string expires;
  std::string reason;
  int line = 0;
};
absl::StatusOr<std::vector<AllowEntry>> ParseAllowList(std::string_view text,
                                                       std::string_view path);
// IsValidDate: `date` is a real calendar date written YYYY-MM-DD.
bool IsValidDate(std::string_view date);

// Difference: one op whose registry schema is not its current lock schema.
struct Difference {
  enum class Kind { kAdditive, kBackwardCompatible, kBreaking };
  Kind kind;
  std::string op;
  std::optional<LockEntry> expected;    // the lock's current entry; none for a new op
  std::optional<FunctionSchema> found;  // the registry's schema; none for a removed op
  std::vector<std::string> findings;    // what differs, expected vs found
  bool forward_compatible = false;
};
std::string_view DifferenceKindName(Difference::Kind kind);

// Diff compares the registry's schemas (by full name) with the lock's current ones.
std::vector<Difference> Diff(const Lock& lock,
                             const std::map<std::string, FunctionSchema>& registry);

// Record adds the additive and backward-compatible differences to `lock`, stamped `version`.
void Record(const std::vector<Difference>& differences, OpSetVersion version, Lock* lock);

// GenerateHeaders: file name -> text of the op-set headers for every op set in the lock:
// `v<MAJOR>_<MINOR>.h` (each op's schema at that op set, as macros and tables) and `opset.h`
// (TSR_OP_SET_VERSION_MAJOR/MINOR of the newest, and its header); from op set 1.2 on also
// `calls_v<MAJOR>_<MINOR>.h` (typed C calls, calls_header.h) and `calls.h` (the newest one's).
// Fails on a name-mangling collision. `lock_name` is quoted in the "generated from" comment.
absl::StatusOr<std::map<std::string, std::string>> GenerateHeaders(const Lock& lock,
                                                                   std::string_view lock_name);
// MangleOpName: "add_.Tensor" -> "add__Tensor", "npu::foo.out" -> "npu__foo_out".
std::string MangleOpName(std::string_view name);

}  // namespace tessera::ops_lock
