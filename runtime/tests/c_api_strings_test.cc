// Strings a caller passes through the C ABI (tsr_string: a pointer and a size) whose size is
// wrong: every entry point that reads one refuses a size beyond 1 MiB before reading a byte of
// it, with an error naming the function, the string and both sizes. Found by the plugin_desc
// fuzz target: a plugin's tsr_error_create with a size of 2^40 asked for a terabyte, a name of
// that size was hashed far past its text.
#include <cstdint>
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
using ::testing::StartsWith;

constexpr size_t kMax = size_t{1} << 20;  // the runtime's limit (runtime/handles.h)

// A short text whose size says otherwise: SIZE_MAX, 2^40, or one byte past the limit.
std::vector<tsr_string> WrongSizes() {
  static const char kText[] = "relu";
  return {tsr_string{kText, SIZE_MAX}, tsr_string{kText, size_t{1} << 40},
          tsr_string{kText, kMax + 1}};
}

// "3: fn: what is N bytes long; expected at most 1048576 (...)": INVALID_ARGUMENT, both sizes.
std::string Refusal(const std::string& fn, const std::string& what, size_t size) {
  return std::to_string(TSR_INVALID_ARGUMENT) + ": " + fn + ": " + what + " is " +
         std::to_string(size) + " bytes long; expected at most " + std::to_string(kMax);
}

tsr_error* NoopKernel(void*, const tsr_op*, tsr_stack*) { return nullptr; }

TEST(CApiStrings, WrongSizesAreRefusedBeforeAnyByteIsRead) {
  const tsr_op* relu = nullptr;
  ASSERT_EQ(Consume(tsr_op_find(S("relu"), &relu)), "");
  tsr_stack* stack = nullptr;
  ASSERT_EQ(Consume(tsr_stack_create(&stack)), "");
  for (const tsr_string lie : WrongSizes()) {
    SCOPED_TRACE(lie.size);
    const tsr_op* op = nullptr;
    EXPECT_THAT(Consume(tsr_op_find(lie, &op)),
                StartsWith(Refusal("tsr_op_find", "the op name", lie.size)));
    EXPECT_EQ(op, nullptr);
    tsr_registration* reg = nullptr;
    EXPECT_THAT(Consume(tsr_op_define(lie, &reg)),
                StartsWith(Refusal("tsr_op_define", "the schema", lie.size)));
    EXPECT_EQ(reg, nullptr);
    EXPECT_THAT(Consume(tsr_op_deprecate(relu, lie, S("2.0"))),
                StartsWith(Refusal("tsr_op_deprecate", "replacement", lie.size)));
    EXPECT_THAT(Consume(tsr_op_deprecate(relu, S("gelu"), lie)),
                StartsWith(Refusal("tsr_op_deprecate", "removed_in", lie.size)));
    EXPECT_THAT(Consume(tsr_stack_name_next(stack, lie)),
                StartsWith(Refusal("tsr_stack_name_next", "the argument name", lie.size)));
    EXPECT_THAT(Consume(tsr_stack_push_string(stack, lie)),
                HasSubstr("expected a string of at most 1048576 bytes, got a size of " +
                          std::to_string(lie.size)));
    EXPECT_EQ(tsr_stack_size(stack), 0u) << "nothing was pushed";
    const tsr_load_report* report = nullptr;
    EXPECT_THAT(Consume(tsr_plugin_load(lie, &report)),
                StartsWith(Refusal("tsr_plugin_load", "the path", lie.size)));
    EXPECT_THAT(Consume(tsr_plugin_unload(lie)),
                StartsWith(Refusal("tsr_plugin_unload", "the plugin name", lie.size)));
    tsr_kernel_info info = {};
    info.struct_size = sizeof info;
    size_t count = 0;
    EXPECT_THAT(Consume(tsr_plugin_kernels(lie, &info, 1, &count)),
                StartsWith(Refusal("tsr_plugin_kernels", "the plugin name", lie.size)));
    EXPECT_THAT(Consume(tsr_device_rename(TSR_DEVICE_PRIVATEUSE3, lie)),
                StartsWith(Refusal("tsr_device_rename", "the name", lie.size)));
    tsr_device device{};
    EXPECT_THAT(Consume(tsr_device_parse(lie, &device)),
                StartsWith(Refusal("tsr_device_parse", "the text", lie.size)));
    EXPECT_EQ(tsr_fallback_count(lie), 0) << "no op has such a name";
    EXPECT_THAT(
        Consume(tsr_fallback_register(TSR_DEVICE_PRIVATEUSE3, &NoopKernel, nullptr, lie, &reg)),
        StartsWith(Refusal("tsr_fallback_register", "the kernel's name", lie.size)));
    EXPECT_EQ(reg, nullptr);

    // Each string of a kernel's description.
    for (int field = 0; field < 3; ++field) {
      tsr_kernel_desc desc = {};
      desc.struct_size = sizeof desc;
      desc.op_name = field == 0 ? lie : S("relu");
      desc.device_type = TSR_DEVICE_PRIVATEUSE3;
      desc.boxed = &NoopKernel;
      desc.kernel_name = field == 1 ? lie : S("test::relu");
      desc.schema = field == 2 ? lie : tsr_string{nullptr, 0};
      const char* what[] = {"desc->op_name", "desc->kernel_name", "desc->schema"};
      EXPECT_THAT(Consume(tsr_kernel_register(&desc, &reg)),
                  StartsWith(Refusal("tsr_kernel_register", what[field], lie.size)));
      EXPECT_EQ(reg, nullptr);
    }

    // An error made with a message of a wrong size keeps its code and says so.
    tsr_error* error = tsr_error_create(TSR_NOT_FOUND, lie);
    EXPECT_EQ(tsr_error_code(error), TSR_NOT_FOUND);
    const tsr_string message = tsr_error_message(error);
    EXPECT_THAT(std::string(message.data, message.size),
                StartsWith("tsr_error_create: the message is " + std::to_string(lie.size) +
                           " bytes long; expected at most 1048576 (a wrong size? nothing of it "
                           "was read)"));
    tsr_error_release(error);

    // A log line of a wrong size prints what was wrong instead.
    testing::internal::CaptureStderr();
    tsr_runtime_api_get()->log(TSR_LOG_ERROR, lie);
    EXPECT_THAT(testing::internal::GetCapturedStderr(),
                HasSubstr("log: the message is " + std::to_string(lie.size) + " bytes long"));
  }
  tsr_stack_release(stack);
}

TEST(CApiStrings, StringsUpToTheLimitAreRead) {
  // 1 MiB exactly is a string like any other: this name is read (and is no op's).
  const std::string longest(kMax, 'x');
  const tsr_op* op = nullptr;
  EXPECT_THAT(Consume(tsr_op_find(tsr_string{longest.data(), longest.size()}, &op)),
              StartsWith(std::to_string(TSR_NOT_FOUND) + ": "));
  tsr_error* error = tsr_error_create(TSR_INTERNAL, tsr_string{longest.data(), longest.size()});
  EXPECT_EQ(tsr_error_message(error).size, kMax);
  tsr_error_release(error);
  // NULL data is the empty string, whatever its size (the size is not used).
  error = tsr_error_create(TSR_INTERNAL, tsr_string{nullptr, SIZE_MAX});
  EXPECT_EQ(tsr_error_message(error).size, 0u);
  tsr_error_release(error);
}

}  // namespace
