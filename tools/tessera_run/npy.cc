#include "tools/tessera_run/npy.h"

#include <cctype>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace tessera_run {
namespace {

struct Descr {
  const char* npy;  // NumPy's descr, little-endian or byte-order-free
  tsr_dtype dtype;
  size_t size;
};
constexpr Descr kDescrs[] = {
    {"|b1", TSR_DTYPE_BOOL, 1},     {"|u1", TSR_DTYPE_UINT8, 1},    {"|i1", TSR_DTYPE_INT8, 1},
    {"<i2", TSR_DTYPE_INT16, 2},    {"<i4", TSR_DTYPE_INT32, 4},    {"<i8", TSR_DTYPE_INT64, 8},
    {"<f2", TSR_DTYPE_FLOAT16, 2},  {"<f4", TSR_DTYPE_FLOAT32, 4},  {"<f8", TSR_DTYPE_FLOAT64, 8},
};

// HeaderReader reads the header's Python dict literal: string keys; values that are strings,
// True/False, or tuples of non-negative integers.
class HeaderReader {
 public:
  explicit HeaderReader(const std::string& text) : text_(text) {}

  bool Read(std::string* descr, bool* fortran, std::vector<int64_t>* shape, std::string* error) {
    bool have_descr = false, have_fortran = false, have_shape = false;
    Space();
    if (!Eat('{')) return Fail("expected '{'", error);
    while (true) {
      Space();
      if (Eat('}')) break;
      std::string key;
      if (!String(&key)) return Fail("expected a quoted key", error);
      Space();
      if (!Eat(':')) return Fail("expected ':'", error);
      Space();
      if (key == "descr") {
        if (!String(descr)) return Fail("expected 'descr' to be a string", error);
        have_descr = true;
      } else if (key == "fortran_order") {
        if (text_.compare(pos_, 4, "True") == 0) {
          *fortran = true, pos_ += 4;
        } else if (text_.compare(pos_, 5, "False") == 0) {
          *fortran = false, pos_ += 5;
        } else {
          return Fail("expected 'fortran_order' to be True or False", error);
        }
        have_fortran = true;
      } else if (key == "shape") {
        if (!Tuple(shape)) return Fail("expected 'shape' to be a tuple of sizes", error);
        have_shape = true;
      } else {
        return Fail("unknown key '" + key + "'", error);
      }
      Space();
      if (Eat(',')) continue;
      Space();
      if (Eat('}')) break;
      return Fail("expected ',' or '}'", error);
    }
    if (!have_descr || !have_fortran || !have_shape) {
      return Fail("expected the keys 'descr', 'fortran_order' and 'shape'", error);
    }
    return true;
  }

 private:
  bool Fail(const std::string& what, std::string* error) {
    *error = "header byte " + std::to_string(pos_) + ": " + what;
    return false;
  }
  void Space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Eat(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) return ++pos_, true;
    return false;
  }
  bool String(std::string* out) {
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) return false;
    const char quote = text_[pos_++];
    const size_t end = text_.find(quote, pos_);
    if (end == std::string::npos) return false;
    *out = text_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return true;
  }
  bool Tuple(std::vector<int64_t>* out) {
    if (!Eat('(')) return false;
    while (true) {
      Space();
      if (Eat(')')) return true;
      if (pos_ >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        return false;
      }
      int64_t v = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        const int digit = text_[pos_++] - '0';
        if (v > (std::numeric_limits<int64_t>::max() - digit) / 10) return false;
        v = v * 10 + digit;
      }
      out->push_back(v);
      Space();
      if (Eat(',')) continue;
      Space();
      if (Eat(')')) return true;
      return false;
    }
  }

  const std::string& text_;
  size_t pos_ = 0;
};

}  // namespace

bool ReadNpy(const std::string& path, NpyArray* out, std::string* error) {
  auto fail = [&](const std::string& what) {
    *error = path + ": " + what;
    return false;
  };
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(std::string("cannot open it: ") + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string file = buffer.str();
  if (file.size() < 10 || file.compare(0, 6, "\x93NUMPY") != 0) {
    return fail("expected a .npy file (starting with \\x93NUMPY)");
  }
  const int major = static_cast<unsigned char>(file[6]);
  if (major < 1 || major > 3) {
    return fail("format version " + std::to_string(major) + ".x: expected 1.0, 2.0 or 3.0");
  }
  const size_t length_bytes = major == 1 ? 2 : 4;
  if (file.size() < 8 + length_bytes) return fail("truncated header");
  size_t header_length = 0;
  for (size_t i = 0; i < length_bytes; ++i) {
    header_length |= size_t{static_cast<unsigned char>(file[8 + i])} << (8 * i);
  }
  const size_t data_at = 8 + length_bytes + header_length;
  if (data_at > file.size()) return fail("the header runs past the end of the file");
  const std::string header = file.substr(8 + length_bytes, header_length);
  std::string descr, why;
  bool fortran = false;
  if (!HeaderReader(header).Read(&descr, &fortran, &out->shape, &why)) return fail(why);
  const Descr* known = nullptr;
  for (const Descr& d : kDescrs) {
    if (descr == d.npy || (d.size == 1 && descr.size() == 3 && descr.substr(1) == d.npy + 1)) {
      known = &d;
    }
  }
  if (known == nullptr) {
    return fail("dtype '" + descr +
                "': expected a little-endian bool, uint8, int8/16/32/64 or float16/32/64 array");
  }
  if (fortran) return fail("a Fortran-order array: save it in C order (np.ascontiguousarray)");
  uint64_t numel = 1;
  for (int64_t d : out->shape) {
    if (d != 0 && numel > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(d)) {
      return fail("the shape's size overflows");
    }
    numel *= static_cast<uint64_t>(d);
  }
  const uint64_t available = file.size() - data_at;
  if (numel > available / known->size || numel * known->size != available) {
    return fail("the shape needs " + std::to_string(numel) + " elements of " +
                std::to_string(known->size) + " bytes, but the file holds " +
                std::to_string(available) + " bytes of data");
  }
  out->dtype = known->dtype;
  out->data = file.substr(data_at);
  return true;
}

bool WriteNpy(const std::string& path, const NpyArray& array, std::string* error) {
  const Descr* known = nullptr;
  for (const Descr& d : kDescrs) {
    if (d.dtype == array.dtype) known = &d;
  }
  if (known == nullptr) {
    *error = path + ": NumPy has no dtype for this tensor's (bfloat16)";
    return false;
  }
  std::string shape = "(";
  for (int64_t d : array.shape) shape += std::to_string(d) + ", ";
  if (array.shape.size() > 1) shape.resize(shape.size() - 1), shape.back() = ')';
  if (array.shape.size() == 1) shape += ")";
  if (array.shape.empty()) shape += ")";
  std::string header = std::string("{'descr': '") + known->npy +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // The data starts 64-byte aligned; the header ends with '\n' (the format's rule).
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string file = "\x93NUMPY";
  file += '\x01';
  file += '\x00';
  file += static_cast<char>(header.size() & 0xff);
  file += static_cast<char>(header.size() >> 8);
  std::ofstream out(path, std::ios::binary);
  out << file << header << array.data;
  if (!out) {
    *error = path + ": writing it failed: " + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace tessera_run
