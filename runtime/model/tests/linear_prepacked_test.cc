// The CPU backend's linear layers in compiled models (Note [Prepacked matrix products] in
// plugins/cpu/prepacked_gemm.cc): a product by a constant weight, seen through a view op (t),
// runs on oneDNN's matmul with the weight reordered once for every run, where out has from 2 to
// 512 rows per thread, and on dnnl_sgemm otherwise; both give PyTorch's values. Which one ran is
// read from oneDNN's own log (ONEDNN_VERBOSE) of a child process running the model three times: one
// reorder of the weight in all (made on the first run, found again on the others), or none.
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/model/tests/model_file_writer.h"
#include "runtime/tests/c_test_support.h"
#include "tessera/c/tessera.h"

namespace {

using tessera_test::Consume;
using tessera_test::Floats;
using tessera_test::LoadAndCompile;
using tessera_test::ModelFile;

constexpr tsr_device kCpu = {TSR_DEVICE_CPU, 0};
constexpr int64_t kK = 64, kN = 48;

// Small integers and halves: every product and sum below is exact in float32.
std::vector<float> Weight() {
  std::vector<float> w(static_cast<size_t>(kN * kK));
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
  return w;
}
std::vector<float> Bias() {
  std::vector<float> b(static_cast<size_t>(kN));
  for (size_t j = 0; j < b.size(); ++j) b[j] = 0.5f * static_cast<float>(j % 5);
  return b;
}
std::vector<float> Input(int64_t rows, int run) {
  std::vector<float> x(static_cast<size_t>(rows * kK));
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>(static_cast<int>((i * 3 + static_cast<size_t>(run)) % 5) - 2);
  }
  return x;
}

// A bias of NaNs, which an addmm with beta 0 must ignore (as PyTorch's does).
std::vector<float> NanBias() { return std::vector<float>(static_cast<size_t>(kN), std::nanf("")); }

// Linear: x [rows, K]; wt = t(w) for a constant w [N, K]; y = addmm(b, x, wt) (a linear layer);
// z = mm(x, wt); e = addmm(b, x, wt, beta=0.5, alpha=2); f = addmm(b2, x, wt) with the bias as
// one row [1, N]; g = addmm(n, x, wt, beta=0) with n all NaN. Outputs y, z, e, f, g.
constexpr int kOutputs = 5;
std::string LinearFile(int64_t rows) {
  const std::string graph =
      R"j({"name":"linear","producer":"test","op_set":"1.1",)j"
      R"j("inputs":[{"name":"x","dtype":"float32","sizes":[)j" +
      std::to_string(rows) + "," + std::to_string(kK) +
      R"j(]}],"nodes":[)j"
      R"j({"op":"t","schema":"t(Tensor(a) self) -> Tensor(a)","args":[{"tensor":"w"}],"outputs":["wt"]},)j"
      R"j({"op":"addmm","schema":"addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",)j"
      R"j("args":[{"tensor":"b"},{"tensor":"x"},{"tensor":"wt"},{"int":1},{"int":1}],"outputs":["y"]},)j"
      R"j({"op":"mm","schema":"mm(Tensor self, Tensor mat2) -> Tensor","args":[{"tensor":"x"},{"tensor":"wt"}],"outputs":["z"]},)j"
      R"j({"op":"addmm","schema":"addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",)j"
      R"j("args":[{"tensor":"b"},{"tensor":"x"},{"tensor":"wt"},{"float":0.5},{"int":2}],"outputs":["e"]},)j"
      R"j({"op":"addmm","schema":"addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",)j"
      R"j("args":[{"tensor":"b2"},{"tensor":"x"},{"tensor":"wt"},{"int":1},{"int":1}],"outputs":["f"]},)j"
      R"j({"op":"addmm","schema":"addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",)j"
      R"j("args":[{"tensor":"n"},{"tensor":"x"},{"tensor":"wt"},{"int":0},{"int":1}],"outputs":["g"]}],)j"
      R"j("outputs":[{"name":"y","value":"y"},{"name":"z","value":"z"},{"name":"e","value":"e"},)j"
      R"j({"name":"f","value":"f"},{"name":"g","value":"g"}]})j";
  return ModelFile(graph, {{"constant/w", "F32", {kN, kK}, Floats(Weight())},
                           {"constant/b", "F32", {kN}, Floats(Bias())},
                           {"constant/b2", "F32", {1, kN}, Floats(Bias())},
                           {"constant/n", "F32", {kN}, Floats(NanBias())}});
}

// RunModel: runs the model on `rows` rows `runs` times (each run another x) and checks each
// output against the sums computed here; returns the first mismatch or error, or "".
std::string RunModel(int64_t rows, int runs) {
  if (std::string e = Consume(tsr_plugin_load_default()); !e.empty()) return e;
  tsr_model* model = nullptr;
  tsr_compiled_model* compiled = nullptr;
  if (std::string e = LoadAndCompile(LinearFile(rows), kCpu, 0, &model, &compiled); !e.empty()) {
    return e;
  }
  const std::vector<float> w = Weight(), b = Bias();
  std::string failure;
  for (int run = 0; run < runs && failure.empty(); ++run) {
    const std::vector<float> x = Input(rows, run);
    const int64_t sizes[] = {rows, kK};
    tsr_tensor* in = nullptr;
    tsr_tensor* out[kOutputs] = {};
    failure = Consume(tsr_tensor_empty(sizes, 2, TSR_DTYPE_FLOAT32, kCpu, &in));
    if (failure.empty()) {
      failure = Consume(tsr_tensor_copy_from_host(in, x.data(), x.size() * sizeof(float)));
    }
    if (failure.empty()) failure = Consume(tsr_compiled_model_run(compiled, &in, 1, out, kOutputs));
    tsr_tensor_release(in);
    std::vector<float> got[kOutputs];
    for (int o = 0; o < kOutputs && failure.empty(); ++o) {
      got[o].resize(static_cast<size_t>(rows * kN));
      failure = Consume(tsr_tensor_copy_to_host(out[o], got[o].data(), got[o].size() * 4));
    }
    for (tsr_tensor* t : out) tsr_tensor_release(t);
    for (int64_t i = 0; i < rows && failure.empty(); ++i) {
      for (int64_t j = 0; j < kN && failure.empty(); ++j) {
        double dot = 0;
        for (int64_t k = 0; k < kK; ++k) dot += double{x[i * kK + k]} * w[j * kK + k];
        const double want[kOutputs] = {dot + b[j], dot, 2 * dot + 0.5 * b[j], dot + b[j], dot};
        for (int o = 0; o < kOutputs; ++o) {
          if (got[o][i * kN + j] != static_cast<float>(want[o])) {
            failure = "run " + std::to_string(run) + ", output " + std::to_string(o) + " [" +
                      std::to_string(i) + ", " + std::to_string(j) + "]: got " +
                      std::to_string(got[o][i * kN + j]) + ", expected " + std::to_string(want[o]);
            break;
          }
        }
      }
    }
  }
  tsr_compiled_model_release(compiled);
  tsr_model_release(model);
  return failure;
}

struct Child {
  int exit_code = -1;
  std::string log;  // its stdout: oneDNN's verbose lines, then ours
};

// RunChild runs RunModel(rows, 3) in a child on `threads` threads with ONEDNN_VERBOSE=1.
Child RunChild(int64_t rows, int threads) {
  const std::string path = ::testing::TempDir() + "/linear_prepacked_" + std::to_string(rows) +
                           "_" + std::to_string(threads) + ".log";
  const pid_t pid = fork();
  if (pid == 0) {
    std::FILE* f = std::freopen(path.c_str(), "w", stdout);
    if (f == nullptr) std::_Exit(126);
    setenv("ONEDNN_VERBOSE", "1", 1);
    setenv("TESSERA_NUM_THREADS", std::to_string(threads).c_str(), 1);
    unsetenv("OMP_NUM_THREADS");  // a cap on oneDNN's threads (onednn::Threads) from outside
    const std::string flag = "--child=" + std::to_string(rows);
    execl("/proc/self/exe", "linear_prepacked_test", flag.c_str(), static_cast<char*>(nullptr));
    std::_Exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  Child c;
  c.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) c.log += line + "\n";
  return c;
}

// WeightReorders: oneDNN's reorders of a K x N matrix (the weight) in the log.
int WeightReorders(const std::string& log) {
  const std::string dims = "," + std::to_string(kK) + "x" + std::to_string(kN) + ",";
  int n = 0;
  size_t at = 0;
  while ((at = log.find("exec,cpu,reorder,", at)) != std::string::npos) {
    const size_t end = log.find('\n', at);
    if (log.substr(at, end - at).find(dims) != std::string::npos) ++n;
    at = end;
  }
  return n;
}

// Products in the log whose primitive adds a bias (the linear layer's addmm), of all products.
int Lines(const std::string& log, const char* what, const char* with = "") {
  int n = 0;
  size_t at = 0;
  while ((at = log.find(what, at)) != std::string::npos) {
    const size_t end = log.find('\n', at);
    if (log.substr(at, end - at).find(with) != std::string::npos) ++n;
    at = end;
  }
  return n;
}

// 8 rows: each product by the weight is prepacked; the five share one reordered copy, made on
// the first run and found again on the other two. The linear layers' addmm (beta = alpha = 1,
// the bias [N] or [1, N]) hand their bias to the primitive; the one with beta 0.5 and alpha 2
// scales and adds out; the one with beta 0 ignores its NaN bias.
TEST(LinearPrepacked, FewRowsReorderTheWeightOnce) {
  const Child c = RunChild(8, 1);
  ASSERT_EQ(c.exit_code, 0) << c.log;
  EXPECT_EQ(WeightReorders(c.log), 1) << c.log;
  EXPECT_EQ(Lines(c.log, "exec,cpu,matmul,"), 3 * kOutputs) << c.log;
  EXPECT_EQ(Lines(c.log, "exec,cpu,matmul,", "bia_f32"), 6) << c.log;
  EXPECT_EQ(Lines(c.log, "exec,cpu,matmul,", "sum:0.5"), 3) << c.log;
}

// One row (a matrix-vector product): dnnl_sgemm, no reorder.
TEST(LinearPrepacked, OneRowStaysOnSgemm) {
  const Child c = RunChild(1, 1);
  ASSERT_EQ(c.exit_code, 0) << c.log;
  EXPECT_EQ(WeightReorders(c.log), 0) << c.log;
}

// 600 rows on 1 thread (past kPrepackedRowsPerThread): dnnl_sgemm, no reorder; on 2 threads
// (300 rows each) prepacked again.
TEST(LinearPrepacked, ManyRowsPerThreadStayOnSgemm) {
  const Child one = RunChild(600, 1);
  ASSERT_EQ(one.exit_code, 0) << one.log;
  EXPECT_EQ(WeightReorders(one.log), 0) << one.log;
  const Child two = RunChild(600, 2);
  ASSERT_EQ(two.exit_code, 0) << two.log;
  EXPECT_EQ(WeightReorders(two.log), 1) << two.log;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strncmp(argv[1], "--child=", 8) == 0) {
    const std::string failure = RunModel(std::strtoll(argv[1] + 8, nullptr, 10), 3);
    if (!failure.empty()) std::printf("linear_prepacked_test child: %s\n", failure.c_str());
    return failure.empty() ? 0 : 1;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
