// What the CUDA backend's vendor libraries loaded at first use (cuBLAS: blas.h; cuDNN: dnn.h)
// share: opening the first of a list of names that has every entry point, and the knob that
// chooses between the library and our own kernel (TESSERA_GPU_BLAS, TESSERA_GPU_DNN). Plain C++
// (no toolkit).
#pragma once

#include <dlfcn.h>

#include <functional>
#include <string>
#include <vector>

namespace tessera {
namespace gpu {

// Resolve: `name`'s address in `dl` as the entry point type Fn; false when it is missing.
template <typename Fn>
bool Resolve(void* dl, const char* name, Fn* fn) {
  *fn = reinterpret_cast<Fn>(dlsym(dl, name));
  return *fn != nullptr;
}

// OpenLibrary dlopen()s the first of `names` that loads and whose required entry points
// `resolve(dl)` finds (it returns the first one missing, or null). The handle, and in *path the
// name it loaded under; or null with *error naming `what` ("cuBLAS") and every name tried and
// why (dlerror's words, or the missing symbol).
void* OpenLibrary(const char* what, const std::vector<std::string>& names,
                  const std::function<const char*(void* dl)>& resolve, std::string* path,
                  std::string* error);

// LibraryMode: which path a library's ops take: the library when it loads (kAuto), the library
// or an error (kLibrary), our own kernel (kOwn).
enum class LibraryMode { kAuto, kLibrary, kOwn };

// LibraryKnob: a library's environment variable, the value that requires the library, and why
// a backend without the library refuses that value.
struct LibraryKnob {
  const char* variable;  // "TESSERA_GPU_BLAS"
  const char* library;   // "cublas"
  const char* without;   // "this backend has no BLAS library; its products always run on ..."
};

// ParseLibraryMode reads a value of the knob's variable (null or "" is auto). `has_library`:
// whether the backend can use the library at all. false with *error naming the variable, the
// value found and the values expected.
bool ParseLibraryMode(const LibraryKnob& knob, const char* value, bool has_library,
                      LibraryMode* mode, std::string* error);

}  // namespace gpu
}  // namespace tessera
