// OpIndex (Note [Looking ops up without a lock] in op_index.h).
#include "dispatcher/internal/op_index.h"

#include "absl/hash/hash.h"
#include "dispatcher/internal/operator_entry.h"

namespace tessera {
namespace internal {
namespace {

constexpr size_t kInitialCapacity = 1024;  // the core op set fits without growing

}  // namespace

OpIndex::Table::Table(size_t capacity)
    : mask(capacity - 1), slots(new std::atomic<OperatorEntry*>[capacity]) {
  for (size_t i = 0; i < capacity; ++i) slots[i].store(nullptr, std::memory_order_relaxed);
}

OpIndex::OpIndex() {
  tables_.push_back(std::make_unique<Table>(kInitialCapacity));
  current_.store(tables_.back().get(), std::memory_order_release);
}

OpIndex::~OpIndex() = default;

size_t OpIndex::Hash(std::string_view name) { return absl::Hash<std::string_view>{}(name); }

OperatorEntry* OpIndex::Find(std::string_view name) const {
  const Table& table = *current_.load(std::memory_order_acquire);
  for (size_t i = Hash(name) & table.mask;; i = (i + 1) & table.mask) {
    OperatorEntry* entry = table.slots[i].load(std::memory_order_acquire);
    if (entry == nullptr) return nullptr;
    if (entry->name == name) return entry;
  }
}

void OpIndex::Insert(Table& table, OperatorEntry* entry) {
  for (size_t i = Hash(entry->name) & table.mask;; i = (i + 1) & table.mask) {
    OperatorEntry* present = table.slots[i].load(std::memory_order_relaxed);
    if (present == nullptr) {
      ++table.used;
      table.slots[i].store(entry, std::memory_order_release);
      return;
    }
    if (present->name == entry->name) {
      table.slots[i].store(entry, std::memory_order_release);
      return;
    }
  }
}

void OpIndex::Set(OperatorEntry* entry) {
  Table& table = *current_.load(std::memory_order_relaxed);
  Insert(table, entry);
  if (table.used * 2 <= table.mask + 1) return;
  // Half full: the next table, twice as large, with every name; published once complete.
  auto bigger = std::make_unique<Table>(2 * (table.mask + 1));
  for (size_t i = 0; i <= table.mask; ++i) {
    if (OperatorEntry* e = table.slots[i].load(std::memory_order_relaxed)) Insert(*bigger, e);
  }
  current_.store(bigger.get(), std::memory_order_release);
  tables_.push_back(std::move(bigger));
}

}  // namespace internal
}  // namespace tessera
