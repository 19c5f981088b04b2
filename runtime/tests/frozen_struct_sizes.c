/* The sizes of the sized structs in one frozen release (Note [Sizes of older minors] in
 * runtime/struct_sizes.h): compiled against stable_abi/tests/frozen/v1.<TESSERA_FROZEN_MINOR>
 * only, once per release, for runtime/tests/struct_sizes_test.cc to compare with the runtime's
 * constants. */
#include <stddef.h>

#include "runtime/struct_sizes.h"
#include "tessera/c/tessera.h" /* the frozen release's */

#define TESSERA_FROZEN_SIZE_(minor, type) \
  size_t tessera_frozen_size_1_##minor##_##type(void) { return sizeof(type); }

#if TESSERA_FROZEN_MINOR == 0
#define TESSERA_FROZEN_SIZE_1_0_(type, field) TESSERA_FROZEN_SIZE_(0, type)
TESSERA_STRUCT_SIZES_1_0(TESSERA_FROZEN_SIZE_1_0_)
#elif TESSERA_FROZEN_MINOR == 1
#define TESSERA_FROZEN_SIZE_1_1_(type, field) TESSERA_FROZEN_SIZE_(1, type)
TESSERA_STRUCT_SIZES_1_1(TESSERA_FROZEN_SIZE_1_1_)
#else
#error "TESSERA_FROZEN_MINOR: expected a released 1.x minor that has a list in struct_sizes.h"
#endif
