#include "runtime/handles.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_format.h"

namespace tessera {
namespace capi {

absl::StatusOr<DeviceType> ToDeviceType(int32_t type, const char* fn) {
  if (type < 0 || type >= kNumDeviceTypes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: expected a tsr_device_type in [0, %d), got %d", fn, kNumDeviceTypes, type));
  }
  return static_cast<DeviceType>(type);
}

absl::StatusOr<Device> ToDevice(tsr_device device, const char* fn) {
  if (device.type < 0 || device.type >= kNumDeviceTypes || device.index < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: expected a device with type in [0, %d) and index >= 0, got {type %d, index %d}", fn,
        kNumDeviceTypes, device.type, device.index));
  }
  return Device(static_cast<DeviceType>(device.type), device.index);
}

absl::StatusOr<std::string_view> ReadString(tsr_string s, const char* fn, const char* what) {
  if (s.data != nullptr && s.size > kMaxCallerString) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %s is %d bytes long; expected at most %d (a wrong size? nothing of it was read)", fn,
        what, s.size, kMaxCallerString));
  }
  return View(s);
}

size_t CopyToBuffer(const std::string& text, char* buf, size_t size) {
  if (buf != nullptr && size > 0) {
    const size_t n = std::min(size - 1, text.size());
    std::memcpy(buf, text.data(), n);
    buf[n] = '\0';
  }
  return text.size();
}

}  // namespace capi
}  // namespace tessera
