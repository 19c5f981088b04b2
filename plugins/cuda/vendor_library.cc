// Opening the vendor libraries and reading their knobs (vendor_library.h).
#include "vendor_library.h"

namespace tessera {
namespace gpu {

void* OpenLibrary(const char* what, const std::vector<std::string>& names,
                  const std::function<const char*(void* dl)>& resolve, std::string* path,
                  std::string* error) {
  std::string tried;
  for (const std::string& name : names) {
    if (!tried.empty()) tried += "; ";
    void* dl = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (dl == nullptr) {
      const char* why = dlerror();
      tried += name + ": " + (why != nullptr ? why : "not loadable");
      continue;
    }
    if (const char* missing = resolve(dl)) {
      tried += name + ": loaded, but has no symbol " + missing;
      dlclose(dl);
      continue;
    }
    *path = name;
    return dl;
  }
  *error = std::string("no usable ") + what +
           " library (searched, in order: " + (tried.empty() ? std::string("nothing") : tried) +
           ")";
  return nullptr;
}

bool ParseLibraryMode(const LibraryKnob& knob, const char* value, bool has_library,
                      LibraryMode* mode, std::string* error) {
  const std::string v = value != nullptr ? value : "";
  if (v.empty() || v == "auto") {
    *mode = LibraryMode::kAuto;
    return true;
  }
  if (v == "own") {
    *mode = LibraryMode::kOwn;
    return true;
  }
  if (v == knob.library && has_library) {
    *mode = LibraryMode::kLibrary;
    return true;
  }
  *error = std::string(knob.variable) + " is '" + v + "'; expected " +
           (has_library ? std::string("auto, ") + knob.library + " or own"
                        : std::string("auto or own (") + knob.without + ")");
  return false;
}

}  // namespace gpu
}  // namespace tessera
