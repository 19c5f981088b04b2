// The CPU backend's graph compiler (tessera/c/graph.h): in a compiled model it claims runs of
// convolutions, each with the batch norm, residual add and activation after it, run in oneDNN's
// layouts (Note [Convolution chains] in conv_chain.hpp); batched products with the copies and
// the scaling around them, run as one matmul over strided operands (Note [Batched products in
// place] in batched_product.hpp); linear layers with the gelu or residual add (and its layer
// norm) after them, the bias added in that op's pass (Note [Linear layers with their epilogue]
// in linear_epilogue.hpp); and an additive mask with the softmax after it, in one pass (Note
// [Masked softmax] in masked_softmax.hpp).
#pragma once

#include "tessera/sdk/plugin.hpp"

namespace tessera {
namespace cpu {

// register_graph_compiler registers the graph compiler, unless TESSERA_CPU_FUSION is 0 (read
// when the plugin is registered).
void register_graph_compiler(sdk::Library& lib);

}  // namespace cpu
}  // namespace tessera
