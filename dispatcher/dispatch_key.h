// DispatchKey: which backend's kernel runs a call, derived from the arguments' devices.
//
// One key per device type today (see Note [Dispatch key from devices] in op_registry.cc);
// the enum is compact so that a per-op kernel table is a small fixed array indexed by key.
#pragma once

#include <cstdint>
#include <string>

#include "core/device.h"

namespace tessera {

enum class DispatchKey : uint8_t {
  kCPU = 0,
  kCUDA = 1,
  kHIP = 2,
  kPrivateUse1 = 3,
  kPrivateUse2 = 4,
  kPrivateUse3 = 5,
  kMeta = 6,
};

inline constexpr int kNumDispatchKeys = 7;

constexpr DispatchKey DispatchKeyFor(DeviceType type) {
  return static_cast<DispatchKey>(static_cast<int>(type));
}
constexpr DeviceType DeviceTypeFor(DispatchKey key) {
  return static_cast<DeviceType>(static_cast<int>(key));
}

// DispatchKeyName prints the key under the device type's current name ("CPU", "npu").
inline std::string DispatchKeyName(DispatchKey key) { return DeviceTypeName(DeviceTypeFor(key)); }

}  // namespace tessera
