// Note [Sizes of older minors] (runtime/struct_sizes.h): every size the runtime keeps for an
// older minor equals sizeof of that struct in the minor's frozen headers, which is what a peer
// built against that minor states (frozen_struct_sizes.c, compiled against each release).
#include "runtime/struct_sizes.h"

#include <gtest/gtest.h>

#define TESSERA_DECLARE_FROZEN_(minor, type) size_t tessera_frozen_size_1_##minor##_##type(void);
#define TESSERA_DECLARE_FROZEN_1_0_(type, field) TESSERA_DECLARE_FROZEN_(0, type)
#define TESSERA_DECLARE_FROZEN_1_1_(type, field) TESSERA_DECLARE_FROZEN_(1, type)
extern "C" {
TESSERA_STRUCT_SIZES_1_0(TESSERA_DECLARE_FROZEN_1_0_)
TESSERA_STRUCT_SIZES_1_1(TESSERA_DECLARE_FROZEN_1_1_)
}

namespace tessera {
namespace capi {
namespace {

TEST(StructSizes, EachOlderMinorsSizeIsThatOfItsFrozenHeaders) {
#define TESSERA_EXPECT_SIZE_(minor, type, field)                                        \
  EXPECT_EQ(size_in_1_##minor::type, tessera_frozen_size_1_##minor##_##type())          \
      << #type " in 1." #minor " ends at its field '" #field "' (struct_sizes.h); the " \
      << "frozen 1." #minor " header says otherwise";
#define TESSERA_EXPECT_SIZE_1_0_(type, field) TESSERA_EXPECT_SIZE_(0, type, field)
#define TESSERA_EXPECT_SIZE_1_1_(type, field) TESSERA_EXPECT_SIZE_(1, type, field)
  TESSERA_STRUCT_SIZES_1_0(TESSERA_EXPECT_SIZE_1_0_)
  TESSERA_STRUCT_SIZES_1_1(TESSERA_EXPECT_SIZE_1_1_)
}

TEST(StructSizes, ThePublicPluginDescriptorSizeIsThe1_0One) {
  EXPECT_EQ(TSR_PLUGIN_DESC_SIZE_1_0, size_in_1_0::tsr_plugin_desc);
}

TEST(StructSizes, TheNewestMinorsSizesAreTodaysStructs) {
  // The newest list describes today's headers: a field added since must start a new list.
  EXPECT_EQ(size_in_1_1::tsr_plugin_desc, sizeof(tsr_plugin_desc));
  EXPECT_EQ(size_in_1_1::tsr_host_memory_desc, sizeof(tsr_host_memory_desc));
}

}  // namespace
}  // namespace capi
}  // namespace tessera
