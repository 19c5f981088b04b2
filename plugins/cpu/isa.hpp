// TESSERA_CPU_CLONES: a loop built twice, for AVX2 and for the baseline x86-64 the plugin
// targets, the better one chosen when the plugin loads (GCC/Clang target_clones: an ifunc).
//
// The plugin is built for any x86-64, whose SSE2 has no blend: a loop that selects between
// floats and int64 indices (max pooling's "larger or NaN") does not vectorize there and runs
// branchy, mispredicting on every other element of real data. Mark only such hot loops; a
// clone doubles the function's code. Elsewhere (other architectures, other compilers) the mark
// is empty and the loop is built once: Clang 14 (the fuzz build's compiler) does not clone
// function templates.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(TESSERA_NO_CPU_CLONES)
#define TESSERA_CPU_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define TESSERA_CPU_CLONES
#endif
