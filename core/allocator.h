// Allocator: where a device's memory comes from.
//
// An allocation is a DataPtr: the address, how to free it, and an owner reference that keeps
// whoever provided the memory alive (later: the plugin whose device this is) for as long as
// the memory exists. The runtime never dereferences non-host memory; it only passes the
// address back to the device's own functions.
#pragma once

#include <cstddef>
#include <memory>

#include "absl/status/statusor.h"
#include "core/device.h"

namespace tessera {

// DeleterFn frees `data`; `context` is whatever the allocator stored with it.
using DeleterFn = void (*)(void* data, void* context);

struct DataPtr {
  void* data = nullptr;
  DeleterFn deleter = nullptr;  // NULL: nothing to free (borrowed memory, meta tensors)
  void* deleter_context = nullptr;
  std::shared_ptr<const void> owner;  // kept alive until after the deleter ran
  Device device;
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  // Allocate returns at least `nbytes` of memory on `device` (of the allocator's device type).
  // nbytes may be 0.
  virtual absl::StatusOr<DataPtr> Allocate(Device device, size_t nbytes) = 0;
};

// AllocatorRegistry: the allocator for each device type. CPU starts with the host allocator;
// a backend registers its own when it registers its device type. Meta needs none.
Allocator* GetAllocator(DeviceType type);
// SetAllocator installs `allocator` (borrowed; must outlive its use, NULL to remove) and
// returns the previous one.
Allocator* SetAllocator(DeviceType type, Allocator* allocator);

}  // namespace tessera
