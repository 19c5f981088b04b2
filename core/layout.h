// Layout and MemoryFormat: the values of the schema types `Layout` and `MemoryFormat`.
//
// On the stack both are ints (PyTorch's c10::Layout and c10::MemoryFormat values), and the
// numbers are part of the stable ABI: tsr_layout and tsr_memory_format in
// tessera/c/common.h equal them (checked by static_asserts in runtime/handles.h).
// Append only.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tessera {

// Tessera's tensors are all strided; PyTorch's sparse and mkldnn layouts have no counterpart.
enum class Layout : int8_t {
  kStrided = 0,
};
inline constexpr int kNumLayouts = 1;

enum class MemoryFormat : int8_t {
  kContiguous = 0,
  kPreserve = 1,
  kChannelsLast = 2,
  kChannelsLast3d = 3,
};
inline constexpr int kNumMemoryFormats = 4;

constexpr bool IsValidLayout(int64_t v) { return v >= 0 && v < kNumLayouts; }
constexpr bool IsValidMemoryFormat(int64_t v) { return v >= 0 && v < kNumMemoryFormats; }

// The names schemas use for the values as defaults: "strided"; "contiguous_format",
// "preserve_format", "channels_last", "channels_last_3d".
constexpr std::string_view LayoutName(Layout layout) {
  switch (layout) {
    case Layout::kStrided:
      return "strided";
  }
  return "<invalid layout>";
}
constexpr std::string_view MemoryFormatName(MemoryFormat format) {
  switch (format) {
    case MemoryFormat::kContiguous:
      return "contiguous_format";
    case MemoryFormat::kPreserve:
      return "preserve_format";
    case MemoryFormat::kChannelsLast:
      return "channels_last";
    case MemoryFormat::kChannelsLast3d:
      return "channels_last_3d";
  }
  return "<invalid memory format>";
}

// ParseLayout / ParseMemoryFormat read those names back; nullopt for any other text.
constexpr std::optional<Layout> ParseLayout(std::string_view name) {
  for (int i = 0; i < kNumLayouts; ++i) {
    if (LayoutName(static_cast<Layout>(i)) == name) return static_cast<Layout>(i);
  }
  return std::nullopt;
}
constexpr std::optional<MemoryFormat> ParseMemoryFormat(std::string_view name) {
  for (int i = 0; i < kNumMemoryFormats; ++i) {
    if (MemoryFormatName(static_cast<MemoryFormat>(i)) == name) {
      return static_cast<MemoryFormat>(i);
    }
  }
  return std::nullopt;
}

}  // namespace tessera
