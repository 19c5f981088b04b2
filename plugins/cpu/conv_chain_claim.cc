// Which nodes a run of convolutions takes (Note [Convolution chains] in
// conv_chain.hpp).
#include <algorithm>
#include <string_view>
#include <vector>

#include "conv_chain.hpp"
#include "graph_args.hpp"

namespace tessera {
namespace cpu {
namespace {

using sdk::Tensor;

// The convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
// groups) node's argument positions.
enum ConvArg {
  kInput = 0,
  kWeight,
  kBias,
  kStride,
  kPadding,
  kDilation,
  kTransposed,
  kOutputPadding,
  kGroups,
  kNumConvArgs
};

// ListArg: an int[] argument as the convolution kernel reads it (spatial_of), if it has 0, 1 or
// `dims` elements; a list of another length (a malformed file) leaves the node to its own call,
// whose Meta function names what is wrong.
bool ListArg(const tsr_graph_arg& a, int dims, sdk::IntSpan* out) {
  size_t n = 0;
  const int64_t* v = Ints(a, &n);
  *out = sdk::IntSpan{v, n};
  return a.value.kind == TSR_VALUE_INT_LIST && (n == 0 || n == 1 || n == static_cast<size_t>(dims));
}

// ConvolutionUnit: the convolution at `node` as a unit (its result not yet named), if oneDNN
// runs it: a forward convolution with a constant weight of 1 to 3 spatial dims, literals known.
bool ConvolutionUnit(const tsr_graph_node& node, Unit* u) {
  if (sdk::op_name(node) != "convolution" || node.num_args != kNumConvArgs ||
      (node.flags & TSR_GRAPH_NODE_OPAQUE) != 0 || node.num_outputs != 1) {
    return false;
  }
  const tsr_graph_arg* a = node.args;
  if (TensorArg(node, kInput) < 0 || TensorArg(node, kWeight) < 0 ||
      a[kWeight].value.u.tensor == nullptr || a[kTransposed].value.kind != TSR_VALUE_BOOL ||
      a[kTransposed].value.u.b != 0 || a[kGroups].value.kind != TSR_VALUE_INT ||
      a[kGroups].value.u.i < 1) {
    return false;
  }
  const Tensor w = Tensor::borrow(a[kWeight].value.u.tensor);
  if (w.dim() < 3 || w.dim() > 5) return false;
  const int dims = static_cast<int>(w.dim()) - 2;
  u->input = TensorArg(node, kInput);
  u->weight = TensorArg(node, kWeight);
  u->bias = TensorArg(node, kBias);
  sdk::IntSpan stride, padding, dilation, output_padding;
  if (!ListArg(a[kStride], dims, &stride) || !ListArg(a[kPadding], dims, &padding) ||
      !ListArg(a[kDilation], dims, &dilation) ||
      !ListArg(a[kOutputPadding], dims, &output_padding)) {
    return false;
  }
  u->params = ConvParams{dims,
                         false,
                         spatial_of(stride, dims, 1),
                         spatial_of(padding, dims, 0),
                         spatial_of(dilation, dims, 1),
                         spatial_of(output_padding, dims, 0),
                         a[kGroups].value.u.i};
  u->pointwise = u->params.groups == 1;
  for (int d = 0; d < dims; ++d) {
    u->pointwise = u->pointwise && w.size(2 + d) == 1 && u->params.stride[kSpatial - 1 - d] == 1;
  }
  u->names = {node.outputs[0]};
  return true;
}

// Absorbable: node `k`, not opaque, reads the unit's result (any of its names) as argument 0.
bool Absorbable(const tsr_graph& g, size_t k, const Unit& u) {
  if (k >= g.num_nodes || (g.nodes[k].flags & TSR_GRAPH_NODE_OPAQUE) != 0) return false;
  const int32_t v = TensorArg(g.nodes[k], 0);
  return std::find(u.names.begin(), u.names.end(), v) != u.names.end();
}

// UnitAt: the unit that starts at node `n`, and the node after it (*end); false: none.
// `before`: the run's units so far.
bool UnitAt(const tsr_graph& g, size_t n, const std::vector<Unit>& before, Unit* u, size_t* end) {
  if (!ConvolutionUnit(g.nodes[n], u)) return false;
  size_t next = n + 1;
  auto named = [&](int32_t v) {
    return std::find(u->names.begin(), u->names.end(), v) != u->names.end();
  };
  // An out-of-place op makes a tensor of its own: it joins only where nothing after it reads
  // the unit's result as it was before it.
  auto unread_after = [&](size_t k) {
    for (int32_t v : u->names) {
      if (sdk::read_after(g, k, v)) return false;
    }
    return true;
  };
  if (Absorbable(g, next, *u) && g.nodes[next].route == TSR_NODE_FOLDED) {
    u->names.push_back(g.nodes[next].outputs[0]);  // passed on (Note [Folding batch norm])
    ++next;
  }
  // add_(result, other) writes the sum into the result's tensor, so its names name the sum;
  // add(result, other) and add(other, result) make a new one. add_(other, result) writes the
  // other operand's tensor: taken only where that is an earlier unit's result none of whose
  // names anything after reads (torchvision's downsampling blocks: add_(main, shortcut)).
  auto rewritable = [&](int32_t v) {
    for (const Unit& b : before) {
      if (std::find(b.names.begin(), b.names.end(), v) == b.names.end()) continue;
      for (int32_t name : b.names) {
        if (sdk::read_after(g, next, name)) return false;
      }
      return true;
    }
    return false;  // a run input: its other names are not known here
  };
  if (Absorbable(g, next, *u) || (next < g.num_nodes && named(TensorArg(g.nodes[next], 1)))) {
    const tsr_graph_node& add = g.nodes[next];
    const std::string_view op = sdk::op_name(add);
    const bool in_place = op == "add_.Tensor";
    const int32_t self = TensorArg(add, 0), other = TensorArg(add, 1);
    const int32_t residual = named(self) ? other : self;
    const bool writes_result = in_place && named(self);
    if ((in_place || op == "add.Tensor") && (add.flags & TSR_GRAPH_NODE_OPAQUE) == 0 &&
        add.num_args == 3 && IsOne(add, 2) && residual >= 0 && !named(residual) &&
        (writes_result || (unread_after(next) && (!in_place || rewritable(residual))))) {
      if (!writes_result) u->names.clear();
      u->residual = residual;
      u->names.push_back(add.outputs[0]);
      ++next;
    }
  }
  if (Absorbable(g, next, *u) && g.nodes[next].num_args == 1) {
    const std::string_view op = sdk::op_name(g.nodes[next]);
    const bool in_place = op == "relu_" || op == "hardswish_";
    const Act act = op == "relu" || op == "relu_"             ? Act::kRelu
                    : op == "hardswish" || op == "hardswish_" ? Act::kHardswish
                                                              : Act::kNone;
    if (act != Act::kNone && (in_place || unread_after(next))) {
      if (!in_place) u->names.clear();
      u->act = act;
      u->names.push_back(g.nodes[next].outputs[0]);
      ++next;
    }
  }
  *end = next;
  return true;
}

}  // namespace

std::vector<Unit> ClaimChain(const tsr_graph& g, size_t first, size_t* end) {
  std::vector<Unit> units;
  size_t n = first;
  for (Unit u; n < g.num_nodes && UnitAt(g, n, units, &u, &n); u = Unit()) units.push_back(u);
  *end = n;
  if (units.size() == 1 && (!units[0].post() || units[0].pointwise)) units.clear();
  return units;
}

}  // namespace cpu
}  // namespace tessera
