// The C entry points of tessera/c/model.h over runtime/model/.
#include "tessera/c/model.h"

#include <algorithm>
#include <memory>
#include <string>

#include "absl/strings/str_format.h"
#include "runtime/handles.h"
#include "runtime/model/compiled_model.h"
#include "runtime/model/model.h"
#include "runtime/runtime_state.h"

struct tsr_model {
  std::shared_ptr<const tessera::model::Model> model;
};

struct tsr_compiled_model {
  std::unique_ptr<tessera::model::CompiledModel> compiled;
};

namespace tessera {
namespace capi {
namespace {

static_assert(TSR_NODE_NATIVE == static_cast<int>(model::NodeRoute::kNative) &&
                  TSR_NODE_COMPOSITE == static_cast<int>(model::NodeRoute::kComposite) &&
                  TSR_NODE_FALLBACK == static_cast<int>(model::NodeRoute::kFallback) &&
                  TSR_NODE_FOLDED == static_cast<int>(model::NodeRoute::kFolded) &&
                  TSR_NODE_CLAIMED == static_cast<int>(model::NodeRoute::kClaimed),
              "tsr_node_route must equal NodeRoute (runtime/model/compiled_model.h)");

absl::Status NeedHandle(const void* handle, const char* what, const char* fn) {
  if (handle == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: expected %s, got NULL", fn, what));
  }
  return absl::OkStatus();
}

tsr_error* Loaded(absl::StatusOr<std::shared_ptr<const model::Model>> model, tsr_model** out) {
  if (!model.ok()) return ToError(model.status());
  *out = new tsr_model{*std::move(model)};
  return nullptr;
}

tsr_string Text(const std::string& s) { return tsr_string{s.data(), s.size()}; }

// FileTensor: a model's host tensor handed out, or the error for its absence.
tsr_error* FileTensor(const tsr_model* model, size_t index, bool input, tsr_tensor** out,
                      const char* fn) {
  if (auto s = NeedHandle(out, "an output pointer", fn); !s.ok()) return ToError(s);
  *out = nullptr;
  if (auto s = NeedHandle(model, "a model", fn); !s.ok()) return ToError(s);
  const model::Model& m = *model->model;
  const std::vector<Tensor>& tensors = input ? m.example_inputs : m.expected_outputs;
  const char* what = input ? "inputs" : "outputs";
  if (index >= tensors.size()) {
    return ToError(absl::OutOfRangeError(absl::StrFormat("%s: index %d is past the model's %d %s",
                                                         fn, index, tensors.size(), what)));
  }
  if (!tensors[index].defined()) {
    return ToError(absl::NotFoundError(
        absl::StrFormat("%s: the file of model '%s' has no %s for %s %d", fn, m.name,
                        input ? "example" : "expected output", what, index)));
  }
  *out = Wrap(tensors[index]);
  return nullptr;
}

// RunCompiled: the body of tsr_compiled_model_run(_profiled), `fn` naming the entry point.
tsr_error* RunCompiled(const tsr_compiled_model* compiled, tsr_tensor* const* inputs,
                       size_t num_inputs, tsr_tensor** outputs, size_t num_outputs,
                       model::RunStats* stats, const char* fn) {
  if (auto s = NeedHandle(compiled, "a compiled model", fn); !s.ok()) return ToError(s);
  const model::CompiledModel& c = *compiled->compiled;
  const size_t want = c.model().outputs.size();
  if (num_outputs != want || (want > 0 && outputs == nullptr)) {
    return ToError(absl::InvalidArgumentError(
        absl::StrFormat("%s: expected room for the model's %d outputs, got %s", fn, want,
                        outputs == nullptr ? "NULL" : absl::StrFormat("%d", num_outputs))));
  }
  if (num_inputs > 0 && inputs == nullptr) {
    return ToError(absl::InvalidArgumentError(
        absl::StrFormat("%s: expected %d inputs, got NULL", fn, num_inputs)));
  }
  std::vector<Tensor> in;
  in.reserve(num_inputs);
  for (size_t i = 0; i < num_inputs; ++i) {
    in.push_back(inputs[i] == nullptr ? Tensor() : Borrow(inputs[i]));
  }
  absl::StatusOr<std::vector<Tensor>> out = c.Run(in, stats);
  if (!out.ok()) return ToError(out.status());
  for (size_t i = 0; i < want; ++i) outputs[i] = Wrap((*out)[i]);
  return nullptr;
}

}  // namespace
}  // namespace capi
}  // namespace tessera

using namespace tessera::capi;  // NOLINT: the entry points below are thin
namespace model = tessera::model;

extern "C" {

tsr_error* tsr_model_load(tsr_string path, tsr_model** out) {
  static constexpr const char* fn = __func__;
  return Guard(fn, [&]() -> tsr_error* {
    if (auto s = NeedHandle(out, "an output pointer", fn); !s.ok()) return ToError(s);
    *out = nullptr;
    absl::StatusOr<std::string_view> text = ReadString(path, fn, "the path");
    if (!text.ok()) return ToError(text.status());
    return Loaded(model::ReadModelFile(std::string(*text)), out);
  });
}

tsr_error* tsr_model_load_from_memory(const void* data, size_t nbytes, tsr_model** out) {
  static constexpr const char* fn = __func__;
  return Guard(fn, [&]() -> tsr_error* {
    if (auto s = NeedHandle(out, "an output pointer", fn); !s.ok()) return ToError(s);
    *out = nullptr;
    if (data == nullptr && nbytes > 0) {
      return ToError(absl::InvalidArgumentError(
          absl::StrFormat("%s: expected %d bytes, got NULL", fn, nbytes)));
    }
    return Loaded(model::ReadModel(std::string_view(static_cast<const char*>(data), nbytes)), out);
  });
}

void tsr_model_release(tsr_model* model) { delete model; }

tsr_string tsr_model_name(const tsr_model* m) {
  return m ? Text(m->model->name) : tsr_string{nullptr, 0};
}
size_t tsr_model_num_inputs(const tsr_model* m) { return m ? m->model->inputs.size() : 0; }
size_t tsr_model_num_outputs(const tsr_model* m) { return m ? m->model->outputs.size() : 0; }
size_t tsr_model_num_nodes(const tsr_model* m) { return m ? m->model->nodes.size() : 0; }

tsr_string tsr_model_input_name(const tsr_model* m, size_t index) {
  if (m == nullptr || index >= m->model->inputs.size()) return tsr_string{nullptr, 0};
  return Text(m->model->inputs[index].name);
}

tsr_string tsr_model_output_name(const tsr_model* m, size_t index) {
  if (m == nullptr || index >= m->model->outputs.size()) return tsr_string{nullptr, 0};
  return Text(m->model->outputs[index].name);
}

size_t tsr_model_num_dims(const tsr_model* m) { return m ? m->model->dims.size() : 0; }

tsr_string tsr_model_dim_name(const tsr_model* m, size_t index) {
  if (m == nullptr || index >= m->model->dims.size()) return tsr_string{nullptr, 0};
  return Text(m->model->dims[index].name);
}

tsr_error* tsr_model_dim_range(const tsr_model* m, size_t index, int64_t* min, int64_t* max) {
  static constexpr const char* fn = __func__;
  return Guard(fn, [&]() -> tsr_error* {
    if (auto s = NeedHandle(m, "a model", fn); !s.ok()) return ToError(s);
    if (min == nullptr || max == nullptr) {
      return ToError(absl::InvalidArgumentError(
          absl::StrFormat("%s: expected pointers for the range, got NULL", fn)));
    }
    if (index >= m->model->dims.size()) {
      return ToError(absl::OutOfRangeError(
          absl::StrFormat("%s: expected a dim index below the model's %d dims, got %d", fn,
                          m->model->dims.size(), index)));
    }
    *min = m->model->dims[index].min;
    *max = m->model->dims[index].max;
    return nullptr;
  });
}

tsr_error* tsr_model_example_input(const tsr_model* m, size_t index, tsr_tensor** out) {
  static constexpr const char* fn = __func__;
  return Guard(fn, [&] { return FileTensor(m, index, true, out, fn); });
}

tsr_error* tsr_model_expected_output(const tsr_model* m, size_t index, tsr_tensor** out) {
  static constexpr const char* fn = __func__;
  return Guard(fn, [&] { return FileTensor(m, index, false, out, fn); });
}

// CompileModel: tsr_model_compile(_with_options) as `fn`, whose name its errors carry.
static tsr_error* CompileModel(const tsr_model* m, tsr_device device,
                               const tsr_compile_options* options, tsr_compiled_model** out,
                               const char* fn) {
  return Guard(fn, [&]() -> tsr_error* {
    if (auto s = NeedHandle(out, "an output pointer", fn); !s.ok()) return ToError(s);
    *out = nullptr;
    if (auto s = NeedHandle(m, "a model", fn); !s.ok()) return ToError(s);
    absl::StatusOr<tessera::Device> dev = ToDevice(device, fn);
    if (!dev.ok()) return ToError(dev.status());
    model::CompileOptions chosen;
    if (options != nullptr) {
      constexpr size_t kMinSize = offsetof(tsr_compile_options, reserved);
      constexpr uint32_t kKnown = TSR_COMPILE_NO_CLAIMS | TSR_COMPILE_NO_FOLDING;
      if (options->struct_size < kMinSize) {
        return MakeError(absl::StatusCode::kInvalidArgument,
                         absl::StrFormat("%s: options->struct_size is %d, expected at least %d", fn,
                                         options->struct_size, kMinSize));
      }
      if ((options->flags & ~kKnown) != 0) {
        return MakeError(absl::StatusCode::kInvalidArgument,
                         absl::StrFormat("%s: options->flags has bits 0x%x that this runtime "
                                         "does not know (it knows 0x%x)",
                                         fn, options->flags & ~kKnown, kKnown));
      }
      chosen.claims = (options->flags & TSR_COMPILE_NO_CLAIMS) == 0;
      chosen.fold = (options->flags & TSR_COMPILE_NO_FOLDING) == 0;
    }
    EnsureDefaultPluginsLoaded();
    auto compiled =
        model::CompiledModel::Compile(m->model, *dev, tessera::OpRegistry::Global(), chosen);
    if (!compiled.ok()) return ToError(compiled.status());
    *out = new tsr_compiled_model{*std::move(compiled)};
    return nullptr;
  });
}

tsr_error* tsr_model_compile(const tsr_model* m, tsr_device device, tsr_compiled_model** out) {
  return CompileModel(m, device, nullptr, out, __func__);
}

tsr_error* tsr_model_compile_with_options(const tsr_model* m, tsr_device device,
                                          const tsr_compile_options* options,
                                          tsr_compiled_model** out) {
  return CompileModel(m, device, options, out, __func__);
}
void tsr_compiled_model_release(tsr_compiled_model* compiled) { delete compiled; }

tsr_error* tsr_compiled_model_run(const tsr_compiled_model* compiled, tsr_tensor* const* inputs,
                                  size_t num_inputs, tsr_tensor** outputs, size_t num_outputs) {
  static constexpr const char* fn = __func__;
  return Guard(fn, [&] {
    return RunCompiled(compiled, inputs, num_inputs, outputs, num_outputs, nullptr, fn);
  });
}

tsr_error* tsr_compiled_model_run_profiled(const tsr_compiled_model* compiled,
                                           tsr_tensor* const* inputs, size_t num_inputs,
                                           tsr_tensor** outputs, size_t num_outputs,
                                           tsr_model_run_stats* stats) {
  static constexpr const char* fn = __func__;
  return Guard(fn, [&]() -> tsr_error* {
    if (auto s = NeedHandle(stats, "a tsr_model_run_stats", fn); !s.ok()) return ToError(s);
    if (!TSR_FIELD_FITS(tsr_model_run_stats, node_ns_capacity, stats->struct_size)) {
      return ToError(absl::InvalidArgumentError(absl::StrFormat(
          "%s: expected stats->struct_size >= %d (the 1.2 tsr_model_run_stats), got %d", fn,
          sizeof(tsr_model_run_stats), stats->struct_size)));
    }
    if (stats->node_ns == nullptr && stats->node_ns_capacity > 0) {
      return ToError(absl::InvalidArgumentError(absl::StrFormat(
          "%s: expected stats->node_ns for %d entries, got NULL", fn, stats->node_ns_capacity)));
    }
    model::RunStats measured;
    if (tsr_error* e =
            RunCompiled(compiled, inputs, num_inputs, outputs, num_outputs, &measured, fn)) {
      return e;
    }
    stats->peak_intermediate_bytes = measured.peak_intermediate_bytes;
    stats->total_intermediate_bytes = measured.total_intermediate_bytes;
    const size_t n = std::min<size_t>(measured.node_ns.size(), stats->node_ns_capacity);
    for (size_t i = 0; i < n; ++i) stats->node_ns[i] = measured.node_ns[i];
    return nullptr;
  });
}

tsr_node_route tsr_compiled_model_node_route(const tsr_compiled_model* compiled, size_t index) {
  if (compiled == nullptr || index >= compiled->compiled->num_nodes()) return TSR_NODE_FALLBACK;
  return static_cast<tsr_node_route>(compiled->compiled->route(index));
}

tsr_string tsr_compiled_model_node_op(const tsr_compiled_model* compiled, size_t index) {
  if (compiled == nullptr || index >= compiled->compiled->num_nodes()) {
    return tsr_string{nullptr, 0};
  }
  return Text(compiled->compiled->op_name(index));
}

}  // extern "C"
