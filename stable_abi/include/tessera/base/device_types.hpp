// The device-type facts for C++, generated from the C ABI's one list (TSR_FOR_EACH_DEVICE_TYPE,
// tessera/c/common.h): how many there are and their names. Part of the header-only base
// (tessera/base/, below core and the SDK), dependency-free on purpose: the runtime's DeviceType
// and DispatchKey (core/device.h, dispatcher/dispatch_key.h), the SDK's messages and
// tessera-plugin-info all read the device types here, so that they cannot drift apart.
#pragma once

#include <cstdint>

#include "tessera/c/common.h"

namespace tessera {
namespace base {

// DeviceTypeFacts: one entry of TSR_FOR_EACH_DEVICE_TYPE.
struct DeviceTypeFacts {
  tsr_device_type type;
  const char* name;      // the default name in device strings: "cuda", "privateuseone"
  const char* numbered;  // the other name a device string may use ("privateuse1"), or ""
};

// kDeviceTypeFacts: every device type, in enum order; kDeviceTypeFacts[t] describes type t.
inline constexpr DeviceTypeFacts kDeviceTypeFacts[] = {
#define TESSERA_BASE_DEVICE_TYPE_FACTS_(NAME, Name, value, name, numbered) \
  {TSR_DEVICE_##NAME, name, numbered},
    TSR_FOR_EACH_DEVICE_TYPE(TESSERA_BASE_DEVICE_TYPE_FACTS_)
#undef TESSERA_BASE_DEVICE_TYPE_FACTS_
};

inline constexpr int kNumDeviceTypes =
    static_cast<int>(sizeof kDeviceTypeFacts / sizeof kDeviceTypeFacts[0]);

namespace device_type_internal {
constexpr bool ValuesAreTheirPositions() {
  for (int i = 0; i < kNumDeviceTypes; ++i) {
    if (static_cast<int>(kDeviceTypeFacts[i].type) != i) return false;
  }
  return true;
}
}  // namespace device_type_internal
// The tables here and in the runtime index by value: the list must count 0, 1, 2, ...
static_assert(
    device_type_internal::ValuesAreTheirPositions(),
    "TSR_FOR_EACH_DEVICE_TYPE must list the device types in enum order, valued 0, 1, 2, ...");

// is_valid_device_type: whether a raw value (a tsr_device_type field, say) names a device type.
constexpr bool is_valid_device_type(int32_t value) { return value >= 0 && value < kNumDeviceTypes; }

// device_type_label: the name manifests, tessera-plugin-info and the SDK's messages print for a
// type whatever a plugin renamed it to: its numbered name where it has one ("privateuse1"), else
// its default name ("cuda"); nullptr for a value outside the list.
constexpr const char* device_type_label(int32_t value) {
  if (!is_valid_device_type(value)) return nullptr;
  const DeviceTypeFacts& f = kDeviceTypeFacts[value];
  return f.numbered[0] != '\0' ? f.numbered : f.name;
}

}  // namespace base
}  // namespace tessera
