// ThreadSanitizer annotations for Debian's Abseil, which is not built with TSan: without them
// TSan does not see absl::Mutex's happens-before edges and reports every access guarded by
// one as a race. This file is linked into the test programs of a TSan build only
// (TESSERA_SANITIZE=thread, cmake/TesseraHelpers.cmake); it interposes absl::Mutex's lock
// and unlock functions, tells TSan what each does through its mutex annotation interface
// (sanitizer/tsan_interface.h) and calls the library's own function, found with
// dlsym(RTLD_NEXT). It models the mutex; it hides nothing: an access made without the lock is
// still reported. (An instrumented Abseil would do the same from inside; Debian has none.)
//
// Only the functions Tessera calls are interposed (Lock, Unlock, ReaderLock, ReaderUnlock,
// TryLock, ReaderTryLock); CondVar, Await and LockWhen are unused, and a check at startup
// makes sure each real function is found.
#include <dlfcn.h>
#include <sanitizer/tsan_interface.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/synchronization/mutex.h"

namespace {

#define TESSERA_TSAN_STR2(x) #x
#define TESSERA_TSAN_STR(x) TESSERA_TSAN_STR2(x)

// Itanium mangling of absl::<inline namespace>::Mutex::<method>(), e.g.
// _ZN4absl8debian35Mutex4LockEv; `method` is the mangled method and parameter list.
std::string Mangled(const char* method) {
  const char* ns = TESSERA_TSAN_STR(ABSL_OPTION_INLINE_NAMESPACE_NAME);
  return "_ZN4absl" + std::to_string(std::strlen(ns)) + ns + "5Mutex" + method;
}

template <typename Fn>
Fn Real(const char* method) {
  const std::string name = Mangled(method);
  void* fn = dlsym(RTLD_NEXT, name.c_str());
  if (fn == nullptr) {
    std::fprintf(stderr, "tsan annotations: %s not found in Abseil (%s)\n", name.c_str(),
                 dlerror());
    std::abort();
  }
  return reinterpret_cast<Fn>(fn);
}

using VoidMethod = void (*)(absl::Mutex*);
using BoolMethod = bool (*)(absl::Mutex*);

}  // namespace

namespace absl {
ABSL_NAMESPACE_BEGIN

void Mutex::Lock() {
  static const VoidMethod real = Real<VoidMethod>("4LockEv");
  __tsan_mutex_pre_lock(this, 0);
  real(this);
  __tsan_mutex_post_lock(this, 0, 0);
}

void Mutex::Unlock() {
  static const VoidMethod real = Real<VoidMethod>("6UnlockEv");
  __tsan_mutex_pre_unlock(this, 0);
  real(this);
  __tsan_mutex_post_unlock(this, 0);
}

void Mutex::ReaderLock() {
  static const VoidMethod real = Real<VoidMethod>("10ReaderLockEv");
  __tsan_mutex_pre_lock(this, __tsan_mutex_read_lock);
  real(this);
  __tsan_mutex_post_lock(this, __tsan_mutex_read_lock, 0);
}

void Mutex::ReaderUnlock() {
  static const VoidMethod real = Real<VoidMethod>("12ReaderUnlockEv");
  __tsan_mutex_pre_unlock(this, __tsan_mutex_read_lock);
  real(this);
  __tsan_mutex_post_unlock(this, __tsan_mutex_read_lock);
}

bool Mutex::TryLock() {
  static const BoolMethod real = Real<BoolMethod>("7TryLockEv");
  __tsan_mutex_pre_lock(this, __tsan_mutex_try_lock);
  const bool locked = real(this);
  __tsan_mutex_post_lock(this, locked ? __tsan_mutex_try_lock : __tsan_mutex_try_lock_failed, 0);
  return locked;
}

bool Mutex::ReaderTryLock() {
  static const BoolMethod real = Real<BoolMethod>("13ReaderTryLockEv");
  const unsigned flags = __tsan_mutex_read_lock | __tsan_mutex_try_lock;
  __tsan_mutex_pre_lock(this, flags);
  const bool locked = real(this);
  __tsan_mutex_post_lock(this, locked ? flags : flags | __tsan_mutex_try_lock_failed, 0);
  return locked;
}

ABSL_NAMESPACE_END
}  // namespace absl
