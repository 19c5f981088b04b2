// The random family's reference arithmetic (op_db_random.cc, op_db_distributions.cc): Philox
// and docs/random.md's table, written here from the table's words rather than from the SDK's
// code, so that a backend that numbers its elements another way, ignores its draw's offset or
// rounds differently fails by name.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "conformance/op_db.h"

namespace tessera {
namespace conformance {

// Philox-4x32-10 block of element `position` at (seed, offset).
std::array<uint32_t, 4> Philox(uint64_t position, uint64_t seed, uint64_t offset);
// Top53: the 53-bit uniform in [0, 1) of two words (the float64 uniform's u).
double Top53(uint32_t low, uint32_t high);
// The table's uniform_ and normal_ values, rounded to `dtype` as the table says.
double Uniform(tsr_dtype dtype, const std::array<uint32_t, 4>& w, double from, double to);
double Normal(tsr_dtype dtype, const std::array<uint32_t, 4>& w, double mean, double std);
double Bernoulli(const std::array<uint32_t, 4>& w, double p);

// Drawn: a tensor of `shape` whose element i is value(Philox(i, seed, offset)).
template <typename F>
HostTensor Drawn(std::vector<int64_t> shape, tsr_dtype dtype, const Arg& generator, F value) {
  HostTensor t = Full(std::move(shape), dtype, 0);
  for (size_t i = 0; i < t.values.size(); ++i) {
    t.values[i] = RoundTo(dtype, value(Philox(i, generator.seed, generator.offset)));
  }
  return t;
}

// SomeGenerator: a generator at a random seed and offset (past 2^32 too).
Arg SomeGenerator(Rng& rng);
// The sample shapes of the random ops: 0-dim, empty, and small to 120 elements.
const std::vector<std::vector<int64_t>>& Shapes();
Arg F32(std::vector<int64_t> shape, Rng& rng);

}  // namespace conformance
}  // namespace tessera
