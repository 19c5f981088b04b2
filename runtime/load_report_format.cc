// tsr_load_report_format: a load report as the text that tessera-plugin-info, conformance and
// the logs print (one report, a line per fact; docs/plugin_guide.md shows it).
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "runtime/handles.h"
#include "tessera/c/loader.h"

namespace tessera {
namespace capi {
namespace {

size_t FormatReport(const tsr_load_report* r, char* buf, size_t size) {
  auto str = [](tsr_string s) { return std::string(View(s)); };
  std::string text =
      absl::StrFormat("plugin %s: %s\n", str(r->path), r->loaded ? "loaded" : "REFUSED");
  if (r->plugin_abi_major == 0) {  // the descriptor was never read
    absl::StrAppendFormat(&text, "  plugin ABI: unknown; runtime ABI: %u.%u\n",
                          r->runtime_abi_major, r->runtime_abi_minor);
  } else {
    absl::StrAppendFormat(&text,
                          "  name: %s  version: %s\n"
                          "  plugin ABI: built against %u.%u, needs >= %u.%u; runtime ABI: %u.%u\n",
                          r->plugin_name.size ? str(r->plugin_name) : "(empty)",
                          r->plugin_version.size ? str(r->plugin_version) : "(empty)",
                          r->plugin_abi_major, r->plugin_abi_minor, r->plugin_abi_major,
                          r->plugin_min_abi_minor, r->runtime_abi_major, r->runtime_abi_minor);
  }
  const size_t has = r->struct_size;
  if (r->device_type >= 0) {
    absl::StrAppendFormat(&text, "  device: %s (type %d)\n",
                          r->device_name.size ? str(r->device_name) : "?", r->device_type);
    if (r->loaded && TSR_FIELD_FITS(tsr_load_report, device_count, has) && r->device_count >= 0) {
      absl::StrAppendFormat(&text, "  devices: %d%s\n", r->device_count,
                            r->device_count == 0 ? " (none present on this machine)" : "");
    }
  }
  if (TSR_FIELD_FITS(tsr_load_report, plugin_op_set_minor, has) &&
      (r->plugin_op_set_major != 0 || r->plugin_op_set_minor != 0)) {
    absl::StrAppendFormat(&text, "  op set: built against %u.%u\n", r->plugin_op_set_major,
                          r->plugin_op_set_minor);
  }
  if (r->loaded) {
    // The count includes fallbacks (loader.h), which serve no op of their own, and an op's
    // kernels for several device types: say so where the counts differ, or a plugin of 3
    // kernels and a fallback reads "4 for 3 ops" unexplained.
    absl::StrAppendFormat(&text, "  kernels registered: %d for %d op%s%s\n", r->kernels_registered,
                          r->ops_registered, r->ops_registered == 1 ? "" : "s",
                          r->kernels_registered > r->ops_registered
                              ? " (each fallback and each op's kernel per device type count one)"
                              : "");
  } else {
    absl::StrAppendFormat(&text, "  reason (%s): %s\n",
                          absl::StatusCodeToString(static_cast<absl::StatusCode>(r->code)),
                          str(r->reason));
  }
  if (TSR_FIELD_FITS(tsr_load_report, kernel_notes, has)) {
    if (r->kernels_adapted != 0 || r->kernels_refused != 0) {
      absl::StrAppendFormat(&text,
                            "  kernels built against another schema: %d adapted, %d refused\n",
                            r->kernels_adapted, r->kernels_refused);
    }
    if (r->kernel_notes.size != 0) {
      text += "  notes:\n";
      const std::string notes(View(r->kernel_notes));
      for (absl::string_view line : absl::StrSplit(notes, '\n')) {
        absl::StrAppendFormat(&text, "    %s\n", line);
      }
    }
  }
  return CopyToBuffer(text, buf, size);
}

}  // namespace
}  // namespace capi
}  // namespace tessera

extern "C" {

size_t tsr_load_report_format(const tsr_load_report* r, char* buf, size_t size) {
  if (r == nullptr) return 0;
  try {
    return tessera::capi::FormatReport(r, buf, size);
  } catch (...) {  // out of memory: nothing was written
    if (buf != nullptr && size > 0) buf[0] = '\0';
    return 0;
  }
}

}  // extern "C"
