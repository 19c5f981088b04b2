// The sample NPU's device: one device whose memory is an arena of host memory that the
// runtime may reach only through the copy functions below. Bytes in the arena are stored
// XOR-scrambled, so anything that read device memory directly (instead of calling
// copy_device_to_host) would see garbage: tests use that to prove the runtime never does.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/c/device.h"

namespace npu {

inline constexpr unsigned char kScrambleKey = 0xA5;

// The device interface table, filled with this file's functions. Its device_type is left 0:
// sdk::Library::device() sets the one the plugin describes.
const tsr_device_interface& DeviceInterface();

// OpenDevice maps the arena (what a real plugin's driver initialisation would do); the plugin
// calls it only when it is registered (Library::on_register), never when it is merely described.
// Throws sdk::Error when the memory cannot be had. CloseDevice unmaps it again when the plugin
// is unloaded (Library::on_unload): the runtime calls it once no tensor of the device is left.
void OpenDevice();
void CloseDevice();

// Unscramble/Scramble copy between the arena and plain host memory (for the kernels).
void ReadDevice(void* host, const void* device, size_t nbytes);
void WriteDevice(void* device, const void* host, size_t nbytes);

// Arena statistics, for tests.
size_t BytesInUse();

}  // namespace npu
