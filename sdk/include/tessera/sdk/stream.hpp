// Streams in a plugin's kernels (tessera/c/device.h, Note [Asynchronous devices]): a kernel of
// an asynchronous device launches its work on the calling thread's current stream of its
// device, which current_stream() returns as the plugin's own handle.
//
//   void* stream = sdk::current_stream(self.device());  // what stream_create returned, or NULL
//   my_kernel<<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(...);
//
// Applications set the current stream with tessera::StreamGuard (tessera/sdk/runtime.hpp).
#pragma once

#include "tessera/sdk/api.hpp"

namespace tessera {
namespace sdk {

// current_stream: the plugin's handle of the current stream on `device` for this thread, NULL
// for the device's default stream (also in a 1.0 runtime, which has no streams to set).
inline void* current_stream(tsr_device device) {
  return TSR_API_HAS(&api(), stream_current_native) ? api().stream_current_native(device) : nullptr;
}

}  // namespace sdk
}  // namespace tessera
