#include "dispatcher/call_epoch.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <thread>

#if defined(__linux__) && __has_include(<linux/membarrier.h>)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#define TESSERA_HAVE_MEMBARRIER 1
#endif

namespace tessera {
namespace {

std::atomic<CallEpochs::Thread*> g_threads{nullptr};  // every Thread ever attached

// Detach returns the thread's state to the pool when the thread exits.
struct Detach {
  CallEpochs::Thread* thread = nullptr;
  ~Detach();
};
thread_local Detach tls_detach;
thread_local bool tls_exited = false;

#ifdef TESSERA_HAVE_MEMBARRIER
long Membarrier(int cmd) { return syscall(__NR_membarrier, cmd, 0, 0); }
#endif

}  // namespace

std::atomic<uint64_t> CallEpochs::epoch_{1};
std::atomic<bool> CallEpochs::asymmetric_{false};
thread_local CallEpochs::Thread* CallEpochs::tls_thread_ = nullptr;

// Note [Asymmetric call barrier]
// A call's announcement (a store to its thread's `entered`) must be ordered before its reads
// of kernel slots, and a sweep's clearing of a slot before its reads of `entered` (the
// store-buffering pattern: without a full barrier on both sides, each may miss the other's
// store). A fence per call costs what the call costs otherwise (see docs/reliability.md), and
// sweeps are rare, so the sweep pays for both sides: MEMBARRIER_CMD_PRIVATE_EXPEDITED makes
// every running thread of the process execute a full barrier before it returns (a thread not
// running has passed a context switch, itself one), and calls need only a compiler barrier
// (liburcu's urcu-memb and folly's asymmetricHeavyBarrier do the same). The process registers
// for it at the first call of its first thread; `asymmetric_` is set only after that
// succeeded and never cleared, and a sweep reads it through HeavyBarrierReady, which waits for
// the registration: a sweep never uses a fence where a call used a compiler barrier. Where the
// system call is missing or refused (another OS, a seccomp filter), calls fence. If a barrier
// fails after registration, OldestCall reports that nothing may be freed.
bool CallEpochs::HeavyBarrierReady() {
  static const bool ready = [] {
#ifdef TESSERA_HAVE_MEMBARRIER
    const long commands = Membarrier(MEMBARRIER_CMD_QUERY);
    if (commands < 0 || (commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
    if (Membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) != 0) return false;
    asymmetric_.store(true, std::memory_order_release);
    return true;
#else
    return false;
#endif
  }();
  return ready;
}

CallEpochs::Thread* CallEpochs::Attach() {
  HeavyBarrierReady();  // before this thread's first call (Note [Asymmetric call barrier])
  static const bool fork_handled = [] {  // Note [Call epochs across fork]
    return pthread_atfork(nullptr, nullptr, &CallEpochs::AfterForkInChild) == 0;
  }();
  (void)fork_handled;  // without it (ENOMEM), a child's unload may wait for a parent's call
  Thread* t = nullptr;
  for (Thread* p = g_threads.load(std::memory_order_acquire); p != nullptr; p = p->next) {
    bool free = false;
    if (p->in_use.compare_exchange_strong(free, true, std::memory_order_acq_rel)) {
      t = p;
      break;
    }
  }
  if (t == nullptr) {
    t = new Thread();  // never freed: OldestCall walks the list without a lock
    t->in_use.store(true, std::memory_order_relaxed);
    Thread* head = g_threads.load(std::memory_order_relaxed);
    do {
      t->next = head;
    } while (!g_threads.compare_exchange_weak(head, t, std::memory_order_acq_rel));
  }
  tls_thread_ = t;
  // A call from a thread_local destructor after Detach ran keeps its state for good (rare).
  if (!tls_exited) tls_detach.thread = t;
  return t;
}

Detach::~Detach() {
  tls_exited = true;
  if (thread == nullptr) return;
  // Not inside a call (a thread exits with an empty stack), so `entered` is already 0.
  CallEpochs::Detached(thread);
}

uint64_t CallEpochs::OldestCall() {
  // The heavy side of the barrier pair (Note [Asymmetric call barrier]).
  if (HeavyBarrierReady()) {
#ifdef TESSERA_HAVE_MEMBARRIER
    if (Membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0) return 0;  // nothing provably free
#endif
  } else {
    std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with the fence in Enter
  }
  return OldestAnnounced();
}

uint64_t CallEpochs::OldestAnnounced() {
  uint64_t oldest = UINT64_MAX;
  for (Thread* t = g_threads.load(std::memory_order_acquire); t != nullptr; t = t->next) {
    const uint64_t entered = t->entered.load(std::memory_order_acquire);
    if (entered != 0 && entered < oldest) oldest = entered;
  }
  return oldest;
}

void CallEpochs::WaitForCallsBefore(uint64_t retired) {
  // One heavy barrier is enough: a thread whose slot it shows at 0 or above `retired` sees,
  // in its next call, everything stored before the barrier (the retire among it); a slot at
  // or below `retired` only needs watching until it changes. The pauses grow, so that a long
  // call is not interrupted by a barrier or a poll every few microseconds while it runs.
  auto pause = std::chrono::microseconds(50);
  auto longer = [&pause] { pause = std::min(2 * pause, std::chrono::microseconds(10000)); };
  uint64_t oldest;
  while ((oldest = OldestCall()) == 0) {  // the barrier failed: nothing is known yet
    std::this_thread::sleep_for(pause);
    longer();
  }
  for (pause = std::chrono::microseconds(50); oldest <= retired; oldest = OldestAnnounced()) {
    std::this_thread::sleep_for(pause);
    longer();
  }
}

// Note [Call epochs across fork]
// A forked child has only the thread that forked, but a copy of every thread's slot: a thread
// that was inside a call at the fork would announce that call for ever in the child, where
// nothing retired after it could be freed and an unload (which waits for every call in flight)
// would wait for ever. The child clears the slots of the threads it does not have, and they
// may be reused by its own threads.
void CallEpochs::AfterForkInChild() {
  for (Thread* t = g_threads.load(std::memory_order_acquire); t != nullptr; t = t->next) {
    if (t == tls_thread_) continue;
    t->depth = 0;
    t->entered.store(0, std::memory_order_relaxed);
    t->in_use.store(false, std::memory_order_relaxed);
  }
}

void CallEpochs::Detached(Thread* t) {
  if (tls_thread_ == t) tls_thread_ = nullptr;
  t->depth = 0;
  t->entered.store(0, std::memory_order_release);
  t->in_use.store(false, std::memory_order_release);
}

}  // namespace tessera
