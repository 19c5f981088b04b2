// OpIndex: the registry's map from an op's full name to its entry, read without a lock (Note
// [Looking ops up without a lock]).
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

namespace tessera {
namespace internal {

class OperatorEntry;

// Note [Looking ops up without a lock]
// Calls find ops by name: an application through tsr_op_find, and the dispatcher itself on
// every call of a composite or derivation (CallOne in ops/boxing.cc, CopyInto in variants.cc).
// A reader lock there was the one lock on the call path (op_registry.h promises none), and
// threads calling composites at once all wrote the mutex's cache line.
//
// OpIndex is an open-addressing hash table of atomic entry pointers, keyed by the entry's
// immutable `name`. Writers are serialized by the registry's mutex; readers take no lock:
//   - an entry is published with a release store after it is fully built, and never freed
//     while the registry lives (OpRegistry::ops_ owns it; a replaced entry lives on in its
//     successor's `replaced`), so a reader that loads a pointer may read the entry;
//   - names are never removed: an undefined op keeps its slot (`defined` says it is gone), and
//     a redefinition with another schema stores the new entry in the old one's slot;
//   - the table grows (at half full) by building a larger one and publishing it; the old one is
//     kept until the registry goes, since a reader may still be probing it. A reader of the old
//     table sees what a lookup a moment earlier would have seen. The tables together hold at
//     most twice the slots of the last one.
class OpIndex {
 public:
  OpIndex();
  ~OpIndex();
  OpIndex(const OpIndex&) = delete;
  OpIndex& operator=(const OpIndex&) = delete;

  // Find: the entry named `name` (defined or not), or NULL. Any thread, no lock.
  OperatorEntry* Find(std::string_view name) const;

  // Set makes `entry->name` map to `entry`: a new name, or a new entry for a known one.
  // Callers serialize Set (the registry's mutex).
  void Set(OperatorEntry* entry);

 private:
  struct Table {
    explicit Table(size_t capacity);
    const size_t mask;  // capacity - 1; capacity is a power of two
    const std::unique_ptr<std::atomic<OperatorEntry*>[]> slots;
    size_t used = 0;  // writers only
  };
  static size_t Hash(std::string_view name);
  static void Insert(Table& table, OperatorEntry* entry);

  std::atomic<Table*> current_;
  std::vector<std::unique_ptr<Table>> tables_;  // every table built, the current one last
};

}  // namespace internal
}  // namespace tessera
