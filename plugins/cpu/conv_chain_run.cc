// How a run of convolutions runs in oneDNN's layouts (Note [Convolution chains] in
// conv_chain.hpp).
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "conv_chain.hpp"
#include "onednn.hpp"
#include "views.hpp"
#include "weight_cache.hpp"

namespace tessera {
namespace cpu {
namespace {

using sdk::Tensor;

// Buffer: 64-byte aligned memory for one value in a primitive's layout.
std::shared_ptr<void> Buffer(size_t bytes) {
  void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (p == nullptr) throw dnnl::error(dnnl_out_of_memory, "a convolution chain's buffer");
  return std::shared_ptr<void>(p, &std::free);
}

// Held: a value of a running chain: its layout and its memory (a buffer, or an input tensor's).
struct Held {
  dnnl::memory::desc md;
  void* data = nullptr;
  std::shared_ptr<void> owner;
};

// UnitPlan / OutputPlan: what a chain runs for one set of input shapes, made once (ChainRun::Plan).
struct UnitPlan {
  dnnl::primitive conv;
  dnnl::memory::desc src_md, weights_md, weights_user_md, bias_md, dst_md;
  dnnl::primitive src_reorder;       // the input's layout to src_md; null: the same
  dnnl::primitive weights_reorder;   // the weight's to weights_md; null: the same
  dnnl::primitive residual_reorder;  // the residual's to dst_md; null: the same (a copy)
};
struct OutputPlan {
  dnnl::primitive reorder;  // the value's layout to plain; null: the same (a copy)
  std::vector<int64_t> sizes;
};

dnnl::primitive ReorderOrNull(const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
  if (from == to) return dnnl::primitive();
  return dnnl::reorder(dnnl::reorder::primitive_desc(onednn::engine(), from, onednn::engine(), to));
}

// Exec: one primitive, each argument a memory over a held value in its layout.
void Exec(const dnnl::primitive& p, std::initializer_list<std::pair<int, Held>> args) {
  std::vector<dnnl::memory> memories;
  std::vector<dnnl_exec_arg_t> c;
  memories.reserve(args.size());
  for (const auto& [arg, held] : args) {
    memories.emplace_back(held.md, onednn::engine(), held.data);
    c.push_back({arg, memories.back().get()});
  }
  onednn::run_primitive(p, c.data(), static_cast<int>(c.size()));
}

dnnl::primitive_attr PostOpsOf(const Unit& u) {
  dnnl::post_ops ops;
  if (u.residual >= 0) ops.append_sum(1.f);
  if (u.act == Act::kRelu) ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  if (u.act == Act::kHardswish) {
    // x * max(0, min(1, x / 6 + 1 / 2)): oneDNN 2.6 takes no parameters, later versions these.
    ops.append_eltwise(1.f, dnnl::algorithm::eltwise_hardswish, 1.f / 6, 0.5f);
  }
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  return attr;
}

// oneDNN's view of a forward weight [O, I/G, *k]: [G, O/G, I/G, *k] when grouped.
dnnl::memory::desc WeightDesc(const sdk::TensorView& w, int64_t groups) {
  dnnl::memory::dims dims = w.sizes().vec(), strides = w.strides().vec();
  if (groups > 1) {
    dims[0] /= groups;
    dims.insert(dims.begin(), groups);
    strides.insert(strides.begin(), strides[0] * dims[1]);
  }
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

// Contiguous: the row-major layout of a 3- to 5-dim tensor.
dnnl::memory::format_tag Contiguous(size_t ndim) {
  using tag = dnnl::memory::format_tag;
  return ndim == 3 ? tag::abc : ndim == 4 ? tag::abcd : tag::abcde;
}

}  // namespace

struct ChainRun::Plan {
  std::vector<UnitPlan> units;
  std::vector<OutputPlan> outputs;
};

ChainRun::ChainRun(std::vector<Unit> units, std::vector<sdk::NodeCall> nodes,
                   const tsr_graph_run& run)
    : ClaimedRun(run),
      units_(std::move(units)),
      nodes_(std::move(nodes)),
      drop_after_(units_.size()) {
  // A unit's result is freed after the last unit that reads it (never, for an output).
  std::unordered_map<int32_t, size_t> made_by;
  for (size_t j = 0; j < units_.size(); ++j) {
    for (int32_t v : units_[j].names) made_by[v] = j;
  }
  std::vector<size_t> last(units_.size());
  for (size_t j = 0; j < units_.size(); ++j) last[j] = j;
  for (size_t k = 0; k < units_.size(); ++k) {
    for (int32_t v : {units_[k].input, units_[k].residual}) {
      if (auto it = made_by.find(v); it != made_by.end()) last[it->second] = k;
    }
  }
  std::vector<bool> kept(units_.size(), false);
  for (int32_t v : outputs_) {
    if (auto it = made_by.find(v); it != made_by.end()) kept[it->second] = true;
  }
  for (size_t j = 0; j < units_.size(); ++j) {
    if (!kept[j]) drop_after_[last[j]].push_back(j);
  }
}

// Execute: the run's outputs, as a chain where it can be, else node by node.
std::vector<Tensor> ChainRun::Execute(const std::vector<Tensor>& inputs) const {
  Values values = Bind(inputs);
  std::vector<Tensor> out;
  if (Chained(values, &out)) return out;
  return RunNodes(nodes_, std::move(values), outputs_);
}

// Chained: the run through oneDNN in its layouts; false (nothing stored) where it cannot be.
bool ChainRun::Chained(const Values& values, std::vector<Tensor>* out) const {
  std::vector<int64_t> key;
  for (int32_t v : inputs_) {
    const Tensor& t = values.at(v);
    if (t.dtype() != TSR_DTYPE_FLOAT32 || t.device().type != TSR_DEVICE_CPU) return false;
    const sdk::TensorView view = sdk::view_of(t);
    key.push_back(view.dim());
    for (int64_t s : view.sizes()) key.push_back(s);
    for (int64_t s : view.strides()) key.push_back(s);
  }
  try {
    onednn::Threads threads;  // every unit is a convolution: work enough for all of them
    key.push_back(onednn::threads());
    // Each thread its own primitives, as the CPU backend's caches of them are (onednn.hpp):
    // runs of one compiled model may go on in several threads at once.
    key.push_back(static_cast<int64_t>(std::hash<std::thread::id>()(std::this_thread::get_id())));
    const std::shared_ptr<const Plan> plan = PlanFor(key, values);
    if (plan == nullptr) return false;
    Run(*plan, values, out);
    return true;
  } catch (const dnnl::error&) {
    return false;  // a case oneDNN does not take: the nodes' own calls
  }
}

// PlanFor: the plan for the inputs' shapes (key), made the first time; NULL: shapes the chain
// does not take (the nodes' own calls say what is wrong, if anything).
std::shared_ptr<const ChainRun::Plan> ChainRun::PlanFor(const std::vector<int64_t>& key,
                                                        const Values& values) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
  }
  auto plan = std::make_shared<Plan>();
  std::unordered_map<int32_t, dnnl::memory::desc> md;  // each value's layout in the run
  for (int32_t v : inputs_) md[v] = onednn::desc(sdk::view_of(values.at(v)));
  for (const Unit& u : units_) {
    const sdk::TensorView w = sdk::view_of(values.at(u.weight));
    const dnnl::memory::desc& in = md.at(u.input);
    const dnnl::memory::dims in_dims = in.dims();
    const ConvParams& p = u.params;
    if (static_cast<int64_t>(in_dims.size()) != w.dim() || in_dims[1] != w.size(1) * p.groups ||
        w.size(0) % p.groups != 0) {
      return nullptr;
    }
    dnnl::memory::dims out_dims = {in_dims[0], w.size(0)}, strides, dil, pad_l, pad_r;
    for (int d = 0; d < p.dims; ++d) {
      const int s = kSpatial - p.dims + d;
      if (!onednn::fit_int32({p.stride[s], p.padding[s], p.dilation[s]})) return nullptr;
      const int64_t span =
          in_dims[2 + d] + 2 * p.padding[s] - p.dilation[s] * (w.size(2 + d) - 1) - 1;
      if (span < 0 || p.stride[s] <= 0) return nullptr;
      out_dims.push_back(span / p.stride[s] + 1);
      strides.push_back(p.stride[s]);
      dil.push_back(p.dilation[s] - 1);
      pad_l.push_back(p.padding[s]);
      pad_r.push_back(p.padding[s]);
    }
    const auto f32 = dnnl::memory::data_type::f32;
    const auto any = dnnl::memory::format_tag::any;
    UnitPlan up;
    up.weights_user_md = WeightDesc(w, p.groups);
    const dnnl::memory::desc src_any(in_dims, f32, any), dst_any(out_dims, f32, any),
        w_any(up.weights_user_md.dims(), f32, any);
    if (u.bias >= 0) {
      const Tensor& b = values.at(u.bias);
      if (b.dim() != 1 || b.size(0) != w.size(0)) return nullptr;
      up.bias_md = dnnl::memory::desc({w.size(0)}, f32, dnnl::memory::format_tag::a);
    }
    const auto kind = dnnl::prop_kind::forward_inference;
    const auto alg = dnnl::algorithm::convolution_direct;
    const auto d = u.bias >= 0
                       ? dnnl::convolution_forward::desc(kind, alg, src_any, w_any, up.bias_md,
                                                         dst_any, strides, dil, pad_l, pad_r)
                       : dnnl::convolution_forward::desc(kind, alg, src_any, w_any, dst_any,
                                                         strides, dil, pad_l, pad_r);
    const dnnl::convolution_forward::primitive_desc pd(d, PostOpsOf(u), onednn::engine());
    up.conv = dnnl::convolution_forward(pd);
    up.src_md = pd.src_desc();
    up.weights_md = pd.weights_desc();
    up.dst_md = pd.dst_desc();
    up.src_reorder = ReorderOrNull(in, up.src_md);
    up.weights_reorder = ReorderOrNull(up.weights_user_md, up.weights_md);
    if (u.residual >= 0) {
      const dnnl::memory::desc& r = md.at(u.residual);
      if (r.dims() != out_dims) return nullptr;  // a broadcast: the nodes' own calls
      up.residual_reorder = ReorderOrNull(r, up.dst_md);
    }
    for (int32_t v : u.names) md[v] = up.dst_md;
    plan->units.push_back(std::move(up));
  }
  for (int32_t v : outputs_) {
    const dnnl::memory::desc& from = md.at(v);
    OutputPlan op;
    op.sizes = from.dims();
    const dnnl::memory::desc plain(op.sizes, dnnl::memory::data_type::f32,
                                   Contiguous(op.sizes.size()));
    op.reorder = ReorderOrNull(from, plain);
    plan->outputs.push_back(std::move(op));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (plans_.size() >= kMaxPlans) plans_.clear();  // bound under shape churn
  return plans_.emplace(key, std::move(plan)).first->second;
}

void ChainRun::Run(const Plan& plan, const Values& values, std::vector<Tensor>* out) const {
  std::unordered_map<int32_t, Held> held;
  for (int32_t v : inputs_) {
    const Tensor& t = values.at(v);
    const sdk::TensorView view = sdk::view_of(t);
    held[v] = Held{onednn::desc(view), view.data_ptr(), nullptr};
  }
  for (size_t k = 0; k < units_.size(); ++k) {
    const Unit& u = units_[k];
    const UnitPlan& up = plan.units[k];
    Held src = held.at(u.input);
    if (up.src_reorder) {
      Held to{up.src_md, nullptr, Buffer(up.src_md.get_size())};
      to.data = to.owner.get();
      Exec(up.src_reorder, {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, to}});
      src = to;
    }
    const sdk::TensorView w = sdk::view_of(values.at(u.weight));
    Held weights{up.weights_user_md, w.data_ptr(), nullptr};
    weight_cache::Copy kept;
    if (up.weights_reorder) {
      auto reorder = [&](void* dst) {
        Exec(up.weights_reorder,
             {{DNNL_ARG_FROM, weights}, {DNNL_ARG_TO, {up.weights_md, dst, nullptr}}});
      };
      if (const uint64_t id = w.immutable_id())
        kept = weight_cache::get(w, id, up.weights_md, reorder);
      if (kept.data) {
        weights = Held{up.weights_md, kept.data.get(), kept.data};
      } else {
        Held to{up.weights_md, nullptr, Buffer(up.weights_md.get_size())};
        to.data = to.owner.get();
        reorder(to.data);
        weights = to;
      }
    }
    Held dst{up.dst_md, nullptr, Buffer(up.dst_md.get_size())};
    dst.data = dst.owner.get();
    if (u.residual >= 0) {  // the sum post-op adds what dst holds
      const Held& r = held.at(u.residual);
      if (up.residual_reorder) {
        Exec(up.residual_reorder, {{DNNL_ARG_FROM, r}, {DNNL_ARG_TO, dst}});
      } else {
        std::memcpy(dst.data, r.data, up.dst_md.get_size());
      }
    }
    if (u.bias >= 0) {
      const ViewAs bias(sdk::view_of(values.at(u.bias)), TSR_DTYPE_FLOAT32, Layout::kContiguous);
      Exec(up.conv, {{DNNL_ARG_SRC, src},
                     {DNNL_ARG_WEIGHTS, weights},
                     {DNNL_ARG_BIAS, {up.bias_md, bias.data_ptr(), nullptr}},
                     {DNNL_ARG_DST, dst}});
    } else {
      Exec(up.conv, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}});
    }
    for (int32_t v : u.names) held[v] = dst;
    for (size_t j : drop_after_[k]) {
      for (int32_t v : units_[j].names) held.erase(v);
    }
  }
  // Outputs that name one tensor (c and relu_(c)) stay one tensor, as node by node.
  std::vector<Tensor> made;
  std::unordered_map<const void*, Tensor> made_from;
  for (size_t k = 0; k < outputs_.size(); ++k) {
    const Held& from = held.at(outputs_[k]);
    if (auto it = made_from.find(from.data); it != made_from.end()) {
      made.push_back(it->second);
      continue;
    }
    const OutputPlan& op = plan.outputs[k];
    Tensor t = Tensor::empty(op.sizes, TSR_DTYPE_FLOAT32, sdk::kCpu);
    const sdk::TensorView view = sdk::view_of(t);
    if (op.reorder) {
      Exec(op.reorder,
           {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, {onednn::desc(view), view.data_ptr(), nullptr}}});
    } else {
      std::memcpy(view.data_ptr(), from.data, from.md.get_size());
    }
    made_from[from.data] = t;
    made.push_back(std::move(t));
  }
  *out = std::move(made);  // only once all are made: a failure above leaves *out alone
}

ChainRun::~ChainRun() = default;

}  // namespace cpu
}  // namespace tessera
