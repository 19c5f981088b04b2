// The device-contract suite (conformance --device-contract): a plugin's device interface
// (tsr_device_interface: allocation, copies, synchronization, streams and events, unloading)
// tested through the runtime's public entry points, each check by name, as IREE's HAL CTS,
// oneAPI Unified Runtime's conformance tests and PJRT's C API tests check the device layer
// apart from any kernel. A broken copy with an offset or an event that never completes is then
// found by name, not as a puzzling op failure. docs/conformance.md lists the checks.
#pragma once

#include <string>
#include <vector>

#include "conformance/json.h"
#include "conformance/oracles.h"
#include "tessera/c/device.h"

namespace tessera {
namespace conformance {

struct ContractResult {
  std::string check;              // "copy.device_to_host_bounds"
  Status status = Status::kPass;  // kPass, kFail or kSkipped
  std::string message;            // why it failed or was skipped
  double seconds = 0;
};

struct ContractRun {
  std::vector<ContractResult> results;
  // A check did not return within its deadline: its thread is still inside the plugin, so the
  // process must end without running static destructors (std::_Exit) once the reports are out.
  bool hung = false;
};

// The names of the checks, in the order they run (the last unloads the device's plugin).
std::vector<std::string> DeviceContractChecks();

// RunDeviceContract runs every check on `device`, each within `deadline_seconds` (one that does
// not return in time fails, and the checks after it are skipped: the device may be wedged).
ContractRun RunDeviceContract(tsr_device device, double deadline_seconds);

bool ContractFailed(const ContractResult& r);

// The device contract's part of each report.
Json DeviceContractJson(const std::vector<ContractResult>& results);
std::string DeviceContractJUnitSuite(const std::string& device,
                                     const std::vector<ContractResult>& results);
std::string DeviceContractMarkdown(const std::vector<ContractResult>& results);
std::string DeviceContractTerminal(const std::vector<ContractResult>& results);

}  // namespace conformance
}  // namespace tessera
