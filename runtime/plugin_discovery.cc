// Default discovery (docs/embedding_guide.md): at most once per process, at the first
// tsr_op_find or tsr_plugin_load_default, the loader loads every shared object of
// TESSERA_PLUGIN_PATH's folders and of lib/tessera/plugins beside libtessera.so, in file-name
// order; TESSERA_NO_DEFAULT_PLUGINS or tsr_plugin_discovery_disable turns it off.
#include <dirent.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "runtime/handles.h"
#include "runtime/runtime_state.h"
#include "tessera/c/loader.h"

namespace tessera {
namespace capi {
namespace {

// DefaultPluginDirs: TESSERA_PLUGIN_PATH's entries, then lib/tessera/plugins beside
// libtessera.so.
std::vector<std::string> DefaultPluginDirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("TESSERA_PLUGIN_PATH")) {
    for (absl::string_view dir : absl::StrSplit(env, ':', absl::SkipEmpty())) {
      dirs.emplace_back(dir);
    }
  }
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&tsr_plugin_load_default), &info) && info.dli_fname) {
    std::string lib(info.dli_fname);
    const size_t slash = lib.rfind('/');
    dirs.push_back((slash == std::string::npos ? std::string(".") : lib.substr(0, slash)) +
                   "/tessera/plugins");
  }
  return dirs;
}

std::vector<std::string> SharedObjectsIn(const std::string& dir) {
  std::vector<std::string> files;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return files;
  while (dirent* entry = readdir(d)) {
    const std::string name = entry->d_name;
    if (name.size() > 3 && name.compare(name.size() - 3, 3, ".so") == 0) {
      files.push_back(dir + "/" + name);
    }
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  return files;
}

// DefaultDiscoveryOff: TESSERA_NO_DEFAULT_PLUGINS is set to anything but "" or "0", so that
// an application (or its user) gets only the plugins it loads by path (docs/embedding_guide.md).
bool DefaultDiscoveryOff() {
  const char* env = std::getenv("TESSERA_NO_DEFAULT_PLUGINS");
  return env != nullptr && env[0] != '\0' && std::strcmp(env, "0") != 0;
}

// The state of default discovery: it runs at most once, and tsr_plugin_discovery_disable can
// stop it only before it started.
enum DiscoveryState : int { kNotYet, kDisabled, kStarted };
std::atomic<int> g_discovery{kNotYet};

}  // namespace

void EnsureDefaultPluginsLoaded() {
  // From plugin code that a load runs, discovery would wait for the loader's lock (or for its
  // own std::call_once) held by this thread: the caller goes on without it (tsr_op_find) or
  // refuses (tsr_plugin_load_default). Note [Loads do not nest].
  if (LoadingOnThisThread()) return;
  static std::once_flag once;
  std::vector<std::shared_ptr<PluginRecord>> refused;  // Note [Refused after registering]
  std::call_once(once, [&] {
    int expected = kNotYet;
    if (!g_discovery.compare_exchange_strong(expected, kStarted)) return;  // disabled
    if (DefaultDiscoveryOff()) return;
    for (const std::string& dir : DefaultPluginDirs()) {
      for (const std::string& file : SharedObjectsIn(dir)) {
        std::shared_ptr<PluginRecord> record;
        const absl::Status status = LoadPlugin(file, &record);
        if (record != nullptr) refused.push_back(std::move(record));
        // Nobody asked for this plugin by path, so nobody sees the error: say it (the load
        // report has the details), or an application runs on without it, silently.
        if (!status.ok()) {
          const std::string message = absl::StrFormat(
              "default discovery: refused %s: %s (tsr_load_reports has its load report)", file,
              status.message());
          RuntimeApi().log(TSR_LOG_WARNING, tsr_string{message.data(), message.size()});
        }
      }
    }
  });
  for (auto& record : refused) DisposeOfRefusedPlugin(std::move(record));
}

}  // namespace capi
}  // namespace tessera

using namespace tessera;        // NOLINT: this file only implements the C entry points
using namespace tessera::capi;  // NOLINT

extern "C" {

tsr_error* tsr_plugin_discovery_disable(void) {
  return Guard(__func__, []() -> tsr_error* {
    int expected = kNotYet;
    if (g_discovery.compare_exchange_strong(expected, kDisabled) || expected == kDisabled) {
      return nullptr;
    }
    return MakeError(absl::StatusCode::kFailedPrecondition,
                     "tsr_plugin_discovery_disable: default plugin discovery has already run "
                     "(call it before the first tsr_op_find or tsr_plugin_load_default)");
  });
}

tsr_error* tsr_plugin_load_default(void) {
  return Guard(__func__, [&]() -> tsr_error* {
    if (absl::Status s = CheckNotLoading("tsr_plugin_load_default (default discovery)"); !s.ok()) {
      return ToError(s);
    }
    EnsureDefaultPluginsLoaded();
    return nullptr;
  });
}

}  // extern "C"
