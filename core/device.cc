#include "core/device.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tessera {
namespace {

// The default names ("privateuseone", as PyTorch), and the numbered ones that manifests,
// tessera-plugin-info and the docs print (privateuse1..3), which the parser takes too
// (TSR_FOR_EACH_DEVICE_TYPE).
std::string_view DefaultName(int slot) { return base::kDeviceTypeFacts[slot].name; }
std::string_view NumberedName(int slot) { return base::kDeviceTypeFacts[slot].numbered; }

bool IsReservedName(int slot, std::string_view name) {
  return DefaultName(slot) == name || (!NumberedName(slot).empty() && NumberedName(slot) == name);
}

bool IsValidBackendName(std::string_view name) {
  if (name.empty() || name.size() > 32) return false;
  if (!(name[0] >= 'a' && name[0] <= 'z')) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

}  // namespace

DeviceNames::DeviceNames() {
  for (int i = 0; i < kNumDeviceTypes; ++i) names_[i] = std::string(DefaultName(i));
}

DeviceNames& DeviceNames::Global() {
  static DeviceNames* names = new DeviceNames();  // never destroyed: used during exit
  return *names;
}

absl::Status DeviceNames::Rename(DeviceType type, std::string_view name) {
  if (!IsPrivateUse(type)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("rename_device: only privateuseone/two/three can be renamed, got '%s'",
                        DefaultName(static_cast<int>(type))));
  }
  if (!IsValidBackendName(name)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "rename_device: expected a name of 1-32 characters [a-z][a-z0-9_]*, got '%s'", name));
  }
  absl::MutexLock lock(&mu_);
  const int slot = static_cast<int>(type);
  // A type's own reserved names (a plugin of PrivateUse1 that names its device "privateuse1")
  // rename nothing: the type answers to them already.
  if (!renamed_[slot] && IsReservedName(slot, name)) return absl::OkStatus();
  if (renamed_[slot]) {
    if (names_[slot] == name) return absl::OkStatus();
    return absl::FailedPreconditionError(
        absl::StrFormat("rename_device: %s is already named '%s'; cannot rename it to '%s'",
                        DefaultName(slot), names_[slot], name));
  }
  for (int i = 0; i < kNumDeviceTypes; ++i) {
    if (names_[i] == name || IsReservedName(i, name)) {
      return absl::AlreadyExistsError(absl::StrFormat(
          "rename_device: the name '%s' is already taken by device type %s", name, DefaultName(i)));
    }
  }
  names_[slot] = std::string(name);
  renamed_[slot] = true;
  return absl::OkStatus();
}

std::string DeviceNames::Name(DeviceType type) const {
  const int slot = static_cast<int>(type);
  if (slot < 0 || slot >= kNumDeviceTypes) return absl::StrCat("<invalid device type ", slot, ">");
  absl::ReaderMutexLock lock(&mu_);
  return names_[slot];
}

absl::StatusOr<DeviceType> DeviceNames::ParseType(std::string_view name) const {
  absl::ReaderMutexLock lock(&mu_);
  for (int i = 0; i < kNumDeviceTypes; ++i) {
    // A renamed PrivateUse type still answers to its reserved names.
    if (names_[i] == name || IsReservedName(i, name)) return static_cast<DeviceType>(i);
  }
  std::string known;
  for (int i = 0; i < kNumDeviceTypes; ++i) absl::StrAppend(&known, i ? ", " : "", names_[i]);
  return absl::InvalidArgumentError(absl::StrFormat(
      "unknown device type '%s' (expected one of: %s; privateuse1..3 name the PrivateUse "
      "types too)",
      name, known));
}

absl::StatusOr<Device> DeviceNames::Parse(std::string_view text) const {
  const size_t colon = text.find(':');
  absl::StatusOr<DeviceType> type = ParseType(text.substr(0, colon));
  if (!type.ok()) return type.status();
  if (colon == std::string_view::npos) return Device(*type, 0);
  const std::string_view index_text = text.substr(colon + 1);
  int32_t index = -1;
  if (index_text.empty() || index_text[0] == '+' || index_text[0] == '-' ||
      !absl::SimpleAtoi(absl::string_view(index_text.data(), index_text.size()), &index) ||
      index < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "invalid device '%s': expected 'type' or 'type:index' with index >= 0", text));
  }
  return Device(*type, index);
}

std::string DeviceNames::ToString(Device device) const {
  std::string name = Name(device.type);
  if ((device.type == DeviceType::kCPU || device.type == DeviceType::kMeta) && device.index == 0) {
    return name;
  }
  return absl::StrCat(name, ":", device.index);
}

std::string DeviceTypeName(DeviceType type) { return DeviceNames::Global().Name(type); }
std::string DeviceToString(Device device) { return DeviceNames::Global().ToString(device); }
absl::StatusOr<Device> ParseDevice(std::string_view text) {
  return DeviceNames::Global().Parse(text);
}

}  // namespace tessera
