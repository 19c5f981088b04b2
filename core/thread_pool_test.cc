#include "core/thread_pool.h"

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace tessera {
namespace {

TEST(ParallelFor, CoversTheRangeExactlyOnce) {
  for (int64_t n : {0, 1, 7, 1000, 100003}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    ASSERT_TRUE(ParallelFor(0, n, 100, [&](int64_t b, int64_t e) {
                  for (int64_t i = b; i < e; ++i) hits[i]++;
                  return absl::OkStatus();
                }).ok());
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
  }
}

TEST(ParallelFor, SmallRangesStayOnTheCallingThread) {
  std::set<std::thread::id> ids;
  std::mutex mu;
  ASSERT_TRUE(ParallelFor(0, 64, 1000, [&](int64_t, int64_t) {
                std::lock_guard<std::mutex> lock(mu);
                ids.insert(std::this_thread::get_id());
                return absl::OkStatus();
              }).ok());
  EXPECT_EQ(ids, std::set<std::thread::id>{std::this_thread::get_id()});
}

TEST(ParallelFor, ChunksAreTheSameEveryRun) {
  auto chunks = [] {
    std::set<std::pair<int64_t, int64_t>> seen;
    std::mutex mu;
    EXPECT_TRUE(ParallelFor(10, 10010, 16, [&](int64_t b, int64_t e) {
                  std::lock_guard<std::mutex> lock(mu);
                  seen.insert({b, e});
                  return absl::OkStatus();
                }).ok());
    return seen;
  };
  EXPECT_EQ(chunks(), chunks());
}

TEST(ParallelFor, NestedCallsRunInlineAndErrorsComeBack) {
  std::atomic<int64_t> total{0};
  ASSERT_TRUE(ParallelFor(0, 8, 1, [&](int64_t b, int64_t e) {
                return ParallelFor(0, 1000, 10, [&](int64_t ib, int64_t ie) {
                  total += (ie - ib) * (e - b);
                  return absl::OkStatus();
                });
              }).ok());
  EXPECT_EQ(total.load(), 8000);
  absl::Status s = ParallelFor(0, 1000, 10, [](int64_t b, int64_t) {
    return b == 0 ? absl::InvalidArgumentError("chunk 0 failed") : absl::OkStatus();
  });
  EXPECT_EQ(s.message(), "chunk 0 failed");
  EXPECT_GE(NumThreads(), 1);
}

}  // namespace
}  // namespace tessera
