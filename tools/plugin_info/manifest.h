// A plugin's manifest: what it registers, built against which schemas and op set, and (when a
// conformance report was given) which dtypes each op handles. Written by
// `tessera-plugin-info --embed` into the plugin's `.tessera.manifest` ELF section and read back
// without loading the plugin. The text format is docs/plugin_guide.md's "The manifest".
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera {
namespace plugin_info {

// The section the manifest lives in (not allocated: never mapped when the plugin loads).
inline constexpr std::string_view kManifestSection = ".tessera.manifest";
// The first line's word and the format this code writes; a reader refuses a newer format.
inline constexpr std::string_view kManifestMagic = "tessera-plugin-manifest";
inline constexpr int kManifestFormat = 1;

struct ManifestKernel {
  std::string op;      // "add.Tensor"
  std::string device;  // the device type's name at embedding time ("npu", "cpu")
  std::string status;  // "registered", "adapted" or "refused"
  std::string kernel;  // the kernel's name
  std::string schema;  // the schema it was built against
  std::string note;    // why adapted or refused; empty when registered as is
  // Why two identical calls may give different bits (tsr_kernel_desc.nondeterministic, ABI
  // 1.2); empty for a deterministic kernel. Its own record, after the kernel's.
  std::string nondeterministic;
};

// ManifestDtypes: one op's dtypes as a conformance run found them, each with a verdict
// ("pass", "partial", "fail", "xfail", "fallback", "unsupported", "skipped").
struct ManifestDtypes {
  std::string op;
  std::vector<std::pair<std::string, std::string>> verdicts;  // {dtype, verdict}, in order
};

struct Manifest {
  int format = kManifestFormat;
  std::string plugin, version;
  std::string abi, min_abi;             // "1.1", "1.0"
  std::string device_type, device;      // "privateuse1", "npu"
  std::string op_set;                   // "1.0"
  bool op_set_stated = false;           // false: the plugin states none (taken as 1.0)
  std::string embedded_by;              // the tool, runtime ABI and op set that embedded it
  std::vector<ManifestKernel> kernels;  // in registration order
  bool dtypes_recorded = false;
  std::string dtypes_source, dtypes_device;  // the report's file name and device
  std::vector<ManifestDtypes> dtypes;
};

// Serialize writes the manifest's text (the embedded bytes).
std::string Serialize(const Manifest& manifest);

// ParseManifest reads manifest text; false with the reason (and line number) in *error when it
// is not a manifest of a format this code reads, or is malformed or cut short.
bool ParseManifest(std::string_view text, Manifest* out, std::string* error);

// FormatText: the manifest for people; FormatJson: for machines (docs/plugin_guide.md).
std::string FormatText(const Manifest& manifest, const std::string& file);
std::string FormatJson(const Manifest& manifest, const std::string& file);

}  // namespace plugin_info
}  // namespace tessera
