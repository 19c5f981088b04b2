// An application built against the installed Tessera: loads the default plugins, checks that
// the npu plugin came from the path given on the command line, and computes on it. With
// --no-npu it checks instead that default discovery loaded the CPU backend and no npu (the
// installed sample plugin is not among the default plugins), and computes on the CPU, with
// ops.hpp's Tensor methods.
#include <cstdio>
#include <string>
#include <vector>

#include "tessera/sdk/ops.hpp"  // the op set as functions, and Tensor methods
#include "tessera/sdk/runtime.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer_app EXPECTED_NPU_PATH | --no-npu\n");
    return 2;
  }
  const std::string expected = argv[1];
  try {
    tessera::Runtime runtime;
    const tsr_load_report* const* reports = nullptr;
    size_t count = 0;
    tsr_load_reports(&reports, &count);
    bool npu_from_expected_path = false, npu_loaded = false, cpu_loaded = false;
    for (size_t i = 0; i < count; ++i) {
      char text[1024];
      tsr_load_report_format(reports[i], text, sizeof text);
      std::printf("%s", text);
      if (!reports[i]->loaded) continue;
      const std::string path(reports[i]->path.data, reports[i]->path.size);
      const std::string device(reports[i]->device_name.data, reports[i]->device_name.size);
      if (path == expected) npu_from_expected_path = true;
      npu_loaded = npu_loaded || device == "npu";
      cpu_loaded = cpu_loaded || device == "cpu";
    }
    if (expected == "--no-npu") {
      if (npu_loaded || !cpu_loaded) {
        std::fprintf(stderr, "FAIL: default discovery loaded %s\n",
                     npu_loaded ? "the sample npu plugin" : "no CPU backend");
        return 1;
      }
      auto a = tessera::Tensor::from_host<float>({1, 2, 3}, {3}, TSR_DTYPE_FLOAT32);
      // Tensor methods (declared in the installed tensor_methods.inc, defined in ops.hpp).
      const std::vector<float> out = (a * a + a).view({1, 3}).relu_().to_vector<float>();
      if (out != std::vector<float>{2, 6, 12}) {
        std::fprintf(stderr, "FAIL: wrong result on the cpu\n");
        return 1;
      }
      std::printf("ok: default discovery loaded the CPU backend and no sample plugin\n");
      return 0;
    }
    if (!npu_from_expected_path) {
      std::fprintf(stderr, "FAIL: the npu plugin was not loaded from %s\n", argv[1]);
      return 1;
    }
    auto a = tessera::Tensor::from_host<float>({1, 2, 3}, {3}, TSR_DTYPE_FLOAT32);
    auto b = tessera::to(a, "npu:0");
    auto c = b * b + b;
    const std::vector<float> out = c.to_vector<float>();
    std::printf("on npu: a * a + a = [%g, %g, %g]\n", out[0], out[1], out[2]);
    if (out != std::vector<float>{2, 6, 12}) {
      std::fprintf(stderr, "FAIL: wrong result\n");
      return 1;
    }
  } catch (const tessera::sdk::Error& e) {
    std::fprintf(stderr, "FAIL: %s\n", e.what());
    return 1;
  }
  std::printf("ok: the out-of-tree application ran on the out-of-tree plugin\n");
  return 0;
}
