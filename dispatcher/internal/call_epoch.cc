#include "dispatcher/internal/call_epoch.h"

namespace tessera {
namespace internal {
namespace {

std::atomic<CallEpochs::Thread*> g_threads{nullptr};  // every Thread ever attached

// Detach returns the thread's state to the pool when the thread exits.
struct Detach {
  CallEpochs::Thread* thread = nullptr;
  ~Detach();
};
thread_local Detach tls_detach;
thread_local bool tls_exited = false;

}  // namespace

std::atomic<uint64_t> CallEpochs::epoch_{1};
thread_local CallEpochs::Thread* CallEpochs::tls_thread_ = nullptr;

CallEpochs::Thread* CallEpochs::Attach() {
  Thread* t = nullptr;
  for (Thread* p = g_threads.load(std::memory_order_acquire); p != nullptr; p = p->next) {
    bool free = false;
    if (p->in_use.compare_exchange_strong(free, true, std::memory_order_acq_rel)) {
      t = p;
      break;
    }
  }
  if (t == nullptr) {
    t = new Thread();  // never freed: Reclaimable walks the list without a lock
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

bool CallEpochs::Reclaimable(uint64_t retired) {
  std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with the fence in Enter
  for (Thread* t = g_threads.load(std::memory_order_acquire); t != nullptr; t = t->next) {
    const uint64_t entered = t->entered.load(std::memory_order_acquire);
    if (entered != 0 && entered <= retired) return false;
  }
  return true;
}

void CallEpochs::Detached(Thread* t) {
  if (tls_thread_ == t) tls_thread_ = nullptr;
  t->depth = 0;
  t->entered.store(0, std::memory_order_release);
  t->in_use.store(false, std::memory_order_release);
}

}  // namespace internal
}  // namespace tessera
