#include "runtime/model/safetensors.h"

#include <algorithm>
#include <cstring>

#include "absl/numeric/int128.h"
#include "absl/strings/str_format.h"
#include "runtime/model/json_reader.h"

namespace tessera {
namespace model {
namespace {

// Safetensors' dtype names for the dtypes Tessera has, in ScalarType order.
constexpr std::pair<ScalarType, std::string_view> kDtypeNames[] = {
    {ScalarType::kBool, "BOOL"},    {ScalarType::kUInt8, "U8"},     {ScalarType::kInt8, "I8"},
    {ScalarType::kInt16, "I16"},    {ScalarType::kInt32, "I32"},    {ScalarType::kInt64, "I64"},
    {ScalarType::kFloat16, "F16"},  {ScalarType::kBFloat16, "BF16"}, {ScalarType::kFloat32, "F32"},
    {ScalarType::kFloat64, "F64"},
};
static_assert(std::size(kDtypeNames) == kNumScalarTypes, "a safetensors name for every dtype");

absl::Status Invalid(std::string message) {
  return absl::InvalidArgumentError(absl::StrCat("safetensors: ", message));
}

absl::Status ReadTensor(const std::string& name, const JsonValue& entry, std::string_view data,
                        SafetensorsTensor* out, std::pair<uint64_t, uint64_t>* range) {
  auto field = [&](std::string_view key, JsonValue::Kind kind) -> const JsonValue* {
    const JsonValue* v = entry.Find(key);
    return v != nullptr && v->kind() == kind ? v : nullptr;
  };
  if (entry.kind() != JsonValue::Kind::kObject) {
    return Invalid(absl::StrFormat("tensor \"%s\" (header byte %d): expected an object, found %s",
                                   name, entry.offset(), JsonKindName(entry.kind())));
  }
  const JsonValue* dtype = field("dtype", JsonValue::Kind::kString);
  const JsonValue* shape = field("shape", JsonValue::Kind::kArray);
  const JsonValue* offsets = field("data_offsets", JsonValue::Kind::kArray);
  if (dtype == nullptr || shape == nullptr || offsets == nullptr) {
    return Invalid(absl::StrFormat(
        "tensor \"%s\" (header byte %d): expected \"dtype\" (a string), \"shape\" and "
        "\"data_offsets\" (arrays)",
        name, entry.offset()));
  }
  out->name = name;
  const auto* known = std::find_if(std::begin(kDtypeNames), std::end(kDtypeNames),
                                   [&](const auto& p) { return p.second == dtype->as_string(); });
  if (known == std::end(kDtypeNames)) {
    return Invalid(absl::StrFormat(
        "tensor \"%s\": dtype \"%s\" is not one Tessera has (expected BOOL, U8, I8, I16, I32, "
        "I64, F16, BF16, F32 or F64)",
        name, dtype->as_string()));
  }
  out->dtype = known->first;
  for (const JsonValue& d : shape->items()) {
    if (d.kind() != JsonValue::Kind::kInt || d.as_int() < 0) {
      return Invalid(absl::StrFormat(
          "tensor \"%s\" (header byte %d): expected a shape of non-negative integers", name,
          d.offset()));
    }
    out->shape.push_back(d.as_int());
  }
  absl::StatusOr<int64_t> numel = ComputeNumel(out->shape);
  if (!numel.ok()) {
    return Invalid(absl::StrFormat("tensor \"%s\": %s", name, numel.status().message()));
  }
  if (offsets->items().size() != 2 || offsets->items()[0].kind() != JsonValue::Kind::kInt ||
      offsets->items()[1].kind() != JsonValue::Kind::kInt || offsets->items()[0].as_int() < 0 ||
      offsets->items()[1].as_int() < offsets->items()[0].as_int()) {
    return Invalid(absl::StrFormat(
        "tensor \"%s\" (header byte %d): expected data_offsets [begin, end] with 0 <= begin <= "
        "end",
        name, offsets->offset()));
  }
  const uint64_t begin = static_cast<uint64_t>(offsets->items()[0].as_int());
  const uint64_t end = static_cast<uint64_t>(offsets->items()[1].as_int());
  const absl::uint128 expected = absl::uint128(static_cast<uint64_t>(*numel)) *
                                 ElementSize(out->dtype);
  if (absl::uint128(end - begin) != expected) {
    return Invalid(absl::StrFormat(
        "tensor \"%s\": a %s tensor of shape %s has %d bytes, but data_offsets [%d, %d] hold %d",
        name, dtype->as_string(), ShapeToString(out->shape), static_cast<uint64_t>(expected),
        begin, end, end - begin));
  }
  if (end > data.size()) {
    return Invalid(absl::StrFormat(
        "tensor \"%s\": data_offsets [%d, %d] end past the data, which has %d bytes (the file "
        "is truncated or the header lies)",
        name, begin, end, data.size()));
  }
  out->bytes = data.substr(begin, end - begin);
  *range = {begin, end};
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SafetensorsFile> ParseSafetensors(std::string_view file) {
  if (file.size() < 8) {
    return Invalid(absl::StrFormat(
        "expected at least 8 bytes (the header's size), found a file of %d bytes", file.size()));
  }
  uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = header_size << 8 | static_cast<uint8_t>(file[i]);
  if (header_size > kMaxSafetensorsHeader || header_size > file.size() - 8) {
    return Invalid(absl::StrFormat(
        "the first 8 bytes give a header of %d bytes, but at most %d (the format's limit) and "
        "%d (what the file holds after them) are possible: the file is truncated, or not a "
        "safetensors file (a Tessera model is one)",
        header_size, kMaxSafetensorsHeader, file.size() - 8));
  }
  const std::string_view header = file.substr(8, header_size);
  if (header.empty() || header[0] != '{') {
    return Invalid(absl::StrFormat(
        "expected the header (at byte 8) to start with '{', found byte 0x%02x: not a "
        "safetensors file (a Tessera model is one)",
        static_cast<uint8_t>(header.empty() ? 0 : header[0])));
  }
  absl::StatusOr<JsonValue> json = ParseJson(header, "safetensors header");
  if (!json.ok()) return json.status();
  if (json->kind() != JsonValue::Kind::kObject) {
    return Invalid(absl::StrFormat("expected the header to be an object, found %s",
                                   JsonKindName(json->kind())));
  }
  const std::string_view data = file.substr(8 + header_size);
  SafetensorsFile out;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;  // [begin, end) of each tensor
  for (const auto& [name, entry] : json->members()) {
    if (name == "__metadata__") {
      if (entry.kind() != JsonValue::Kind::kObject) {
        return Invalid(absl::StrFormat("expected __metadata__ to be an object, found %s",
                                       JsonKindName(entry.kind())));
      }
      for (const auto& [key, value] : entry.members()) {
        if (value.kind() != JsonValue::Kind::kString) {
          return Invalid(absl::StrFormat(
              "__metadata__ \"%s\" (header byte %d): expected a string, found %s", key,
              value.offset(), JsonKindName(value.kind())));
        }
        out.metadata.emplace_back(key, value.as_string());
      }
      continue;
    }
    SafetensorsTensor tensor;
    std::pair<uint64_t, uint64_t> range;
    if (absl::Status s = ReadTensor(name, entry, data, &tensor, &range); !s.ok()) return s;
    out.tensors.push_back(std::move(tensor));
    ranges.push_back(range);
  }
  // The tensors tile the data: sorted by offset, each starts where the previous one ended and
  // the last ends at the end of the file (safetensors' rule: no holes, no overlaps).
  std::vector<size_t> order(ranges.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return ranges[a] < ranges[b]; });
  uint64_t at = 0;
  for (size_t i : order) {
    if (ranges[i].first != at) {
      return Invalid(absl::StrFormat(
          "tensor \"%s\" starts at data byte %d, expected %d: the tensors must tile the data "
          "with no hole or overlap",
          out.tensors[i].name, ranges[i].first, at));
    }
    at = ranges[i].second;
  }
  if (at != data.size()) {
    return Invalid(absl::StrFormat(
        "the tensors end at data byte %d, but the file has %d bytes of data after the header",
        at, data.size()));
  }
  return out;
}

}  // namespace model
}  // namespace tessera
