#include "core/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using ::testing::HasSubstr;

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

// Chunk counts used to be computed as (range + grain - 1) / grain, which overflows for ranges
// and grains near INT64_MAX: (0, INT64_MAX, INT64_MAX - 1) divided by a zero chunk count
// (SIGFPE) and (0, 2^62 + 1, 2^62) made a negative count that never reached 0 (a hang).
TEST(ParallelFor, HugeRangesAndGrainsSplitWithoutOverflow) {
  struct Case {
    int64_t begin, end, grain;
  };
  const Case cases[] = {
      {0, INT64_MAX, INT64_MAX - 1},
      {0, (int64_t{1} << 62) + 1, int64_t{1} << 62},
      {0, INT64_MAX, 1},
      {INT64_MAX - 10, INT64_MAX, 1},
      {-5, INT64_MAX - 5, 3},
      {0, 4, 1},  // 3 threads would once have made chunks [0, 2), [2, 4) and an empty [4, 4)
  };
  for (const Case& c : cases) {
    std::mutex mu;
    std::vector<std::pair<int64_t, int64_t>> chunks;
    ASSERT_TRUE(ParallelFor(c.begin, c.end, c.grain, [&](int64_t b, int64_t e) {
                  std::lock_guard<std::mutex> lock(mu);
                  chunks.push_back({b, e});
                  return absl::OkStatus();
                }).ok());
    std::sort(chunks.begin(), chunks.end());
    // The chunks tile [begin, end) exactly, each non-empty.
    ASSERT_FALSE(chunks.empty());
    EXPECT_EQ(chunks.front().first, c.begin);
    EXPECT_EQ(chunks.back().second, c.end);
    for (size_t i = 0; i < chunks.size(); ++i) {
      EXPECT_LT(chunks[i].first, chunks[i].second);
      if (i > 0) {
        EXPECT_EQ(chunks[i - 1].second, chunks[i].first);
      }
    }
    EXPECT_LE(static_cast<int64_t>(chunks.size()), NumThreads());
  }
}

// SetNumThreads changes the count ParallelFor splits by, growing the pool when asked for more
// than it has, and refuses a count outside [1, max(kMaxThreads, cores)].
TEST(ParallelFor, SetNumThreadsChangesTheSplit) {
  const int before = NumThreads();
  EXPECT_THAT(std::string(SetNumThreads(0).message()),
              ::testing::HasSubstr("expected a number of threads in [1, "));
  EXPECT_FALSE(SetNumThreads(internal::MaxThreads(1 << 20) + 1).ok());
  for (int threads : {3, 1, 5}) {
    ASSERT_TRUE(SetNumThreads(threads).ok());
    EXPECT_EQ(NumThreads(), threads);
    std::mutex mu;
    std::set<std::thread::id> ids;
    int chunks = 0;
    ASSERT_TRUE(ParallelFor(0, 1000, 1, [&](int64_t, int64_t) {
                  std::lock_guard<std::mutex> lock(mu);
                  ids.insert(std::this_thread::get_id());
                  ++chunks;
                  return absl::OkStatus();
                }).ok());
    EXPECT_EQ(chunks, threads) << "one chunk per thread";
    EXPECT_LE(static_cast<int>(ids.size()), threads);
  }
  ASSERT_TRUE(SetNumThreads(before).ok());
}

// A range wider than INT64_MAX iterations cannot be counted in int64: a clear error.
TEST(ParallelFor, RefusesARangeWiderThanInt64) {
  bool called = false;
  absl::Status s = ParallelFor(INT64_MIN, INT64_MAX, 1, [&](int64_t, int64_t) {
    called = true;
    return absl::OkStatus();
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("parallel_for: expected at most 9223372036854775807"));
  EXPECT_FALSE(called);
}

// Workers and callers spin a while before they sleep (Note [Spin before sleeping] in
// thread_pool.cc). Calls back to back (caught while spinning), calls after a pause (the
// workers asleep), and calls whose chunks outlast the spin (the caller asleep) all finish,
// each with every chunk run once and the error of a failing one.
TEST(ParallelFor, FinishesWhetherThreadsSpinOrSleep) {
  for (int pause_us : {0, 2000}) {
    for (int round = 0; round < 50; ++round) {
      std::atomic<int64_t> covered{0};
      const bool slow = round % 10 == 9;  // a chunk longer than the spin
      absl::Status s = ParallelFor(0, 4096, 64, [&](int64_t b, int64_t e) {
        if (slow) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        covered += e - b;
        return b == 0 && round % 2 == 1 ? absl::InternalError("odd round") : absl::OkStatus();
      });
      ASSERT_EQ(covered.load(), 4096) << "pause " << pause_us << " round " << round;
      ASSERT_EQ(s.ok(), round % 2 == 0) << s;
      std::this_thread::sleep_for(std::chrono::microseconds(pause_us));
    }
  }
}

TEST(NumThreads, ReadsTheVariableAndSaysWhatWasWrongWithIt) {
  std::string warning;
  EXPECT_EQ(internal::ParseNumThreads(nullptr, 8, &warning), 8);
  EXPECT_EQ(warning, "");
  EXPECT_EQ(internal::ParseNumThreads("", 8, &warning), 8);  // set to nothing: as if unset
  EXPECT_EQ(warning, "");
  EXPECT_EQ(internal::ParseNumThreads("3", 8, &warning), 3);
  EXPECT_EQ(warning, "");
  for (const char* bad : {"0", "-2", "abc", "2x", "99999999999999999999"}) {
    EXPECT_EQ(internal::ParseNumThreads(bad, 8, &warning), 8) << bad;
    EXPECT_EQ(warning, "TESSERA_NUM_THREADS=" + std::string(bad) +
                           ": expected a whole number of threads >= 1; using the 8 cores");
  }
  for (const char* huge : {"100000", "99999999999"}) {  // the second passes int32
    EXPECT_EQ(internal::ParseNumThreads(huge, 8, &warning), kMaxThreads);
    EXPECT_EQ(warning, "TESSERA_NUM_THREADS=" + std::string(huge) +
                           ": more than the 1024 threads a pool may have; using 1024");
  }
  // A machine of more cores than the cap may use them all.
  EXPECT_EQ(internal::ParseNumThreads("2000", 4096, &warning), 2000);
  EXPECT_EQ(warning, "");
}

// TESSERA_NUM_THREADS=100000 asked the system for 99,999 threads: when it refused one,
// std::thread threw inside the pool's constructor and the process ended (std::terminate) at
// the first parallel loop. Now the value is capped and a refused thread leaves the pool
// smaller. Run in a child process of its own (the pool is made once per process).
TEST(NumThreadsDeathTest, AHugeThreadCountIsCappedNotFatal) {
  const std::string style = GTEST_FLAG_GET(death_test_style);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const int cap = internal::MaxThreads(static_cast<int>(std::thread::hardware_concurrency()));
  EXPECT_EXIT(
      {
        setenv("TESSERA_NUM_THREADS", "100000", 1);
        std::atomic<int64_t> sum{0};
        const absl::Status s = ParallelFor(0, 1 << 20, 1, [&](int64_t b, int64_t e) {
          sum.fetch_add(e - b);
          return absl::OkStatus();
        });
        std::exit(s.ok() && sum.load() == (1 << 20) && NumThreads() == cap ? 0 : 1);
      },
      ::testing::ExitedWithCode(0),
      "more than the " + std::to_string(cap) + " threads a pool may have");
  GTEST_FLAG_SET(death_test_style, style);
}

}  // namespace
}  // namespace tessera
