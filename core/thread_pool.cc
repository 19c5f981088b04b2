#include "core/thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "absl/base/optimization.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"

namespace tessera {
namespace {

thread_local bool tls_in_pool_task = false;

// Note [Spin before sleeping]
// Parallel ops come in runs (a loop of kernel calls), each a few microseconds after the last.
// A thread asleep on a condition variable wakes through the kernel, and on these virtual
// machines that took tens of microseconds: a 2-thread sum of 16M floats (about 1.7 ms) paid it
// twice, once for the worker to start its half and once for the caller to see the end, and ran
// at 0.78-0.95x libtorch, whose OpenMP threads spin a while before they sleep (libgomp's
// GOMP_SPINCOUNT). So a worker that finishes a task, and a caller whose chunks are still
// running, first watch an atomic for up to kSpinFor, then sleep as before. An idle pool stops
// spinning after kSpinFor, and the sleeping path is unchanged, so no wake-up can be lost.
//
// A spinning thread gives its core away (sched_yield) on every look, rather than pausing on
// it: oneDNN's OpenMP threads spin too, and on 2 cores a pool worker still spinning after an
// elementwise op held the core that the next convolution's OpenMP thread wanted, until the
// scheduler's time slice ended. MobileNetV3-small at batch 1 and 2 threads ran at a median of
// 4.3-4.6 ms (1 thread: 3.5 ms); yielding, 3.0-3.3 ms, and ResNet-18 batch 1 16.3 ms against
// 18.3 ms (best runs), the 16M sum and add and the 1M scaling pairs as before (tessera-run
// --bench 200 and peer_ratios.py --threads 2, 2026-12-07). Not spinning at all gave MobileNet
// 3.2-3.4 ms but would bring back the wake-ups the spin is for (the 16M sum above).
constexpr std::chrono::microseconds kSpinFor{200};

// YieldCore: let another thread that wants this core run; back at once when none does.
inline void YieldCore() { sched_yield(); }

// SpinUntil returns true as soon as ready() does, false after kSpinFor without it.
template <typename Ready>
bool SpinUntil(const Ready& ready) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinFor;
  while (true) {
    if (ready()) return true;
    YieldCore();
    // Every look: a yield may give the core away for a while, and the spin stays bounded.
    if (std::chrono::steady_clock::now() >= deadline) return ready();
  }
}

class Pool {
 public:
  // A thread the system refuses to start (a process or container thread limit) leaves the pool
  // smaller, with a warning: std::thread throws, and unwinding here with threads already
  // started would end the process (std::terminate from a joinable thread's destructor).
  // ParallelFor stays correct with fewer workers: the caller runs queued chunks itself.
  explicit Pool(int threads) { Grow(threads); }

  // EnsureWorkers: at least threads - 1 workers (the caller is the last), started now if a
  // SetNumThreads asked for more than the pool has. Cheap when there are enough.
  void EnsureWorkers(int threads) {
    if (ABSL_PREDICT_TRUE(threads <= wanted_.load(std::memory_order_acquire))) return;
    Grow(threads);
  }
  // Never destroyed (see Instance): workers may be busy while the process exits.

  // Grow starts workers up to threads - 1. A thread the system refuses is said once; the pool
  // runs with the ones before it and does not ask again for that count.
  void Grow(int threads) {
    std::lock_guard<std::mutex> lock(grow_mu_);
    if (threads <= wanted_.load(std::memory_order_relaxed)) return;
    wanted_.store(threads, std::memory_order_release);
    try {
      workers_.reserve(threads - 1);  // so that no emplace_back below reallocates (or throws)
    } catch (const std::exception& e) {
      Refused(static_cast<int>(workers_.size()) + 2, threads, e.what());
      return;
    }
    for (int i = static_cast<int>(workers_.size()); i < threads - 1; ++i) {
      try {
        workers_.emplace_back([this] { Work(); });
      } catch (const std::exception& e) {  // std::system_error, or std::bad_alloc
        Refused(i + 2, threads, e.what());
        return;
      }
    }
  }

  // Refused: thread number `thread` (the caller is number 1) could not start; the pool runs
  // with the ones before it.
  static void Refused(int thread, int threads, const char* why) {
    std::fprintf(stderr,
                 "[tessera WARNING] thread pool: could not start thread %d of %d (%s); running "
                 "with %d\n",
                 thread, threads, why, thread - 1);
  }

  static Pool& Instance() {
    static Pool* pool = new Pool(NumThreads());
    return *pool;
  }

  void Submit(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      tasks_.push_back(std::move(task));
      queued_.fetch_add(1, std::memory_order_release);
    }
    cv_.notify_one();
  }

  // RunOne runs a queued task on the calling thread, if there is one.
  bool RunOne() {
    std::function<void()> task;
    if (!TryPop(&task)) return false;
    task();
    return true;
  }

 private:
  bool TryPop(std::function<void()>* task) {
    std::lock_guard<std::mutex> lock(mu_);
    if (tasks_.empty()) return false;
    PopLocked(task);
    return true;
  }
  void PopLocked(std::function<void()>* task) {
    *task = std::move(tasks_.front());
    tasks_.pop_front();
    queued_.fetch_sub(1, std::memory_order_relaxed);
  }

  void Work() {
    tls_in_pool_task = true;
    while (true) {
      std::function<void()> task;
      // Note [Spin before sleeping]: look for the next task a while before sleeping.
      const bool found =
          SpinUntil([this] { return queued_.load(std::memory_order_acquire) > 0; }) &&
          TryPop(&task);
      if (!found) {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return !tasks_.empty(); });
        PopLocked(&task);
      }
      task();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  std::atomic<int64_t> queued_{0};  // tasks_.size(), readable without mu_ for spinning
  std::mutex grow_mu_;               // held while workers_ grows
  std::atomic<int> wanted_{1};       // the most threads asked for (workers_ + the caller)
  std::vector<std::thread> workers_;
};

}  // namespace

namespace internal {

int MaxThreads(int cores) { return std::max(kMaxThreads, cores); }

int ParseNumThreads(const char* value, int cores, std::string* warning) {
  warning->clear();
  if (value == nullptr || *value == '\0') return cores;  // unset, or set to nothing
  int64_t threads = 0;
  if (!absl::SimpleAtoi(value, &threads) || threads < 1) {
    *warning = absl::StrFormat(
        "TESSERA_NUM_THREADS=%s: expected a whole number of threads >= 1; using the %d cores",
        value, cores);
    return cores;
  }
  if (threads > MaxThreads(cores)) {
    *warning = absl::StrFormat(
        "TESSERA_NUM_THREADS=%s: more than the %d threads a pool may have; using %d", value,
        MaxThreads(cores), MaxThreads(cores));
    return MaxThreads(cores);
  }
  return static_cast<int>(threads);
}

}  // namespace internal

namespace {

int Cores() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

// ThreadCount: the count ParallelFor uses; TESSERA_NUM_THREADS (or the cores) until a
// SetNumThreads.
std::atomic<int>& ThreadCount() {
  static std::atomic<int> n{[] {
    std::string warning;
    const int threads =
        internal::ParseNumThreads(std::getenv("TESSERA_NUM_THREADS"), Cores(), &warning);
    if (!warning.empty()) std::fprintf(stderr, "[tessera WARNING] %s\n", warning.c_str());
    return threads;
  }()};
  return n;
}

}  // namespace

int NumThreads() { return ThreadCount().load(std::memory_order_relaxed); }

absl::Status SetNumThreads(int threads) {
  const int cap = internal::MaxThreads(Cores());
  if (threads < 1 || threads > cap) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "expected a number of threads in [1, %d] (at least 1, at most max(%d, the cores)), got %d",
        cap, kMaxThreads, threads));
  }
  ThreadCount().store(threads, std::memory_order_relaxed);
  return absl::OkStatus();
}

bool InParallelTask() { return tls_in_pool_task; }

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
    // Written under mu (so a sleeping caller cannot miss the last one), read without it
    // while spinning.
    std::atomic<int64_t> remaining;
    absl::Status first_error;
  } shared;
  shared.remaining.store(chunks, std::memory_order_relaxed);
  auto run = [&](int64_t b, int64_t e) {
    absl::Status s = fn(b, e);
    std::lock_guard<std::mutex> lock(shared.mu);
    if (!s.ok() && shared.first_error.ok()) shared.first_error = s;
    if (shared.remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) shared.done.notify_all();
  };
  Pool& pool = Pool::Instance();
  pool.EnsureWorkers(threads);
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
  // Help with queued work (ours or others') instead of sleeping, then wait for the rest:
  // spinning first (Note [Spin before sleeping]), then asleep.
  auto finished = [&] { return shared.remaining.load(std::memory_order_acquire) == 0; };
  while (!finished() && pool.RunOne()) {
  }
  if (!SpinUntil(finished)) {
    std::unique_lock<std::mutex> lock(shared.mu);
    shared.done.wait(lock, finished);
  }
  // The last chunk's thread may still hold mu (it counts down and notifies under it): taking
  // it once here waits for that thread to be done with `shared` before it leaves the stack.
  std::lock_guard<std::mutex> lock(shared.mu);
  return shared.first_error;
}

}  // namespace tessera
