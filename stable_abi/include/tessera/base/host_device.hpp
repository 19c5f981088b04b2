// TSR_BASE_HD: marks the header-only base's element functions (special_math.hpp,
// element_math.hpp) for the host and, under nvcc or hipcc, for the device too, so that the CPU
// plugin and the GPU plugins compile the very same functions.
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__)
#define TSR_BASE_HD __host__ __device__
#else
#define TSR_BASE_HD
#endif
