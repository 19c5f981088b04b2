// CallEpochs: when a kernel record that registration retired can no longer be reached by a
// call, so that it can be freed (Note [Reclaiming deregistered kernels] in op_registry.cc).
//
// Each thread announces, while it is inside a call, the epoch it entered with; retiring a
// record advances the process-wide epoch; the record may be freed once no thread is still
// inside a call it entered at or before that epoch. Per outermost call: a thread-local load
// and one store, ordered by a compiler barrier where the reclaiming side can make every thread
// of the process execute a full fence (Linux membarrier), by a fence elsewhere; nothing per
// nested call; no shared cache line written by calls.
#pragma once

#include <atomic>
#include <cstdint>

namespace tessera {

class CallEpochs {
 public:
  // The state of one thread (never freed; reused by a later thread once its thread exits).
  struct Thread {
    std::atomic<uint64_t> entered{0};  // the epoch its outermost call entered with; 0: none
    int depth = 0;                     // calls on this thread's stack (only it reads this)
    std::atomic<bool> in_use{false};
    Thread* next = nullptr;  // the list of every Thread, pushed to only
  };

  // Enter / Leave bracket a call on this thread (see CallScope). Enter returns the thread's
  // state for Leave: one thread-local read per call, each a __tls_get_addr call inside a shared
  // library (docs/performance.md, 'Thread-locals').
  static Thread* Enter() {
    Thread* t = tls_thread_;
    if (t == nullptr) t = Attach();
    if (t->depth++ == 0) {
      // Release, not relaxed: a sweep that reads this value must also see the end of every
      // earlier call of this thread, which read records it may free (since C++20 a later
      // plain store no longer continues the release of the store in Leave).
      t->entered.store(epoch_.load(std::memory_order_acquire), std::memory_order_release);
      // Orders the announcement before every kernel slot this call reads; OldestCall has the
      // matching heavy barrier between a slot's clearing and its reading of `entered`.
      LightBarrier();
    }
    return t;
  }
  static void Leave(Thread* t) {
    if (--t->depth == 0) t->entered.store(0, std::memory_order_release);
  }

  // Retire: call after the record left every slot a call could read it from (with a seq_cst
  // or stronger store). Returns the epoch it retired at.
  static uint64_t Retire() { return epoch_.fetch_add(1, std::memory_order_seq_cst); }

  // OldestCall: the epoch the oldest call still running on any thread entered with, or
  // UINT64_MAX when no thread is in a call. A record retired at an epoch below it can no
  // longer be reached by any call and may be freed. Costs one heavy barrier (a membarrier
  // system call, about a microsecond) or a fence, and a walk over every thread that ever called.
  static uint64_t OldestCall();

  // InCall: whether this thread is inside a call (a CallScope lives on its stack).
  static bool InCall() {
    const Thread* t = tls_thread_;
    return t != nullptr && t->depth > 0;
  }

  // WaitForCallsBefore: returns once no thread is inside a call it entered at or before epoch
  // `retired` (what Retire returned). For rare events (unloading a plugin): one heavy barrier,
  // then polls of the slots. Never call it from inside a call, which it would wait for.
  static void WaitForCallsBefore(uint64_t retired);

  // Asymmetric: whether calls order their announcement with a compiler barrier only (the
  // reclaiming side's membarrier makes it a fence); false: with a fence.
  static bool Asymmetric() { return asymmetric_.load(std::memory_order_relaxed); }

  // Detached: `t`'s thread exited; a later thread may take it (internal to call_epoch.cc).
  static void Detached(Thread* t);

 private:
  static Thread* Attach();
  // OldestAnnounced: OldestCall's scan of the slots, without its barrier.
  static uint64_t OldestAnnounced();
  // AfterForkInChild: clears the slots of the threads a forked child does not have.
  static void AfterForkInChild();
  // HeavyBarrierReady: registers the process for membarrier once; whether it can be used.
  static bool HeavyBarrierReady();
  static void LightBarrier() {
    if (__builtin_expect(asymmetric_.load(std::memory_order_relaxed), 1)) {
      std::atomic_signal_fence(std::memory_order_seq_cst);
    } else {
      std::atomic_thread_fence(std::memory_order_seq_cst);
    }
  }

  static std::atomic<uint64_t> epoch_;
  static std::atomic<bool> asymmetric_;  // set once, after membarrier registration succeeded
  static thread_local Thread* tls_thread_;
};

// CallScope: the current thread is inside a call while this lives.
class CallScope {
 public:
  CallScope() : thread_(CallEpochs::Enter()) {}
  ~CallScope() { CallEpochs::Leave(thread_); }
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

 private:
  CallEpochs::Thread* const thread_;  // this thread's, never freed (see Thread)
};

}  // namespace tessera
