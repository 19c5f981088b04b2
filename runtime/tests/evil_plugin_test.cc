// Adversarial plugins (issue 14, section B): each misbehaving plugin of plugins/evil_plugin.c
// (and the C++ one in plugins/evil_throw_plugin.cc) gets the exact outcome it deserves — a
// clean error, a refusal with its load report, a process that goes on.
//
// Note [Evil plugins run in child processes]
// A case that the runtime gets wrong crashes (a call into an unloaded plugin) or hangs (a gate
// never left, a std::call_once re-entered). So that such a regression fails one test instead
// of killing or hanging the whole binary, and so that every case starts from a fresh process
// (default discovery runs once per process; each variant provides the same device type), each
// case is two tests: EvilPlugin.X re-executes this binary with --gtest_filter=EvilChild.X and
// TSR_EVIL_CHILD set, waits at most kChildTimeout, and reports a crash (signal), a hang
// (killed on timeout) or a failure (exit status); EvilChild.X holds the body and skips itself
// unless it runs as that child.
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera/c/tessera.h"

extern char** environ;

namespace {

using ::testing::HasSubstr;

constexpr auto kChildTimeout = std::chrono::seconds(60);  // generous for ASan on 2 busy cores

std::string PluginPath(const std::string& variant) {
  return std::string(TESSERA_TEST_PLUGIN_DIR) + "/libtsr_evil_plugin_" + variant + ".so";
}

tsr_string S(const std::string& s) { return tsr_string{s.data(), s.size()}; }
std::string Str(tsr_string s) { return std::string(s.data ? s.data : "", s.size); }

// Takes ownership of an error; returns "" for success, else its message.
std::string Consume(tsr_error* error, tsr_code* code = nullptr) {
  if (code) *code = tsr_error_code(error);
  if (error == nullptr) return "";
  std::string message = Str(tsr_error_message(error));
  tsr_error_release(error);
  return message;
}

// RunChild runs EvilChild.<name> in a fresh process (see the Note above) with `env` added.
void RunChild(const std::string& name, std::vector<std::string> env = {}) {
  const std::string mark = ::testing::TempDir() + "/evil_child_" + name + ".ran";
  std::remove(mark.c_str());
  env.push_back("TSR_EVIL_CHILD=" + mark);
  const std::string filter = "--gtest_filter=EvilChild." + name;
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    // The child runs exactly one test: under sharding it could land in a shard without it,
    // and its XML output would be written where the parent's goes.
    const std::string_view var(*e);
    if (var.rfind("GTEST_SHARD_INDEX=", 0) == 0 || var.rfind("GTEST_TOTAL_SHARDS=", 0) == 0 ||
        var.rfind("GTEST_OUTPUT=", 0) == 0) {
      continue;
    }
    // A variable that `env` sets replaces the parent's (getenv would find the first).
    bool replaced = false;
    for (const std::string& mine : env) {
      const std::string_view name(mine.data(), mine.find('=') + 1);
      replaced |= var.rfind(name, 0) == 0;
    }
    if (replaced) continue;
    env_strings.emplace_back(*e);
  }
  env_strings.insert(env_strings.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string exe = "/proc/self/exe";
  char* argv[] = {exe.data(), const_cast<char*>(filter.c_str()), nullptr};
  const pid_t pid = fork();
  ASSERT_GE(pid, 0) << "fork failed";
  if (pid == 0) {
    execve(argv[0], argv, envp.data());
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + kChildTimeout;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      FAIL() << "EvilChild." << name << " hung: killed after " << kChildTimeout.count() << " s";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (WIFSIGNALED(status)) {
    FAIL() << "EvilChild." << name << " crashed: " << strsignal(WTERMSIG(status));
  }
  EXPECT_EQ(WEXITSTATUS(status), 0) << "EvilChild." << name << " failed (its output is above)";
  EXPECT_TRUE(std::ifstream(mark).good()) << "EvilChild." << name << " did not run";
}

// CHILD_ONLY starts the body of an EvilChild test: it runs only in the child of RunChild.
#define CHILD_ONLY()                                                                \
  do {                                                                              \
    const char* mark = std::getenv("TSR_EVIL_CHILD");                               \
    if (mark == nullptr) GTEST_SKIP() << "runs in a child process of EvilPlugin.*"; \
    std::ofstream(mark) << "ran\n";                                                 \
  } while (0)

tsr_tensor* Floats(const std::vector<float>& values) {
  const int64_t size = static_cast<int64_t>(values.size());
  tsr_tensor* t = nullptr;
  EXPECT_EQ(Consume(tsr_tensor_empty(&size, 1, TSR_DTYPE_FLOAT32, {TSR_DEVICE_CPU, 0}, &t)), "");
  EXPECT_EQ(Consume(tsr_tensor_copy_from_host(t, values.data(), values.size() * sizeof(float))),
            "");
  return t;
}

// Call runs `op` on `inputs` (borrowed); on success *result (optional) gets a new reference to
// the first result. Returns "" or the error's message, and its code in *code.
std::string Call(const std::string& op_name, const std::vector<tsr_tensor*>& inputs,
                 tsr_code* code = nullptr, tsr_tensor** result = nullptr) {
  const tsr_op* op = nullptr;
  if (std::string e = Consume(tsr_op_find(S(op_name), &op), code); !e.empty()) return e;
  tsr_stack* stack = nullptr;
  Consume(tsr_stack_create(&stack));
  for (tsr_tensor* t : inputs) Consume(tsr_stack_push_tensor(stack, t));
  std::string error = Consume(tsr_op_call(op, stack), code);
  if (error.empty() && result != nullptr) {
    error = Consume(tsr_stack_get_tensor(stack, 0, result), code);
    if (error.empty()) tsr_tensor_retain(*result);
  }
  tsr_stack_release(stack);
  return error;
}

tsr_code FindCode(const std::string& op_name) {
  const tsr_op* op = nullptr;
  tsr_code code;
  Consume(tsr_op_find(S(op_name), &op), &code);
  return code;
}

}  // namespace

// Item 10: a kernel that throws gets its caller an INTERNAL error naming the kernel and its
// plugin, and leaves the plugin's gate, so that unloading the plugin does not wait forever.
TEST(EvilPlugin, ThrowingKernelIsAnErrorAndThePluginStillUnloads) { RunChild("ThrowingKernel"); }
TEST(EvilChild, ThrowingKernel) {
  CHILD_ONLY();
  ASSERT_EQ(Consume(tsr_plugin_load(S(PluginPath("throw")), nullptr)), "");
  tsr_tensor* t = Floats({1, 2});
  tsr_code code;
  const std::string error = Call("evil_throw::op", {t}, &code);
  EXPECT_EQ(code, TSR_INTERNAL);
  EXPECT_THAT(error,
              HasSubstr("kernel 'evil_throw::op' of plugin 'evil_throw' threw an exception"));
  EXPECT_THAT(error, HasSubstr("evil_throw::op: thrown on purpose"));
  EXPECT_THAT(Call("evil_throw::int", {t}, &code),
              HasSubstr("kernel 'evil_throw::int' of plugin 'evil_throw' threw a non-standard "
                        "exception"));
  EXPECT_EQ(code, TSR_INTERNAL);
  tsr_tensor_release(t);
  EXPECT_EQ(Consume(tsr_plugin_unload(S("evil_throw"))), "");
  EXPECT_EQ(FindCode("evil_throw::op"), TSR_NOT_FOUND);
}

// Item 7: tsr_device_synchronize runs plugin code; an unload racing it waits for it to return
// instead of unmapping the code under it.
TEST(EvilPlugin, UnloadWaitsForASynchronizeInFlight) { RunChild("SlowSync"); }
TEST(EvilChild, SlowSync) {
  CHILD_ONLY();
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ASSERT_EQ(setenv("EVIL_SYNC_FD", std::to_string(fds[1]).c_str(), 1), 0);
  ASSERT_EQ(Consume(tsr_plugin_load(S(PluginPath("slow_sync")), nullptr)), "");
  std::string sync_error = "not run";
  std::thread syncer([&] {
    sync_error = Consume(tsr_device_synchronize({TSR_DEVICE_PRIVATEUSE3, 0}));
  });
  char byte = 0;
  ASSERT_EQ(read(fds[0], &byte, 1), 1);  // synchronize is inside the plugin now
  EXPECT_EQ(Consume(tsr_plugin_unload(S("evil_slow_sync"))), "");
  syncer.join();
  EXPECT_EQ(sync_error, "") << "the synchronize in flight completed";
  // Once unloaded, a synchronize is a clean error.
  tsr_code code;
  EXPECT_THAT(Consume(tsr_device_synchronize({TSR_DEVICE_PRIVATEUSE3, 0}), &code),
              HasSubstr("no device interface"));
  EXPECT_EQ(code, TSR_FAILED_PRECONDITION);
  close(fds[0]);
  close(fds[1]);
}

// SlowKernelPipes: the two pipes of the slow_kernel plugin's kernel (see slow_kernel in
// plugins/evil_plugin.c), named in its environment variables, and the plugin loaded.
struct SlowKernelPipes {
  int running[2] = {-1, -1};  // the kernel writes 'k' to running[1] when it is inside
  int go[2] = {-1, -1};       // a byte written to go[1] lets it return
  // Open makes the pipes and names them in the kernel's environment variables.
  bool Open() {
    if (pipe(running) != 0 || pipe(go) != 0) return false;
    setenv("EVIL_KERNEL_FD", std::to_string(running[1]).c_str(), 1);
    setenv("EVIL_KERNEL_GO_FD", std::to_string(go[0]).c_str(), 1);
    return true;
  }
  bool Load() {
    return Open() && Consume(tsr_plugin_load(S(PluginPath("slow_kernel")), nullptr)).empty();
  }
  ~SlowKernelPipes() {
    for (int fd : {running[0], running[1], go[0], go[1]}) {
      if (fd >= 0) close(fd);
    }
  }
};

// CallSlowOp calls evil_slow::op (`op`, whose kernel is slow_kernel) on `t` (borrowed): "" or
// the error's message, and the kernel's result in *result.
std::string CallSlowOp(const tsr_op* op, tsr_tensor* t, int64_t* result) {
  tsr_stack* stack = nullptr;
  Consume(tsr_stack_create(&stack));
  Consume(tsr_stack_push_tensor(stack, t));
  std::string error = Consume(tsr_op_call(op, stack));
  if (error.empty()) error = Consume(tsr_stack_get_int(stack, 0, result));
  tsr_stack_release(stack);
  return error;
}

// Kernel calls pass the plugin's gate without counting themselves (Note [Gating kernel calls]
// in plugin_gate.h): an unload racing a kernel still waits for it to return before the plugin
// goes, and the kernel's result reaches its caller. (The boxed trampoline's check; the packed
// and typed trampolines make the same one.)
TEST(EvilPlugin, UnloadWaitsForAKernelInFlight) { RunChild("SlowKernel"); }
TEST(EvilChild, SlowKernel) {
  CHILD_ONLY();
  SlowKernelPipes pipes;
  ASSERT_TRUE(pipes.Load());
  tsr_tensor* t = Floats({1});
  const tsr_op* op = nullptr;
  ASSERT_EQ(Consume(tsr_op_find(S("evil_slow::op"), &op)), "");
  std::string call_error = "not run";
  int64_t result = 0;
  std::thread caller([&] {
    call_error = CallSlowOp(op, t, &result);
    ASSERT_EQ(write(pipes.running[1], "r", 1), 1);  // returned (or failed before the kernel ran)
  });
  char byte = 0;
  ASSERT_EQ(read(pipes.running[0], &byte, 1), 1);
  const bool inside = byte == 'k';  // the kernel is inside the plugin now (else it failed)
  EXPECT_TRUE(inside) << "the call failed before its kernel ran: " << call_error;
  std::atomic<bool> unloaded{false};
  std::string unload_error = "not run";
  std::thread unloader([&] {
    unload_error = Consume(tsr_plugin_unload(S("evil_slow_kernel")));
    unloaded = true;
  });
  if (inside) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_FALSE(unloaded.load()) << "the unload returned while a kernel was still inside";
    ASSERT_EQ(write(pipes.go[1], "g", 1), 1);  // let the kernel return
  }
  caller.join();
  unloader.join();
  EXPECT_EQ(call_error, "") << "the call in flight completed";
  EXPECT_EQ(result, 7) << "with the kernel's result";
  EXPECT_EQ(unload_error, "");
  EXPECT_EQ(FindCode("evil_slow::op"), TSR_NOT_FOUND);
  tsr_tensor_release(t);
}

// Note [Call epochs across fork] in dispatcher/call_epoch.cc: a child forked while
// another thread of the parent is inside an op call has no such thread; its unload must not
// wait for that call.
TEST(EvilPlugin, ForkedChildUnloadsDespiteTheParentsCallInFlight) { RunChild("ForkDuringCall"); }
TEST(EvilChild, ForkDuringCall) {
  CHILD_ONLY();
  SlowKernelPipes pipes;
  ASSERT_TRUE(pipes.Load());
  tsr_tensor* t = Floats({1});
  std::string call_error = "not run";
  std::thread caller([&] { call_error = Call("evil_slow::op", {t}); });
  char byte = 0;
  ASSERT_EQ(read(pipes.running[0], &byte, 1), 1);  // the caller is inside the kernel now
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(20);  // a hang ends as SIGALRM, which the parent reports
    tsr_error* e = tsr_plugin_unload(S("evil_slow_kernel"));
    _exit(e == nullptr ? 0 : 3);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the forked child's unload " << (WIFSIGNALED(status) ? "hung or crashed" : "failed");
  ASSERT_EQ(write(pipes.go[1], "g", 1), 1);
  caller.join();
  EXPECT_EQ(call_error, "");
  tsr_tensor_release(t);
}

// The unload waits for every op call in flight, so from inside one (here an application's
// kernel) or from a parallel task (whose op call may be waiting for it) it would wait for
// itself: both are refused with the reason, and the plugin stays loaded. In a child: a
// regression would hang, not fail.
TEST(EvilPlugin, UnloadFromInsideAnOpCallOrAParallelTaskIsRefused) {
  RunChild("UnloadInside", {"TESSERA_NUM_THREADS=2"});  // a pool worker runs one chunk
}
TEST(EvilChild, UnloadInside) {
  CHILD_ONLY();
  ASSERT_EQ(Consume(tsr_plugin_load(S(PluginPath("slow_kernel")), nullptr)), "");
  ASSERT_EQ(Consume(tsr_op_define(S("app::unload_evil(Tensor x) -> int"), nullptr)), "");
  static std::string inside_call;
  static tsr_code inside_call_code;
  const std::string op_name = "app::unload_evil";
  tsr_kernel_desc desc{};
  desc.struct_size = sizeof desc;
  desc.op_name = S(op_name);
  desc.device_type = TSR_DEVICE_CPU;
  desc.boxed = [](void*, const tsr_op*, tsr_stack* stack) -> tsr_error* {
    inside_call = Consume(tsr_plugin_unload(S("evil_slow_kernel")), &inside_call_code);
    tsr_stack_clear(stack);
    return tsr_stack_push_int(stack, 1);
  };
  desc.kernel_name = S(op_name);
  ASSERT_EQ(Consume(tsr_kernel_register(&desc, nullptr)), "");
  tsr_tensor* t = Floats({1});
  EXPECT_EQ(Call(op_name, {t}), "") << "the kernel's own call succeeds";
  EXPECT_THAT(inside_call, HasSubstr("unload of plugin 'evil_slow_kernel': called from inside an "
                                     "op call (a kernel, or code it called)"));
  EXPECT_EQ(inside_call_code, TSR_FAILED_PRECONDITION);

  // Two chunks on a pool of two: one runs on the pool's worker, the other on this thread (which
  // counts as a parallel task while it runs it).
  ASSERT_EQ(tsr_num_threads(), 2);
  static std::string in_task[2];
  static tsr_code in_task_code[2];
  ASSERT_EQ(Consume(tsr_parallel_for(
                0, 2, 1,
                [](void*, int64_t begin, int64_t end) -> tsr_error* {
                  for (int64_t i = begin; i < end; ++i) {
                    in_task[i] =
                        Consume(tsr_plugin_unload(S("evil_slow_kernel")), &in_task_code[i]);
                  }
                  return nullptr;
                },
                nullptr)),
            "");
  for (int i = 0; i < 2; ++i) {
    EXPECT_THAT(in_task[i], HasSubstr("called from inside a parallel task (tsr_parallel_for)"))
        << "chunk " << i;
    EXPECT_EQ(in_task_code[i], TSR_FAILED_PRECONDITION) << "chunk " << i;
  }
  EXPECT_EQ(FindCode("evil_slow::op"), TSR_OK) << "the plugin is still loaded";
  EXPECT_EQ(Consume(tsr_plugin_unload(S("evil_slow_kernel"))), "") << "from outside, it unloads";
  tsr_tensor_release(t);
}

// Note [Refused after registering] in plugin_loader.cc: a plugin refused after its register_fn
// published a kernel is not unmapped under a call of that kernel on another thread; the refusal
// waits for it, as an unload does, and the call completes with the kernel's result. Before,
// the load returned at once and the kernel went on in unmapped code (the child crashed).
TEST(EvilPlugin, RefusedLoadWaitsForAKernelItPublished) { RunChild("RefusedDuringCall"); }
TEST(EvilChild, RefusedDuringCall) {
  CHILD_ONLY();
  // Default discovery first, so that the caller's tsr_op_find does not start it while the
  // loader holds its lock.
  ASSERT_EQ(Consume(tsr_plugin_load_default()), "");
  SlowKernelPipes pipes;
  ASSERT_TRUE(pipes.Open());
  int refuse[2] = {-1, -1};  // a byte written to refuse[1] lets register_fn fail
  ASSERT_EQ(pipe(refuse), 0);
  setenv("EVIL_REFUSE_FD", std::to_string(refuse[0]).c_str(), 1);
  std::atomic<bool> load_returned{false};
  std::string load_error;
  tsr_code load_code = TSR_OK;
  std::thread loader([&] {
    load_error = Consume(tsr_plugin_load(S(PluginPath("slow_refused")), nullptr), &load_code);
    load_returned = true;
  });
  char byte = 0;
  ASSERT_EQ(read(pipes.running[0], &byte, 1), 1);
  ASSERT_EQ(byte, 'R') << "register_fn registered its kernel and waits";
  const tsr_op* op = nullptr;
  ASSERT_EQ(Consume(tsr_op_find(S("evil_slow::op"), &op)), "") << "published by register_fn";
  tsr_tensor* t = Floats({1});
  std::string call_error = "not run";
  int64_t result = 0;
  std::thread caller([&] { call_error = CallSlowOp(op, t, &result); });
  ASSERT_EQ(read(pipes.running[0], &byte, 1), 1);
  ASSERT_EQ(byte, 'k') << "the published kernel runs on the caller's thread";
  ASSERT_EQ(write(refuse[1], "x", 1), 1);  // register_fn fails now
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(load_returned.load()) << "the refused load returned while its kernel ran";
  ASSERT_EQ(write(pipes.go[1], "g", 1), 1);  // let the kernel return
  caller.join();
  loader.join();
  EXPECT_EQ(call_error, "") << "the call in flight completed";
  EXPECT_EQ(result, 7) << "with the kernel's result";
  EXPECT_THAT(load_error, HasSubstr("register_fn returned an error: INTERNAL: evil_slow_refused: "
                                    "refused on purpose, after registering"));
  EXPECT_EQ(load_code, TSR_INTERNAL);
  EXPECT_EQ(FindCode("evil_slow::op"), TSR_NOT_FOUND) << "the refusal undid the registrations";
  for (int fd : refuse) close(fd);
  tsr_tensor_release(t);
}

// The same refusal from inside an op call (an application's kernel loads the plugin) cannot wait
// for the calls in flight, its own among them: it returns at once, the plugin's code stays
// mapped and its kernel unreachable. In a child: a regression would hang, not fail.
TEST(EvilPlugin, RefusedLoadInsideAnOpCallDoesNotWaitForItself) { RunChild("RefusedInsideCall"); }
TEST(EvilChild, RefusedInsideCall) {
  CHILD_ONLY();
  ASSERT_EQ(Consume(tsr_op_define(S("app::load_refused(Tensor x) -> int"), nullptr)), "");
  static std::string load_error;
  const std::string op_name = "app::load_refused";
  tsr_kernel_desc desc{};
  desc.struct_size = sizeof desc;
  desc.op_name = S(op_name);
  desc.device_type = TSR_DEVICE_CPU;
  desc.boxed = [](void*, const tsr_op*, tsr_stack* stack) -> tsr_error* {
    load_error = Consume(tsr_plugin_load(S(PluginPath("slow_refused")), nullptr));
    tsr_stack_clear(stack);
    return tsr_stack_push_int(stack, 1);
  };
  desc.kernel_name = S(op_name);
  ASSERT_EQ(Consume(tsr_kernel_register(&desc, nullptr)), "");
  tsr_tensor* t = Floats({1});
  EXPECT_EQ(Call(op_name, {t}), "");
  EXPECT_THAT(load_error, HasSubstr("refused on purpose, after registering"));
  EXPECT_EQ(FindCode("evil_slow::op"), TSR_NOT_FOUND);
  // Parked, not closed: the library is still mapped (a dlclose would have unmapped it).
  void* still = dlopen(PluginPath("slow_refused").c_str(), RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(still, nullptr) << "the refused plugin was closed under a possible call";
  if (still != nullptr) dlclose(still);
  // The parked plugin's name is free again: a later load from outside is refused the same way.
  EXPECT_THAT(Consume(tsr_plugin_load(S(PluginPath("slow_refused")), nullptr)),
              HasSubstr("refused on purpose, after registering"));
  tsr_tensor_release(t);
}

// Item 8: a register_fn that looks ops up must not re-enter default discovery, neither when
// default discovery loads it (the application's first tsr_op_find used to hang in
// std::call_once) nor when the application's first call loads it explicitly (absl's deadlock
// detector used to abort).
// PluginDir makes a directory `name` with a link to each of `plugins`, for TESSERA_PLUGIN_PATH.
std::string PluginDir(const std::string& name, const std::vector<std::string>& plugins) {
  const std::string dir = ::testing::TempDir() + "/" + name;
  mkdir(dir.c_str(), 0755);
  for (const std::string& plugin : plugins) {
    const std::string link = dir + "/" + plugin.substr(plugin.rfind('/') + 1);
    std::remove(link.c_str());
    EXPECT_EQ(symlink(plugin.c_str(), link.c_str()), 0) << link << ": " << strerror(errno);
  }
  return dir;
}

TEST(EvilPlugin, DefaultDiscoveryLoadsAPluginThatLooksUpOps) {
  const std::string dir = PluginDir("evil_op_find_plugins", {PluginPath("op_find")});
  RunChild("OpFindUnderDefaultDiscovery", {"TESSERA_PLUGIN_PATH=" + dir});
}
TEST(EvilChild, OpFindUnderDefaultDiscovery) {
  CHILD_ONLY();
  EXPECT_EQ(FindCode("evil_find::op"), TSR_OK);
  const tsr_load_report* const* reports = nullptr;
  size_t count = 0;
  tsr_load_reports(&reports, &count);
  bool loaded = false;
  for (size_t i = 0; i < count; ++i) {
    if (Str(reports[i]->plugin_name) == "evil_op_find") loaded = reports[i]->loaded;
  }
  EXPECT_TRUE(loaded);
}

TEST(EvilPlugin, FirstCallLoadsAPluginThatLooksUpOps) {
  // Default discovery must find a plugin for the explicit load to re-enter the loader: any
  // plugin will do (this one is then refused, its device type being taken).
  const std::string dir = PluginDir(
      "evil_other_plugins", {std::string(TESSERA_TEST_PLUGIN_DIR) + "/libtsr_test_plugin_good.so"});
  RunChild("OpFindAsFirstCall", {"TESSERA_PLUGIN_PATH=" + dir});
}
TEST(EvilChild, OpFindAsFirstCall) {
  CHILD_ONLY();
  ASSERT_EQ(Consume(tsr_plugin_load(S(PluginPath("op_find")), nullptr)), "");
  EXPECT_EQ(FindCode("evil_find::op"), TSR_OK);
}

// A plugin whose own code loads, unloads or discovers plugins while it is being loaded (from its
// constructor, which dlopen runs, from tsr_plugin_init and from register_fn, through the
// exported functions) gets FAILED_PRECONDITION
// naming it, and its load goes on: the loader's lock, held by the loading thread, made Abseil's
// deadlock detector end the process (Note [Loads do not nest] in runtime/plugin_loader.cc). The
// plugin checks each answer itself and refuses its load with the first wrong one.
TEST(EvilPlugin, NestedLoadsFromPluginCodeAreRefusedByName) {
  // A real plugin for the nested load to try, so that a refusal is the runtime's and not a
  // missing file's.
  RunChild("NestedLoadByPath", {"EVIL_NESTED_OTHER=" + PluginPath("device")});
}
TEST(EvilChild, NestedLoadByPath) {
  CHILD_ONLY();
  const tsr_load_report* report = nullptr;
  ASSERT_EQ(Consume(tsr_plugin_load(S(PluginPath("nested_load")), &report)), "");
  ASSERT_NE(report, nullptr);
  EXPECT_TRUE(report->loaded);
  EXPECT_EQ(FindCode("evil_nested::op"), TSR_OK);
  // The loader is whole afterwards: unload and load again from the application.
  EXPECT_EQ(Consume(tsr_plugin_unload(S("evil_nested_load"))), "");
  EXPECT_EQ(Consume(tsr_plugin_load(S(PluginPath("nested_load")), nullptr)), "");
}

TEST(EvilPlugin, NestedLoadsUnderDefaultDiscoveryAreRefusedByName) {
  const std::string dir = PluginDir("evil_nested_plugins", {PluginPath("nested_load")});
  RunChild("NestedLoadUnderDiscovery",
           {"TESSERA_PLUGIN_PATH=" + dir, "EVIL_NESTED_OTHER=" + PluginPath("device")});
}
TEST(EvilChild, NestedLoadUnderDiscovery) {
  CHILD_ONLY();
  EXPECT_EQ(FindCode("evil_nested::op"), TSR_OK);  // discovery loaded it
  const tsr_load_report* const* reports = nullptr;
  size_t count = 0;
  tsr_load_reports(&reports, &count);
  std::string reason = "no report for evil_nested_load";
  for (size_t i = 0; i < count; ++i) {
    if (Str(reports[i]->plugin_name) == "evil_nested_load") {
      reason = reports[i]->loaded ? "" : Str(reports[i]->reason);
    }
  }
  EXPECT_EQ(reason, "");
}

namespace {

// ExpectRefused loads `variant` and expects the refusal `code` whose message and load report
// contain every one of `reasons`.
void ExpectRefused(const std::string& variant, tsr_code code,
                   const std::vector<std::string>& reasons) {
  const tsr_load_report* report = nullptr;
  tsr_code got;
  const std::string error = Consume(tsr_plugin_load(S(PluginPath(variant)), &report), &got);
  ASSERT_NE(report, nullptr);
  std::string text(tsr_load_report_format(report, nullptr, 0), '\0');
  tsr_load_report_format(report, text.data(), text.size() + 1);
  std::cout << text;
  EXPECT_EQ(got, code) << error;
  EXPECT_FALSE(report->loaded);
  EXPECT_EQ(report->code, code);
  EXPECT_EQ(report->kernels_registered, 0) << "a refused plugin leaves no kernel behind";
  for (const std::string& reason : reasons) {
    EXPECT_THAT(error, HasSubstr(reason));
    EXPECT_THAT(Str(report->reason), HasSubstr(reason));
  }
}

}  // namespace

// Item 12: a plugin registers kernels for its own device type and for ops it defines, and a
// device interface and fallbacks for its own device type only. Anything else refuses the
// whole plugin, with the registration named in its load report, even when register_fn ignores
// the error it got; what it registered before is rolled back.
TEST(EvilPlugin, KernelForAnotherDeviceTypeRefusesThePlugin) { RunChild("ForeignKernel"); }
TEST(EvilChild, ForeignKernel) {
  CHILD_ONLY();
  ExpectRefused("foreign_kernel", TSR_PERMISSION_DENIED,
                {"plugin 'evil_foreign_kernel' (device type evildev) may not register a kernel "
                 "for abs.out on cpu",
                 "only for its own device type, or for ops it defines"});
  // CPU abs.out is not the plugin's: it is unimplemented here (no CPU plugin is loaded) or
  // right, never 42.
  tsr_tensor* self = Floats({-1, 2});
  tsr_tensor* out = Floats({0, 0});
  if (Call("abs.out", {self, out}).empty()) {
    float values[2] = {};
    ASSERT_EQ(Consume(tsr_tensor_copy_to_host(out, values, sizeof values)), "");
    EXPECT_EQ(values[0], 1.0f);
    EXPECT_EQ(values[1], 2.0f);
  }
  tsr_tensor_release(self);
  tsr_tensor_release(out);
}

TEST(EvilPlugin, DeviceOfAnotherDeviceTypeRefusesThePlugin) { RunChild("ForeignDevice"); }
TEST(EvilChild, ForeignDevice) {
  CHILD_ONLY();
  ExpectRefused("foreign_device", TSR_PERMISSION_DENIED,
                {"plugin 'evil_foreign_device' (device type evildev) may not register a device "
                 "interface for cuda"});
  int32_t count = -1;
  ASSERT_EQ(Consume(tsr_device_count(TSR_DEVICE_CUDA, &count)), "");
  EXPECT_EQ(count, 0);
}

TEST(EvilPlugin, FallbackForAnotherDeviceTypeRefusesThePlugin) { RunChild("ForeignFallback"); }
TEST(EvilChild, ForeignFallback) {
  CHILD_ONLY();
  ExpectRefused("foreign_fallback", TSR_PERMISSION_DENIED,
                {"plugin 'evil_foreign_fallback' (device type evildev) may not register the cpu "
                 "fallback for cuda"});
}

// Item 17: a kernel's results are checked against the op's Meta function (Note [Kernel
// results]): an exp kernel that returns its input is an INTERNAL error naming it and its plugin.
TEST(EvilPlugin, AKernelReturningItsInputIsAnError) { RunChild("BadResults"); }
TEST(EvilChild, BadResults) {
  CHILD_ONLY();
  ASSERT_EQ(Consume(tsr_plugin_load(S(PluginPath("bad_results")), nullptr)), "");
  const int64_t size = 2;
  tsr_tensor* t = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty(&size, 1, TSR_DTYPE_FLOAT32, {TSR_DEVICE_PRIVATEUSE3, 0}, &t)),
            "");
  tsr_code code;
  EXPECT_THAT(Call("exp", {t}, &code),
              HasSubstr("exp: kernel 'exp' (plugin 'evil_bad_results') left its argument 'self' "
                        "as result 0, expected a new tensor"));
  EXPECT_EQ(code, TSR_INTERNAL);
  tsr_tensor_release(t);
}

// Item 6: host memory that a plugin's kernel wraps with its own deleter keeps the plugin
// loaded (its code mapped) until the deleter has run, as device memory does.
TEST(EvilPlugin, HostMemoryWithAPluginDeleterKeepsThePluginLoaded) { RunChild("HostDeleter"); }
TEST(EvilChild, HostDeleter) {
  CHILD_ONLY();
  ASSERT_EQ(Consume(tsr_plugin_load(S(PluginPath("host_deleter")), nullptr)), "");
  tsr_tensor* self = Floats({1});
  tsr_tensor* made = nullptr;
  ASSERT_EQ(Call("evil_host::make", {self}, nullptr, &made), "");
  tsr_tensor_release(self);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(Consume(tsr_plugin_unload(S("evil_host_deleter"))), "");
  EXPECT_THAT(::testing::internal::GetCapturedStderr(),
              ::testing::Not(HasSubstr("evil plugin unloaded")))
      << "the plugin's memory is still alive";
  EXPECT_EQ(FindCode("evil_host::make"), TSR_NOT_FOUND);
  float values[4] = {};
  ASSERT_EQ(Consume(tsr_tensor_copy_to_host(made, values, sizeof values)), "");
  EXPECT_EQ(values[3], 7.0f);
  ::testing::internal::CaptureStderr();
  tsr_tensor_release(made);  // runs the plugin's deleter, then unloads it
  EXPECT_THAT(::testing::internal::GetCapturedStderr(), HasSubstr("evil plugin unloaded"));
}

// Item 5: a plugin registers only from its register_fn, on the loading thread (its
// registration window). Registering from tsr_plugin_init, before the version handshake,
// refuses the plugin; registering later (from a kernel, from a helper thread) is refused with
// an error naming the plugin's file, and nothing is registered.
TEST(EvilPlugin, RegisteringBeforeTheHandshakeRefusesThePlugin) { RunChild("InitRegisters"); }
TEST(EvilChild, InitRegisters) {
  CHILD_ONLY();
  ExpectRefused("init_registers", TSR_FAILED_PRECONDITION,
                {"tsr_plugin_init called op_define before the version handshake",
                 "a plugin registers only from its register_fn"});
  EXPECT_EQ(FindCode("evil_late::op"), TSR_NOT_FOUND);
}

TEST(EvilPlugin, RegisteringFromAKernelIsRefused) { RunChild("LazyRegister"); }
TEST(EvilChild, LazyRegister) {
  CHILD_ONLY();
  ASSERT_EQ(Consume(tsr_plugin_load(S(PluginPath("lazy_register")), nullptr)), "");
  tsr_tensor* self = Floats({1});
  tsr_code code;
  const std::string error = Call("evil_lazy::op", {self}, &code);
  EXPECT_EQ(code, TSR_FAILED_PRECONDITION);
  EXPECT_THAT(error, HasSubstr("libtsr_evil_plugin_lazy_register.so called op_define outside "
                               "its registration window"));
  tsr_tensor_release(self);
  EXPECT_EQ(FindCode("evil_late::op"), TSR_NOT_FOUND);
  EXPECT_EQ(Consume(tsr_plugin_unload(S("evil_lazy_register"))), "");
}

TEST(EvilPlugin, RegisteringFromAHelperThreadIsRefused) { RunChild("ThreadRegister"); }
TEST(EvilChild, ThreadRegister) {
  CHILD_ONLY();
  const tsr_load_report* report = nullptr;
  ASSERT_EQ(Consume(tsr_plugin_load(S(PluginPath("thread_register")), &report)), "");
  EXPECT_EQ(report->kernels_registered, 0);
  EXPECT_EQ(FindCode("evil_late::op"), TSR_NOT_FOUND);
}

// Section C.

namespace {

// EvilDevice is the device every variant provides (privateuse3, renamed "evildev").
constexpr tsr_device kEvilDevice = {TSR_DEVICE_PRIVATEUSE3, 0};

}  // namespace

// Item 18: a device allocate that returns success with NULL for a non-zero size is an error
// naming the plugin and the size; NULL never reaches the device's copy functions.
TEST(EvilPlugin, AllocateThatReturnsNullIsAnError) { RunChild("NullAlloc"); }
TEST(EvilChild, NullAlloc) {
  CHILD_ONLY();
  ASSERT_EQ(Consume(tsr_plugin_load(S(PluginPath("null_alloc")), nullptr)), "");
  const int64_t size = 4;
  tsr_tensor* t = nullptr;
  tsr_code code;
  const std::string error =
      Consume(tsr_tensor_empty(&size, 1, TSR_DTYPE_FLOAT32, kEvilDevice, &t), &code);
  EXPECT_EQ(code, TSR_INTERNAL);
  EXPECT_THAT(error, HasSubstr("allocating 16 bytes on evildev:0: plugin 'evil_null_alloc'"));
  EXPECT_THAT(error, HasSubstr("allocate returned success with a NULL pointer"));
  EXPECT_EQ(t, nullptr);
  // An empty tensor needs no memory: NULL is fine there.
  const int64_t zero = 0;
  EXPECT_EQ(Consume(tsr_tensor_empty(&zero, 1, TSR_DTYPE_FLOAT32, kEvilDevice, &t)), "");
  tsr_tensor_release(t);
}

// Item 19: every tsr_stack_get_* refuses a NULL output pointer with INVALID_ARGUMENT, as the
// rest of the ABI does.
TEST(EvilPlugin, StackGettersRefuseNullOutputs) { RunChild("StackGetNull"); }
TEST(EvilChild, StackGetNull) {
  CHILD_ONLY();
  tsr_stack* stack = nullptr;
  ASSERT_EQ(Consume(tsr_stack_create(&stack)), "");
  tsr_tensor* t = Floats({1});
  const int64_t ints[] = {1, 2};
  const double doubles[] = {1.5};
  ASSERT_EQ(Consume(tsr_stack_push_tensor(stack, t)), "");                // 0
  ASSERT_EQ(Consume(tsr_stack_push_int(stack, 3)), "");                   // 1
  ASSERT_EQ(Consume(tsr_stack_push_double(stack, 2.5)), "");              // 2
  ASSERT_EQ(Consume(tsr_stack_push_bool(stack, 1)), "");                  // 3
  ASSERT_EQ(Consume(tsr_stack_push_string(stack, S("s"))), "");           // 4
  ASSERT_EQ(Consume(tsr_stack_push_int_list(stack, ints, 2)), "");        // 5
  ASSERT_EQ(Consume(tsr_stack_push_double_list(stack, doubles, 1)), "");  // 6
  ASSERT_EQ(Consume(tsr_stack_push_tensor_list(stack, &t, 1)), "");       // 7
  tsr_scalar scalar = {};
  scalar.kind = TSR_SCALAR_INT;
  scalar.i = 4;
  ASSERT_EQ(Consume(tsr_stack_push_scalar(stack, scalar)), "");               // 8
  ASSERT_EQ(Consume(tsr_stack_push_dtype(stack, TSR_DTYPE_FLOAT32)), "");     // 9
  ASSERT_EQ(Consume(tsr_stack_push_device(stack, {TSR_DEVICE_CPU, 0})), "");  // 10
  size_t n = 0;
  const int64_t* int_values = nullptr;
  const double* double_values = nullptr;
  tsr_tensor* const* tensors = nullptr;
  struct Case {
    const char* fn;
    tsr_error* error;
  };
  const Case cases[] = {
      {"tsr_stack_get_tensor", tsr_stack_get_tensor(stack, 0, nullptr)},
      {"tsr_stack_get_int", tsr_stack_get_int(stack, 1, nullptr)},
      {"tsr_stack_get_double", tsr_stack_get_double(stack, 2, nullptr)},
      {"tsr_stack_get_bool", tsr_stack_get_bool(stack, 3, nullptr)},
      {"tsr_stack_get_string", tsr_stack_get_string(stack, 4, nullptr)},
      {"tsr_stack_get_int_list", tsr_stack_get_int_list(stack, 5, nullptr, &n)},
      {"tsr_stack_get_int_list", tsr_stack_get_int_list(stack, 5, &int_values, nullptr)},
      {"tsr_stack_get_double_list", tsr_stack_get_double_list(stack, 6, nullptr, &n)},
      {"tsr_stack_get_double_list", tsr_stack_get_double_list(stack, 6, &double_values, nullptr)},
      {"tsr_stack_get_tensor_list", tsr_stack_get_tensor_list(stack, 7, nullptr, &n)},
      {"tsr_stack_get_tensor_list", tsr_stack_get_tensor_list(stack, 7, &tensors, nullptr)},
      {"tsr_stack_get_scalar", tsr_stack_get_scalar(stack, 8, nullptr)},
      {"tsr_stack_get_dtype", tsr_stack_get_dtype(stack, 9, nullptr)},
      {"tsr_stack_get_device", tsr_stack_get_device(stack, 10, nullptr)},
  };
  for (const Case& c : cases) {
    tsr_code code;
    const std::string error = Consume(c.error, &code);
    EXPECT_EQ(code, TSR_INVALID_ARGUMENT) << c.fn;
    EXPECT_THAT(error, HasSubstr(std::string(c.fn) + ": expected")) << c.fn;
    EXPECT_THAT(error, HasSubstr("got NULL")) << c.fn;
  }
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(int_values, nullptr);
  tsr_stack_release(stack);
  tsr_tensor_release(t);
}

// Item 19: a descriptor string whose size lies (longer than any name could be) is refused
// with a load report, not a bad_alloc (or a read far past the string).
TEST(EvilPlugin, DescriptorNameWithALyingSizeIsRefused) {
  RunChild("LyingString", {"EVIL_LIE=name"});
}
TEST(EvilPlugin, DescriptorVersionWithALyingSizeIsRefused) {
  RunChild("LyingString", {"EVIL_LIE=version"});
}
TEST(EvilPlugin, DescriptorDeviceNameWithALyingSizeIsRefused) {
  RunChild("LyingString", {"EVIL_LIE=device_name"});
}
TEST(EvilChild, LyingString) {
  CHILD_ONLY();
  const std::string field = std::getenv("EVIL_LIE");
  const std::string size = field == "name"      ? std::to_string(SIZE_MAX)
                           : field == "version" ? std::to_string(size_t{1} << 40)
                                                : "4097";
  ExpectRefused(
      "lying_string", TSR_INVALID_ARGUMENT,
      {"the plugin descriptor's " + field + " is " + size + " bytes long; expected at most 256"});
}

// Item 16: a device may report at most TSR's device cap (1024) devices; more refuses the
// plugin with a load report instead of making the runtime allocate per-device state for each.
TEST(EvilPlugin, DeviceCountAboveTheCapRefusesThePlugin) { RunChild("ManyDevices"); }
TEST(EvilChild, ManyDevices) {
  CHILD_ONLY();
  ExpectRefused("many_devices", TSR_INVALID_ARGUMENT,
                {"plugin 'evil_many_devices': device_count reported 2147483647 evildev devices; "
                 "expected at most 1024"});
  int32_t count = -1;
  ASSERT_EQ(Consume(tsr_device_count(TSR_DEVICE_PRIVATEUSE3, &count)), "");
  EXPECT_EQ(count, 0);
}

// Item 13: device tensors belong to the plugin instance that allocated them. Once that plugin
// is unloaded, its tensors give a clean error naming the device and the unloaded plugin, also
// when another plugin (or the same one, reloaded) now provides the device type: the new
// plugin's functions never see the old plugin's memory.
TEST(EvilPlugin, TensorsOfAnUnloadedPluginNeverReachTheNextPlugin) { RunChild("ReplacedDevice"); }
TEST(EvilChild, ReplacedDevice) {
  CHILD_ONLY();
  ASSERT_EQ(Consume(tsr_plugin_load(S(PluginPath("device")), nullptr)), "");
  const int64_t size = 2;
  tsr_tensor* t = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty(&size, 1, TSR_DTYPE_FLOAT32, kEvilDevice, &t)), "");
  const float in[2] = {1, 2};
  ASSERT_EQ(Consume(tsr_tensor_copy_from_host(t, in, sizeof in)), "");
  EXPECT_EQ(Consume(tsr_plugin_unload(S("evil_device"))), "");
  const std::string unloaded =
      "evildev:0 tensor belongs to plugin 'evil_device', which was unloaded";
  float out[2] = {};
  tsr_code code;
  EXPECT_THAT(Consume(tsr_tensor_copy_to_host(t, out, sizeof out), &code), HasSubstr(unloaded));
  EXPECT_EQ(code, TSR_FAILED_PRECONDITION);

  ASSERT_EQ(Consume(tsr_plugin_load(S(PluginPath("device_b")), nullptr)), "");
  std::string error = Consume(tsr_tensor_copy_to_host(t, out, sizeof out), &code);
  EXPECT_THAT(error, HasSubstr(unloaded));
  EXPECT_THAT(error, ::testing::Not(HasSubstr("evil_device_b")));
  EXPECT_EQ(code, TSR_FAILED_PRECONDITION);
  error = Consume(tsr_tensor_copy_from_host(t, in, sizeof in), &code);
  EXPECT_THAT(error, HasSubstr(unloaded));
  EXPECT_EQ(code, TSR_FAILED_PRECONDITION);
  // Nor do the new plugin's kernels get it.
  error = Call("abs", {t}, &code);
  EXPECT_THAT(error, HasSubstr("abs: argument 0 of kernel 'abs': the " + unloaded));
  EXPECT_EQ(code, TSR_FAILED_PRECONDITION);
  // Its own tensors do reach it.
  tsr_tensor* fresh = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty(&size, 1, TSR_DTYPE_FLOAT32, kEvilDevice, &fresh)), "");
  EXPECT_THAT(Call("abs", {fresh}, &code), HasSubstr("evil_device_b: a kernel got memory"));
  tsr_tensor_release(fresh);
  EXPECT_EQ(Consume(tsr_plugin_unload(S("evil_device_b"))), "");

  // The same plugin reloaded is a new instance: the old tensor is still not its.
  ASSERT_EQ(Consume(tsr_plugin_load(S(PluginPath("device")), nullptr)), "");
  error = Consume(tsr_tensor_copy_to_host(t, out, sizeof out), &code);
  EXPECT_THAT(error, HasSubstr(unloaded));
  EXPECT_EQ(code, TSR_FAILED_PRECONDITION);
  tsr_tensor_release(t);  // freed by the old instance's free, its code still mapped
}

// Item 14: an op defined by several plugins lives until the last of them unloads; once no
// loaded plugin defines it, a plugin reloaded with a new schema for it loads, and then a plugin
// with the old schema is refused (Note [Op definitions are reference-counted]).
TEST(EvilPlugin, AnOpDefinedByTwoPluginsLivesUntilBothUnload) { RunChild("SharedOp"); }
TEST(EvilChild, SharedOp) {
  CHILD_ONLY();
  auto schema = [] {
    const tsr_op* op = nullptr;
    if (!Consume(tsr_op_find(S("evil_shared::op"), &op)).empty()) return std::string("(none)");
    return Str(tsr_op_schema(op));
  };
  const std::string v1 = "evil_shared::op(Tensor self) -> Tensor";
  const std::string v2 = "evil_shared::op(Tensor self, int n=1) -> Tensor";
  ASSERT_EQ(Consume(tsr_plugin_load(S(PluginPath("shared_op")), nullptr)), "");
  ASSERT_EQ(Consume(tsr_plugin_load(S(PluginPath("shared_op_twin")), nullptr)), "");
  EXPECT_EQ(Consume(tsr_plugin_unload(S("evil_shared_op"))), "");
  EXPECT_EQ(schema(), v1) << "the twin still defines it";
  EXPECT_EQ(Consume(tsr_plugin_unload(S("evil_shared_op_twin"))), "");
  EXPECT_EQ(FindCode("evil_shared::op"), TSR_NOT_FOUND) << "no plugin defines it any more";

  ASSERT_EQ(setenv("EVIL_SCHEMA_V2", "1", 1), 0);
  ASSERT_EQ(Consume(tsr_plugin_load(S(PluginPath("shared_op")), nullptr)), "")
      << "a new version of the plugin with a new schema for its op";
  EXPECT_EQ(schema(), v2);
  ASSERT_EQ(unsetenv("EVIL_SCHEMA_V2"), 0);
  const tsr_load_report* report = nullptr;
  tsr_code code;
  const std::string error =
      Consume(tsr_plugin_load(S(PluginPath("shared_op_twin")), &report), &code);
  EXPECT_EQ(code, TSR_ALREADY_EXISTS);
  EXPECT_THAT(error, HasSubstr("op 'evil_shared::op' is already defined with a different schema "
                               "(1 live definition(s))"));
  ASSERT_NE(report, nullptr);
  EXPECT_FALSE(report->loaded);
  EXPECT_EQ(schema(), v2);
}
