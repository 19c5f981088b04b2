// How a compiled model hands runs of its nodes to the device's graph compiler
// (tessera/c/graph.h); CompiledModel::ClaimRuns and RunClaimed live in claimed_runs.cc.
//
// Note [Claimed runs]
// After binding every node and folding batch norms, compiling shows the graph to the
// graph compiler registered for the device type, if there is one and the compile allows it
// (CompileOptions::claims, tsr_compile_options): walking the nodes in order, it asks the compiler
// how many nodes from each unclaimed node on it takes; a run it takes is prepared at once
// (compile time), its nodes get the route kClaimed and a model run executes it as one step:
// its inputs (the values its nodes read from outside it) in, its outputs (the values it defines
// that later nodes or the model's outputs read) out. The values only its own nodes read never
// exist in the runtime. The rest runs node by node, as it would without a compiler.
//  - The graph shows each literal argument converted to its schema type (what a kernel gets)
//    and each constant argument's host tensor, so that prepare may transform constants once.
//    A node whose literals a run evaluates (dynamic dims) or fills in (an argument the op gained
//    since the file) is shown TSR_GRAPH_NODE_OPAQUE, and a claim including one fails the compile.
//  - Folded nodes are shown as such (TSR_NODE_FOLDED): the convolution's weight and bias
//    arguments read the folded constants, and the batch norm reads only its input, which its
//    output passes on. A claim may take them; they are then claimed nodes.
//  - Releases: a value's last reader may be inside a run; it is released when the run ends.
//  - Conformance runs each zoo model compiled with and without claims and compares
//    (conformance/model_checks.cc): a claimed run must give what its nodes give one by one.
#pragma once
