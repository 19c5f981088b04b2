// Linear layers with their epilogue: the claim and the run (Note [Linear layers with their
// epilogue] in linear_epilogue.hpp).
#include "linear_epilogue.hpp"

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "graph_args.hpp"
#include "layer_norm_rows.hpp"
#include "linalg.hpp"
#include "prepacked_gemm.hpp"
#include "tensor_iterator.hpp"
#include "vector_math.hpp"

namespace tessera {
namespace cpu {
namespace {

using sdk::Tensor;

// Float32Cpu: the tensor of value `v`, when it is float32 on the CPU.
const Tensor* Float32Cpu(const Values& values, int32_t v) {
  const Tensor& t = values.at(v);
  return t.dtype() == TSR_DTYPE_FLOAT32 && t.device().type == TSR_DEVICE_CPU ? &t : nullptr;
}

// RowPass: the epilogue over each row of the product [M, N], in place, on the runtime's threads:
// row = (row + bias) + other, in the nodes' order (addmm's sum, then the add's), then gelu.
struct RowPass {
  float* out;
  const float* bias;   // NULL: the product has it already (the prepacked matmul added it)
  const float* other;  // the add's other operand, [M, N] contiguous; NULL: none
  int64_t n;
  void (*gelu)(const float*, float*, int64_t);  // NULL: none
  bool norm = false;  // then the row's layer norm, with these (each [N] or NULL) and eps
  const float* norm_weight = nullptr;
  const float* norm_bias = nullptr;
  float eps = 0;

  static void Run(void* self, int64_t begin, int64_t end) {
    const RowPass& p = *static_cast<const RowPass*>(self);
    // With the norm, the sums go to a row of their own, which the norm reads into out's row
    // (its row function takes distinct input and output).
    std::vector<float> sums(p.norm ? static_cast<size_t>(p.n) : 0);
    for (int64_t r = begin; r < end; ++r) {
      float* const out_row = p.out + r * p.n;
      const float* o = p.other != nullptr ? p.other + r * p.n : nullptr;
      float* row = out_row;  // where the sums go: in place, or the norm's own row
      if (p.norm) {
        row = sums.data();
        if (p.bias != nullptr) {
          for (int64_t j = 0; j < p.n; ++j) row[j] = (out_row[j] + p.bias[j]) + o[j];
        } else {
          for (int64_t j = 0; j < p.n; ++j) row[j] = out_row[j] + o[j];
        }
      } else if (p.bias != nullptr && o != nullptr) {
        for (int64_t j = 0; j < p.n; ++j) row[j] = (row[j] + p.bias[j]) + o[j];
      } else if (p.bias != nullptr) {
        for (int64_t j = 0; j < p.n; ++j) row[j] += p.bias[j];
      } else if (o != nullptr) {
        for (int64_t j = 0; j < p.n; ++j) row[j] += o[j];
      }
      if (p.gelu != nullptr) p.gelu(row, row, p.n);
      if (p.norm) {
        float mean = 0, rstd = 0;  // the norm's other outputs, which nothing reads
        layer_norm_rows_f32(row, 0, 1, p.n, p.norm_weight, p.norm_bias, p.eps, out_row, &mean,
                            &rstd);
      }
    }
  }
};

// NormOf: the layer norm's parameters as the pass reads them, where the norm is over the N
// elements of a row and its weight and bias (where given) are N contiguous float32 elements on
// the CPU; false: the nodes' own calls.
bool NormOf(const Values& values, const Linear& l, int64_t n, RowPass* pass) {
  if (l.norm_size != n) return false;
  const float** params[2] = {&pass->norm_weight, &pass->norm_bias};
  const int32_t ids[2] = {l.norm_weight, l.norm_bias};
  for (int i = 0; i < 2; ++i) {
    if (ids[i] < 0) continue;
    const Tensor* t = Float32Cpu(values, ids[i]);
    if (t == nullptr) return false;
    const sdk::TensorView v = sdk::view_of(*t);
    if (v.dim() != 1 || v.numel() != n || !v.is_contiguous()) return false;
    *params[i] = v.data<float>();
  }
  pass->norm = true;
  pass->eps = static_cast<float>(l.eps);
  return true;
}

}  // namespace

std::optional<Linear> ClaimLinear(const tsr_graph& g, size_t first, size_t* end) {
  const tsr_graph_node& addmm = g.nodes[first];
  if (sdk::op_name(addmm) != "addmm" || (addmm.flags & TSR_GRAPH_NODE_OPAQUE) != 0 ||
      addmm.num_args != 5 || addmm.num_outputs != 1 || !IsOne(addmm, 3) || !IsOne(addmm, 4)) {
    return std::nullopt;
  }
  Linear l;
  l.bias = TensorArg(addmm, 0);
  l.a = TensorArg(addmm, 1);
  l.b = TensorArg(addmm, 2);
  if (l.bias < 0 || l.a < 0 || l.b < 0) return std::nullopt;
  int32_t v = addmm.outputs[0];
  size_t k = first + 1;
  if (const tsr_graph_node* n = Step(g, k, v); n && IsReshape(sdk::op_name(*n))) {
    l.reshaped = true;
    v = n->outputs[0];
    ++k;
  }
  if (k >= g.num_nodes || sdk::read_after(g, k, v)) return std::nullopt;
  const tsr_graph_node& e = g.nodes[k];
  if ((e.flags & TSR_GRAPH_NODE_OPAQUE) != 0 || e.num_outputs != 1) return std::nullopt;
  const std::string_view op = sdk::op_name(e);
  if (op == "gelu" && e.num_args == 2 && TensorArg(e, 0) == v &&
      e.args[1].value.kind == TSR_VALUE_STRING) {
    const tsr_string s = e.args[1].value.u.string;
    const std::string_view approximate(s.data ? s.data : "", s.size);
    if (approximate != "none" && approximate != "tanh") return std::nullopt;  // its own error
    l.epilogue = approximate == "none" ? Linear::Epilogue::kGelu : Linear::Epilogue::kGeluTanh;
  } else if (op == "add.Tensor" && e.num_args == 3 && IsOne(e, 2)) {
    const int32_t self = TensorArg(e, 0), other = TensorArg(e, 1);
    if ((self == v) == (other == v) || self < 0 || other < 0) return std::nullopt;
    l.epilogue = Linear::Epilogue::kAdd;
    l.other = self == v ? other : self;
  } else {
    return std::nullopt;
  }
  l.output = e.outputs[0];
  *end = k + 1;
  // After the add, its layer norm over the last dim, whose mean and rstd nothing reads.
  if (l.epilogue == Linear::Epilogue::kAdd && k + 1 < g.num_nodes &&
      (g.nodes[k + 1].flags & TSR_GRAPH_NODE_OPAQUE) == 0 &&
      sdk::op_name(g.nodes[k + 1]) == "native_layer_norm") {
    const tsr_graph_node& norm = g.nodes[k + 1];
    std::vector<int64_t> shape;
    // A weight or bias from outside the run (not the add's result), or None.
    auto optional_tensor = [&](size_t i, int32_t* id) {
      *id = TensorArg(norm, i);
      return (*id >= 0 && *id != l.output) || norm.args[i].value.kind == TSR_VALUE_NONE;
    };
    if (norm.num_args == 5 && norm.num_outputs == 3 && TensorArg(norm, 0) == l.output &&
        !sdk::read_after(g, k + 1, l.output) && SizesArg(norm, 1, 1, &shape) &&
        optional_tensor(2, &l.norm_weight) && optional_tensor(3, &l.norm_bias) &&
        norm.args[4].value.kind == TSR_VALUE_DOUBLE &&
        !sdk::read_after(g, k + 1, norm.outputs[1]) &&
        !sdk::read_after(g, k + 1, norm.outputs[2])) {
      l.norm = true;
      l.norm_size = shape[0];
      l.eps = norm.args[4].value.u.d;
      l.output = norm.outputs[0];
      *end = k + 2;
    } else {
      l.norm_weight = l.norm_bias = -1;
    }
  }
  return l;
}

bool LinearRun::Fused(const Values& values, Tensor* out) const {
  const Linear& l = linear_;
  const Tensor* a = Float32Cpu(values, l.a);
  const Tensor* b = Float32Cpu(values, l.b);
  const Tensor* bias = Float32Cpu(values, l.bias);
  const Tensor* other = nullptr;
  if (!a || !b || !bias) return false;
  if (l.epilogue == Linear::Epilogue::kAdd && (other = Float32Cpu(values, l.other)) == nullptr) {
    return false;
  }
  const sdk::TensorView av = sdk::view_of(*a), bv = sdk::view_of(*b), biasv = sdk::view_of(*bias);
  if (av.dim() != 2 || bv.dim() != 2 || av.size(1) != bv.size(0)) return false;
  const int64_t M = av.size(0), K = av.size(1), N = bv.size(1);
  if (M == 0 || K == 0 || N == 0 || biasv.numel() != N || !biasv.is_contiguous() ||
      !(biasv.dim() == 1 || (biasv.dim() == 2 && biasv.size(0) == 1))) {
    return false;
  }
  Tensor product = Tensor::empty({M, N}, TSR_DTYPE_FLOAT32, sdk::kCpu);
  // The result as the last node gives it: the reshape's sizes over the same elements.
  Tensor result = product;
  if (l.reshaped) {
    try {
      nodes_.at(1).call([&](int32_t) -> const Tensor& { return product; },
                        [&](int32_t, Tensor t) { result = std::move(t); });
    } catch (const sdk::Error&) {
      return false;  // the nodes' own calls say what is wrong
    }
  }
  const sdk::TensorView pv = sdk::view_of(product);
  RowPass pass{pv.data<float>(), biasv.data<float>(), nullptr, N, nullptr};
  if (l.epilogue == Linear::Epilogue::kAdd) {
    const sdk::TensorView ov = sdk::view_of(*other), rv = sdk::view_of(result);
    if (!ov.same_shape(rv) || !ov.is_contiguous()) return false;  // a broadcast: the nodes
    pass.other = ov.data<float>();
    // The norm is over the result's last dim, which a reshape may have made other than N.
    if (l.norm && (rv.dim() == 0 || rv.size(-1) != N || !NormOf(values, l, N, &pass))) {
      return false;
    }
  } else {
    pass.gelu =
        l.epilogue == Linear::Epilogue::kGelu ? &vector_math::gelu : &vector_math::gelu_tanh;
  }
  // The product, with the bias where the prepacked matmul runs it (it adds the bias itself),
  // else with beta 0 and the bias left to the row pass.
  if (gemm_prepacked(av, bv, pv, 1, 0, false, &biasv)) {
    pass.bias = nullptr;
  } else if (!gemm_library(av, bv, pv, 1, 0, false)) {
    return false;
  }
  // Rows per chunk: a row is some 3 N element operations with the norm (as its kernel counts).
  const int64_t row_work = pass.norm ? 3 * N : N;
  TensorIterator::run_parallel(M, std::max<int64_t>(1, kGrain / row_work), &RowPass::Run, &pass);
  *out = std::move(result);
  return true;
}

}  // namespace cpu
}  // namespace tessera
