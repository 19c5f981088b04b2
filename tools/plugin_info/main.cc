// tessera-plugin-info: a plugin's manifest (its ops, schemas, op set and dtypes), read from the
// .so's .tessera.manifest ELF section without loading it, or embedded there (--embed).
// docs/plugin_guide.md ("The manifest") documents the tool, its flags and the format.
#include <cstdio>
#include <string>

#include "tools/plugin_info/elf_section.h"
#include "tools/plugin_info/embed.h"
#include "tools/plugin_info/manifest.h"

namespace tessera {
namespace plugin_info {
namespace {

// Exit codes: 0 printed or embedded; 1 the file has no readable manifest (not ELF, ELF32, no
// section, malformed, truncated, unreadable) or embedding failed; 2 a usage error.
constexpr int kExitOk = 0, kExitError = 1, kExitUsage = 2;

const char* kUsage =
    "usage: tessera-plugin-info [--json] PLUGIN.so\n"
    "       tessera-plugin-info --embed PLUGIN.so [--dtypes-from REPORT.json] [--objcopy PATH]\n"
    "Prints the manifest a Tessera plugin carries in its .tessera.manifest ELF section (its\n"
    "kernels, the schemas and op set they were built against, and the dtypes conformance found),\n"
    "reading the file only: the plugin is not loaded. --embed loads the plugin with the runtime\n"
    "and writes the manifest into the file (replacing an earlier one); --dtypes-from adds the\n"
    "per-op dtype results of a `conformance --json` report.\n"
    "Exit codes: 0 ok, 1 no readable manifest or embedding failed, 2 usage error.\n";

int Usage(const std::string& error) {
  std::fprintf(stderr, "tessera-plugin-info: %s\n%s", error.c_str(), kUsage);
  return kExitUsage;
}

int Fail(const std::string& error) {
  std::fprintf(stderr, "tessera-plugin-info: %s\n", error.c_str());
  return kExitError;
}

int Print(const std::string& path, bool json) {
  ElfSource file;
  std::string error, text;
  if (!ElfSourceFromFile(path, &file, &error)) return Fail(error);
  switch (ReadElfSection(file, kManifestSection, &text, &error)) {
    case ElfError::kNone:
      break;
    case ElfError::kNoSection:
      return Fail(path + ": no Tessera plugin manifest (" + error +
                  "); embed one with `tessera-plugin-info --embed " + path +
                  "`, which tessera_add_plugin() does after every build unless "
                  "TESSERA_PLUGIN_MANIFEST is OFF");
    default:
      return Fail(path + ": " + error);
  }
  Manifest manifest;
  if (!ParseManifest(text, &manifest, &error)) return Fail(path + ": " + error);
  const std::string out = json ? FormatJson(manifest, path) : FormatText(manifest, path);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

int Embed(const std::string& path, const std::string& dtypes_from, const std::string& objcopy) {
  Manifest manifest;
  std::string error;
  if (!CollectManifest(path, &manifest, &error)) {
    return Fail("cannot embed a manifest: the runtime refused " + path + ": " + error);
  }
  if (!dtypes_from.empty() && !AddConformanceDtypes(dtypes_from, &manifest, &error)) {
    return Fail(error);
  }
  if (!EmbedManifest(path, manifest, objcopy, &error)) return Fail(error);
  size_t refused = 0;
  for (const ManifestKernel& k : manifest.kernels) refused += k.status == "refused";
  std::printf(
      "tessera-plugin-info: embedded the manifest of plugin '%s' into %s (%zu kernels%s, "
      "op set %s, dtypes %s)\n",
      manifest.plugin.c_str(), path.c_str(), manifest.kernels.size(),
      refused ? (", " + std::to_string(refused) + " refused").c_str() : "", manifest.op_set.c_str(),
      manifest.dtypes_recorded ? ("from " + manifest.dtypes_source).c_str() : "not recorded");
  return kExitOk;
}

int Main(int argc, char** argv) {
  bool json = false, embed = false;
  std::string path, dtypes_from, objcopy = "objcopy";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return kExitOk;
    } else if (a == "--json") {
      json = true;
    } else if (a == "--embed") {
      embed = true;
    } else if (a == "--dtypes-from") {
      if (!value(&dtypes_from)) return Usage("missing value after --dtypes-from");
    } else if (a == "--objcopy") {
      if (!value(&objcopy)) return Usage("missing value after --objcopy");
    } else if (a.size() > 1 && a[0] == '-') {
      return Usage("unknown flag " + a);
    } else if (path.empty()) {
      path = a;
    } else {
      return Usage("one plugin at a time (got " + path + " and " + a + ")");
    }
  }
  if (path.empty()) return Usage("expected a plugin file");
  if (embed && json) return Usage("--json prints a manifest; it does not go with --embed");
  if (!embed && !dtypes_from.empty()) return Usage("--dtypes-from goes with --embed");
  return embed ? Embed(path, dtypes_from, objcopy) : Print(path, json);
}

}  // namespace
}  // namespace plugin_info
}  // namespace tessera

int main(int argc, char** argv) { return tessera::plugin_info::Main(argc, argv); }
