// How a sample of the op database becomes a call: its arguments pushed on a stack in schema
// order, the op called through the public API, its returns read back. The oracles and the
// development tools (conformance/tools/) share these, so that a tool calls an op exactly as
// the suite does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "conformance/host_tensor.h"
#include "conformance/op_db.h"

namespace tessera {
namespace conformance {

// Call: the materialized arguments of one call.
struct Call {
  std::vector<Tensor> tensors;  // tensor arguments as passed (for the unchanged-input check)
  internal::Stack stack;
};

// Push materializes `a` on `device` in `layout` and pushes it on the call's stack. Tensors
// on the Meta device are empty; a kDevice argument becomes `device`.
void Push(const Arg& a, tsr_device device, Layout layout, Call* call);

// Invoke calls `op_name` with the sample's arguments (then `extra` tensors, for out=) and
// returns the returned tensors (an undefined one for a None: a backward op's gradient that its
// output_mask did not ask for; a Tensor[] return's elements in order; a host value, equal's
// bool, sym_size's int or item's Scalar, as a 0-dim CPU tensor of its kind); `inputs`, when given,
// receives the tensor arguments as passed. Errors throw sdk::Error.
std::vector<Tensor> Invoke(const std::string& op_name, const Sample& sample, tsr_device device,
                           Layout layout, const std::vector<Tensor>& extra = {},
                           std::vector<Tensor>* inputs = nullptr);

// SchemaArguments splits "name(args) -> returns" into the argument declarations
// ("Scalar alpha=1"), at top-level commas, without the keyword-only marker `*`.
std::vector<std::string> SchemaArguments(const std::string& schema);

// OutputMaskIndex: the index of `op_name`'s `bool[N] output_mask` argument (a backward op's, as
// ATen names it; the dispatcher's OperatorEntry::output_mask_argument), or -1.
int OutputMaskIndex(const std::string& op_name);

// WithDefaults: the sample's arguments completed with the functional schema's defaults, so
// that out= tensors (keyword-only, after them) land in the right places.
Sample WithDefaults(const std::string& functional, const Sample& s);

// SampleSeed: the seed of the generator that makes an op's samples for one dtype, from the
// run's --seed; the error inputs use the float32 seed plus kErrorInputsSeedOffset. A tool that
// regenerates samples with it sees the very inputs of a conformance run with that --seed.
uint64_t SampleSeed(const std::string& op_name, uint64_t seed, tsr_dtype dtype);
constexpr uint64_t kErrorInputsSeedOffset = 7;
// The gradient oracle's samples and directions: the float64 seed plus this.
constexpr uint64_t kGradientSeedOffset = 13;

}  // namespace conformance
}  // namespace tessera
