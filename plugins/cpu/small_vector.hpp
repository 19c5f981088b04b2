// SmallVector: a vector whose first N elements live inline, so the per-call bookkeeping of
// small tensors (shapes, strides, operand lists) allocates nothing. Trivially copyable
// element types only; more than N elements move to the heap.
#pragma once

#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <type_traits>

namespace tessera {
namespace cpu {

template <typename T, size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVector holds trivially copyable types");

 public:
  SmallVector() = default;
  explicit SmallVector(size_t n, T value = T()) { resize(n, value); }
  SmallVector(std::initializer_list<T> values) {
    for (const T& v : values) push_back(v);
  }
  SmallVector(const T* first, const T* last) {
    for (; first != last; ++first) push_back(*first);
  }
  SmallVector(const SmallVector& o) { *this = o; }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) {
      clear();
      reserve(o.size_);
      std::memcpy(data(), o.data(), o.size_ * sizeof(T));
      size_ = o.size_;
    }
    return *this;
  }
  ~SmallVector() {
    if (heap_) delete[] heap_;
  }

  T* data() { return heap_ ? heap_ : inline_; }
  const T* data() const { return heap_ ? heap_ : inline_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }

  void clear() { size_ = 0; }
  void reserve(size_t n) {
    if (n <= capacity_) return;
    T* grown = new T[n];
    std::memcpy(grown, data(), size_ * sizeof(T));
    if (heap_) delete[] heap_;
    heap_ = grown;
    capacity_ = n;
  }
  void push_back(const T& v) {
    if (size_ == capacity_) reserve(capacity_ * 2);
    data()[size_++] = v;
  }
  void resize(size_t n, T value = T()) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data()[i] = value;
    size_ = n;
  }

 private:
  T inline_[N];
  T* heap_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = N;
};

}  // namespace cpu
}  // namespace tessera
