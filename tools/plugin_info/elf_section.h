// Reading one section of an ELF64 file from its section headers, for tessera-plugin-info: no
// dlopen, no libelf, and every offset and size the file states checked against the file's size
// before it is used, so that a truncated or hostile file is an error, never a crash.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace tessera {
namespace plugin_info {

// ElfError: why a section could not be read.
enum class ElfError {
  kNone,
  kNotElf,     // no ELF magic
  kNot64Bit,   // an ELF32 file (Tessera plugins are ELF64)
  kMalformed,  // a header says something impossible (unknown class or byte order, bad sizes)
  kTruncated,  // a header points beyond the end of the file
  kNoSection,  // a well-formed ELF64 file without the section
  kIo,         // the file could not be read
};

// ElfSource: a file's bytes. read(offset, size, out) copies bytes [offset, offset + size) and is
// only called for ranges the reader has checked lie within `size`.
struct ElfSource {
  uint64_t size = 0;
  std::function<bool(uint64_t offset, size_t size, void* out)> read;
};

// ElfSourceFromFile opens `path`; on failure *error says why.
bool ElfSourceFromFile(const std::string& path, ElfSource* out, std::string* error);
// ElfSourceFromBytes reads `bytes`, which must outlive the source (tests).
ElfSource ElfSourceFromBytes(std::string_view bytes);

// ReadElfSection sets *contents to the section named `name` and returns kNone, or returns why
// not with a message in *error. The section must be unique and hold its bytes in the file (not
// SHT_NOBITS). `max_size` bounds what is read (a larger section is kMalformed).
ElfError ReadElfSection(const ElfSource& file, std::string_view name, std::string* contents,
                        std::string* error, uint64_t max_size = 16u << 20);

// FindElfSection: whether the file has a section named `name` (kNone) or not (kNoSection), or
// why the file could not be read.
ElfError FindElfSection(const ElfSource& file, std::string_view name, std::string* error);

}  // namespace plugin_info
}  // namespace tessera
