// The embedding demo that scripts/run.sh runs until the conformance CLI exists: an
// application using only the public embedding API (tessera/sdk/runtime.hpp over the C ABI).
//
// It loads the default plugins (the sample NPU from lib/tessera/plugins; the CPU plugin
// arrives with its own issue), prints their load reports, and computes a few ops on the npu.
#include <cstdio>
#include <string>
#include <vector>

#include "tessera/sdk/runtime.hpp"

namespace {

std::string Values(const tessera::Tensor& t) {
  std::string s = "[";
  for (float v : t.to_vector<float>()) {
    if (s.size() > 1) s += ", ";
    s += std::to_string(v).substr(0, 5);
  }
  return s + "]";
}

std::string Shape(const tessera::Tensor& t) {
  std::string s = "[";
  for (int64_t d : t.sizes()) s += (s.size() > 1 ? ", " : "") + std::to_string(d);
  return s + "]";
}

}  // namespace

int main() {
  try {
    tessera::Runtime runtime;
    const tsr_load_report* const* reports = nullptr;
    size_t count = 0;
    tsr_load_reports(&reports, &count);
    std::printf("Tessera demo: %zu plugin load attempt(s)\n", count);
    for (size_t i = 0; i < count; ++i) {
      char text[1024];
      tsr_load_report_format(reports[i], text, sizeof text);
      std::printf("%s", text);
    }

    const tsr_device npu = tessera::parse_device("npu:0");
    auto a = tessera::Tensor::from_host<float>({1, 2, 3, 4, 5, 6}, {2, 3}, TSR_DTYPE_FLOAT32, npu);
    auto b = tessera::Tensor::from_host<float>({0.5f, -1, 2}, {3}, TSR_DTYPE_FLOAT32, npu);
    std::printf("a = %s %s on npu:0\n", Values(a).c_str(), Shape(a).c_str());
    std::printf("b = %s %s\n", Values(b).c_str(), Shape(b).c_str());
    std::printf("a + b (broadcast)  = %s\n", Values(a + b).c_str());
    std::printf("a * a              = %s\n", Values(a * a).c_str());
    static const tsr_op* transpose = tessera::find_op("transpose.int");
    static const tsr_op* mm = tessera::find_op("mm");
    auto at = tessera::call1(transpose, a, 0, 1);  // a view: the runtime's own op
    auto product = tessera::call1(mm, a, at);
    std::printf("a @ a.t()          = %s %s\n", Values(product).c_str(), Shape(product).c_str());
    auto host = tessera::to(product, "cpu");
    std::printf("moved to cpu       = %s\n", Values(host).c_str());
    try {
      auto mixed = a + tessera::Tensor::from_host<float>({1}, {1}, TSR_DTYPE_FLOAT32);
    } catch (const tessera::sdk::Error& e) {
      std::printf("a + (cpu tensor)   -> error: %s\n", e.what());
    }
  } catch (const tessera::sdk::Error& e) {
    std::fprintf(stderr, "demo: %s\n", e.what());
    return 1;
  }
  return 0;
}
