// The CPU backend's graph compiler (tessera/c/graph.h): in a compiled model it claims runs of
// convolutions, each with the batch norm, residual add and activation after it, and runs them in
// oneDNN's layouts with the add and the activation as post-ops (Note [Convolution chains] in
// conv_fusion.cc).
#pragma once

#include "tessera/sdk/plugin.hpp"

namespace tessera {
namespace cpu {

// register_conv_fusion registers the graph compiler, unless TESSERA_CPU_FUSION is 0 (read
// when the plugin is registered).
void register_conv_fusion(sdk::Library& lib);

}  // namespace cpu
}  // namespace tessera
