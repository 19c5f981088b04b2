// The plugin loader: dlopen, the two-way version handshake and the descriptor's checks,
// registration on the plugin's behalf, the load reports' list, and unloading. Default
// discovery is plugin_discovery.cc; a load report's text, load_report_format.cc.
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "core/device.h"
#include "core/status_macros.h"
#include "core/thread_pool.h"
#include "dispatcher/call_epoch.h"
#include "runtime/handles.h"
#include "runtime/runtime_state.h"
#include "runtime/struct_sizes.h"
#include "tessera/c/loader.h"

namespace tessera {
namespace capi {
namespace {

// The size of a tsr_plugin_desc as each released 1.x minor defines it: a plugin that says it
// was built against minor N must fill exactly that many bytes (more or less means a corrupt or
// mismatched descriptor). Newer minors than the runtime's may only be larger.
constexpr size_t kPluginDescSize[] = {
    /* 1.0 */ size_in_1_0::tsr_plugin_desc,
    /* 1.1 */ size_in_1_1::tsr_plugin_desc,
    /* 1.2 */ size_in_1_1::tsr_plugin_desc,  // 1.2 added models (model.h), no descriptor field
};

// Note [Descriptor capacity] (plugin.h) states the rule; here is the runtime's side of it. The
// descriptor lives in a zero-filled scratch buffer of kDescriptorScratch bytes, of which the
// runtime offers sizeof(tsr_plugin_desc) (desc->struct_size on entry). A plugin that keeps the
// rule writes within that; one that claims more, or leaves bytes beyond what it claims, broke it
// and is refused. The scratch beyond the offer only makes sure that such a plugin (say one that
// a newer header's sizeof led to write its newer fields anyway) scribbles over bytes the
// runtime owns and checks, not over the plugin record that once held the descriptor.
constexpr size_t kDescriptorScratch = 4096;
struct alignas(alignof(std::max_align_t)) DescriptorScratch {
  unsigned char bytes[kDescriptorScratch] = {};
};
constexpr uint32_t kRuntimeMinor = TSR_ABI_VERSION_MINOR;

// The longest name, version or device_name a plugin descriptor may give (docs/plugin_guide.md).
constexpr size_t kMaxDescriptorString = 256;
static_assert(std::size(kPluginDescSize) == kRuntimeMinor + 1, "one size per released minor");

thread_local std::shared_ptr<PluginRecord> tls_loading_plugin;

// ScopedThreadLocal sets a thread-local for a scope and clears it on the way out, also when the
// plugin code the scope runs throws (which the ABI forbids, and a C++ plugin without the SDK can
// still do): a window left open would point at a dead frame, and later registrations on this
// thread would be credited to a dead plugin.
template <typename T>
class ScopedThreadLocal {
 public:
  ScopedThreadLocal(T& slot, T value) : slot_(slot) { slot_ = std::move(value); }
  ~ScopedThreadLocal() { slot_ = T(); }
  ScopedThreadLocal(const ScopedThreadLocal&) = delete;
  ScopedThreadLocal& operator=(const ScopedThreadLocal&) = delete;

 private:
  T& slot_;
};

// Note [Loads do not nest]
// A load holds the loader's lock from dlopen (the plugin's static constructors) through
// tsr_plugin_init and register_fn, so that two loads, or a load and an unload, never interleave
// their checks and registrations. Plugin code that a load runs on the loading thread and that
// asks the loader to load, unload or discover (through the exported tsr_plugin_* functions,
// which a plugin can reach with dlsym) would wait for that lock, held by its own thread:
// Abseil's deadlock detector ended the process. So such a call fails at once with
// FAILED_PRECONDITION naming the plugin being loaded, and what only reads the loader's lists
// (tsr_load_reports, the loaded plugins' names in messages) reads them under the lock this
// thread already holds. tsr_op_find from there finds the op without starting discovery.

// LoadInProgress: what this thread is loading, while it is (PluginLoader::Load's scope).
struct LoadInProgress {
  std::string path;  // as the caller gave it
};
thread_local const LoadInProgress* tls_load_in_progress = nullptr;

// NestedLoadError: FAILED_PRECONDITION for `call` made while this thread loads a plugin.
absl::Status NestedLoadError(std::string_view call) {
  std::string plugin = tls_load_in_progress->path;
  if (tls_loading_plugin != nullptr && !tls_loading_plugin->name.empty()) {
    plugin = absl::StrFormat("'%s' (%s)", tls_loading_plugin->name, plugin);
  }
  return absl::FailedPreconditionError(absl::StrFormat(
      "%s: called from inside the load of plugin %s (code that its dlopen, %s or register_fn "
      "ran); plugin loads, unloads and discovery do not nest: call it from the application, "
      "before or after that load",
      call, plugin, TSR_PLUGIN_INIT_SYMBOL));
}

// Note [Registration window]
// A plugin registers (ops, kernels, fallbacks, its device) only from its register_fn, on the
// loading thread: its registration window. Only there does the runtime know which plugin
// registers, so only there can it record the registration to undo it when the plugin is
// refused or unloaded; a registration made elsewhere would outlive the plugin's code and
// calling it would jump into unmapped memory. Before the window (in tsr_plugin_init) the
// runtime has not even checked the plugin's versions. So the table handed to plugins
// (PluginApi) refuses registrations outside the window rather than trying to attribute them:
//   - in tsr_plugin_init: the call fails and the whole load is refused, with the reason in
//     its load report (the plugin broke the handshake's promise);
//   - later (lazily from a kernel, from a helper thread, after loading): the call fails with
//     FAILED_PRECONDITION naming the plugin's library; the plugin stays loaded.
// Applications register through their own table (tsr_runtime_api_get) or the exported
// functions, at any time; their registrations are theirs to release.

// InitWindow collects what a plugin's tsr_plugin_init did that refuses its load.
struct InitWindow {
  absl::Status violation;
};
thread_local InitWindow* tls_init_window = nullptr;

// The image (load address) of each plugin, for PluginOwning. Its own lock: plugin code asks
// while the loader's lock may be held (a kernel run from a register_fn).
absl::Mutex g_images_mu;
struct Image {
  const PluginRecord* record;
  std::weak_ptr<PluginRecord> owner;
};
absl::flat_hash_map<const void*, Image>* const g_images ABSL_GUARDED_BY(g_images_mu) =
    new absl::flat_hash_map<const void*, Image>();

std::string CodeName(absl::StatusCode code) { return absl::StatusCodeToString(code); }

// Note [Plugins without a copy_ kernel]
// The out= and in-place forms that the dispatcher derives from a functional kernel (Note
// [Variants] in dispatcher/variants.cc) copy the result into the caller's tensor with copy_ on
// the same device. A plugin whose device has no copy_ kernel of its own therefore runs every
// such copy where copy_ goes without one: its fallback (the CPU fallback: the device's data
// makes a round trip through host memory, counted under "copy_" by tsr_fallback_count) or
// nowhere ("not implemented", and the derived forms fail). Nothing at the call says so, so the
// load report does: one note line naming the device, where copy_ runs instead and the derived
// forms concerned. Only plugins that register a device interface and kernels for it get one.
constexpr size_t kCopyNoteMaxNames = 8;

std::string CopyNote(const PluginRecord& plugin) {
  if (!plugin.registered_device) return "";
  // The lookup's kernel record (its name is read below) may be retired by another thread's
  // deregistration at any time; a call scope keeps it from being freed meanwhile (Note
  // [Reclaiming deregistered kernels] in dispatcher/op_registry.cc).
  CallScope scope;
  const int32_t type = plugin.desc.device_type;
  const auto device = static_cast<DeviceType>(type);
  const DispatchKey key = DispatchKeyFor(device);
  OpRegistry& registry = OpRegistry::Global();
  absl::StatusOr<OperatorHandle> copy = registry.Find("copy_");
  if (!copy.ok()) return "";
  absl::StatusOr<KernelLookup> lookup = registry.Lookup(*copy, key);
  if (lookup.ok() && lookup->source == KernelSource::kKernel) return "";
  bool has_kernels = false;
  std::vector<std::string> derived;
  for (const KernelRecord& kernel : plugin.kernel_records) {
    if (kernel.device_type != type || kernel.status == TSR_KERNEL_REFUSED) continue;
    has_kernels = true;
    absl::StatusOr<OperatorHandle> op = registry.Find(kernel.op_name);
    if (!op.ok() || op->variant() != VariantKind::kFunctional) continue;
    for (const std::optional<OperatorHandle>& form : {op->out_form(), op->inplace_form()}) {
      if (form.has_value() && DerivedThroughCopy(*form, key)) derived.push_back(form->name());
    }
  }
  if (!has_kernels) return "";
  std::string forms;
  if (derived.empty()) {
    forms = "(none of this plugin's kernels has such a form today)";
  } else {
    const size_t shown = std::min(derived.size(), kCopyNoteMaxNames);
    forms = absl::StrFormat(
        "(%d: %s%s)", derived.size(), absl::StrJoin(derived.begin(), derived.begin() + shown, ", "),
        derived.size() > shown ? absl::StrFormat(" and %d more", derived.size() - shown)
                               : std::string());
  }
  const std::string name = DeviceTypeName(device);
  if (lookup.ok()) {
    return absl::StrFormat(
        "no copy_ kernel for %s: copy_ there runs on the %s (%s), and so do the copies of the "
        "out= and in-place forms the runtime derives from this plugin's functional kernels %s; "
        "register a copy_ kernel for %s to keep them on the device",
        name, lookup->source == KernelSource::kFallback ? "fallback" : "composite",
        lookup->kernel->name, forms, name);
  }
  return absl::StrFormat(
      "no copy_ kernel for %s and no fallback: copy_ there is not implemented, so the out= and "
      "in-place forms the runtime derives from this plugin's functional kernels fail %s; "
      "register a copy_ kernel for %s (or the CPU fallback)",
      name, forms, name);
}

// LoadReport owns the strings its C view points into.
struct LoadReport {
  tsr_load_report c = {};
  std::string reason, path, plugin_name, plugin_version, device_name, kernel_notes;

  void Publish() {
    c.struct_size = sizeof(tsr_load_report);
    c.kernel_notes = {kernel_notes.data(), kernel_notes.size()};
    c.reason = {reason.data(), reason.size()};
    c.path = {path.data(), path.size()};
    c.plugin_name = {plugin_name.data(), plugin_name.size()};
    c.plugin_version = {plugin_version.data(), plugin_version.size()};
    c.device_name = {device_name.data(), device_name.size()};
  }
};

class PluginLoader {
 public:
  static PluginLoader& Global() {
    static PluginLoader* loader = new PluginLoader();  // never destroyed: plugins stay loaded
    return *loader;
  }

  // Load returns the report; the status says whether the plugin is loaded. A plugin refused
  // after its register_fn ran comes back in *refused, for DisposeOfRefused once the caller holds
  // nothing that an op call in flight may wait for (Note [Refused after registering]).
  std::pair<const LoadReport*, absl::Status> Load(const std::string& path,
                                                  std::shared_ptr<PluginRecord>* refused) {
    const LoadReport* published = nullptr;
    absl::Status status;
    {
      absl::MutexLock lock(&mu_);
      char resolved[PATH_MAX];
      const std::string canonical = realpath(path.c_str(), resolved) ? resolved : path;
      if (auto it = loaded_by_path_.find(canonical); it != loaded_by_path_.end()) {
        return {it->second, absl::OkStatus()};
      }
      auto report = std::make_unique<LoadReport>();
      report->path = path;
      const LoadInProgress in_progress{path};
      const ScopedThreadLocal<const LoadInProgress*> loading(tls_load_in_progress, &in_progress);
      report->c.runtime_abi_major = TSR_ABI_VERSION_MAJOR;
      report->c.runtime_abi_minor = TSR_ABI_VERSION_MINOR;
      report->c.device_type = -1;
      report->c.device_count = -1;
      status = LoadLocked(canonical, report.get(), refused);
      report->c.loaded = status.ok();
      report->c.code = static_cast<int32_t>(status.code());
      report->reason = std::string(status.message());
      report->Publish();
      published = report.get();
      reports_.push_back(std::move(report));
      AppendView(&published->c);
      if (status.ok()) loaded_by_path_[canonical] = published;
    }
    return {published, status};
  }

  // Note [Refused after registering]
  // A plugin refused once its register_fn ran (a registration it was not allowed to make, or
  // an error it returned) may already have published kernels, and another thread may have
  // found one and be running it: the record's last reference must not dlclose the library
  // under that call. So a refusal is disposed of as an unload is (Unload): its registrations
  // were reset under mu_, then, with mu_ released (a call in flight may itself be loading a
  // plugin, and would wait for mu_ while the wait waited for it), the gate closes and waits
  // for every op call that entered before, and only then may the record go. From inside an op
  // call or a parallel task that wait would wait for itself; there the gate closes without
  // waiting and the record is kept for the process (parked_): the plugin's code stays mapped,
  // unreachable, rather than being unmapped under a call that may still run it. Default
  // discovery disposes of its refusals after its std::call_once: an op call in flight may be
  // waiting in that call_once (a kernel's first tsr_op_find) while the wait waited for it. A
  // plugin that registered nothing published nothing to run: it goes at once. The wait covers
  // the plugin's code, not its state: the SDK runs the plugin's unload hooks inside a
  // register_fn that fails (sdk/plugin.hpp), before this wait, and a plugin refused although its
  // register_fn succeeded (a registration it was not allowed to make) gets no unload_fn call.
  // A register_fn that throws (a C++ plugin without the SDK) is not caught here: the ABI
  // forbids it, as for tsr_plugin_init.
  void DisposeOfRefused(std::shared_ptr<PluginRecord> record) {
    if (record->registrations.empty()) return;
    if (CallEpochs::InCall() || InParallelTask()) {
      record->gate->CloseWithoutWaiting();
      absl::MutexLock lock(&mu_);
      parked_.push_back(std::move(record));
      return;
    }
    record->gate->CloseToCalls();
  }

  absl::Status Unload(const std::string& name) {
    TSR_RETURN_IF_ERROR(CheckNotLoading(absl::StrFormat("unload of plugin '%s'", name)));
    // Note [Gating kernel calls] in plugin_gate.h: the unload waits for every op call in
    // flight. From inside one it would wait for itself; from a parallel task, for the call that
    // may be waiting for the task.
    if (CallEpochs::InCall() || InParallelTask()) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "unload of plugin '%s': called from inside %s; unloading waits for every op call in "
          "flight, so unload from outside every op call and parallel task",
          name,
          CallEpochs::InCall() ? "an op call (a kernel, or code it called)"
                               : "a parallel task (tsr_parallel_for)"));
    }
    std::shared_ptr<PluginRecord> record;
    {
      absl::MutexLock lock(&mu_);
      auto it = plugins_.find(name);
      if (it == plugins_.end()) {
        return absl::NotFoundError(absl::StrFormat("unload: no plugin named '%s' is loaded", name));
      }
      record = std::move(it->second);
      plugins_.erase(it);
      for (auto p = loaded_by_path_.begin(); p != loaded_by_path_.end();) {
        if (p->second->plugin_name == name) {
          loaded_by_path_.erase(p++);
        } else {
          ++p;
        }
      }
    }
    // Deregister first (no new call finds the kernels), then wait for calls already inside.
    for (auto& registration : record->registrations) registration->Reset();
    record->gate->CloseToCalls();
    return absl::OkStatus();  // the record (and dlclose) goes with the last reference
  }

  // The readers below run also from plugin code that a load runs (Note [Loads do not nest]).
  std::shared_ptr<PluginRecord> Find(std::string_view name) {
    ReaderLock lock(mu_);
    auto it = plugins_.find(absl::string_view(name.data(), name.size()));
    return it == plugins_.end() ? nullptr : it->second;
  }

  // LoadedNames: the loaded plugins' names, sorted, for messages.
  std::string LoadedNames() {
    ReaderLock lock(mu_);
    std::vector<std::string> names;
    for (const auto& [name, record] : plugins_) names.push_back(name);
    std::sort(names.begin(), names.end());
    return names.empty() ? "none" : absl::StrJoin(names, ", ");
  }

  void Reports(const tsr_load_report* const** out, size_t* count) {
    ReaderLock lock(mu_);
    *out = views_.get();
    *count = view_count_;
  }

 private:
  // ReaderLock: takes the loader's lock, unless this thread holds it already for the load in
  // progress (then the loader's lists cannot change under the reader: only the holder changes
  // them, and it is the reader, waiting in plugin code). Note [Loads do not nest].
  class ABSL_SCOPED_LOCKABLE ReaderLock {
   public:
    explicit ReaderLock(absl::Mutex& mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu)
        : mu_(tls_load_in_progress == nullptr ? &mu : nullptr) {
      if (mu_ != nullptr) mu_->Lock();
    }
    ~ReaderLock() ABSL_UNLOCK_FUNCTION() {
      if (mu_ != nullptr) mu_->Unlock();
    }
    ReaderLock(const ReaderLock&) = delete;
    ReaderLock& operator=(const ReaderLock&) = delete;

   private:
    absl::Mutex* const mu_;
  };

  // Note [Load report lists]
  // tsr_load_reports hands out an array that the caller reads without any lock, maybe while
  // another thread loads a plugin; a std::vector reallocated by the next load left it pointing
  // at freed memory. So the list only ever grows at its end, beyond every count handed out,
  // and when it is full it moves to an array twice as large; the old array is retired, never
  // freed (all retired arrays together are smaller than the current one). Every list ever
  // handed out stays valid, with the same entries, for the process.
  void AppendView(const tsr_load_report* report) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (view_count_ == view_capacity_) {
      const size_t capacity = std::max<size_t>(16, 2 * view_capacity_);
      auto grown = std::make_unique<const tsr_load_report*[]>(capacity);
      std::copy(views_.get(), views_.get() + view_count_, grown.get());
      if (views_ != nullptr) retired_views_.push_back(std::move(views_));
      views_ = std::move(grown);
      view_capacity_ = capacity;
    }
    views_[view_count_++] = report;
  }

  // LoadLocked loads the plugin at `path`. A plugin refused after its register_fn ran may have
  // published kernels that another thread is running: its record goes to `refused`, for the
  // caller to dispose of once it has released mu_ (Note [Refused after registering]).
  absl::Status LoadLocked(const std::string& path, LoadReport* report,
                          std::shared_ptr<PluginRecord>* refused)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    dlerror();
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      return absl::InvalidArgumentError(
          absl::StrFormat("dlopen failed: %s", why ? why : "unknown error"));
    }
    auto record = std::make_shared<PluginRecord>();
    record->path = path;
    record->dl_handle = handle;  // closed by ~PluginRecord, also on every refusal below
    auto init = reinterpret_cast<tsr_plugin_init_fn>(dlsym(handle, TSR_PLUGIN_INIT_SYMBOL));
    if (init == nullptr) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "the library does not export the entry symbol '%s' (not a Tessera plugin?)",
          TSR_PLUGIN_INIT_SYMBOL));
    }
    if (Dl_info info; dladdr(reinterpret_cast<void*>(init), &info) && info.dli_fbase) {
      record->image_base = info.dli_fbase;
      absl::MutexLock lock(&g_images_mu);
      (*g_images)[record->image_base] = Image{record.get(), record};
    }
    auto scratch = std::make_unique<DescriptorScratch>();
    auto* offered = new (scratch->bytes) tsr_plugin_desc{};
    offered->struct_size = sizeof(tsr_plugin_desc);  // the capacity (Note [Descriptor capacity])
    InitWindow window;
    absl::Status init_status;
    {
      const ScopedThreadLocal<InitWindow*> in_init(tls_init_window, &window);
      init_status = StatusFrom(init(&PluginApi(), offered));
    }
    if (!window.violation.ok()) return window.violation;
    if (!init_status.ok()) {
      return absl::Status(init_status.code(),
                          absl::StrFormat("%s returned an error: %s: %s", TSR_PLUGIN_INIT_SYMBOL,
                                          CodeName(init_status.code()), init_status.message()));
    }
    TSR_RETURN_IF_ERROR(CheckCapacity(*offered, *scratch));
    tsr_plugin_desc& desc = record->desc;
    desc = *offered;
    TSR_RETURN_IF_ERROR(CheckDescriptor(desc, report));
    record->name = report->plugin_name;
    if (auto it = plugins_.find(record->name); it != plugins_.end()) {
      return absl::AlreadyExistsError(absl::StrFormat(
          "a plugin named '%s' is already loaded (from %s)", record->name, it->second->path));
    }
    const auto device_type = static_cast<DeviceType>(desc.device_type);
    for (const auto& [name, other] : plugins_) {
      if (other->desc.device_type == desc.device_type) {
        return absl::AlreadyExistsError(
            absl::StrFormat("device type %s is already provided by plugin '%s' (from %s)",
                            DeviceTypeName(device_type), name, other->path));
      }
    }
    if (IsPrivateUse(device_type)) {
      TSR_RETURN_IF_ERROR(DeviceNames::Global().Rename(device_type, report->device_name));
    }
    report->device_name = DeviceTypeName(device_type);
    record->gate = std::make_shared<PluginGate>(record->name);
    if (desc.register_fn == nullptr) {
      return absl::InvalidArgumentError("the descriptor's register_fn is NULL");
    }
    absl::Status registered;
    {
      const ScopedThreadLocal<std::shared_ptr<PluginRecord>> in_register(tls_loading_plugin,
                                                                         record);
      registered = StatusFrom(desc.register_fn(desc.state, &PluginApi()));
    }
    if (registered.ok() && record->refusal.ok()) {
      if (std::string note = CopyNote(*record); !note.empty()) {
        RuntimeApi().log(TSR_LOG_INFO, tsr_string{note.data(), note.size()});
        record->kernel_notes.push_back(std::move(note));
      }
    }
    report->c.kernels_registered = record->kernels;
    report->c.ops_registered = static_cast<int64_t>(record->ops_with_kernels.size());
    report->c.kernels_adapted = record->kernels_adapted;
    report->c.kernels_refused = record->kernels_refused;
    report->c.device_count = record->device_count;
    report->kernel_notes = absl::StrJoin(record->kernel_notes, "\n");
    if (!record->refusal.ok() || !registered.ok()) {
      for (auto& registration : record->registrations) registration->Reset();
      const absl::Status refusal =
          !record->refusal.ok()  // whatever register_fn made of the error it got
              ? record->refusal
              : absl::Status(registered.code(),
                             absl::StrFormat("register_fn returned an error: %s: %s",
                                             CodeName(registered.code()), registered.message()));
      *refused = std::move(record);
      return refusal;
    }
    record->loaded = true;
    plugins_[record->name] = std::move(record);
    return absl::OkStatus();
  }

  // CheckCapacity refuses a plugin that wrote more of the descriptor than the runtime offered
  // (Note [Descriptor capacity]): one that claims a larger struct_size, or that wrote into the
  // scratch beyond the offer whatever it claims.
  static absl::Status CheckCapacity(const tsr_plugin_desc& desc, const DescriptorScratch& scratch) {
    constexpr size_t kOffered = sizeof(tsr_plugin_desc);
    const unsigned char* beyond = scratch.bytes + kOffered;
    const bool wrote_beyond =
        std::any_of(beyond, scratch.bytes + kDescriptorScratch, [](unsigned char b) { return b; });
    if (desc.struct_size <= kOffered && !wrote_beyond) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrFormat(
        "the plugin (built against ABI %d.%d) %s, but the runtime (ABI %d.%d) offered %d bytes "
        "(desc->struct_size on entry to %s): a plugin writes only the descriptor fields that fit "
        "in the size the runtime states (tsr_plugin_desc_capacity)",
        desc.abi_major, desc.abi_minor,
        desc.struct_size > kOffered
            ? absl::StrFormat("filled a %d-byte descriptor", desc.struct_size)
            : std::string("wrote past the descriptor's end"),
        TSR_ABI_VERSION_MAJOR, TSR_ABI_VERSION_MINOR, kOffered, TSR_PLUGIN_INIT_SYMBOL));
  }

  // CheckDescriptor validates the descriptor's size and versions and copies what it says into
  // the report. Fields beyond desc.struct_size are zero (the runtime zero-filled the struct).
  absl::Status CheckDescriptor(const tsr_plugin_desc& desc, LoadReport* report) {
    const size_t min_size = kPluginDescSize[0];
    if (desc.struct_size < min_size) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "the plugin descriptor's struct_size is %d bytes, smaller than the %d bytes of an ABI "
          "1.0 descriptor",
          desc.struct_size, min_size));
    }
    // The sizes come from the plugin: a size that lies (SIZE_MAX) must be refused before any
    // copy, which would throw bad_alloc (and lose the report) or read far past the string.
    const std::pair<const char*, tsr_string> strings[] = {
        {"name", desc.name}, {"version", desc.version}, {"device_name", desc.device_name}};
    for (const auto& [field, value] : strings) {
      if (value.data != nullptr && value.size > kMaxDescriptorString) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%sthe plugin descriptor's %s is %d bytes long; expected at most %d (a wrong size?)",
            report->plugin_name.empty() ? "" : "plugin '" + report->plugin_name + "': ", field,
            value.size, kMaxDescriptorString));
      }
      if (field == std::string_view("name")) report->plugin_name = std::string(View(value));
    }
    report->plugin_version = std::string(View(desc.version));
    report->device_name = std::string(View(desc.device_name));
    report->c.plugin_abi_major = desc.abi_major;
    report->c.plugin_abi_minor = desc.abi_minor;
    report->c.plugin_min_abi_minor = desc.min_abi_minor;
    report->c.device_type = desc.device_type;
    if (TSR_FIELD_FITS(tsr_plugin_desc, op_set_minor, desc.struct_size)) {
      report->c.plugin_op_set_major = desc.op_set_major;
      report->c.plugin_op_set_minor = desc.op_set_minor;
    }
    if (desc.abi_major != TSR_ABI_VERSION_MAJOR) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "plugin '%s' was built against ABI %d.%d, but this runtime provides ABI %d.%d: major "
          "versions differ",
          report->plugin_name, desc.abi_major, desc.abi_minor, TSR_ABI_VERSION_MAJOR,
          TSR_ABI_VERSION_MINOR));
    }
    if (desc.abi_minor <= kRuntimeMinor && desc.struct_size != kPluginDescSize[desc.abi_minor]) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "the plugin descriptor's struct_size is %d bytes, but an ABI %d.%d descriptor has %d "
          "(corrupt or mismatched descriptor)",
          desc.struct_size, desc.abi_major, desc.abi_minor, kPluginDescSize[desc.abi_minor]));
    }
    if (desc.min_abi_minor > desc.abi_minor) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "plugin '%s' needs ABI >= %d.%d but was built against %d.%d (inconsistent descriptor)",
          report->plugin_name, desc.abi_major, desc.min_abi_minor, desc.abi_major, desc.abi_minor));
    }
    if (desc.min_abi_minor > kRuntimeMinor) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "plugin '%s' needs ABI >= %d.%d (built against %d.%d), but this runtime provides ABI "
          "%d.%d",
          report->plugin_name, desc.abi_major, desc.min_abi_minor, desc.abi_major, desc.abi_minor,
          TSR_ABI_VERSION_MAJOR, TSR_ABI_VERSION_MINOR));
    }
    if (report->plugin_name.empty()) {
      return absl::InvalidArgumentError("the plugin descriptor has an empty name");
    }
    if (desc.device_type < 0 || desc.device_type >= kNumDeviceTypes ||
        desc.device_type == static_cast<int32_t>(DeviceType::kMeta)) {
      std::string expected;  // every type a plugin may provide, from TSR_FOR_EACH_DEVICE_TYPE
      for (const base::DeviceTypeFacts& f : base::kDeviceTypeFacts) {
        if (f.type == TSR_DEVICE_META) continue;
        absl::StrAppendFormat(&expected, "%s%s (%d)", expected.empty() ? "" : ", ",
                              base::device_type_label(f.type), static_cast<int>(f.type));
      }
      return absl::InvalidArgumentError(
          absl::StrFormat("plugin '%s' claims device type %d; expected one of %s",
                          report->plugin_name, desc.device_type, expected));
    }
    const auto type = static_cast<DeviceType>(desc.device_type);
    if (!IsPrivateUse(type) && !report->device_name.empty() &&
        report->device_name != DeviceTypeName(type)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "plugin '%s' names device type %s '%s'; only privateuse1..3 can be renamed",
          report->plugin_name, DeviceTypeName(type), report->device_name));
    }
    if (IsPrivateUse(type) && report->device_name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("plugin '%s' provides %s but gives it no device_name",
                          report->plugin_name, DeviceTypeName(type)));
    }
    return absl::OkStatus();
  }

  absl::Mutex mu_;
  std::vector<std::unique_ptr<LoadReport>> reports_ ABSL_GUARDED_BY(mu_);
  // The C view of reports_ (Note [Load report lists]).
  std::unique_ptr<const tsr_load_report*[]> views_ ABSL_GUARDED_BY(mu_);
  size_t view_count_ ABSL_GUARDED_BY(mu_) = 0;
  size_t view_capacity_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::unique_ptr<const tsr_load_report*[]>> retired_views_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, const LoadReport*> loaded_by_path_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::shared_ptr<PluginRecord>> plugins_ ABSL_GUARDED_BY(mu_);
  // Plugins refused from inside an op call or a parallel task, kept mapped for the process
  // (Note [Refused after registering]).
  std::vector<std::shared_ptr<PluginRecord>> parked_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

bool LoadingOnThisThread() { return tls_load_in_progress != nullptr; }

absl::Status CheckNotLoading(std::string_view call) {
  return tls_load_in_progress == nullptr ? absl::OkStatus() : NestedLoadError(call);
}

absl::Status LoadPlugin(const std::string& path, std::shared_ptr<PluginRecord>* refused) {
  return PluginLoader::Global().Load(path, refused).second;
}

void DisposeOfRefusedPlugin(std::shared_ptr<PluginRecord> record) {
  PluginLoader::Global().DisposeOfRefused(std::move(record));
}

PluginRecord::~PluginRecord() {
  if (image_base != nullptr) {
    absl::MutexLock lock(&g_images_mu);
    auto it = g_images->find(image_base);
    if (it != g_images->end() && it->second.record == this) g_images->erase(it);
  }
  if (loaded && desc.unload_fn) desc.unload_fn(desc.state);
  if (dl_handle) dlclose(dl_handle);
}

std::shared_ptr<const void> PluginOwning(const void* code) {
  Dl_info info;
  if (code == nullptr || !dladdr(code, &info) || info.dli_fbase == nullptr) return nullptr;
  absl::MutexLock lock(&g_images_mu);
  auto it = g_images->find(info.dli_fbase);
  if (it == g_images->end()) return nullptr;
  return it->second.owner.lock();
}

absl::Status OutsideRegistrationWindow(const char* slot, const void* caller) {
  if (tls_init_window != nullptr) {
    absl::Status status = absl::FailedPreconditionError(absl::StrFormat(
        "%s called %s before the version handshake: a plugin registers only from its "
        "register_fn, which runs once the runtime accepted its versions",
        TSR_PLUGIN_INIT_SYMBOL, slot));
    if (tls_init_window->violation.ok()) tls_init_window->violation = status;
    return status;
  }
  std::string who = "plugin code";
  if (Dl_info info; caller != nullptr && dladdr(caller, &info) && info.dli_fname) {
    who = absl::StrFormat("plugin library %s", info.dli_fname);
  }
  return absl::FailedPreconditionError(absl::StrFormat(
      "%s called %s outside its registration window: a plugin registers only from its "
      "register_fn, on the loading thread, where the runtime can undo the registration when "
      "the plugin is refused or unloaded",
      who, slot));
}

// Note [What a plugin may register]
// A plugin provides one device type. It registers kernels for that device type (any op), and
// kernels for ops it defined itself on any device type (a CPU kernel for its custom op). A
// kernel for someone else's op on another device type (a CPU abs.out from an NPU plugin)
// would silently replace that device's own kernel or keep its plugin from loading, and a
// device interface or fallback for another device type would take that device over. Any such
// registration fails with PERMISSION_DENIED and refuses the whole plugin (rolled back, the
// registration named in its load report), also when register_fn ignores the error: a plugin
// that tries is broken or hostile, and half of it must not stay loaded.
absl::Status CheckOwnership(int32_t device_type, const void* op_entry, std::string_view what) {
  PluginRecord* plugin = LoadingPlugin();
  if (plugin == nullptr || device_type == plugin->desc.device_type) return absl::OkStatus();
  if (op_entry != nullptr && plugin->defined_ops.contains(op_entry)) return absl::OkStatus();
  absl::Status status = absl::PermissionDeniedError(absl::StrFormat(
      "plugin '%s' (device type %s) may not register %s: a plugin registers %s", plugin->name,
      DeviceTypeName(static_cast<DeviceType>(plugin->desc.device_type)), what,
      op_entry != nullptr ? "kernels only for its own device type, or for ops it defines"
                          : "a device interface and fallbacks only for its own device type"));
  if (plugin->refusal.ok()) plugin->refusal = status;
  return status;
}

std::shared_ptr<PluginRecord> LoadedPlugin(std::string_view name) {
  return PluginLoader::Global().Find(name);
}

std::string LoadedPluginNames() { return PluginLoader::Global().LoadedNames(); }

PluginRecord* LoadingPlugin() { return tls_loading_plugin.get(); }
std::shared_ptr<PluginRecord> LoadingPluginShared() { return tls_loading_plugin; }

tsr_error* HandOut(RegistrationHandle handle, tsr_registration** out) {
  auto shared = std::make_shared<RegistrationHandle>(std::move(handle));
  if (PluginRecord* plugin = LoadingPlugin()) plugin->registrations.push_back(shared);
  if (out) {
    *out = new tsr_registration{std::move(shared)};
  } else if (LoadingPlugin() == nullptr) {
    shared->KeepForever();
  }
  return nullptr;
}

}  // namespace capi
}  // namespace tessera

using namespace tessera;        // NOLINT: this file only implements the C entry points
using namespace tessera::capi;  // NOLINT

extern "C" {

tsr_error* tsr_plugin_load(tsr_string path, const tsr_load_report** report) {
  return Guard(__func__, [&]() -> tsr_error* {
    if (report) *report = nullptr;
    absl::StatusOr<std::string_view> text = ReadString(path, "tsr_plugin_load", "the path");
    if (!text.ok()) return ToError(text.status());
    if (text->empty()) {
      return MakeError(absl::StatusCode::kInvalidArgument,
                       "tsr_plugin_load: expected a path, got an empty string");
    }
    if (absl::Status s = CheckNotLoading(absl::StrFormat("tsr_plugin_load(%s)", *text)); !s.ok()) {
      return ToError(s);
    }
    std::shared_ptr<PluginRecord> refused;
    auto [published, status] = PluginLoader::Global().Load(std::string(*text), &refused);
    if (refused != nullptr) PluginLoader::Global().DisposeOfRefused(std::move(refused));
    if (report) *report = &published->c;
    if (status.ok()) return nullptr;
    return MakeError(status.code(), absl::StrFormat("refused to load plugin %s: %s",
                                                    published->path, status.message()));
  });
}

tsr_error* tsr_plugin_unload(tsr_string name) {
  return Guard(__func__, [&]() -> tsr_error* {
    absl::StatusOr<std::string_view> text =
        ReadString(name, "tsr_plugin_unload", "the plugin name");
    if (!text.ok()) return ToError(text.status());
    return ToError(PluginLoader::Global().Unload(std::string(*text)));
  });
}

void tsr_load_reports(const tsr_load_report* const** reports, size_t* count) {
  if (reports == nullptr || count == nullptr) return;
  PluginLoader::Global().Reports(reports, count);
}

}  // extern "C"
