// Fuzz target: a model file's bytes through tsr_model_load_from_memory (the safetensors layout,
// its JSON header, the graph in its metadata), then, for a file that loads, tsr_model_compile on
// the CPU. The seeds are a tiny exported model, a hand-made one, and the tiny model with a
// dynamic batch (format version 2: dims and size expressions).
//
// Checked (besides no crash, no hang and no sanitizer report): a file either loads or is refused
// with a message; a loaded model's names and counts are readable, each input and output index
// either gives a tensor or a clear error; compiling either succeeds or names what it refused.
// Models are not run: a fuzzed graph may ask for any amount of memory (zeros([2^40])), which a
// run would allocate as the program says; loading and compiling allocate only what the file's
// bytes hold.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "tessera/c/tessera.h"

namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "model_load: %s\n", what);
    std::abort();
  }
}

// ExpectClean: an error must carry a message; released either way.
void ExpectClean(tsr_error* error) {
  if (error == nullptr) return;
  Check(tsr_error_message(error).size > 0, "an error without a message");
  tsr_error_release(error);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tsr_error* error = tsr_plugin_load_default();
  Check(error == nullptr, "the CPU plugin did not load");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tsr_model* model = nullptr;
  tsr_error* error = tsr_model_load_from_memory(data, size, &model);
  if (error != nullptr) {
    Check(model == nullptr, "a refused file still gave a model");
    ExpectClean(error);
    return 0;
  }
  Check(model != nullptr, "a loaded file gave no model");
  (void)tsr_model_name(model);
  const size_t inputs = tsr_model_num_inputs(model), outputs = tsr_model_num_outputs(model);
  for (size_t i = 0; i <= inputs; ++i) {
    tsr_tensor* t = nullptr;
    (void)tsr_model_input_name(model, i);
    error = tsr_model_example_input(model, i, &t);
    Check((error == nullptr) == (t != nullptr), "an example input is both or neither of a "
                                                "tensor and an error");
    Check(i < inputs || error != nullptr, "an input index past the end gave a tensor");
    ExpectClean(error);
    tsr_tensor_release(t);
  }
  for (size_t i = 0; i <= outputs; ++i) {
    tsr_tensor* t = nullptr;
    (void)tsr_model_output_name(model, i);
    error = tsr_model_expected_output(model, i, &t);
    Check((error == nullptr) == (t != nullptr), "an expected output is both or neither of a "
                                                "tensor and an error");
    Check(i < outputs || error != nullptr, "an output index past the end gave a tensor");
    ExpectClean(error);
    tsr_tensor_release(t);
  }
  tsr_compiled_model* compiled = nullptr;
  error = tsr_model_compile(model, tsr_device{TSR_DEVICE_CPU, 0}, &compiled);
  Check((error == nullptr) == (compiled != nullptr), "compile gave both or neither");
  ExpectClean(error);
  if (compiled != nullptr) {
    const size_t nodes = tsr_model_num_nodes(model);
    for (size_t i = 0; i < nodes; ++i) {
      Check(tsr_compiled_model_node_op(compiled, i).size > 0, "a compiled node without an op");
    }
  }
  tsr_compiled_model_release(compiled);
  tsr_model_release(model);
  return 0;
}
