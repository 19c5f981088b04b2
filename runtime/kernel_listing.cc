// The C ABI's kernel listing (since 1.1): what a loaded plugin registered, kernel by kernel, with
// the schema each was built against and whether it was adapted or refused, so that an embedder
// or a build tool (tessera-plugin-info) sees a plugin's coverage without reading log lines.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>

#include "absl/strings/str_format.h"
#include "runtime/handles.h"
#include "runtime/runtime_state.h"
#include "tessera/c/kernel.h"

using namespace tessera;        // NOLINT: this file only implements the C entry points
using namespace tessera::capi;  // NOLINT

namespace {

tsr_string S(const std::string& s) { return tsr_string{s.data(), s.size()}; }

// TSR_FILL writes `value` into `field` when the caller's struct_size has it (op_listing.cc).
#define TSR_FILL(out, field, value)                                                    \
  if (TSR_FIELD_FITS(std::remove_pointer_t<decltype(out)>, field, (out)->struct_size)) \
  (out)->field = (value)

// The fields up to op_name exist in every tsr_kernel_info.
constexpr size_t kMinInfoSize = offsetof(tsr_kernel_info, op_name) + sizeof(tsr_string);

}  // namespace

extern "C" {

tsr_error* tsr_plugin_kernels(tsr_string plugin_name, tsr_kernel_info* infos, size_t capacity,
                              size_t* count) {
  return Guard(__func__, [&]() -> tsr_error* {
    constexpr const char* fn = "tsr_plugin_kernels";
    if (count == nullptr) {
      return MakeError(absl::StatusCode::kInvalidArgument,
                       absl::StrFormat("%s: expected a count pointer, got NULL", fn));
    }
    if (infos == nullptr && capacity != 0) {
      return MakeError(absl::StatusCode::kInvalidArgument,
                       absl::StrFormat("%s: infos is NULL but capacity is %d", fn, capacity));
    }
    // The caller's element size is the array's stride: every element must state the same one,
    // large enough for the 1.1 fields up to op_name and keeping each element aligned.
    const size_t stride = capacity != 0 ? infos[0].struct_size : 0;
    if (capacity != 0 && (stride < kMinInfoSize || stride % alignof(tsr_kernel_info) != 0)) {
      return MakeError(
          absl::StatusCode::kInvalidArgument,
          absl::StrFormat("%s: infos[0].struct_size is %d; expected sizeof(tsr_kernel_info) as "
                          "the caller was built with (at least %d, a multiple of %d)",
                          fn, stride, kMinInfoSize, alignof(tsr_kernel_info)));
    }
    absl::StatusOr<std::string_view> text = ReadString(plugin_name, fn, "the plugin name");
    if (!text.ok()) return ToError(text.status());
    const std::string name(*text);
    std::shared_ptr<PluginRecord> plugin = LoadedPlugin(name);
    if (plugin == nullptr) {
      return MakeError(absl::StatusCode::kNotFound,
                       absl::StrFormat("%s: no plugin named '%s' is loaded (loaded: %s)", fn, name,
                                       LoadedPluginNames()));
    }
    const std::vector<KernelRecord>& records = plugin->kernel_records;
    const size_t n = std::min(capacity, records.size());
    auto at = [&](size_t i) {
      return reinterpret_cast<tsr_kernel_info*>(reinterpret_cast<unsigned char*>(infos) +
                                                i * stride);
    };
    for (size_t i = 0; i < n; ++i) {
      if (at(i)->struct_size != stride) {
        return MakeError(absl::StatusCode::kInvalidArgument,
                         absl::StrFormat("%s: infos[%d].struct_size is %d but infos[0]'s is %d; "
                                         "set every element's to sizeof(tsr_kernel_info)",
                                         fn, i, at(i)->struct_size, stride));
      }
    }
    *count = records.size();
    for (size_t i = 0; i < n; ++i) {
      tsr_kernel_info* out = at(i);
      const KernelRecord& r = records[i];
      std::memset(out, 0, std::min(stride, sizeof *out));
      out->struct_size = stride;
      TSR_FILL(out, op_name, S(r.op_name));
      TSR_FILL(out, device_type, r.device_type);
      TSR_FILL(out, status, static_cast<int32_t>(r.status));
      TSR_FILL(out, kernel_name, S(r.kernel_name));
      TSR_FILL(out, schema, S(r.schema));
      TSR_FILL(out, note, S(r.note));
      TSR_FILL(out, nondeterministic, S(r.nondeterministic));
    }
    return nullptr;
  });
}

}  // extern "C"
