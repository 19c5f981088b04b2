// The embedding demo that scripts/run.sh runs before conformance: an application using only
// the public embedding API (tessera/sdk/runtime.hpp over the C ABI).
//
//   tessera_demo [PLUGIN]
//
// It loads the default plugins (the CPU backend from lib/tessera/plugins), computes on the
// CPU, then loads PLUGIN by path when one is given (scripts/run.sh passes the sample vendor
// plugin, lib/tessera/examples/libnpu.so, which default discovery does not load), prints the
// load reports and computes a few ops on its npu device.
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

int main(int argc, char** argv) {
  if (argc > 2) {
    std::fprintf(stderr, "usage: tessera_demo [PLUGIN]\n");
    return 2;
  }
  try {
    tessera::Runtime runtime;
    {
      auto x = tessera::Tensor::from_host<float>({1, 2, 3}, {3}, TSR_DTYPE_FLOAT32);
      std::printf("on the cpu: x * x + x = %s\n", Values(x * x + x).c_str());
    }
    if (argc == 2) runtime.load_plugin(argv[1]);
    const tsr_load_report* const* reports = nullptr;
    size_t count = 0;
    tsr_load_reports(&reports, &count);
    std::printf("Tessera demo: %zu plugin load attempt(s)\n", count);
    for (size_t i = 0; i < count; ++i) {
      char text[1024];
      tsr_load_report_format(reports[i], text, sizeof text);
      std::printf("%s", text);
    }
    if (argc < 2) return 0;

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
