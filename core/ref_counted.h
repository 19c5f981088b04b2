// RefCounted and Ref<T>: intrusive, thread-safe reference counting.
//
// Tensors and storages are shared across threads and through the C ABI (retain/release), so
// the count lives inside the object: a raw pointer handed to C can be turned back into an
// owner without a side table, and a new tensor costs one allocation, not two.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

namespace tessera {

class RefCounted {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;

  void Retain() const { refcount_.fetch_add(1, std::memory_order_relaxed); }
  void Release() const {
    // Holding the only reference means no other thread can reach the object to add one, so
    // the common end of a temporary (count 1) needs no locked instruction.
    if (refcount_.load(std::memory_order_acquire) == 1 ||
        refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      delete this;
    }
  }
  int64_t use_count() const { return refcount_.load(std::memory_order_acquire); }

 protected:
  virtual ~RefCounted() = default;

 private:
  mutable std::atomic<int64_t> refcount_{1};
};

// Ref<T> owns one reference to a RefCounted T.
template <typename T>
class Ref {
 public:
  Ref() = default;
  Ref(std::nullptr_t) {}  // NOLINT: implicit

  // Adopt takes over a reference the caller already holds (e.g. from `new`).
  static Ref Adopt(T* p) {
    Ref r;
    r.p_ = p;
    return r;
  }
  // Share adds a reference to a borrowed pointer.
  static Ref Share(T* p) {
    if (p) p->Retain();
    return Adopt(p);
  }
  template <typename... Args>
  static Ref Make(Args&&... args) {
    return Adopt(new T(std::forward<Args>(args)...));
  }

  Ref(const Ref& o) : p_(o.p_) {
    if (p_) p_->Retain();
  }
  Ref(Ref&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  template <typename U>
  Ref(Ref<U> o) : p_(o.Leak()) {}  // NOLINT: upcast
  Ref& operator=(Ref o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~Ref() {
    if (p_) p_->Release();
  }

  // Leak gives up ownership without releasing; the caller now holds the reference.
  T* Leak() { return std::exchange(p_, nullptr); }

  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  friend bool operator==(const Ref& a, const Ref& b) { return a.p_ == b.p_; }
  friend bool operator!=(const Ref& a, const Ref& b) { return a.p_ != b.p_; }

 private:
  T* p_ = nullptr;
};

}  // namespace tessera
