// tessera-plugin-info's ELF reader and manifest parser on good, truncated, corrupted and
// hostile input: each is an error that says what is wrong, never a crash or a read out of
// bounds (run it under ASan to see the bounds checked).
#include <cstdint>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/plugin_info/elf_section.h"
#include "tools/plugin_info/manifest.h"

namespace tessera {
namespace plugin_info {
namespace {

using ::testing::HasSubstr;

// A minimal ELF64 file: the header, each section's bytes, the section name table, then the
// section headers (index 0 null, then `sections`, then .shstrtab).
struct TestSection {
  std::string name, bytes;
  uint32_t type = 1;  // SHT_PROGBITS
};

void Put(std::string* s, size_t at, uint64_t v, size_t n, bool big = false) {
  for (size_t i = 0; i < n; ++i) (*s)[at + (big ? n - 1 - i : i)] = static_cast<char>(v >> (8 * i));
}

std::string MakeElf(const std::vector<TestSection>& sections, bool big = false) {
  std::string file(64, '\0');
  std::memcpy(file.data(),
              "\x7f"
              "ELF",
              4);
  file[4] = 2;                                        // ELFCLASS64
  file[5] = big ? 2 : 1;                              // byte order
  file[6] = 1;                                        // EV_CURRENT
  std::vector<std::pair<uint64_t, uint64_t>> placed;  // offset, size
  std::string names(1, '\0');
  std::vector<uint32_t> name_at;
  for (const TestSection& s : sections) {
    placed.emplace_back(file.size(), s.bytes.size());
    file += s.bytes;
    name_at.push_back(static_cast<uint32_t>(names.size()));
    names += s.name + '\0';
  }
  const uint32_t shstrtab_name = static_cast<uint32_t>(names.size());
  names += std::string(".shstrtab") + '\0';
  const uint64_t names_at = file.size();
  file += names;
  while (file.size() % 8) file += '\0';
  const uint64_t shoff = file.size();
  const size_t count = sections.size() + 2;
  file += std::string(64 * count, '\0');
  for (size_t i = 0; i < sections.size(); ++i) {
    const size_t h = shoff + 64 * (i + 1);
    Put(&file, h + 0, name_at[i], 4, big);
    Put(&file, h + 4, sections[i].type, 4, big);
    Put(&file, h + 24, placed[i].first, 8, big);
    Put(&file, h + 32, placed[i].second, 8, big);
  }
  const size_t h = shoff + 64 * (count - 1);
  Put(&file, h + 0, shstrtab_name, 4, big);
  Put(&file, h + 4, 3, 4, big);  // SHT_STRTAB
  Put(&file, h + 24, names_at, 8, big);
  Put(&file, h + 32, names.size(), 8, big);
  Put(&file, 0x28, shoff, 8, big);      // e_shoff
  Put(&file, 0x3a, 64, 2, big);         // e_shentsize
  Put(&file, 0x3c, count, 2, big);      // e_shnum
  Put(&file, 0x3e, count - 1, 2, big);  // e_shstrndx
  return file;
}

uint64_t ShOff(const std::string& elf) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{static_cast<unsigned char>(elf[0x28 + i])} << (8 * i);
  return v;
}

ElfError Read(const std::string& bytes, std::string* contents, std::string* error) {
  return ReadElfSection(ElfSourceFromBytes(bytes), ".tessera.manifest", contents, error);
}

const std::vector<TestSection> kGood = {{".text", "code"}, {".tessera.manifest", "hello\n"}};

TEST(ElfSection, ReadsTheSectionOfAnElf64FileInEitherByteOrder) {
  for (bool big : {false, true}) {
    std::string contents, error;
    EXPECT_EQ(Read(MakeElf(kGood, big), &contents, &error), ElfError::kNone) << error;
    EXPECT_EQ(contents, "hello\n");
  }
}

TEST(ElfSection, RefusesWhatIsNotAnElf64FileWithTheReason) {
  struct Case {
    const char* what;
    std::string bytes;
    ElfError expected;
    const char* message;
  };
  std::string elf32 = MakeElf(kGood);
  elf32[4] = 1;
  std::string bad_class = MakeElf(kGood);
  bad_class[4] = 7;
  std::string bad_order = MakeElf(kGood);
  bad_order[5] = 0;
  const Case cases[] = {
      {"empty", "", ElfError::kNotElf, "not an ELF file"},
      {"text", "#!/bin/sh\necho hi\n", ElfError::kNotElf, "not an ELF file"},
      {"magic only",
       "\x7f"
       "ELF",
       ElfError::kTruncated, "ELF identification"},
      {"32-bit", elf32, ElfError::kNot64Bit, "32-bit ELF file"},
      {"class", bad_class, ElfError::kMalformed, "unknown ELF class 7"},
      {"byte order", bad_order, ElfError::kMalformed, "unknown byte order 0"},
      {"header cut", MakeElf(kGood).substr(0, 40), ElfError::kTruncated,
       "ends inside the ELF64 header (40 of 64 bytes)"},
      {"no section", MakeElf({{".text", "code"}}), ElfError::kNoSection,
       "no section named .tessera.manifest"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    std::string contents, error;
    EXPECT_EQ(Read(c.bytes, &contents, &error), c.expected);
    EXPECT_THAT(error, HasSubstr(c.message));
  }
}

// Each header field that states an offset, size or count, set to a lie.
TEST(ElfSection, HeadersThatLieAreErrorsNotCrashes) {
  const std::string good = MakeElf(kGood);
  const uint64_t shoff = ShOff(good);
  const size_t manifest_header = shoff + 64 * 2;
  struct Case {
    const char* what;
    size_t at, size;
    uint64_t value;
    ElfError expected;
    const char* message;
  };
  const Case cases[] = {
      {"shoff beyond the file", 0x28, 8, good.size() + 1, ElfError::kTruncated, "ends beyond"},
      {"shoff at 2^64-1", 0x28, 8, UINT64_MAX, ElfError::kTruncated, "ends beyond"},
      {"shoff zero", 0x28, 8, 0, ElfError::kNoSection, "no section header table"},
      {"shentsize 8", 0x3a, 2, 8, ElfError::kMalformed, "section headers of 8 bytes"},
      {"shentsize 0xffff", 0x3a, 2, 0xffff, ElfError::kTruncated, "ends beyond"},
      {"shnum 0xfeff", 0x3c, 2, 0xfeff, ElfError::kTruncated, "ends beyond"},
      {"shstrndx 0", 0x3e, 2, 0, ElfError::kMalformed, "section name table's index 0"},
      {"shstrndx 99", 0x3e, 2, 99, ElfError::kMalformed, "section name table's index 99"},
      {"name beyond the table", manifest_header + 0, 4, 0xfffffff0, ElfError::kMalformed,
       "name lies beyond"},
      {"offset beyond the file", manifest_header + 24, 8, good.size(), ElfError::kTruncated,
       "ends beyond the file"},
      {"offset + size wraps", manifest_header + 24, 8, UINT64_MAX - 2, ElfError::kTruncated,
       "ends beyond the file"},
      {"size 2^64-1", manifest_header + 32, 8, UINT64_MAX, ElfError::kTruncated,
       "ends beyond the file"},
      {"SHT_NOBITS", manifest_header + 4, 4, 8, ElfError::kMalformed, "has no bytes"},
      {"strtab NOBITS", shoff + 64 * 3 + 4, 4, 8, ElfError::kMalformed, "has no bytes"},
      {"strtab beyond", shoff + 64 * 3 + 32, 8, UINT64_MAX, ElfError::kTruncated,
       "section name table ends beyond"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    std::string bad = good;
    Put(&bad, c.at, c.value, c.size);
    std::string contents, error;
    EXPECT_EQ(Read(bad, &contents, &error), c.expected) << error;
    EXPECT_THAT(error, HasSubstr(c.message));
  }
}

TEST(ElfSection, ExtendedSectionNumberingIsReadAndBoundsChecked) {
  std::string elf = MakeElf(kGood);
  const uint64_t shoff = ShOff(elf);
  // e_shnum 0: the count is section 0's sh_size; e_shstrndx 0xffff: the index is its sh_link.
  Put(&elf, 0x3c, 0, 2);
  Put(&elf, 0x3e, 0xffff, 2);
  Put(&elf, shoff + 32, 4, 8);
  Put(&elf, shoff + 40, 3, 4);
  std::string contents, error;
  EXPECT_EQ(Read(elf, &contents, &error), ElfError::kNone) << error;
  EXPECT_EQ(contents, "hello\n");
  Put(&elf, shoff + 32, uint64_t{1} << 40, 8);  // a trillion sections
  EXPECT_EQ(Read(elf, &contents, &error), ElfError::kTruncated);
  EXPECT_THAT(error, HasSubstr("1099511627776 headers"));
}

TEST(ElfSection, UnterminatedAndDuplicateNamesAreMalformed) {
  std::string elf = MakeElf(kGood);
  // The name table ends with ".shstrtab\0": drop its last byte from its size.
  const uint64_t shoff = ShOff(elf);
  uint64_t size = 0;
  for (int i = 0; i < 8; ++i)
    size |= uint64_t{static_cast<unsigned char>(elf[shoff + 64 * 3 + 32 + i])} << (8 * i);
  Put(&elf, shoff + 64 * 3 + 32, size - 1, 8);
  std::string contents, error;
  EXPECT_EQ(Read(elf, &contents, &error), ElfError::kMalformed);
  EXPECT_THAT(error, HasSubstr("runs past the section name table"));
  EXPECT_EQ(
      Read(MakeElf({{".tessera.manifest", "a"}, {".tessera.manifest", "b"}}), &contents, &error),
      ElfError::kMalformed);
  EXPECT_THAT(error, HasSubstr("two sections named .tessera.manifest"));
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The built libnpu.so cut at many lengths, and with bytes of its headers overwritten at random:
// never a crash or an out-of-bounds read, and never a manifest from a file cut before its end.
TEST(ElfSection, TruncatedAndCorruptedPluginsNeverCrashTheReader) {
  const std::string plugin = ReadFile(NPU_PLUGIN_PATH);
  ASSERT_GT(plugin.size(), 4096u) << NPU_PLUGIN_PATH;
  std::string full, error;
  const ElfError whole = Read(plugin, &full, &error);
  ASSERT_TRUE(whole == ElfError::kNone || whole == ElfError::kNoSection) << error;
  // Every length of the first 4 KiB, then ~2000 lengths spread over the file.
  std::vector<size_t> lengths;
  for (size_t n = 0; n < 4096; ++n) lengths.push_back(n);
  for (size_t n = 4096; n < plugin.size(); n += plugin.size() / 2000 + 1) lengths.push_back(n);
  for (size_t n : lengths) {
    std::string contents;
    const std::string cut = plugin.substr(0, n);
    const ElfError e = Read(cut, &contents, &error);
    // The section headers sit at the file's end (objcopy and ld put them last), so a cut file
    // never yields a manifest.
    EXPECT_NE(e, ElfError::kNone) << "cut at " << n;
    if (n >= 64) {
      EXPECT_EQ(e, ElfError::kTruncated) << "cut at " << n << ": " << error;
    }
  }
  const uint64_t shoff = ShOff(plugin);
  std::mt19937_64 rng(10);
  for (int i = 0; i < 3000; ++i) {
    std::string bad = plugin;
    for (int j = 0; j < 4; ++j) {
      // Half the damage in the file header, half in the section header table.
      const size_t at =
          (rng() & 1) || shoff >= bad.size() ? rng() % 64 : shoff + rng() % (bad.size() - shoff);
      bad[at] = static_cast<char>(rng());
    }
    std::string contents;
    const ElfError e = Read(bad, &contents, &error);
    if (e == ElfError::kNone) {
      EXPECT_LE(contents.size(), bad.size());
    }
  }
}

// --- the manifest text ---------------------------------------------------------------------

Manifest Sample() {
  Manifest m;
  m.plugin = "npu";
  m.version = "1.0.0";
  m.abi = "1.1";
  m.min_abi = "1.0";
  m.device_type = "privateuse1";
  m.device = "npu";
  m.op_set = "1.0";
  m.op_set_stated = true;
  m.embedded_by = "tessera-plugin-info 1.0.0 (runtime ABI 1.1, op set 1.0)";
  m.kernels = {
      {"add.Tensor", "npu", "registered", "npu::Add",
       "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", "",
       "atomic adds in scheduling order"},
      {"xs::f", "cpu", "adapted", "xs::f_kernel", "xs::f(Tensor x) -> Tensor",
       "kernel 'xs::f_kernel' adapted:\ta tab, a \\ and\na newline", ""},
  };
  m.dtypes_recorded = true;
  m.dtypes_device = "npu";
  m.dtypes_source = "npu.json";
  m.dtypes = {{"add.Tensor", {{"float32", "pass"}, {"float16", "unsupported"}}}};
  return m;
}

void ExpectSame(const Manifest& a, const Manifest& b) {
  EXPECT_EQ(Serialize(a), Serialize(b));
  ASSERT_EQ(a.kernels.size(), b.kernels.size());
  for (size_t i = 0; i < a.kernels.size(); ++i) {
    EXPECT_EQ(a.kernels[i].note, b.kernels[i].note);
    EXPECT_EQ(a.kernels[i].nondeterministic, b.kernels[i].nondeterministic);
  }
}

TEST(Manifest, RoundTripsThroughItsText) {
  const Manifest m = Sample();
  Manifest back;
  std::string error;
  ASSERT_TRUE(ParseManifest(Serialize(m), &back, &error)) << error;
  ExpectSame(m, back);
  EXPECT_EQ(back.kernels[1].note, "kernel 'xs::f_kernel' adapted:\ta tab, a \\ and\na newline");
  EXPECT_EQ(back.dtypes[0].verdicts[1].second, "unsupported");
  // A nondeterministic kernel's reason is a record of its own, after its kernel's (format 1:
  // older readers skip it).
  EXPECT_THAT(Serialize(m), HasSubstr("nondeterministic\tadd.Tensor\tnpu\tatomic adds in "
                                      "scheduling order\n"));
  EXPECT_EQ(back.kernels[0].nondeterministic, "atomic adds in scheduling order");
  EXPECT_EQ(back.kernels[1].nondeterministic, "");

  Manifest plain = Sample();
  plain.dtypes_recorded = false;
  plain.dtypes.clear();
  ASSERT_TRUE(ParseManifest(Serialize(plain), &back, &error)) << error;
  EXPECT_FALSE(back.dtypes_recorded);
  EXPECT_THAT(Serialize(plain), HasSubstr("dtypes\tnot-recorded\n"));
}

TEST(Manifest, SkipsKeysANewerWriterAddsWithinTheFormat) {
  std::string text = Serialize(Sample());
  text.insert(text.find("kernel\t"), "licence\tApache-2.0\n");
  Manifest back;
  std::string error;
  ASSERT_TRUE(ParseManifest(text, &back, &error)) << error;
  ExpectSame(Sample(), back);
}

TEST(Manifest, EveryProperPrefixIsCutShort) {
  const std::string text = Serialize(Sample());
  for (size_t n = 0; n < text.size(); ++n) {
    Manifest back;
    std::string error;
    EXPECT_FALSE(ParseManifest(text.substr(0, n), &back, &error)) << n;
    EXPECT_FALSE(error.empty());
  }
}

TEST(Manifest, MalformedTextIsRefusedWithTheLine) {
  const std::string good = Serialize(Sample());
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  struct Case {
    std::string text;
    const char* message;
  };
  const Case cases[] = {
      {"", "the section is empty"},
      {"hello\nend\n", "does not start with 'tessera-plugin-manifest"},
      {replace("manifest\t1", "manifest\t2"), "format 2 is not one this tool reads"},
      {replace("manifest\t1", "manifest\tx"), "the format is not a number"},
      {replace("\tregistered\t", "\tmaybe\t"), "line 9 (kernel): unknown status 'maybe'"},
      {replace("abi\t1.1", "abi\tone"), "(abi): expected MAJOR.MINOR"},
      {replace("op-set\t1.0\tstated", "op-set\t1.0"), "(op-set): expected MAJOR.MINOR"},
      {replace("plugin\tnpu\n", ""), "no 'plugin' line"},
      {replace("\\t", "\\q"), "has a bad escape"},
      {good + "kernel\tx\n", "text after the 'end' line"},
      {replace("dtypes\tconformance", "dtypes\tguessed"), "expected 'not-recorded' or"},
      {replace("npu.json", std::string("npu\0json", 8)), "contains a NUL byte"},
      {replace("nondeterministic\tadd.Tensor\tnpu", "nondeterministic\tsub.Tensor\tnpu"),
       "does not follow its kernel's line (sub.Tensor on npu)"},
      {replace("\tnpu\tatomic adds in scheduling order", "\tnpu\t"),
       "(nondeterministic): expected op, device and the reason"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    Manifest back;
    std::string error;
    EXPECT_FALSE(ParseManifest(c.text, &back, &error));
    EXPECT_THAT(error, HasSubstr(c.message));
  }
}

TEST(Manifest, PrintsForPeopleAndMachines) {
  const Manifest m = Sample();
  const std::string text = FormatText(m, "libnpu.so");
  EXPECT_THAT(text, HasSubstr("libnpu.so: Tessera plugin manifest (format 1)"));
  EXPECT_THAT(text, HasSubstr("plugin:   npu 1.0.0"));
  EXPECT_THAT(text, HasSubstr("device:   npu (privateuse1)"));
  EXPECT_THAT(text, HasSubstr("op set:   1.0\n"));
  EXPECT_THAT(text, HasSubstr("kernels:  2 for 2 ops (1 as built, 1 adapted, 0 refused)"));
  EXPECT_THAT(text,
              HasSubstr("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"));
  EXPECT_THAT(text, HasSubstr("add.Tensor: float32=pass float16=unsupported"));
  const std::string json = FormatJson(m, "libnpu.so");
  EXPECT_THAT(json, HasSubstr("\"op_set\": \"1.0\""));
  EXPECT_THAT(json, HasSubstr("\"nondeterministic\": \"atomic adds in scheduling order\""));
  EXPECT_THAT(text, HasSubstr("      nondeterministic: atomic adds in scheduling order\n"));
  EXPECT_THAT(json, HasSubstr("\"note\": \"kernel 'xs::f_kernel' adapted:\\ta tab, a \\\\ and\\na "
                              "newline\""));
  EXPECT_THAT(json, HasSubstr("\"add.Tensor\": {\"float32\": \"pass\", \"float16\": "
                              "\"unsupported\"}"));
  Manifest plain = Sample();
  plain.dtypes_recorded = false;
  EXPECT_THAT(FormatJson(plain, "x"), HasSubstr("\"dtypes\": null"));
  EXPECT_THAT(FormatText(plain, "x"), HasSubstr("dtypes:   not recorded"));
}

}  // namespace
}  // namespace plugin_info
}  // namespace tessera
