// The sample NPU's graph compiler (tessera/c/graph.h): it claims chains of elementwise ops in
// a compiled model and runs each chain in one pass over its elements, as a graph-compiling
// accelerator fuses them, instead of one kernel (and one intermediate tensor) per node.
#pragma once

#include "tessera/c/graph.h"

namespace npu {

// The compiler's table; device_type left 0 (sdk::Library::graph_compiler sets the plugin's).
const tsr_graph_compiler& GraphCompiler();

}  // namespace npu
