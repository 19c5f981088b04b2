#include "tools/plugin_info/manifest.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

namespace tessera {
namespace plugin_info {
namespace {

// Note [Manifest text]
// One record per line, fields separated by tabs, the first field the record's key; a tab,
// newline or backslash inside a field is written \t, \n, \\. The first line is
// "tessera-plugin-manifest<TAB><format>", the last "end", so that a manifest cut short is told
// apart from a complete one. A reader skips keys it does not know (a newer tool may add some
// within a format) and refuses a format newer than its own.

std::string Escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\\') {
      out += "\\\\";
    } else {
      out += c;
    }
  }
  return out;
}

bool Unescape(std::string_view s, std::string* out) {
  out->clear();
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      *out += s[i];
      continue;
    }
    if (++i == s.size()) return false;
    if (s[i] == 't') {
      *out += '\t';
    } else if (s[i] == 'n') {
      *out += '\n';
    } else if (s[i] == '\\') {
      *out += '\\';
    } else {
      return false;
    }
  }
  return true;
}

void Line(std::string* out, std::initializer_list<std::string_view> fields) {
  bool first = true;
  for (std::string_view f : fields) {
    if (!first) *out += '\t';
    *out += Escape(f);
    first = false;
  }
  *out += '\n';
}

bool IsVersion(std::string_view s) {  // MAJOR.MINOR
  const size_t dot = s.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == s.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i != dot && (s[i] < '0' || s[i] > '9')) return false;
  }
  return s.size() <= 21;
}

const std::set<std::string_view>& KnownStatuses() {
  static const std::set<std::string_view> kStatuses = {"registered", "adapted", "refused"};
  return kStatuses;
}

std::string JsonQuote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

}  // namespace

std::string Serialize(const Manifest& m) {
  std::string out;
  Line(&out, {kManifestMagic, std::to_string(kManifestFormat)});
  Line(&out, {"plugin", m.plugin});
  Line(&out, {"version", m.version});
  Line(&out, {"abi", m.abi});
  Line(&out, {"min-abi", m.min_abi});
  Line(&out, {"device", m.device_type, m.device});
  Line(&out, {"op-set", m.op_set, m.op_set_stated ? "stated" : "unstated"});
  Line(&out, {"embedded-by", m.embedded_by});
  for (const ManifestKernel& k : m.kernels) {
    Line(&out, {"kernel", k.op, k.device, k.status, k.kernel, k.schema, k.note});
    if (!k.nondeterministic.empty()) {
      Line(&out, {"nondeterministic", k.op, k.device, k.nondeterministic});
    }
  }
  if (!m.dtypes_recorded) {
    Line(&out, {"dtypes", "not-recorded"});
  } else {
    Line(&out, {"dtypes", "conformance", m.dtypes_device, m.dtypes_source});
    for (const ManifestDtypes& d : m.dtypes) {
      for (const auto& [dtype, verdict] : d.verdicts) Line(&out, {"dtype", d.op, dtype, verdict});
    }
  }
  Line(&out, {"end"});
  return out;
}

bool ParseManifest(std::string_view text, Manifest* out, std::string* error) {
  *out = Manifest();
  if (text.find('\0') != std::string_view::npos) {
    *error = "malformed manifest: it contains a NUL byte";
    return false;
  }
  bool ended = false, has_plugin = false, has_abi = false, has_device = false, has_op_set = false,
       has_dtypes = false;
  std::map<std::string, size_t> dtype_index;
  size_t line_no = 0, pos = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) {
      *error = "malformed manifest: cut short (line " + std::to_string(line_no + 1) +
               " has no newline, and no 'end' line follows)";
      return false;
    }
    const std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    std::vector<std::string> f;
    for (size_t start = 0;;) {
      const size_t tab = line.find('\t', start);
      std::string field;
      const std::string_view raw =
          line.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start);
      if (!Unescape(raw, &field)) {
        *error = "malformed manifest: line " + std::to_string(line_no) + " has a bad escape";
        return false;
      }
      f.push_back(std::move(field));
      if (tab == std::string_view::npos) break;
      start = tab + 1;
    }
    auto bad = [&](const std::string& why) {
      *error = "malformed manifest: line " + std::to_string(line_no) + " (" + f[0] + "): " + why;
      return false;
    };
    if (ended) return bad("text after the 'end' line");
    if (line_no == 1) {
      if (f[0] != kManifestMagic || f.size() != 2) {
        *error = "malformed manifest: it does not start with '" + std::string(kManifestMagic) +
                 "<TAB><format>'";
        return false;
      }
      const std::string& v = f[1];
      if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos) {
        return bad("the format is not a number");
      }
      out->format = std::stoi(v);
      if (out->format > kManifestFormat || out->format < 1) {
        *error = "the manifest's format " + v + " is not one this tool reads (format " +
                 std::to_string(kManifestFormat) + "); use a newer tessera-plugin-info";
        return false;
      }
      continue;
    }
    const std::string& key = f[0];
    auto need = [&](size_t n) { return f.size() >= n; };
    if (key == "end") {
      ended = true;
    } else if (key == "plugin") {
      if (!need(2) || f[1].empty()) return bad("expected a plugin name");
      out->plugin = f[1];
      has_plugin = true;
    } else if (key == "version") {
      if (!need(2)) return bad("expected a version");
      out->version = f[1];
    } else if (key == "abi" || key == "min-abi") {
      if (!need(2) || !IsVersion(f[1])) return bad("expected MAJOR.MINOR");
      (key == "abi" ? out->abi : out->min_abi) = f[1];
      has_abi |= key == "abi";
    } else if (key == "device") {
      if (!need(3) || f[1].empty() || f[2].empty()) return bad("expected a device type and name");
      out->device_type = f[1];
      out->device = f[2];
      has_device = true;
    } else if (key == "op-set") {
      if (!need(3) || !IsVersion(f[1]) || (f[2] != "stated" && f[2] != "unstated")) {
        return bad("expected MAJOR.MINOR and 'stated' or 'unstated'");
      }
      out->op_set = f[1];
      out->op_set_stated = f[2] == "stated";
      has_op_set = true;
    } else if (key == "embedded-by") {
      if (!need(2)) return bad("expected what embedded the manifest");
      out->embedded_by = f[1];
    } else if (key == "kernel") {
      if (!need(7) || f[1].empty() || f[2].empty()) {
        return bad("expected op, device, status, kernel, schema and note");
      }
      if (KnownStatuses().count(f[3]) == 0) {
        return bad("unknown status '" + f[3] + "' (registered, adapted or refused)");
      }
      out->kernels.push_back(ManifestKernel{f[1], f[2], f[3], f[4], f[5], f[6], ""});
    } else if (key == "nondeterministic") {
      if (!need(4) || f[3].empty()) return bad("expected op, device and the reason");
      if (out->kernels.empty() || out->kernels.back().op != f[1] ||
          out->kernels.back().device != f[2]) {
        return bad("a nondeterministic line that does not follow its kernel's line (" + f[1] +
                   " on " + f[2] + ")");
      }
      out->kernels.back().nondeterministic = f[3];
    } else if (key == "dtypes") {
      if (need(2) && f[1] == "not-recorded") {
        out->dtypes_recorded = false;
      } else if (need(4) && f[1] == "conformance") {
        out->dtypes_recorded = true;
        out->dtypes_device = f[2];
        out->dtypes_source = f[3];
      } else {
        return bad("expected 'not-recorded' or 'conformance DEVICE SOURCE'");
      }
      has_dtypes = true;
    } else if (key == "dtype") {
      if (!need(4) || f[1].empty() || f[2].empty() || f[3].empty()) {
        return bad("expected op, dtype and verdict");
      }
      if (!has_dtypes || !out->dtypes_recorded) {
        return bad("a dtype line without a 'dtypes conformance' line before it");
      }
      auto [it, added] = dtype_index.emplace(f[1], out->dtypes.size());
      if (added) out->dtypes.push_back(ManifestDtypes{f[1], {}});
      out->dtypes[it->second].verdicts.emplace_back(f[2], f[3]);
    }
    // Other keys: a newer writer's, within this format (Note [Manifest text]).
  }
  if (line_no == 0) {
    *error = "malformed manifest: the section is empty";
    return false;
  }
  if (!ended) {
    *error =
        "malformed manifest: cut short (no 'end' line after line " + std::to_string(line_no) + ")";
    return false;
  }
  const char* missing = !has_plugin   ? "plugin"
                        : !has_abi    ? "abi"
                        : !has_device ? "device"
                        : !has_op_set ? "op-set"
                        : !has_dtypes ? "dtypes"
                                      : nullptr;
  if (missing != nullptr) {
    *error = std::string("malformed manifest: no '") + missing + "' line";
    return false;
  }
  return true;
}

std::string FormatText(const Manifest& m, const std::string& file) {
  std::string out = file + ": Tessera plugin manifest (format " + std::to_string(m.format) + ")\n";
  auto row = [&](const char* key, const std::string& value) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "  %-10s", key);
    out += buf + value + "\n";
  };
  row("plugin:", m.plugin + (m.version.empty() ? "" : " " + m.version));
  row("ABI:", "built against " + m.abi + (m.min_abi.empty() ? "" : ", needs >= " + m.min_abi));
  row("device:", m.device + (m.device == m.device_type ? "" : " (" + m.device_type + ")"));
  row("op set:", m.op_set + (m.op_set_stated ? "" : " (not stated by the plugin; taken as 1.0)"));
  std::set<std::string> ops;
  int registered = 0, adapted = 0, refused = 0;
  for (const ManifestKernel& k : m.kernels) {
    if (k.status != "refused") ops.insert(k.op);
    (k.status == "registered" ? registered : k.status == "adapted" ? adapted : refused)++;
  }
  row("kernels:", std::to_string(m.kernels.size()) + " for " + std::to_string(ops.size()) +
                      " ops (" + std::to_string(registered) + " as built, " +
                      std::to_string(adapted) + " adapted, " + std::to_string(refused) +
                      " refused)");
  if (m.dtypes_recorded) {
    row("dtypes:", "from conformance on " + m.dtypes_device + " (" + m.dtypes_source + "), " +
                       std::to_string(m.dtypes.size()) + " ops");
  } else {
    row("dtypes:", "not recorded (embed with --dtypes-from a `conformance --json` report)");
  }
  if (!m.embedded_by.empty()) row("embedded:", m.embedded_by);
  if (!m.kernels.empty()) {
    size_t op_w = 2, dev_w = 6, status_w = 6, kernel_w = 6;
    for (const ManifestKernel& k : m.kernels) {
      op_w = std::max(op_w, k.op.size());
      dev_w = std::max(dev_w, k.device.size());
      status_w = std::max(status_w, k.status.size());
      kernel_w = std::max(kernel_w, k.kernel.size());
    }
    auto pad = [](const std::string& s, size_t w) { return s + std::string(w - s.size(), ' '); };
    out += "\n  " + pad("op", op_w) + "  " + pad("device", dev_w) + "  " + pad("status", status_w) +
           "  " + pad("kernel", kernel_w) + "  built against\n";
    for (const ManifestKernel& k : m.kernels) {
      out += "  " + pad(k.op, op_w) + "  " + pad(k.device, dev_w) + "  " + pad(k.status, status_w) +
             "  " + pad(k.kernel, kernel_w) + "  " + (k.schema.empty() ? "(unstated)" : k.schema) +
             "\n";
      if (!k.note.empty()) out += "      " + k.note + "\n";
      if (!k.nondeterministic.empty()) {
        out += "      nondeterministic: " + k.nondeterministic + "\n";
      }
    }
  }
  if (m.dtypes_recorded && !m.dtypes.empty()) {
    out += "\n  dtypes (conformance on " + m.dtypes_device + "):\n";
    for (const ManifestDtypes& d : m.dtypes) {
      out += "  " + d.op + ":";
      for (const auto& [dtype, verdict] : d.verdicts) out += " " + dtype + "=" + verdict;
      out += "\n";
    }
  }
  return out;
}

std::string FormatJson(const Manifest& m, const std::string& file) {
  std::string out = "{\n";
  out += "  \"file\": " + JsonQuote(file) + ",\n";
  out += "  \"format\": " + std::to_string(m.format) + ",\n";
  out += "  \"plugin\": " + JsonQuote(m.plugin) + ",\n";
  out += "  \"version\": " + JsonQuote(m.version) + ",\n";
  out += "  \"abi\": " + JsonQuote(m.abi) + ",\n";
  out += "  \"min_abi\": " + JsonQuote(m.min_abi) + ",\n";
  out += "  \"device_type\": " + JsonQuote(m.device_type) + ",\n";
  out += "  \"device\": " + JsonQuote(m.device) + ",\n";
  out += "  \"op_set\": " + JsonQuote(m.op_set) + ",\n";
  out += std::string("  \"op_set_stated\": ") + (m.op_set_stated ? "true" : "false") + ",\n";
  out += "  \"embedded_by\": " + JsonQuote(m.embedded_by) + ",\n";
  out += "  \"kernels\": [";
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const ManifestKernel& k = m.kernels[i];
    out += std::string(i ? "," : "") + "\n    {\"op\": " + JsonQuote(k.op) +
           ", \"device\": " + JsonQuote(k.device) + ", \"status\": " + JsonQuote(k.status) +
           ", \"kernel\": " + JsonQuote(k.kernel) + ", \"schema\": " + JsonQuote(k.schema) +
           ", \"note\": " + JsonQuote(k.note) +
           ", \"nondeterministic\": " + JsonQuote(k.nondeterministic) + "}";
  }
  out += m.kernels.empty() ? "],\n" : "\n  ],\n";
  if (!m.dtypes_recorded) {
    out += "  \"dtypes\": null\n";
  } else {
    out += "  \"dtypes\": {\"source\": " + JsonQuote(m.dtypes_source) +
           ", \"device\": " + JsonQuote(m.dtypes_device) + ", \"ops\": {";
    for (size_t i = 0; i < m.dtypes.size(); ++i) {
      out += std::string(i ? "," : "") + "\n    " + JsonQuote(m.dtypes[i].op) + ": {";
      for (size_t j = 0; j < m.dtypes[i].verdicts.size(); ++j) {
        const auto& [dtype, verdict] = m.dtypes[i].verdicts[j];
        out += std::string(j ? ", " : "") + JsonQuote(dtype) + ": " + JsonQuote(verdict);
      }
      out += "}";
    }
    out += m.dtypes.empty() ? "}}\n" : "\n  }}\n";
  }
  out += "}\n";
  return out;
}

}  // namespace plugin_info
}  // namespace tessera
