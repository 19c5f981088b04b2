// libtessera_cpu.so: the CPU backend, a plugin like any vendor's. It is built only on the SDK
// and the C ABI headers, and the runtime loads it by default discovery.
#include "kernel_support.hpp"

TESSERA_PLUGIN(lib) {
  lib.describe("cpu", TESSERA_CPU_PLUGIN_VERSION, TSR_DEVICE_CPU, "");
  tessera::cpu::register_copy(lib);
  tessera::cpu::register_unary(lib);
  tessera::cpu::register_binary(lib);
  tessera::cpu::register_ternary(lib);
  tessera::cpu::register_reductions(lib);
  tessera::cpu::register_scans(lib);
  tessera::cpu::register_linalg(lib);
  tessera::cpu::register_index(lib);
  tessera::cpu::register_nn(lib);
}
