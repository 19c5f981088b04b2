// Recording op calls (TESSERA_RECORD, Note [Recording calls] in runtime/call_recorder.cc). The
// recorder reads its variables when libtessera loads, so each test runs this binary again as a
// child (--child=SCENARIO) with them set, and reads the file the child left. The ops are the
// test's own, with CPU kernels registered here: no plugin is needed.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "c_test_support.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera/c/tessera.h"

namespace {

using tessera_test::Consume;
using tessera_test::S;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr tsr_device kCpu{TSR_DEVICE_CPU, 0};

// Must: the child's set-up cannot fail; if it does, it says why and aborts.
void Must(tsr_error* e) {
  if (e == nullptr) return;
  std::fprintf(stderr, "call_recorder_test: %s\n", Consume(e).c_str());
  std::abort();
}

// rec::same(self, n): returns self.
tsr_error* Same(void*, const tsr_op*, tsr_stack* stack) {
  tsr_tensor* self = nullptr;
  if (tsr_error* e = tsr_stack_get_tensor(stack, 0, &self)) return e;
  tsr_tensor_retain(self);
  tsr_stack_clear(stack);
  tsr_error* e = tsr_stack_push_tensor(stack, self);
  tsr_tensor_release(self);
  return e;
}

// rec::outer(self): calls rec::same(self) through the C ABI, as a plugin's kernel may, and
// returns self. That inner call is not the application's and must not be recorded.
tsr_error* Outer(void*, const tsr_op*, tsr_stack* stack) {
  tsr_tensor* self = nullptr;
  if (tsr_error* e = tsr_stack_get_tensor(stack, 0, &self)) return e;
  const tsr_op* same = nullptr;
  if (tsr_error* e = tsr_op_find(S("rec::same"), &same)) return e;
  tsr_stack* inner = nullptr;
  if (tsr_error* e = tsr_stack_create(&inner)) return e;
  tsr_error* e = tsr_stack_push_tensor(inner, self);
  if (e == nullptr) e = tsr_op_call(same, inner);
  tsr_stack_release(inner);
  if (e != nullptr) return e;
  tsr_tensor_retain(self);
  tsr_stack_clear(stack);
  e = tsr_stack_push_tensor(stack, self);
  tsr_tensor_release(self);
  return e;
}

// The child's definitions and kernels, undone when its scenario ends (a leak checker runs at
// its exit).
std::vector<tsr_registration*> registrations;

void Define(const char* schema, const char* op, tsr_boxed_kernel_fn fn) {
  tsr_registration* def = nullptr;
  Must(tsr_op_define(S(schema), &def));
  tsr_kernel_desc desc = {};
  desc.struct_size = sizeof desc;
  desc.op_name = S(op);
  desc.device_type = TSR_DEVICE_CPU;
  desc.boxed = fn;
  desc.kernel_name = S(op);
  tsr_registration* reg = nullptr;
  Must(tsr_kernel_register(&desc, &reg));
  registrations.push_back(def);
  registrations.push_back(reg);
}

tsr_tensor* Floats(std::vector<int64_t> sizes, float first) {
  tsr_tensor* t = nullptr;
  Must(tsr_tensor_empty(sizes.data(), sizes.size(), TSR_DTYPE_FLOAT32, kCpu, &t));
  std::vector<float> v(static_cast<size_t>(tsr_tensor_numel(t)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = first + static_cast<float>(i);
  Must(tsr_tensor_copy_from_host(t, v.data(), v.size() * sizeof(float)));
  return t;
}

// Call: op(args...) through tsr_op_call; its error as Consume gives it.
std::string Call(const char* name, const std::vector<tsr_tensor*>& tensors,
                 const std::vector<int64_t>& ints = {}, const char* string = nullptr) {
  const tsr_op* op = nullptr;
  if (std::string e = Consume(tsr_op_find(S(name), &op)); !e.empty()) return e;
  tsr_stack* stack = nullptr;
  tsr_stack_create(&stack);
  for (tsr_tensor* t : tensors) tsr_stack_push_tensor(stack, t);
  for (int64_t i : ints) tsr_stack_push_int(stack, i);
  if (string != nullptr) tsr_stack_push_string(stack, S(string));
  std::string e = Consume(tsr_op_call(op, stack));
  tsr_stack_release(stack);
  return e;
}

// The calls of each scenario, in the child.
int RunScenario(const std::string& scenario) {
  Define("rec::same(Tensor(a) self, int n=3) -> Tensor(a)", "rec::same", &Same);
  Define("rec::outer(Tensor(a) self) -> Tensor(a)", "rec::outer", &Outer);
  tsr_tensor* x = Floats({2, 3}, 1);
  tsr_tensor* big = Floats({10}, 0);
  // The same call twice, its default left out: one line, counted twice, bound with n=3.
  Call("rec::same", {x});
  Call("rec::same", {x});
  if (scenario == "dies") std::_Exit(0);  // no exit handlers: the file stays as it was
  // A transposed view: its strides are recorded.
  tsr_tensor* xt = nullptr;
  const int64_t sizes[] = {3, 2}, strides[] = {1, 3};
  Must(tsr_tensor_as_strided(x, sizes, strides, 2, 0, &xt));
  Call("rec::same", {xt}, {5});
  Call("rec::same", {big}, {7});             // more elements than TESSERA_RECORD_VALUES
  Call("rec::same", {x}, {}, "not an int");  // fails: its error is recorded
  Call("rec::outer", {x});                   // records rec::outer, not its inner rec::same
  // The packed entry point records too.
  const tsr_op* same = nullptr;
  tsr_op_find(S("rec::same"), &same);
  tsr_tensor* one = Floats({1}, 42);
  tsr_value arg;
  std::memset(&arg, 0, sizeof arg);
  arg.kind = TSR_VALUE_TENSOR;
  arg.u.tensor = one;
  tsr_value ret;
  size_t n = 0;
  Must(tsr_op_call_values(same, &arg, 1, &ret, 1, &n));
  tsr_tensor_release(ret.u.tensor);
  for (tsr_tensor* t : {x, big, xt, one}) tsr_tensor_release(t);
  for (auto it = registrations.rbegin(); it != registrations.rend(); ++it) {
    tsr_registration_release(*it);
  }
  return 0;
}

struct Recorded {
  int exit_code = -1;
  std::vector<std::string> lines;
};

// Record runs the scenario in a child with TESSERA_RECORD=<a new file> and the extra variables.
Recorded Record(const std::string& scenario, const std::vector<std::string>& env = {}) {
  const std::string path = ::testing::TempDir() + "/recording_" + scenario + ".jsonl";
  std::remove(path.c_str());
  const pid_t pid = fork();
  if (pid == 0) {
    setenv("TESSERA_RECORD", path.c_str(), 1);
    for (const std::string& kv : env) putenv(strdup(kv.c_str()));
    const std::string flag = "--child=" + scenario;
    execl("/proc/self/exe", "call_recorder_test", flag.c_str(), static_cast<char*>(nullptr));
    std::_Exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  Recorded r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) r.lines.push_back(line);
  return r;
}

// LineOf: the recorded line of `op` whose text has `part`, or "".
std::string LineOf(const Recorded& r, const std::string& op, const std::string& part) {
  for (const std::string& l : r.lines) {
    if (l.find("{\"op\":\"" + op + "\"") == 0 && l.find(part) != std::string::npos) return l;
  }
  return "";
}

TEST(CallRecorder, RecordsEachDistinctCallOnceWithItsCount) {
  const Recorded r = Record("calls", {"TESSERA_RECORD_VALUES=6"});
  ASSERT_EQ(r.exit_code, 0);
  ASSERT_FALSE(r.lines.empty());
  EXPECT_EQ(r.lines[0],
            "{\"format\":\"tessera.recording\",\"format_version\":1,\"complete\":true,"
            "\"values_up_to\":6}");
  // Bound to schema order with the default filled in, the values of a 6-element tensor kept.
  const std::string twice = LineOf(r, "rec::same", "\"shape\":[2,3],\"strides\":[3,1]");
  EXPECT_THAT(twice, HasSubstr("\"count\":2,"));
  EXPECT_THAT(twice, HasSubstr("\"schema\":\"rec::same(Tensor(a) self, int n=3) -> Tensor(a)\""));
  EXPECT_THAT(twice, HasSubstr("{\"name\":\"n\",\"kind\":\"int\",\"value\":3}"));
  EXPECT_THAT(twice, HasSubstr("\"device\":\"cpu\",\"values\":[1,2,3,4,5,6]}"));
  EXPECT_THAT(twice, Not(HasSubstr("error")));
  // A view keeps its layout; its values are read in its own order.
  EXPECT_THAT(LineOf(r, "rec::same", "\"shape\":[3,2],\"strides\":[1,3]"),
              HasSubstr("\"values\":[1,4,2,5,3,6]}"));
  // Over TESSERA_RECORD_VALUES elements: metadata only.
  const std::string big = LineOf(r, "rec::same", "\"shape\":[10]");
  ASSERT_NE(big, "");
  EXPECT_THAT(big, Not(HasSubstr("values")));
  // A failed call, with its error.
  EXPECT_THAT(LineOf(r, "rec::same", "\"kind\":\"string\""),
              HasSubstr("\"error\":{\"code\":\"INVALID_ARGUMENT\",\"message\":"));
  // The packed entry point's call.
  EXPECT_THAT(LineOf(r, "rec::same", "\"shape\":[1]"), HasSubstr("\"values\":[42]}"));
  // rec::outer, whose inner call of rec::same left the first line's count at 2.
  EXPECT_THAT(LineOf(r, "rec::outer", ""), HasSubstr("\"count\":1,"));
  EXPECT_EQ(r.lines.size(), 7u);  // the header and six distinct calls
}

TEST(CallRecorder, AProcessThatDiesKeepsEveryDistinctCallItMade) {
  const Recorded r = Record("dies");
  ASSERT_EQ(r.exit_code, 0);
  ASSERT_EQ(r.lines.size(), 2u);
  EXPECT_THAT(r.lines[0], HasSubstr("\"complete\":false"));
  EXPECT_THAT(r.lines[0], HasSubstr("\"values_up_to\":4096"));  // the default
  // Counted once, a lower bound: the second call of it never reached the file.
  EXPECT_THAT(r.lines[1], HasSubstr("\"count\":1,"));
}

TEST(CallRecorder, ValuesCanBeLeftOutOrAllKept) {
  const Recorded none = Record("calls", {"TESSERA_RECORD_VALUES=none"});
  ASSERT_EQ(none.exit_code, 0);
  ASSERT_EQ(none.lines.size(), 7u);
  EXPECT_THAT(none.lines[0], HasSubstr("\"values_up_to\":-1"));
  for (const std::string& l : none.lines) EXPECT_THAT(l, Not(HasSubstr("\"values\"")));
  const Recorded all = Record("calls", {"TESSERA_RECORD_VALUES=all"});
  ASSERT_EQ(all.exit_code, 0);
  EXPECT_THAT(all.lines[0], HasSubstr("\"values_up_to\":-2"));
  EXPECT_THAT(LineOf(all, "rec::same", "\"shape\":[10]"), HasSubstr("\"values\":[0,1,2,"));
}

TEST(CallRecorder, AFileThatCannotBeWrittenIsSaidAndCallsStillRun) {
  const std::string out = ::testing::TempDir() + "/unwritable.log";
  const pid_t pid = fork();
  if (pid == 0) {
    setenv("TESSERA_RECORD", "/nonexistent-dir/recording.jsonl", 1);
    std::freopen(out.c_str(), "w", stderr);
    execl("/proc/self/exe", "call_recorder_test", "--child=calls", static_cast<char*>(nullptr));
    std::_Exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  std::ifstream in(out);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr("TESSERA_RECORD: cannot write '/nonexistent-dir/recording.jsonl' "
                              "(No such file or directory); calls are not recorded"));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strncmp(argv[1], "--child=", 8) == 0) return RunScenario(argv[1] + 8);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
