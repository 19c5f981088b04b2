// The sample NPU's graph compiler: what it claims, how it prepares a claimed chain, and how it
// runs one.
//
// A chain is two or more consecutive nodes of the elementwise ops below, each after the first
// reading the output of the node before it. It cannot know shapes or dtypes when it claims (a
// model's sizes may be dynamic), so the executable decides per run: float32 operands of one
// shape are fused, each element carried through the whole chain in registers; anything else
// (broadcasting, another dtype) runs the chain's ops one by one through the runtime, with the
// same results either way (npu_elementwise.h holds the one definition of each op's element).
#include "npu_graph.h"

#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "npu_elementwise.h"
#include "tessera/sdk/api.hpp"
#include "tessera/sdk/error.hpp"
#include "tessera/sdk/graph.hpp"
#include "tessera/sdk/tensor.hpp"

namespace npu {
namespace {

using tessera::sdk::api;
using tessera::sdk::Tensor;


struct FusableOp {
  const char* name;
  Elementwise op;
  size_t tensors;  // operands; add and sub have alpha after them
};
constexpr FusableOp kFusable[] = {
    {"relu", Elementwise::kRelu, 1},      {"neg", Elementwise::kNeg, 1},
    {"abs", Elementwise::kAbs, 1},        {"exp", Elementwise::kExp, 1},
    {"sqrt", Elementwise::kSqrt, 1},      {"add.Tensor", Elementwise::kAdd, 2},
    {"sub.Tensor", Elementwise::kSub, 2}, {"mul.Tensor", Elementwise::kMul, 2},
    {"div.Tensor", Elementwise::kDiv, 2},
};

// Fusable: the node's op, if the chain can take it (its operands single tensors, its alpha a
// number known now).
const FusableOp* Fusable(const tsr_graph_node& node) {
  if ((node.flags & TSR_GRAPH_NODE_OPAQUE) != 0 || node.num_outputs != 1) return nullptr;
  const std::string_view name = tessera::sdk::op_name(node);
  for (const FusableOp& f : kFusable) {
    if (name != f.name) continue;
    if (node.num_args < f.tensors) return nullptr;
    for (size_t i = 0; i < f.tensors; ++i) {
      if (node.args[i].value.kind != TSR_VALUE_TENSOR || node.args[i].num_values != 1) {
        return nullptr;
      }
    }
    if (f.tensors == 2 && (f.op == Elementwise::kAdd || f.op == Elementwise::kSub) &&
        (node.num_args < 3 || node.args[2].value.kind != TSR_VALUE_SCALAR)) {
      return nullptr;
    }
    return &f;
  }
  return nullptr;
}

double ScalarValue(const tsr_scalar& s) {
  return s.kind == TSR_SCALAR_DOUBLE ? s.d : static_cast<double>(s.i);
}

// One node of a chain: its op, the values it reads and the one it defines, and its own call.
struct Step {
  Elementwise kind;
  size_t tensors;
  tsr_scalar alpha;  // add and sub
  int32_t in[2];
  int32_t out;
  tessera::sdk::NodeCall call;
};

struct Chain {
  std::vector<Step> steps;
  std::vector<int32_t> inputs, outputs;  // the run's (tsr_graph_run)
};

// Slot: where value `v` is among the run's inputs and the steps' outputs (inputs first).
size_t Slot(const Chain& c, int32_t v) {
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (c.inputs[i] == v) return i;
  }
  for (size_t s = 0; s < c.steps.size(); ++s) {
    if (c.steps[s].out == v) return c.inputs.size() + s;
  }
  throw tessera::sdk::Error(TSR_INTERNAL, "npu graph: value " + std::to_string(v) +
                                              " is neither an input nor a step of the chain");
}

// Fused: the chain over float32 inputs of one shape, every element through every step at once.
std::vector<Tensor> Fused(const Chain& c, const std::vector<Tensor>& in) {
  const std::vector<int64_t> sizes = in[0].sizes().vec();
  std::vector<std::vector<float>> host;
  for (const Tensor& t : in) host.push_back(t.to_vector<float>());
  std::vector<size_t> slot_a(c.steps.size()), slot_b(c.steps.size()), outs;
  for (size_t s = 0; s < c.steps.size(); ++s) {
    slot_a[s] = Slot(c, c.steps[s].in[0]);
    slot_b[s] = c.steps[s].tensors == 2 ? Slot(c, c.steps[s].in[1]) : slot_a[s];
  }
  for (int32_t v : c.outputs) outs.push_back(Slot(c, v));
  std::vector<std::vector<float>> results(outs.size(), std::vector<float>(host[0].size()));
  std::vector<float> regs(c.inputs.size() + c.steps.size());
  for (size_t e = 0; e < host[0].size(); ++e) {
    for (size_t i = 0; i < host.size(); ++i) regs[i] = host[i][e];
    for (size_t s = 0; s < c.steps.size(); ++s) {
      const Step& step = c.steps[s];
      const float alpha = static_cast<float>(ScalarValue(step.alpha));
      regs[c.inputs.size() + s] = Apply(step.kind, regs[slot_a[s]], regs[slot_b[s]], alpha);
    }
    for (size_t k = 0; k < outs.size(); ++k) results[k][e] = regs[outs[k]];
  }
  std::vector<Tensor> out;
  for (const std::vector<float>& r : results) {
    out.push_back(Tensor::from_host(r, sizes, TSR_DTYPE_FLOAT32, in[0].device()));
  }
  return out;
}

// OneByOne: each step's own call through the runtime (which dispatches it to the NPU's
// kernels).
std::vector<Tensor> OneByOne(const Chain& c, const std::vector<Tensor>& in) {
  std::vector<Tensor> values(c.inputs.size() + c.steps.size());
  for (size_t i = 0; i < in.size(); ++i) values[i] = in[i];
  for (const Step& step : c.steps) {
    step.call.call([&](int32_t v) -> const Tensor& { return values[Slot(c, v)]; },
                   [&](int32_t v, Tensor t) { values[Slot(c, v)] = std::move(t); });
  }
  std::vector<Tensor> out;
  for (int32_t v : c.outputs) out.push_back(values[Slot(c, v)]);
  return out;
}

constexpr char kWho[] = "npu graph compiler";

tsr_error* Claim(void*, const tsr_graph* graph, size_t first, size_t* count) noexcept {
  *count = 0;
  if (Fusable(graph->nodes[first]) == nullptr) return nullptr;
  size_t end = first + 1;
  while (end < graph->num_nodes && Fusable(graph->nodes[end]) != nullptr &&
         tessera::sdk::reads(graph->nodes[end], graph->nodes[end - 1].outputs[0])) {
    ++end;
  }
  if (end - first >= 2) *count = end - first;  // one node alone gains nothing from fusing
  return nullptr;
}

tsr_error* Prepare(void*, const tsr_graph* graph, const tsr_graph_run* run,
                   void** executable) noexcept {
  return tessera::sdk::guarded(kWho, "prepare", [&] {
    auto chain = std::make_unique<Chain>();
    chain->inputs.assign(run->inputs, run->inputs + run->num_inputs);
    chain->outputs.assign(run->outputs, run->outputs + run->num_outputs);
    for (size_t n = run->first; n < run->first + run->count; ++n) {
      const tsr_graph_node& node = graph->nodes[n];
      const FusableOp* f = Fusable(node);
      if (f == nullptr) {
        throw tessera::sdk::Error(TSR_INTERNAL,
                                  "npu graph: node " + std::to_string(n) + " is not fusable");
      }
      Step step{f->op,    f->tensors,      tsr_scalar{TSR_SCALAR_INT, 0, 1, 0.0},
                {-1, -1}, node.outputs[0], tessera::sdk::NodeCall(node)};
      for (size_t k = 0; k < f->tensors; ++k) step.in[k] = node.args[k].values[0];
      if (f->op == Elementwise::kAdd || f->op == Elementwise::kSub) {
        step.alpha = node.args[2].value.u.scalar;
      }
      chain->steps.push_back(std::move(step));
    }
    *executable = chain.release();
  });
}

tsr_error* Execute(void*, void* executable, tsr_tensor* const* inputs, size_t num_inputs,
                   tsr_tensor** outputs, size_t num_outputs) noexcept {
  return tessera::sdk::guarded(kWho, "execute", [&] {
    const Chain& c = *static_cast<const Chain*>(executable);
    std::vector<Tensor> in;
    bool fusable = num_inputs > 0;
    for (size_t i = 0; i < num_inputs; ++i) {
      in.push_back(Tensor::borrow(inputs[i]));
      fusable = fusable && in[i].dtype() == TSR_DTYPE_FLOAT32 &&
                in[i].sizes().vec() == in[0].sizes().vec();
    }
    std::vector<Tensor> out = fusable ? Fused(c, in) : OneByOne(c, in);
    for (size_t k = 0; k < num_outputs && k < out.size(); ++k) outputs[k] = out[k].release();
  });
}

void Release(void*, void* executable) noexcept { delete static_cast<Chain*>(executable); }

}  // namespace

const tsr_graph_compiler& GraphCompiler() {
  static const tsr_graph_compiler compiler = [] {
    tsr_graph_compiler c = {};
    c.struct_size = sizeof c;
    c.claim = &Claim;
    c.prepare = &Prepare;
    c.execute = &Execute;
    c.release = &Release;
    return c;
  }();
  return compiler;
}

}  // namespace npu
