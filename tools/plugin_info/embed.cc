#include "tools/plugin_info/embed.h"

#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "conformance/json.h"
#include "tessera/base/device_types.hpp"
#include "tessera/c/tessera.h"
#include "tessera/opset/opset.h"
#include "tools/plugin_info/elf_section.h"

extern char** environ;

namespace tessera {
namespace plugin_info {
namespace {

tsr_string S(const std::string& s) { return tsr_string{s.data(), s.size()}; }
std::string Str(tsr_string s) { return std::string(s.data ? s.data : "", s.size); }
std::string Version(uint32_t major, uint32_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

// The tsr_device_type names as manifests print them (the numbered PrivateUse names).
std::string DeviceTypeName(int32_t type) {
  const char* label = base::device_type_label(type);
  return label != nullptr ? label : "device_type_" + std::to_string(type);
}

const char* StatusName(int32_t status) {
  switch (status) {
    case TSR_KERNEL_REGISTERED:
      return "registered";
    case TSR_KERNEL_ADAPTED:
      return "adapted";
    default:
      return "refused";
  }
}

std::string Consume(tsr_error* error) {
  if (error == nullptr) return "";
  std::string message = Str(tsr_error_message(error));
  tsr_error_release(error);
  return message;
}

// The oracles whose cases run the op's values on the device: conformance/report.cc's
// IsValueOracle, which is what its coverage counts. Dtype claims, error inputs, meta and
// cross-backend cases say nothing about whether the device computes a dtype.
bool IsValueOracle(const std::string& oracle) {
  return oracle == "reference" || oracle == "layouts" || oracle == "variants_out" ||
         oracle == "variants_inplace" || oracle == "memory" || oracle == "process";
}

// Verdict rolls one (op, dtype)'s value cases up into one word (docs/plugin_guide.md).
struct Tally {
  int pass = 0, fail = 0, xfail = 0, fallback = 0, unsupported = 0, skipped = 0, flaky = 0;
  std::string Verdict() const {
    if (fail) return "fail";
    if (xfail) return "xfail";
    // A flaky case (failed, then passed when rerun) keeps a dtype from a clean "pass".
    if (pass || flaky) return fallback || unsupported || flaky ? "partial" : "pass";
    if (fallback) return "fallback";
    if (unsupported) return "unsupported";
    return "skipped";
  }
};

}  // namespace

bool CollectManifest(const std::string& path, Manifest* out, std::string* error) {
  const tsr_load_report* report = nullptr;
  const std::string load_error = Consume(tsr_plugin_load(S(path), &report));
  if (!load_error.empty()) {
    *error = load_error;
    if (report != nullptr) {
      std::string text(tsr_load_report_format(report, nullptr, 0), '\0');
      tsr_load_report_format(report, text.data(), text.size() + 1);
      *error += "\n" + text;
    }
    return false;
  }
  Manifest m;
  m.plugin = Str(report->plugin_name);
  m.version = Str(report->plugin_version);
  m.abi = Version(report->plugin_abi_major, report->plugin_abi_minor);
  m.min_abi = Version(report->plugin_abi_major, report->plugin_min_abi_minor);
  m.device_type = DeviceTypeName(report->device_type);
  m.device = report->device_name.size ? Str(report->device_name) : m.device_type;
  // 0.0: the plugin states no op set, which the runtime takes as 1.0 (tsr_plugin_desc).
  m.op_set_stated = report->plugin_op_set_major != 0 || report->plugin_op_set_minor != 0;
  m.op_set =
      m.op_set_stated ? Version(report->plugin_op_set_major, report->plugin_op_set_minor) : "1.0";
  m.embedded_by = "tessera-plugin-info " TESSERA_VERSION " (runtime ABI " +
                  Version(report->runtime_abi_major, report->runtime_abi_minor) + ", op set " +
                  Version(TSR_OP_SET_VERSION_MAJOR, TSR_OP_SET_VERSION_MINOR) + ")";
  size_t count = 0;
  if (std::string e = Consume(tsr_plugin_kernels(report->plugin_name, nullptr, 0, &count));
      !e.empty()) {
    *error = e;
    return false;
  }
  std::vector<tsr_kernel_info> infos(count);
  for (tsr_kernel_info& info : infos) info.struct_size = sizeof info;
  if (std::string e =
          Consume(tsr_plugin_kernels(report->plugin_name, infos.data(), infos.size(), &count));
      !e.empty()) {
    *error = e;
    return false;
  }
  for (const tsr_kernel_info& k : infos) {
    m.kernels.push_back(ManifestKernel{
        Str(k.op_name),
        k.device_type == report->device_type ? m.device : DeviceTypeName(k.device_type),
        StatusName(k.status), Str(k.kernel_name), Str(k.schema), Str(k.note),
        Str(k.nondeterministic)});
  }
  *out = std::move(m);
  return true;
}

bool AddConformanceDtypes(const std::string& json_path, Manifest* manifest, std::string* error) {
  std::ifstream in(json_path, std::ios::binary);
  if (!in) {
    *error = "cannot read the conformance report " + json_path;
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  conformance::Json root;
  std::string why;
  if (!conformance::Json::Parse(text.str(), &root, &why)) {
    *error = json_path + ": not JSON: " + why;
    return false;
  }
  const conformance::Json* cases = root.find("cases");
  if (root.kind() != conformance::Json::Kind::kObject || cases == nullptr ||
      cases->kind() != conformance::Json::Kind::kArray) {
    *error = json_path + ": not a `conformance --json` report (no \"cases\" array)";
    return false;
  }
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::string>> dtype_order;
  std::map<std::pair<std::string, std::string>, Tally> tallies;
  for (const conformance::Json& c : cases->items()) {
    std::string op = c["op"].as_string();
    if (!c["overload"].as_string().empty()) op += "." + c["overload"].as_string();
    const std::string dtype = c["dtype"].as_string();
    const std::string status = c["status"].as_string();
    if (op.empty() || dtype.empty() || status.empty()) {
      *error = json_path + ": a case without op, dtype or status";
      return false;
    }
    if (dtype == "*" || !IsValueOracle(c["oracle"].as_string())) continue;
    auto key = std::make_pair(op, dtype);
    if (!tallies.count(key)) {
      if (!dtype_order.count(op)) order.push_back(op);
      dtype_order[op].push_back(dtype);
    }
    Tally& t = tallies[key];
    if (status == "pass" || status == "xpass") {
      ++t.pass;
    } else if (status == "fail" || status == "crash" || status == "timeout") {
      ++t.fail;
    } else if (status == "xfail") {
      ++t.xfail;
    } else if (status == "fallback") {
      ++t.fallback;
    } else if (status == "unsupported") {
      ++t.unsupported;
    } else if (status == "skipped") {
      ++t.skipped;
    } else if (status == "flaky") {
      ++t.flaky;
    } else {
      *error = json_path + ": unknown case status '" + status + "'";
      return false;
    }
  }
  manifest->dtypes.clear();
  for (const std::string& op : order) {
    ManifestDtypes d{op, {}};
    for (const std::string& dtype : dtype_order[op]) {
      d.verdicts.emplace_back(dtype, tallies[{op, dtype}].Verdict());
    }
    manifest->dtypes.push_back(std::move(d));
  }
  manifest->dtypes_recorded = true;
  const std::string device = root["summary"]["device"].as_string();
  manifest->dtypes_device = device.empty() ? "?" : device;
  manifest->dtypes_source = std::filesystem::path(json_path).filename().string();
  return true;
}

bool EmbedManifest(const std::string& path, const Manifest& manifest, const std::string& objcopy,
                   std::string* error) {
  ElfSource file;
  if (!ElfSourceFromFile(path, &file, error)) return false;
  const ElfError existing = FindElfSection(file, kManifestSection, error);
  if (existing != ElfError::kNone && existing != ElfError::kNoSection) {
    *error = path + ": " + *error;
    return false;
  }
  file = ElfSource();  // closes it before objcopy replaces the file

  const std::string text = Serialize(manifest);
  std::string temp = (std::filesystem::temp_directory_path() / "tessera-manifest-XXXXXX").string();
  const int fd = mkstemp(temp.data());
  if (fd < 0) {
    *error = "cannot create a temporary file: " + std::string(std::strerror(errno));
    return false;
  }
  const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  struct Remove {
    std::string path;
    ~Remove() { std::remove(path.c_str()); }
  } remove_temp{temp};
  if (!written) {
    *error = "cannot write the temporary file " + temp;
    return false;
  }
  // A section objcopy adds from a file is not SEC_ALLOC: it stays in the file and is never
  // mapped when the plugin loads. An existing one is replaced in place (re-embedding).
  const std::string section(kManifestSection);
  std::vector<std::string> args = {objcopy};
  if (existing == ElfError::kNone) {
    args.insert(args.end(), {"--update-section", section + "=" + temp});
  } else {
    args.insert(args.end(), {"--add-section", section + "=" + temp, "--set-section-flags",
                             section + "=contents,readonly"});
  }
  // Note [Never rewrite a loaded plugin in place]
  // This process has the plugin mapped (CollectManifest loaded it), and objcopy given one file
  // rewrites it in place: the pages of the mapping not yet copied then show the new file, and
  // the plugin's destructors at exit jumped to unrelocated addresses. So objcopy writes a new
  // file beside it, which replaces the plugin by rename (a new inode; the mapping keeps the
  // old one). A failure leaves the plugin as it was.
  const std::string output = path + ".tessera-manifest.tmp";
  args.push_back(path);
  args.push_back(output);
  struct RemoveOutput {
    std::string path;
    bool keep = false;
    ~RemoveOutput() {
      if (!keep) std::remove(path.c_str());
    }
  } remove_output{output};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid;
  if (int e = posix_spawnp(&pid, objcopy.c_str(), nullptr, nullptr, argv.data(), environ); e != 0) {
    *error = "cannot run " + objcopy + ": " + std::strerror(e) +
             " (binutils' objcopy; name another with --objcopy)";
    return false;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    *error = objcopy + " failed on " + path + " (see its message above)";
    return false;
  }
  struct stat st;
  if (stat(path.c_str(), &st) == 0) chmod(output.c_str(), st.st_mode & 07777);
  if (std::rename(output.c_str(), path.c_str()) != 0) {
    *error = "cannot replace " + path + ": " + std::strerror(errno);
    return false;
  }
  remove_output.keep = true;
  // Read it back as a reader will.
  std::string back;
  if (!ElfSourceFromFile(path, &file, error)) return false;
  if (ReadElfSection(file, kManifestSection, &back, error) != ElfError::kNone) {
    *error = "the manifest does not read back from " + path + ": " + *error;
    return false;
  }
  if (back != text) {
    *error = "the manifest read back from " + path + " differs from what was written";
    return false;
  }
  return true;
}

}  // namespace plugin_info
}  // namespace tessera
