// Devices: a device type plus an index, written "type:index" ("cuda:1", "npu:0").
//
// The three PrivateUse types are reserved for out-of-tree backends. Each may be renamed once
// (PrivateUse1 -> "npu"), after which the new name parses and prints; a second, different
// rename is an error, because tensors and logs already carry the first name.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "tessera/base/device_types.hpp"

namespace tessera {

// One enumerator per entry of TSR_FOR_EACH_DEVICE_TYPE (tessera/c/common.h), equal to its
// TSR_DEVICE_* value: kCPU, kCUDA, kHIP, kPrivateUse1..3, kMeta (shape and dtype only; no
// memory behind it).
enum class DeviceType : int8_t {
#define TESSERA_DEVICE_TYPE_ENUMERATOR_(NAME, Name, value, name, numbered) k##Name = value,
  TSR_FOR_EACH_DEVICE_TYPE(TESSERA_DEVICE_TYPE_ENUMERATOR_)
#undef TESSERA_DEVICE_TYPE_ENUMERATOR_
};

inline constexpr int kNumDeviceTypes = base::kNumDeviceTypes;

constexpr bool IsPrivateUse(DeviceType t) {
  return t == DeviceType::kPrivateUse1 || t == DeviceType::kPrivateUse2 ||
         t == DeviceType::kPrivateUse3;
}

struct Device {
  DeviceType type = DeviceType::kCPU;
  int32_t index = 0;

  constexpr Device() = default;
  constexpr Device(DeviceType t, int32_t i = 0) : type(t), index(i) {}  // NOLINT: implicit

  friend constexpr bool operator==(Device a, Device b) {
    return a.type == b.type && a.index == b.index;
  }
  friend constexpr bool operator!=(Device a, Device b) { return !(a == b); }
};

// DeviceNames maps device types to their names, including the renames of PrivateUse1..3.
// Thread-safe. Most code uses the process-wide Global() instance; tests may make their own.
class DeviceNames {
 public:
  DeviceNames();

  static DeviceNames& Global();

  // Rename gives a PrivateUse type its backend name. Renaming again to the same name is a
  // no-op; to another name, or to a name already in use, is an error.
  absl::Status Rename(DeviceType type, std::string_view name);

  std::string Name(DeviceType type) const;
  absl::StatusOr<DeviceType> ParseType(std::string_view name) const;

  // Parse reads "type" or "type:index" (index defaults to 0).
  absl::StatusOr<Device> Parse(std::string_view text) const;
  std::string ToString(Device device) const;

 private:
  mutable absl::Mutex mu_;
  std::array<std::string, kNumDeviceTypes> names_ ABSL_GUARDED_BY(mu_);
  std::array<bool, kNumDeviceTypes> renamed_ ABSL_GUARDED_BY(mu_) = {};
};

// Shorthands over DeviceNames::Global().
std::string DeviceTypeName(DeviceType type);
std::string DeviceToString(Device device);
absl::StatusOr<Device> ParseDevice(std::string_view text);

}  // namespace tessera
