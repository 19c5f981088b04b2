// The random kernels' launcher (kernels_random.cu), callable from host code compiled by g++.
#pragma once

#include <cstdint>
#include <string>

#include "random.h"

namespace tessera {
namespace gpu {

// LaunchRandom queues every launch of `plan` (Note [GPU random kernels] in random.h) writing
// `kind`'s values into an output of `dtype`, one of the four floating dtypes, on `stream`. It
// returns "" or the launch's error in the vendor's words.
std::string LaunchRandom(RandomKind kind, int32_t dtype, const RandomPlan& plan, void* stream);

}  // namespace gpu
}  // namespace tessera
