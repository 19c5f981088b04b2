#include "core/allocator.h"

#include <array>
#include <atomic>

#include "core/host_allocator.h"

namespace tessera {
namespace {

// Read on every tensor allocation, written when a backend registers: atomics, no lock.
struct AllocatorTable {
  std::array<std::atomic<Allocator*>, kNumDeviceTypes> slots;
  AllocatorTable() {
    for (auto& slot : slots) slot.store(nullptr);
    slots[static_cast<int>(DeviceType::kCPU)].store(&HostAllocator::Global());
  }
};

std::array<std::atomic<Allocator*>, kNumDeviceTypes>& Allocators() {
  static AllocatorTable* table = new AllocatorTable();  // never destroyed: used during exit
  return table->slots;
}

}  // namespace

Allocator* GetAllocator(DeviceType type) {
  return Allocators()[static_cast<int>(type)].load(std::memory_order_acquire);
}

Allocator* SetAllocator(DeviceType type, Allocator* allocator) {
  return Allocators()[static_cast<int>(type)].exchange(allocator, std::memory_order_acq_rel);
}

}  // namespace tessera
