// Batched products read in place: the claim and the run (Note [Batched products in place] in
// batched_product.hpp).
#include "batched_product.hpp"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <utility>

#include "graph_args.hpp"
#include "onednn.hpp"

namespace tessera {
namespace cpu {
namespace {

using sdk::Tensor;

// Chain: expand(source, [4 sizes]) -> [clone] -> reshape(., [3 sizes]) from node *k; its result
// in *result and the node after it in *k.
bool Chain(const tsr_graph& g, size_t* k, ProductOperand* o, bool* cloned, int32_t* result) {
  if (*k >= g.num_nodes) return false;
  const tsr_graph_node& expand = g.nodes[*k];
  if (sdk::op_name(expand) != "expand" || (expand.flags & TSR_GRAPH_NODE_OPAQUE) != 0 ||
      expand.num_outputs != 1 || TensorArg(expand, 0) < 0 || !SizesArg(expand, 1, 4, &o->expand)) {
    return false;
  }
  size_t n = *k + 1;
  int32_t v = expand.outputs[0];
  *cloned = false;
  if (const tsr_graph_node* clone = Step(g, n, v); clone && sdk::op_name(*clone) == "clone") {
    v = clone->outputs[0];
    *cloned = true;
    ++n;
  }
  const tsr_graph_node* reshape = Step(g, n, v);
  if (reshape == nullptr || !IsReshape(sdk::op_name(*reshape)) ||
      !SizesArg(*reshape, 1, 3, &o->merged)) {
    return false;
  }
  o->value = TensorArg(expand, 0);
  o->chained = true;
  *result = reshape->outputs[0];
  *k = n + 1;
  return true;
}

// Source4d: a product operand as [B, H, rows, cols] dims and strides, where the inputs allow
// it; `bh` is the (B, H) of a chained operand (0, 0 until one is seen).
bool Source4d(const ProductOperand& o, const Values& values, std::pair<int64_t, int64_t>* bh,
              dnnl::memory::dims* dims, dnnl::memory::dims* strides, void** data) {
  const auto it = values.find(o.value);
  if (it == values.end()) return false;  // not a run input (the claim takes none such)
  const Tensor& t = it->second;
  if (t.dtype() != TSR_DTYPE_FLOAT32 || t.device().type != TSR_DEVICE_CPU) return false;
  const sdk::TensorView v = sdk::view_of(t);
  *data = v.data_ptr();
  if (o.chained) {
    if (v.dim() != 4) return false;
    for (int d = 0; d < 4; ++d) {
      if (o.expand[d] != v.size(d) && o.expand[d] != -1) return false;  // a broadcast
    }
    if (o.merged != std::vector<int64_t>{v.size(0) * v.size(1), v.size(2), v.size(3)}) {
      return false;
    }
    if (bh->first != 0 && *bh != std::make_pair(v.size(0), v.size(1))) return false;
    *bh = {v.size(0), v.size(1)};
    *dims = v.sizes().vec();
    *strides = v.strides().vec();
    return true;
  }
  // bmm's own 3-D argument, its batch split as the chained operand's is.
  if (v.dim() != 3 || bh->first == 0 || v.size(0) != bh->first * bh->second) return false;
  *dims = {bh->first, bh->second, v.size(1), v.size(2)};
  *strides = {bh->second * v.strides()[0], v.strides()[0], v.strides()[1], v.strides()[2]};
  return true;
}

}  // namespace

std::optional<Product> ClaimProduct(const tsr_graph& g, size_t first, size_t* end) {
  Product p;
  size_t k = first;
  int32_t chain_results[2] = {-1, -1};
  ProductOperand chains[2];
  bool removes = false;  // a clone or a pass the run saves
  size_t num_chains = 0;
  for (; num_chains < 2; ++num_chains) {
    bool cloned = false;
    if (!Chain(g, &k, &chains[num_chains], &cloned, &chain_results[num_chains])) break;
    // A chain reads a value from outside the run: not here, where the second chain reads the
    // first's result. That chain is claimed at its own node, with the result as its input.
    if (num_chains == 1 && chains[1].value == chain_results[0]) return std::nullopt;
    removes = removes || cloned;
  }
  if (num_chains == 0 || k >= g.num_nodes) return std::nullopt;
  const tsr_graph_node& bmm = g.nodes[k];
  if (sdk::op_name(bmm) != "bmm" || (bmm.flags & TSR_GRAPH_NODE_OPAQUE) != 0 || bmm.num_args != 2 ||
      bmm.num_outputs != 1) {
    return std::nullopt;
  }
  // Each chain's result is read by the bmm alone, and every chain is one of its operands.
  bool used[2] = {false, false};
  for (size_t c = 0; c < num_chains; ++c) {
    if (sdk::read_after(g, k, chain_results[c])) return std::nullopt;
  }
  for (int side = 0; side < 2; ++side) {
    ProductOperand& o = side == 0 ? p.lhs : p.rhs;
    o.value = TensorArg(bmm, side);
    if (o.value < 0) return std::nullopt;
    for (size_t c = 0; c < num_chains; ++c) {
      if (chain_results[c] == o.value) {
        o = chains[c];
        used[c] = true;
        break;
      }
    }
  }
  for (size_t c = 0; c < num_chains; ++c) {
    if (!used[c]) return std::nullopt;  // a chain the bmm does not read
  }
  int32_t v = bmm.outputs[0];
  ++k;
  if (const tsr_graph_node* n = Step(g, k, v);
      n && IsReshape(sdk::op_name(*n)) && SizesArg(*n, 1, 4, &p.split)) {
    v = n->outputs[0];
    ++k;
  }
  if (const tsr_graph_node* n = Step(g, k, v); n && n->num_args == 2) {
    const std::string_view op = sdk::op_name(*n);
    double s = 0;
    if ((op == "div.Scalar" || op == "mul.Scalar") && ScalarArg(*n, 1, &s) &&
        (op == "mul.Scalar" || s != 0)) {
      p.scale = op == "div.Scalar" ? 1 / s : s;
      removes = true;
      v = n->outputs[0];
      ++k;
    }
  }
  // transpose(1, 2) -> clone -> reshape to 3-D, of the split product.
  int64_t d0 = 0, d1 = 0;
  if (const tsr_graph_node* t = Step(g, k, v); t && !p.split.empty() &&
                                               sdk::op_name(*t) == "transpose.int" &&
                                               IntArg(*t, 1, &d0) && IntArg(*t, 2, &d1)) {
    d0 = d0 < 0 ? d0 + 4 : d0;
    d1 = d1 < 0 ? d1 + 4 : d1;
    const tsr_graph_node* clone = Step(g, k + 1, t->outputs[0]);
    const tsr_graph_node* reshape =
        clone && sdk::op_name(*clone) == "clone" ? Step(g, k + 2, clone->outputs[0]) : nullptr;
    std::vector<int64_t> heads;
    if (std::min(d0, d1) == 1 && std::max(d0, d1) == 2 && reshape &&
        IsReshape(sdk::op_name(*reshape)) && SizesArg(*reshape, 1, 3, &heads)) {
      p.heads = std::move(heads);
      removes = true;
      v = reshape->outputs[0];
      k += 3;
    }
  }
  if (!removes) return std::nullopt;
  p.output = v;
  *end = k;
  return p;
}

bool ProductRun::Fused(const Values& values, Tensor* out) const {
  const Product& p = product_;
  std::pair<int64_t, int64_t> bh{0, 0};
  dnnl::memory::dims a_dims, a_strides, b_dims, b_strides;
  void *a_data = nullptr, *b_data = nullptr;
  // The chained operand first: it gives B and H to a plain one.
  const bool lhs_first = p.lhs.chained;
  if (!Source4d(lhs_first ? p.lhs : p.rhs, values, &bh, lhs_first ? &a_dims : &b_dims,
                lhs_first ? &a_strides : &b_strides, lhs_first ? &a_data : &b_data) ||
      !Source4d(lhs_first ? p.rhs : p.lhs, values, &bh, lhs_first ? &b_dims : &a_dims,
                lhs_first ? &b_strides : &a_strides, lhs_first ? &b_data : &a_data)) {
    return false;
  }
  const int64_t B = bh.first, H = bh.second, M = a_dims[2], K = a_dims[3], N = b_dims[3];
  if (b_dims[2] != K || B == 0 || H == 0 || M == 0 || K == 0 || N == 0) return false;
  // The result's elements, and with them every stride below, fit int64 (else the nodes' own
  // calls refuse the sizes).
  int64_t numel = 1;
  for (int64_t d : {B, H, M, N}) {
    if (__builtin_mul_overflow(numel, d, &numel)) return false;
  }
  if (!p.split.empty() && p.split != std::vector<int64_t>{B, H, M, N}) return false;
  if (!p.heads.empty() && p.heads != std::vector<int64_t>{B, M, H * N}) return false;
  // The result where the last node puts it: [B, M, H, N] under the heads' reshape, else
  // [B, H, M, N] (the run's output is that, or its [B*H, M, N] view).
  const dnnl::memory::dims c_dims{B, H, M, N};
  const dnnl::memory::dims c_strides = p.heads.empty() ? dnnl::memory::dims{H * M * N, M * N, N, 1}
                                                       : dnnl::memory::dims{M * H * N, N, H * N, 1};
  const std::vector<int64_t> out_sizes = !p.heads.empty()   ? p.heads
                                         : !p.split.empty() ? p.split
                                                            : std::vector<int64_t>{B * H, M, N};
  try {
    // The multiply-adds, saturated: what the thread count is chosen by.
    int64_t work = 0;
    if (__builtin_mul_overflow(numel, K, &work)) work = INT64_MAX;
    onednn::Threads threads(work);
    onednn::Key key(onednn::kStridedMatmul);
    for (const dnnl::memory::dims* d : std::initializer_list<const dnnl::memory::dims*>{
             &a_dims, &a_strides, &b_dims, &b_strides, &c_strides}) {
      for (int64_t x : *d) key.add(x);
    }
    key.add(p.scale);
    onednn::Call& call = onednn::cached_call(key, [&] {
      const auto f32 = dnnl::memory::data_type::f32;
      const dnnl::memory::desc a_md(a_dims, f32, a_strides), b_md(b_dims, f32, b_strides),
          c_md(c_dims, f32, c_strides);
      const dnnl::matmul::desc d(a_md, b_md, c_md);
      const dnnl::primitive_attr attr = onednn::product_attr(p.scale, 0, false);
      return onednn::Call(dnnl::matmul(dnnl::matmul::primitive_desc(d, attr, onednn::engine())),
                          {{DNNL_ARG_SRC, a_md}, {DNNL_ARG_WEIGHTS, b_md}, {DNNL_ARG_DST, c_md}});
    });
    Tensor result = Tensor::empty(out_sizes, TSR_DTYPE_FLOAT32, sdk::kCpu);
    call.run({a_data, b_data, sdk::view_of(result).data_ptr()});
    *out = std::move(result);
    return true;
  } catch (const dnnl::error&) {
    return false;  // a case oneDNN does not take: the nodes' own calls
  }
}

}  // namespace cpu
}  // namespace tessera
