// `tessera-plugin-info --embed`: load a plugin with the real runtime (in this process: running
// plugin code is fine at build time), collect its load report and kernel listing
// (tsr_plugin_kernels), and write the manifest into the plugin's .tessera.manifest section.
#pragma once

#include <string>

#include "tools/plugin_info/manifest.h"

namespace tessera {
namespace plugin_info {

// CollectManifest loads the plugin at `path` and describes it; false with *error when the
// runtime refused it (the load report follows in *error).
bool CollectManifest(const std::string& path, Manifest* out, std::string* error);

// AddConformanceDtypes sets the manifest's dtypes from a `conformance --json` report.
bool AddConformanceDtypes(const std::string& json_path, Manifest* manifest, std::string* error);

// EmbedManifest writes `manifest` into the .tessera.manifest section of the ELF file at `path`
// with `objcopy` (replacing the section when there is one already), and reads it back.
bool EmbedManifest(const std::string& path, const Manifest& manifest, const std::string& objcopy,
                   std::string* error);

}  // namespace plugin_info
}  // namespace tessera
