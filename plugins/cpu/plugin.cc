// libtessera_cpu.so: the CPU backend, a plugin like any vendor's. It is built only on the SDK
// and the C ABI headers, and the runtime loads it by default discovery.
#include "graph_compiler.hpp"
#include "kernel_support.hpp"
#include "weight_cache.hpp"

// It needs a 1.1 runtime (min_abi_minor 1): its kernels leave the checks that are op semantics
// (alpha, gelu's approximate, ...) to the call plan, which a 1.0 runtime does not make.
TESSERA_PLUGIN(lib) {
  lib.describe("cpu", TESSERA_CPU_PLUGIN_VERSION, TSR_DEVICE_CPU, "", /*min_abi_minor=*/1);
  tessera::cpu::register_copy(lib);
  tessera::cpu::register_unary(lib);
  tessera::cpu::register_binary(lib);
  tessera::cpu::register_ternary(lib);
  tessera::cpu::register_reductions(lib);
  tessera::cpu::register_scans(lib);
  tessera::cpu::register_linalg(lib);
  tessera::cpu::register_index(lib);
  tessera::cpu::register_nn(lib);
  tessera::cpu::register_activations(lib);
  tessera::cpu::register_random(lib);
  tessera::cpu::register_graph_compiler(lib);
  // The reordered weights kept for immutable tensors go with the plugin.
  lib.on_unload([] { tessera::cpu::weight_cache::clear(); });
}
