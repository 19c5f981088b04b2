#include "core/device.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using ::testing::HasSubstr;

TEST(Device, ParsesAndPrintsTypeAndIndex) {
  DeviceNames names;
  EXPECT_EQ(*names.Parse("cpu"), Device(DeviceType::kCPU, 0));
  EXPECT_EQ(*names.Parse("cuda:1"), Device(DeviceType::kCUDA, 1));
  EXPECT_EQ(*names.Parse("hip"), Device(DeviceType::kHIP, 0));
  EXPECT_EQ(*names.Parse("meta"), Device(DeviceType::kMeta, 0));
  EXPECT_EQ(*names.Parse("privateuseone:3"), Device(DeviceType::kPrivateUse1, 3));
  EXPECT_EQ(names.ToString(Device(DeviceType::kCUDA, 1)), "cuda:1");
  EXPECT_EQ(names.ToString(Device(DeviceType::kCPU)), "cpu");
  EXPECT_EQ(names.ToString(Device(DeviceType::kPrivateUse2, 0)), "privateusetwo:0");
}

TEST(Device, RejectsMalformedStrings) {
  DeviceNames names;
  for (const char* bad :
       {"cuda:", "cuda:-1", "cuda:+1", "cuda:x", "cuda:1:2", "cuda:99999999999"}) {
    absl::StatusOr<Device> d = names.Parse(bad);
    ASSERT_FALSE(d.ok()) << bad;
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(d.status().message(), HasSubstr("type:index")) << bad;
  }
  absl::StatusOr<Device> d = names.Parse("tpu:0");
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.status().message(), HasSubstr("unknown device type 'tpu'"));
  EXPECT_THAT(d.status().message(), HasSubstr("cpu, cuda, hip"));
}

TEST(Device, RenamedPrivateUseParsesAndPrintsUnderItsNewName) {
  DeviceNames names;
  ASSERT_TRUE(names.Rename(DeviceType::kPrivateUse1, "npu").ok());
  EXPECT_EQ(*names.Parse("npu:2"), Device(DeviceType::kPrivateUse1, 2));
  EXPECT_EQ(*names.Parse("privateuseone:2"), Device(DeviceType::kPrivateUse1, 2));
  EXPECT_EQ(names.ToString(Device(DeviceType::kPrivateUse1, 2)), "npu:2");
  EXPECT_TRUE(names.Rename(DeviceType::kPrivateUse1, "npu").ok()) << "same name again is a no-op";
}

// The manifest and tessera-plugin-info number the PrivateUse types; a device string with those
// names parses too, renamed or not, and no other type may take them.
TEST(Device, NumberedPrivateUseNamesParse) {
  DeviceNames names;
  EXPECT_EQ(*names.Parse("privateuse1"), Device(DeviceType::kPrivateUse1, 0));
  EXPECT_EQ(*names.Parse("privateuse3:4"), Device(DeviceType::kPrivateUse3, 4));
  ASSERT_TRUE(names.Rename(DeviceType::kPrivateUse2, "edev").ok());
  EXPECT_EQ(*names.Parse("privateuse2:1"), Device(DeviceType::kPrivateUse2, 1));
  EXPECT_EQ(names.ToString(Device(DeviceType::kPrivateUse2, 1)), "edev:1");
  EXPECT_EQ(names.Rename(DeviceType::kPrivateUse1, "privateuse3").code(),
            absl::StatusCode::kAlreadyExists);
  // A type's own reserved names rename nothing (a plugin naming its device "privateuse1" loads
  // as before these names were reserved), and a real rename may follow.
  EXPECT_TRUE(names.Rename(DeviceType::kPrivateUse1, "privateuse1").ok());
  EXPECT_TRUE(names.Rename(DeviceType::kPrivateUse1, "privateuseone").ok());
  EXPECT_EQ(names.ToString(Device(DeviceType::kPrivateUse1, 0)), "privateuseone:0");
  EXPECT_TRUE(names.Rename(DeviceType::kPrivateUse1, "npu").ok());
  EXPECT_EQ(names.ToString(Device(DeviceType::kPrivateUse1, 0)), "npu:0");
  absl::StatusOr<Device> d = names.Parse("privateuse4");
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.status().message(), HasSubstr("privateuse1..3 name the PrivateUse types too"));
}

TEST(Device, RenameConflictsAreErrors) {
  DeviceNames names;
  ASSERT_TRUE(names.Rename(DeviceType::kPrivateUse1, "npu").ok());
  absl::Status second = names.Rename(DeviceType::kPrivateUse1, "xpu");
  EXPECT_EQ(second.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(second.message(), HasSubstr("already named 'npu'"));
  EXPECT_THAT(second.message(), HasSubstr("'xpu'"));
  EXPECT_EQ(names.Rename(DeviceType::kPrivateUse2, "npu").code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(names.Rename(DeviceType::kPrivateUse2, "cuda").code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(names.Rename(DeviceType::kPrivateUse2, "privateusethree").code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(names.Rename(DeviceType::kCPU, "host").code(), absl::StatusCode::kInvalidArgument);
  for (const char* bad : {"", "NPU", "9pu", "n-pu", "a_name_that_is_far_too_long_for_a_device"}) {
    EXPECT_EQ(names.Rename(DeviceType::kPrivateUse3, bad).code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

TEST(Device, ConcurrentRenamesLetExactlyOneWin) {
  DeviceNames names;
  std::atomic<int> wins{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      if (names.Rename(DeviceType::kPrivateUse3, "dev" + std::to_string(i)).ok()) ++wins;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wins.load(), 1);
}

}  // namespace
}  // namespace tessera
