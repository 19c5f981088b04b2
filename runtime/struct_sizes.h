// The sizes of the ABI's sized structs as older minors define them, from one list.
//
// Note [Sizes of older minors]
// A struct that grows keeps its older fields in place (DESIGN.md, ABI rule 3), so a peer built
// against minor N passes struct_size = sizeof of N's struct, and the runtime must know that
// number for every released minor: it is the least it accepts from a peer of that minor (a
// tsr_kernel_desc from a 1.0 plugin) or exactly what such a peer must state (a 1.0 plugin's
// descriptor). Today's headers cannot say it by sizeof once the struct has grown, so each size
// is written as the end of the minor's last field, here, once: TESSERA_STRUCT_SIZES_<minor>
// lists each struct with that field. runtime/tests/struct_sizes_test.cc holds every entry to
// sizeof of the struct in that release's frozen headers (stable_abi/tests/frozen/), which are
// what a peer of that minor was built with. A minor that grows a struct adds an entry to a new
// list (and its frozen headers to the test) in the same change.
//
// The lists are plain X-macros with no include, so that the test's C files compiled against a
// frozen release can expand them too.
#pragma once

// X(struct, last field of that minor)
#define TESSERA_STRUCT_SIZES_1_0(X) \
  X(tsr_plugin_desc, state)         \
  X(tsr_kernel_desc, typed)   \
  X(tsr_device_interface, event_synchronize)

#define TESSERA_STRUCT_SIZES_1_1(X) \
  X(tsr_plugin_desc, op_set_minor)  \
  X(tsr_host_memory_desc, deleter_context) \
  X(tsr_call_plan, device) \
  X(tsr_kernel_desc, packed) \
  X(tsr_kernel_info, note)

// TESSERA_STRUCT_END: the bytes of `type` up to the end of its field `field`.
#define TESSERA_STRUCT_END(type, field) (offsetof(type, field) + sizeof(((type*)0)->field))

#ifdef __cplusplus
#include <cstddef>

#include "tessera/c/tessera.h"

namespace tessera {
namespace capi {

// size_in_1_0::tsr_kernel_desc and the like: the size of a struct in that minor.
#define TESSERA_STRUCT_SIZE_CONSTANT_(type, field) \
  inline constexpr size_t type = TESSERA_STRUCT_END(::type, field);
namespace size_in_1_0 {
TESSERA_STRUCT_SIZES_1_0(TESSERA_STRUCT_SIZE_CONSTANT_)
}  // namespace size_in_1_0
namespace size_in_1_1 {
TESSERA_STRUCT_SIZES_1_1(TESSERA_STRUCT_SIZE_CONSTANT_)
}  // namespace size_in_1_1
#undef TESSERA_STRUCT_SIZE_CONSTANT_

}  // namespace capi
}  // namespace tessera
#endif  // __cplusplus
