// Models in the C++ embedding API (tessera/c/model.h, ABI 1.2): load a model file once,
// compile it for a device once, run it many times. A tessera::Runtime must exist first (it
// finds the runtime and loads the default plugins).
//
//   tessera::Runtime rt;
//   tessera::Model model = tessera::Model::load("resnet18.tsrm");
//   tessera::CompiledModel net = model.compile(tessera::parse_device("cpu"));
//   std::vector<tessera::Tensor> out = net.run({image});
//
// Errors are thrown as tessera::sdk::Error with the runtime's message.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/c/model.h"
#include "tessera/sdk/runtime.hpp"

namespace tessera {

class CompiledModel;

// Model: a loaded model file. Copies share the one loaded model.
class Model {
 public:
  static Model load(std::string_view path) {
    tsr_model* m = nullptr;
    sdk::check(tsr_model_load(sdk::to_c(path), &m));
    return Model(m);
  }
  static Model load_from_memory(const void* data, size_t nbytes) {
    tsr_model* m = nullptr;
    sdk::check(tsr_model_load_from_memory(data, nbytes, &m));
    return Model(m);
  }

  std::string name() const { return std::string(sdk::from_c(tsr_model_name(get()))); }
  size_t num_inputs() const { return tsr_model_num_inputs(get()); }
  size_t num_outputs() const { return tsr_model_num_outputs(get()); }
  size_t num_nodes() const { return tsr_model_num_nodes(get()); }
  std::string input_name(size_t i) const { return std::string(sdk::from_c(tsr_model_input_name(get(), i))); }
  std::string output_name(size_t i) const {
    return std::string(sdk::from_c(tsr_model_output_name(get(), i)));
  }
  // The model's dynamic dims (docs/model_format.md, "Dynamic dims"): each one's name and range
  // (max INT64_MAX: no bound); empty for a model of fixed sizes.
  struct Dim {
    std::string name;
    int64_t min = 0, max = 0;
  };
  std::vector<Dim> dims() const {
    std::vector<Dim> out(tsr_model_num_dims(get()));
    for (size_t i = 0; i < out.size(); ++i) {
      out[i].name = std::string(sdk::from_c(tsr_model_dim_name(get(), i)));
      sdk::check(tsr_model_dim_range(get(), i, &out[i].min, &out[i].max));
    }
    return out;
  }
  // The file's example inputs and PyTorch's outputs for them, on the CPU.
  Tensor example_input(size_t i) const {
    tsr_tensor* t = nullptr;
    sdk::check(tsr_model_example_input(get(), i, &t));
    return Tensor::adopt(t);
  }
  Tensor expected_output(size_t i) const {
    tsr_tensor* t = nullptr;
    sdk::check(tsr_model_expected_output(get(), i, &t));
    return Tensor::adopt(t);
  }

  inline CompiledModel compile(tsr_device device) const;
  // compile with `flags` (TSR_COMPILE_NO_CLAIMS, TSR_COMPILE_NO_FOLDING: tessera/c/model.h).
  inline CompiledModel compile(tsr_device device, uint32_t flags) const;

  tsr_model* get() const { return model_.get(); }

 private:
  explicit Model(tsr_model* m) : model_(m, &tsr_model_release) {}
  std::shared_ptr<tsr_model> model_;
};

// CompiledModel: a model bound to one device; run() may be called from several threads.
class CompiledModel {
 public:
  std::vector<Tensor> run(const std::vector<Tensor>& inputs) const {
    return call(inputs, [&](tsr_tensor* const* in, size_t n, tsr_tensor** out, size_t m) {
      return tsr_compiled_model_run(get(), in, n, out, m);
    });
  }

  // run_profiled runs as run() does and fills `stats` (node_ns gets one entry per node).
  struct Stats {
    uint64_t peak_intermediate_bytes = 0;
    uint64_t total_intermediate_bytes = 0;
    std::vector<uint64_t> node_ns;
  };
  std::vector<Tensor> run_profiled(const std::vector<Tensor>& inputs, Stats& stats) const {
    stats.node_ns.assign(num_nodes_, 0);
    tsr_model_run_stats c{};
    c.struct_size = sizeof c;
    c.node_ns = stats.node_ns.data();
    c.node_ns_capacity = stats.node_ns.size();
    std::vector<Tensor> outputs =
        call(inputs, [&](tsr_tensor* const* in, size_t n, tsr_tensor** out, size_t m) {
          return tsr_compiled_model_run_profiled(get(), in, n, out, m, &c);
        });
    stats.peak_intermediate_bytes = c.peak_intermediate_bytes;
    stats.total_intermediate_bytes = c.total_intermediate_bytes;
    return outputs;
  }

  size_t num_nodes() const { return num_nodes_; }
  tsr_node_route node_route(size_t i) const { return tsr_compiled_model_node_route(get(), i); }
  std::string node_op(size_t i) const {
    return std::string(sdk::from_c(tsr_compiled_model_node_op(get(), i)));
  }

  tsr_compiled_model* get() const { return compiled_.get(); }

 private:
  friend class Model;
  // call: the inputs as handles in, the outputs adopted out, around one run entry point.
  template <typename Run>
  std::vector<Tensor> call(const std::vector<Tensor>& inputs, const Run& run) const {
    std::vector<tsr_tensor*> in;
    in.reserve(inputs.size());
    for (const Tensor& t : inputs) in.push_back(t.get());
    std::vector<tsr_tensor*> out(num_outputs_, nullptr);
    sdk::check(run(in.data(), in.size(), out.data(), out.size()));
    std::vector<Tensor> outputs;
    outputs.reserve(out.size());
    for (tsr_tensor* t : out) outputs.push_back(Tensor::adopt(t));
    return outputs;
  }

  CompiledModel(tsr_compiled_model* c, size_t num_outputs, size_t num_nodes)
      : compiled_(c, &tsr_compiled_model_release),
        num_outputs_(num_outputs),
        num_nodes_(num_nodes) {}
  std::shared_ptr<tsr_compiled_model> compiled_;
  size_t num_outputs_;
  size_t num_nodes_;
};

inline CompiledModel Model::compile(tsr_device device) const {
  tsr_compiled_model* c = nullptr;
  sdk::check(tsr_model_compile(get(), device, &c));
  return CompiledModel(c, num_outputs(), num_nodes());
}

inline CompiledModel Model::compile(tsr_device device, uint32_t flags) const {
  tsr_compile_options options = {};
  options.struct_size = sizeof options;
  options.flags = flags;
  tsr_compiled_model* c = nullptr;
  sdk::check(tsr_model_compile_with_options(get(), device, &options, &c));
  return CompiledModel(c, num_outputs(), num_nodes());
}

}  // namespace tessera
