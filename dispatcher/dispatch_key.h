// DispatchKey: which backend's kernel runs a call, derived from the arguments' devices.
//
// One key per device type today (see Note [Dispatch key from devices] in op_registry.cc);
// the enum is compact so that a per-op kernel table is a small fixed array indexed by key.
#pragma once

#include <cstdint>
#include <string>

#include "core/device.h"

namespace tessera {

// One key per device type, generated from the same list (TSR_FOR_EACH_DEVICE_TYPE) with the
// same values, so that DispatchKeyFor and DeviceTypeFor are casts.
enum class DispatchKey : uint8_t {
#define TESSERA_DISPATCH_KEY_ENUMERATOR_(NAME, Name, value, name, numbered) k##Name = value,
  TSR_FOR_EACH_DEVICE_TYPE(TESSERA_DISPATCH_KEY_ENUMERATOR_)
#undef TESSERA_DISPATCH_KEY_ENUMERATOR_
};

inline constexpr int kNumDispatchKeys = kNumDeviceTypes;

constexpr DispatchKey DispatchKeyFor(DeviceType type) {
  return static_cast<DispatchKey>(static_cast<int>(type));
}
constexpr DeviceType DeviceTypeFor(DispatchKey key) {
  return static_cast<DeviceType>(static_cast<int>(key));
}

// DispatchKeyName prints the key under the device type's current name ("CPU", "npu").
inline std::string DispatchKeyName(DispatchKey key) { return DeviceTypeName(DeviceTypeFor(key)); }

}  // namespace tessera
