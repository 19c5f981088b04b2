#include "tools/plugin_info/elf_section.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

namespace tessera {
namespace plugin_info {
namespace {

// The ELF64 layout (the System V gABI, <elf.h>): offsets into the file header and into one
// section header, which is all the reader needs.
constexpr size_t kEhdrSize = 64;
constexpr size_t kEiClass = 4, kEiData = 5;
constexpr uint8_t kClass32 = 1, kClass64 = 2;
constexpr uint8_t kDataLsb = 1, kDataMsb = 2;
constexpr size_t kEShoff = 0x28, kEShentsize = 0x3a, kEShnum = 0x3c, kEShstrndx = 0x3e;
constexpr size_t kShdrSize = 64;
constexpr size_t kShName = 0, kShType = 4, kShOffset = 24, kShSize = 32, kShLink = 40;
constexpr uint32_t kShtNobits = 8;
constexpr uint32_t kShnXindex = 0xffff;

// Fields in the file's byte order.
struct Endian {
  bool big = false;
  uint64_t Get(const unsigned char* p, size_t n) const {
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint64_t{p[big ? n - 1 - i : i]} << (8 * i);
    return v;
  }
};

// InFile: whether [offset, offset + size) lies within a file of `file_size` bytes, without
// overflow.
bool InFile(uint64_t offset, uint64_t size, uint64_t file_size) {
  return offset <= file_size && size <= file_size - offset;
}

struct Section {
  uint32_t name, type, link;
  uint64_t offset, size;
};

class Reader {
 public:
  Reader(const ElfSource& file, std::string* error) : file_(file), error_(error) {}

  ElfError Open() {
    unsigned char ident[16] = {};
    const size_t n = file_.size < sizeof ident ? static_cast<size_t>(file_.size) : sizeof ident;
    if (!Read(0, n, ident)) return ElfError::kIo;
    if (n < 4 || std::memcmp(ident,
                             "\x7f"
                             "ELF",
                             4) != 0) {
      return Fail(ElfError::kNotElf, "not an ELF file (no \\x7fELF magic at its start)");
    }
    if (n < sizeof ident) {
      return Fail(ElfError::kTruncated, "truncated: the file ends inside the ELF identification");
    }
    if (ident[kEiClass] == kClass32) {
      return Fail(ElfError::kNot64Bit,
                  "a 32-bit ELF file (ELFCLASS32); Tessera plugins are 64-bit (ELFCLASS64)");
    }
    if (ident[kEiClass] != kClass64) {
      return Fail(ElfError::kMalformed,
                  "malformed ELF file: unknown ELF class " + std::to_string(ident[kEiClass]));
    }
    if (ident[kEiData] != kDataLsb && ident[kEiData] != kDataMsb) {
      return Fail(ElfError::kMalformed,
                  "malformed ELF file: unknown byte order " + std::to_string(ident[kEiData]));
    }
    endian_.big = ident[kEiData] == kDataMsb;
    unsigned char ehdr[kEhdrSize];
    if (file_.size < kEhdrSize) {
      return Fail(ElfError::kTruncated, "truncated: the file ends inside the ELF64 header (" +
                                            std::to_string(file_.size) + " of " +
                                            std::to_string(kEhdrSize) + " bytes)");
    }
    if (!Read(0, kEhdrSize, ehdr)) return ElfError::kIo;
    shoff_ = endian_.Get(ehdr + kEShoff, 8);
    const uint64_t shentsize = endian_.Get(ehdr + kEShentsize, 2);
    uint64_t shnum = endian_.Get(ehdr + kEShnum, 2);
    uint64_t shstrndx = endian_.Get(ehdr + kEShstrndx, 2);
    if (shoff_ == 0) {
      return Fail(ElfError::kNoSection, "the file has no section header table");
    }
    if (shentsize < kShdrSize) {
      return Fail(ElfError::kMalformed, "malformed ELF file: section headers of " +
                                            std::to_string(shentsize) + " bytes (expected " +
                                            std::to_string(kShdrSize) + ")");
    }
    shentsize_ = shentsize;
    // Extended numbering (gABI): more than 0xff00 sections put the count in section 0's sh_size
    // and the string table's index in its sh_link.
    if (shnum == 0 || shstrndx == kShnXindex) {
      Section zero;
      if (ElfError e = ReadHeader(0, &zero); e != ElfError::kNone) return e;
      if (shnum == 0) shnum = zero.size;
      if (shstrndx == kShnXindex) shstrndx = zero.link;
    }
    if (shnum == 0) return Fail(ElfError::kNoSection, "the file has no sections");
    // Checked before any header is read: a count that does not fit in the file is truncation
    // (or a lie), and it bounds the loop below by the file's size.
    if (shnum > file_.size / shentsize_ || !InFile(shoff_, shnum * shentsize_, file_.size)) {
      return Fail(ElfError::kTruncated, "truncated: the section header table (" +
                                            std::to_string(shnum) + " headers at offset " +
                                            std::to_string(shoff_) + ") ends beyond the file's " +
                                            std::to_string(file_.size) + " bytes");
    }
    shnum_ = shnum;
    if (shstrndx == 0 || shstrndx >= shnum_) {
      return Fail(ElfError::kMalformed, "malformed ELF file: the section name table's index " +
                                            std::to_string(shstrndx) + " is not one of its " +
                                            std::to_string(shnum_) + " sections");
    }
    Section strtab;
    if (ElfError e = ReadHeader(shstrndx, &strtab); e != ElfError::kNone) return e;
    if (strtab.type == kShtNobits) {
      return Fail(ElfError::kMalformed, "malformed ELF file: the section name table has no bytes");
    }
    if (!InFile(strtab.offset, strtab.size, file_.size)) {
      return Fail(ElfError::kTruncated, "truncated: the section name table ends beyond the file");
    }
    if (strtab.size > (64u << 20)) {
      return Fail(ElfError::kMalformed, "malformed ELF file: a section name table of " +
                                            std::to_string(strtab.size) + " bytes");
    }
    names_.resize(static_cast<size_t>(strtab.size));
    if (!names_.empty() && !Read(strtab.offset, names_.size(), names_.data())) return ElfError::kIo;
    return ElfError::kNone;
  }

  // Find sets *found to the section named `name`; kNoSection when there is none, kMalformed
  // when there are two.
  ElfError Find(std::string_view name, Section* found) {
    bool seen = false;
    for (uint64_t i = 1; i < shnum_; ++i) {
      Section s;
      if (ElfError e = ReadHeader(i, &s); e != ElfError::kNone) return e;
      if (s.name >= names_.size()) {
        return Fail(ElfError::kMalformed, "malformed ELF file: section " + std::to_string(i) +
                                              "'s name lies beyond the section name table");
      }
      const char* begin = names_.data() + s.name;
      const void* nul = std::memchr(begin, '\0', names_.size() - s.name);
      if (nul == nullptr) {
        return Fail(ElfError::kMalformed, "malformed ELF file: section " + std::to_string(i) +
                                              "'s name runs past the section name table");
      }
      if (std::string_view(begin, static_cast<const char*>(nul) - begin) != name) continue;
      if (seen) {
        return Fail(ElfError::kMalformed,
                    "malformed: the file has two sections named " + std::string(name));
      }
      seen = true;
      *found = s;
    }
    if (!seen) return Fail(ElfError::kNoSection, "no section named " + std::string(name));
    return ElfError::kNone;
  }

  ElfError Contents(std::string_view name, const Section& s, uint64_t max_size, std::string* out) {
    if (s.type == kShtNobits) {
      return Fail(ElfError::kMalformed,
                  "malformed: section " + std::string(name) + " has no bytes in the file");
    }
    if (!InFile(s.offset, s.size, file_.size)) {
      return Fail(ElfError::kTruncated, "truncated: section " + std::string(name) + " (" +
                                            std::to_string(s.size) + " bytes at offset " +
                                            std::to_string(s.offset) + ") ends beyond the file");
    }
    if (s.size > max_size) {
      return Fail(ElfError::kMalformed, "malformed: section " + std::string(name) + " is " +
                                            std::to_string(s.size) + " bytes (at most " +
                                            std::to_string(max_size) + " expected)");
    }
    out->resize(static_cast<size_t>(s.size));
    if (!out->empty() && !Read(s.offset, out->size(), out->data())) return ElfError::kIo;
    return ElfError::kNone;
  }

 private:
  // ReadHeader reads section header `index`: section 0 before the count is known (its bytes
  // are checked here), any other after Open checked the whole table.
  ElfError ReadHeader(uint64_t index, Section* out) {
    if (index > file_.size / shentsize_ || !InFile(shoff_, (index + 1) * shentsize_, file_.size)) {
      return Fail(ElfError::kTruncated,
                  "truncated: section header " + std::to_string(index) + " lies beyond the file");
    }
    const uint64_t offset = shoff_ + index * shentsize_;
    unsigned char h[kShdrSize];
    if (!Read(offset, kShdrSize, h)) return ElfError::kIo;
    out->name = static_cast<uint32_t>(endian_.Get(h + kShName, 4));
    out->type = static_cast<uint32_t>(endian_.Get(h + kShType, 4));
    out->offset = endian_.Get(h + kShOffset, 8);
    out->size = endian_.Get(h + kShSize, 8);
    out->link = static_cast<uint32_t>(endian_.Get(h + kShLink, 4));
    return ElfError::kNone;
  }

  bool Read(uint64_t offset, size_t size, void* out) {
    if (file_.read(offset, size, out)) return true;
    Fail(ElfError::kIo,
         "could not read " + std::to_string(size) + " bytes at offset " + std::to_string(offset));
    return false;
  }

  ElfError Fail(ElfError kind, std::string message) {
    *error_ = std::move(message);
    return kind;
  }

  const ElfSource& file_;
  std::string* error_;
  Endian endian_;
  uint64_t shoff_ = 0, shentsize_ = 0, shnum_ = 0;
  std::vector<char> names_;
};

}  // namespace

bool ElfSourceFromFile(const std::string& path, ElfSource* out, std::string* error) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = "cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    *error = path + " is not a regular file";
    close(fd);
    return false;
  }
  auto handle = std::shared_ptr<int>(new int(fd), [](int* p) {
    close(*p);
    delete p;
  });
  out->size = static_cast<uint64_t>(st.st_size);
  out->read = [handle](uint64_t offset, size_t size, void* dst) {
    auto* p = static_cast<char*>(dst);
    while (size > 0) {
      const ssize_t n = pread(*handle, p, size, static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;  // an error, or the file shrank meanwhile
      p += n;
      offset += static_cast<uint64_t>(n);
      size -= static_cast<size_t>(n);
    }
    return true;
  };
  return true;
}

ElfSource ElfSourceFromBytes(std::string_view bytes) {
  ElfSource source;
  source.size = bytes.size();
  source.read = [bytes](uint64_t offset, size_t size, void* dst) {
    if (!InFile(offset, size, bytes.size())) return false;
    std::memcpy(dst, bytes.data() + offset, size);
    return true;
  };
  return source;
}

ElfError ReadElfSection(const ElfSource& file, std::string_view name, std::string* contents,
                        std::string* error, uint64_t max_size) {
  Reader reader(file, error);
  if (ElfError e = reader.Open(); e != ElfError::kNone) return e;
  Section section;
  if (ElfError e = reader.Find(name, &section); e != ElfError::kNone) return e;
  return reader.Contents(name, section, max_size, contents);
}

ElfError FindElfSection(const ElfSource& file, std::string_view name, std::string* error) {
  Reader reader(file, error);
  if (ElfError e = reader.Open(); e != ElfError::kNone) return e;
  Section section;
  return reader.Find(name, &section);
}

}  // namespace plugin_info
}  // namespace tessera
