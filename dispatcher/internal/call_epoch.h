// CallEpochs: when a kernel record that registration retired can no longer be reached by a
// call, so that it can be freed (Note [Reclaiming deregistered kernels] in op_registry.cc).
//
// Each thread announces, while it is inside a call, the epoch it entered with; retiring a
// record advances the process-wide epoch; the record may be freed once no thread is still
// inside a call it entered at or before that epoch. One store and one fence per outermost call,
// nothing per nested call, no shared cache line written by calls.
#pragma once

#include <atomic>
#include <cstdint>

namespace tessera {
namespace internal {

class CallEpochs {
 public:
  // The state of one thread (never freed; reused by a later thread once its thread exits).
  struct Thread {
    std::atomic<uint64_t> entered{0};  // the epoch its outermost call entered with; 0: none
    int depth = 0;                     // calls on this thread's stack (only it reads this)
    std::atomic<bool> in_use{false};
    Thread* next = nullptr;  // the list of every Thread, pushed to only
  };

  // Enter / Leave bracket a call on this thread (see CallScope).
  static void Enter() {
    Thread* t = tls_thread_;
    if (t == nullptr) t = Attach();
    if (t->depth++ == 0) {
      // Release, not relaxed: a sweep that reads this value must also see the end of every
      // earlier call of this thread, which read records it may free (since C++20 a later
      // plain store no longer continues the release of the store in Leave).
      t->entered.store(epoch_.load(std::memory_order_acquire), std::memory_order_release);
      // Orders the announcement before every kernel slot this call reads; Reclaimable has the
      // matching fence between a slot's clearing and its reading of `entered`.
      std::atomic_thread_fence(std::memory_order_seq_cst);
    }
  }
  static void Leave() {
    Thread* t = tls_thread_;
    if (--t->depth == 0) t->entered.store(0, std::memory_order_release);
  }

  // Retire: call after the record left every slot a call could read it from (with a seq_cst
  // or stronger store). Returns the epoch to pass to Reclaimable.
  static uint64_t Retire() { return epoch_.fetch_add(1, std::memory_order_seq_cst); }

  // Reclaimable: whether every call that may have read a record retired at `retired` has
  // returned, so that the record may be freed.
  static bool Reclaimable(uint64_t retired);

 private:
  static Thread* Attach();

 public:
  // Detached: `t`'s thread exited; a later thread may take it (internal to call_epoch.cc).
  static void Detached(Thread* t);

 private:

  static std::atomic<uint64_t> epoch_;
  static thread_local Thread* tls_thread_;
};

// CallScope: the current thread is inside a call while this lives.
class CallScope {
 public:
  CallScope() { CallEpochs::Enter(); }
  ~CallScope() { CallEpochs::Leave(); }
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;
};

}  // namespace internal
}  // namespace tessera
