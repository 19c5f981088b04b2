// The op set version: which op schemas the runtime's registry defines, as recorded in
// dispatcher/ops.lock (docs/op_schema_policy.md).
//
// MAJOR.MINOR. A minor version adds ops or backward-compatible schema changes (a trailing
// argument with a default); a major version may break them. Op set 1.0 is the registry as the
// lock first recorded it. Bump the minor version in the change that needs it, before
// `tessera_ops_lock --update` records that change: an op set the lock already records never
// changes. Op set 1.1 adds the out= forms of the native NN ops (convolution.out,
// max_pool2d_with_indices.out, native_layer_norm.out, native_batch_norm.out). Op set 1.2 adds
// PyTorch's Core ATen operator set, the backward ops of training and the random ops, family
// by family; 1.3 and 1.4 add the backward ops of the normalizations, the NLL loss,
// convolution, pooling and embedding; 1.8 the shape ops, matrix-vector products and
// reductions that ATen composes of others; 1.9 indexing, padding, losses, order statistics,
// counting, upsampling, pooling variants and attention, all composites; 1.10 the backward ops
// of those, embedding_bag and grid_sampler_2d, composites too (docs/op_set.md lists what each
// version holds). The SDK
// headers stable_abi/include/tessera/opset/ are generated from the lock and state the same version
// (TSR_OP_SET_VERSION_MAJOR/MINOR); the ops_lock test checks that they agree.
#pragma once

#include <cstdint>

namespace tessera {

inline constexpr int32_t kOpSetVersionMajor = 1;
inline constexpr int32_t kOpSetVersionMinor = 11;

}  // namespace tessera
