// The work of a 1-element float32 add kernel, as a plugin's kernel does it: allocate the output
// through the runtime table, add. The benchmarks' stand-in for "the kernel's own time" beside a
// call through the whole C ABI (c_abi_benchmark.cc) or a compiled model (model_benchmark.cc).
#pragma once

#include "tessera/sdk/runtime.hpp"

namespace tessera_bench {

inline tsr_error* AddWork(tsr_tensor* a, tsr_tensor* b, tsr_tensor** out) {
  const tsr_runtime_api& api = tessera::sdk::api();
  if (tsr_error* e = api.tensor_empty(api.tensor_sizes(a), static_cast<size_t>(api.tensor_dim(a)),
                                      TSR_DTYPE_FLOAT32, api.tensor_device(a), out)) {
    return e;
  }
  static_cast<float*>(api.tensor_data_ptr(*out))[0] =
      static_cast<const float*>(api.tensor_data_ptr(a))[0] +
      static_cast<const float*>(api.tensor_data_ptr(b))[0];
  return nullptr;
}

}  // namespace tessera_bench
