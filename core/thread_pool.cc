#include "core/thread_pool.h"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"

namespace tessera {
namespace {

thread_local bool tls_in_pool_task = false;

class Pool {
 public:
  explicit Pool(int threads) {
    for (int i = 0; i < threads - 1; ++i) {  // the caller is the last worker
      workers_.emplace_back([this] { Work(); });
    }
  }
  // Never destroyed (see Instance): workers may be busy while the process exits.

  static Pool& Instance() {
    static Pool* pool = new Pool(NumThreads());
    return *pool;
  }

  void Submit(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      tasks_.push_back(std::move(task));
    }
    cv_.notify_one();
  }

  // RunOne runs a queued task on the calling thread, if there is one.
  bool RunOne() {
    std::function<void()> task;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (tasks_.empty()) return false;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
    return true;
  }

 private:
  void Work() {
    tls_in_pool_task = true;
    while (true) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return !tasks_.empty(); });
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  std::vector<std::thread> workers_;
};

}  // namespace

int NumThreads() {
  static const int n = [] {
    int threads = 0;
    if (const char* env = std::getenv("TESSERA_NUM_THREADS")) {
      if (!absl::SimpleAtoi(env, &threads) || threads < 1) threads = 0;
    }
    if (threads == 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    return threads;
  }();
  return n;
}

absl::Status ParallelFor(int64_t begin, int64_t end, int64_t grain,
                         const std::function<absl::Status(int64_t, int64_t)>& fn) {
  if (end <= begin) return absl::OkStatus();
  int64_t range;
  if (__builtin_sub_overflow(end, begin, &range)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "parallel_for: expected at most %d iterations, got the range [%d, %d) (end - begin "
        "overflows int64)",
        INT64_MAX, begin, end));
  }
  grain = std::max<int64_t>(grain, 1);
  const int threads = NumThreads();
  if (range <= grain || threads == 1 || tls_in_pool_task) return fn(begin, end);

  // Ceiling divisions as q + (r != 0): (range + grain - 1) / grain overflows for ranges and
  // grains near INT64_MAX (a zero or negative chunk count: SIGFPE, or a wait that never ends).
  auto ceil_div = [](int64_t a, int64_t b) { return a / b + (a % b != 0); };
  const int64_t chunk = ceil_div(range, std::min<int64_t>(threads, ceil_div(range, grain)));
  // Recounted from the chunk length, so that no chunk starts at or past `end`.
  const int64_t chunks = ceil_div(range, chunk);
  struct Shared {
    std::mutex mu;
    std::condition_variable done;
    int64_t remaining;
    absl::Status first_error;
  } shared;
  shared.remaining = chunks;
  auto run = [&](int64_t b, int64_t e) {
    absl::Status s = fn(b, e);
    std::lock_guard<std::mutex> lock(shared.mu);
    if (!s.ok() && shared.first_error.ok()) shared.first_error = s;
    if (--shared.remaining == 0) shared.done.notify_all();
  };
  Pool& pool = Pool::Instance();
  for (int64_t c = 1; c < chunks; ++c) {
    const int64_t b = begin + c * chunk;
    const int64_t e = b + std::min(chunk, end - b);  // not min(end, b + chunk): that may overflow
    pool.Submit([&run, b, e] {
      const bool was = tls_in_pool_task;
      tls_in_pool_task = true;
      run(b, e);
      tls_in_pool_task = was;
    });
  }
  {
    const bool was = tls_in_pool_task;
    tls_in_pool_task = true;
    run(begin, begin + chunk);  // chunk < range here
    tls_in_pool_task = was;
  }
  // Help with queued work (ours or others') instead of sleeping, then wait for the rest.
  while (true) {
    {
      std::lock_guard<std::mutex> lock(shared.mu);
      if (shared.remaining == 0) break;
    }
    if (!pool.RunOne()) {
      std::unique_lock<std::mutex> lock(shared.mu);
      shared.done.wait(lock, [&] { return shared.remaining == 0; });
      break;
    }
  }
  return shared.first_error;
}

}  // namespace tessera
