#include "core/generator.h"

#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace tessera {
namespace {

TEST(Generator, ReserveHandsOutConsecutiveOffsetsOfItsSeed) {
  Generator g(42);
  EXPECT_EQ(g.state(), (PhiloxState{42, 0}));
  EXPECT_EQ(g.Reserve(), (PhiloxState{42, 0}));
  EXPECT_EQ(g.Reserve(), (PhiloxState{42, 1}));
  EXPECT_EQ(g.state(), (PhiloxState{42, 2}));
}

TEST(Generator, SetStateAndManualSeedRestoreADraw) {
  Generator g(7);
  g.Reserve();
  const PhiloxState saved = g.state();
  const PhiloxState first = g.Reserve();
  g.set_state(saved);
  EXPECT_EQ(g.Reserve(), first);
  g.manual_seed(9);
  EXPECT_EQ(g.state(), (PhiloxState{9, 0}));
}

TEST(Generator, OffsetWrapsAt64Bits) {
  Generator g(1);
  g.set_state(PhiloxState{1, ~uint64_t{0}});
  EXPECT_EQ(g.Reserve().offset, ~uint64_t{0});
  EXPECT_EQ(g.state().offset, 0u);
}

TEST(Generator, ConcurrentCallsDrawDistinctOffsets) {
  Generator g(3);
  constexpr int kThreads = 4;
  constexpr int kEach = 1000;
  std::vector<std::vector<uint64_t>> drawn(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) drawn[t].push_back(g.Reserve().offset);
    });
  }
  for (std::thread& t : threads) t.join();
  std::set<uint64_t> all;
  for (const auto& d : drawn) all.insert(d.begin(), d.end());
  EXPECT_EQ(all.size(), static_cast<size_t>(kThreads * kEach));
  EXPECT_EQ(g.state().offset, static_cast<uint64_t>(kThreads * kEach));
}

TEST(DefaultGenerator, OnePerDeviceAndManualSeedAllReseedsEachOne) {
  const Device cpu(DeviceType::kCPU, 0);
  const Device npu(DeviceType::kPrivateUse1, 1);
  GeneratorRef a = DefaultGenerator(cpu);
  EXPECT_EQ(a, DefaultGenerator(cpu));
  EXPECT_NE(a, DefaultGenerator(npu));
  a->Reserve();
  ManualSeedAll(123);
  EXPECT_EQ(a->state(), (PhiloxState{123, 0}));
  EXPECT_EQ(DefaultGenerator(npu)->state(), (PhiloxState{123, 0}));
  // One created after the seeding starts from it too.
  EXPECT_EQ(DefaultGenerator(Device(DeviceType::kPrivateUse2, 3))->state(), (PhiloxState{123, 0}));
  ManualSeedAll(kDefaultSeed);
}

}  // namespace
}  // namespace tessera
