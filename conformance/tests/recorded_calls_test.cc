// Cases from recordings (--cases-from, conformance/recorded_calls.h): what a replay counts and
// reports, what it catches (a wrong kernel, an ignored layout), that what the recorder writes
// replays, and the files it refuses or partly leaves out.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "conformance/tests/cli_test_support.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace conformance {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A recording as TESSERA_RECORD writes it: the header, then one line per distinct call.
std::string WriteRecording(const std::string& name, const std::vector<std::string>& calls,
                           bool complete = true) {
  const std::string path = TempPath(name + ".jsonl");
  std::ofstream out(path);
  out << "{\"format\":\"tessera.recording\",\"format_version\":1,\"complete\":"
      << (complete ? "true" : "false") << ",\"values_up_to\":4096}\n";
  for (const std::string& c : calls) out << c << "\n";
  return path;
}

// RecordedCall: a line of `op` with `count` and these arguments (JSON objects).
std::string RecordedCallLine(const std::string& op, int count, const std::string& args,
                             const std::string& extra = "") {
  return "{\"op\":\"" + op + "\",\"schema\":\"(as recorded)\",\"count\":" + std::to_string(count) +
         ",\"args\":[" + args + "]" + extra + "}";
}

std::string F32(const std::string& shape, const std::string& rest) {
  return "{\"name\":\"t\",\"kind\":\"tensor\",\"dtype\":\"float32\",\"shape\":" + shape + rest +
         "}";
}
std::string Typed(const std::string& dtype, const std::string& shape, const std::string& rest) {
  return "{\"name\":\"t\",\"kind\":\"tensor\",\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
         rest + "}";
}
const char* kAlphaOne =
    "{\"name\":\"alpha\",\"kind\":\"scalar\",\"scalar_kind\":\"int\",\"value\":1}";

const Json& RecordingOf(const CliRun& r) { return r.json["recordings"].items().at(0); }

TEST(Recordings, ReplayedCallsAreWeightedByHowOftenTheyOccurred) {
  const std::string path = WriteRecording(
      "cpu",
      {
          // values kept: compared with the reference
          RecordedCallLine("add.Tensor", 5,
                           F32("[2,3]", ",\"values\":[1,2,3,4,5,6]") + "," +
                               F32("[2,3]", ",\"values\":[6,5,4,3,2,1]") + "," + kAlphaOne),
          // values drawn, one operand transposed (strides kept)
          RecordedCallLine("add.Tensor", 3,
                           F32("[4,5]", "") + "," +
                               F32("[4,5]", ",\"strides\":[1,4],\"storage_offset\":0") + "," +
                               kAlphaOne),
          RecordedCallLine("relu_", 2, F32("[3]", ",\"values\":[-1,0,2]")),
          RecordedCallLine(
              "add.out", 1,
              F32("[2]", "") + "," + F32("[2]", "") + "," + kAlphaOne + "," + F32("[2]", "")),
          // no reference, and the device is the CPU: run, not checked
          RecordedCallLine(
              "view", 1,
              F32("[2,3]", "") + ",{\"name\":\"size\",\"kind\":\"int_list\",\"value\":[6]}"),
          // refused when recorded: must be refused with the same code
          RecordedCallLine("add.Tensor", 1, F32("[2]", "") + "," + F32("[3]", "") + "," + kAlphaOne,
                           ",\"error\":{\"code\":\"INVALID_ARGUMENT\",\"message\":\"...\"}"),
          RecordedCallLine("add.Tensor", 1,
                           "{\"name\":\"self\",\"kind\":\"unsupported\",\"what\":\"float[]\"}"),
      });
  const std::string markdown = TempPath("recordings.md");
  const CliRun r = Conformance("--cases-from " + path + " --markdown " + markdown);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(r.json["recordings"].items().size(), 1u) << r.output;
  const Json& rec = RecordingOf(r);
  EXPECT_EQ(rec["recording"].as_string(),
            "tessera_conformance_test_" + std::to_string(getpid()) + "_cpu");
  EXPECT_TRUE(rec["complete"].as_bool());
  EXPECT_EQ(rec["calls"].as_number(), 14);
  EXPECT_EQ(rec["distinct"].as_number(), 7);
  EXPECT_EQ(rec["native"].as_number(), 12) << r.output;
  EXPECT_EQ(rec["unchecked"].as_number(), 1);
  EXPECT_EQ(rec["not_replayed"].as_number(), 1);
  EXPECT_EQ(rec["failed"].as_number(), 0);
  EXPECT_NEAR(rec["native_share"].as_number(), 13.0 / 14.0, 1e-12);
  EXPECT_EQ(rec["by_op"].items().at(0)["op"].as_string(), "add.Tensor");
  EXPECT_EQ(rec["by_op"].items().at(0)["calls"].as_number(), 10);
  // One case per distinct call, of the `recorded` oracle, in the per-op roll-up too.
  EXPECT_EQ(Statuses(r, "add.Tensor", "float32", "recorded").size(), 3u);
  EXPECT_TRUE(All(Statuses(r, "relu_", "float32", "recorded"), Status::kPass));
  EXPECT_TRUE(All(Statuses(r, "add.out", "float32", "recorded"), Status::kPass));
  EXPECT_TRUE(All(Statuses(r, "view", "float32", "recorded"), Status::kSkipped));
  EXPECT_TRUE(All(Statuses(r, "add.Tensor", "*", "recorded"), Status::kSkipped));
  EXPECT_THAT(r.output, HasSubstr("14 calls (7 distinct): 92.9 % native (1 of them unchecked)"));
  EXPECT_THAT(Slurp(markdown), HasSubstr("## Recordings"));
  std::remove(markdown.c_str());
  std::remove(path.c_str());
}

TEST(Recordings, AWrongKernelFailsItsCallsWeightedAndAStridedCallKeepsItsLayout) {
  const std::string path = WriteRecording(
      "bug", {
                 RecordedCallLine("add.Tensor", 6,
                                  F32("[3]", "") + "," + F32("[3]", "") + "," + kAlphaOne),
                 RecordedCallLine(
                     "add.Tensor", 4,
                     Typed("int32", "[3]", "") + "," + Typed("int32", "[3]", "") + "," + kAlphaOne),
                 RecordedCallLine("neg", 2, Typed("int32", "[3]", "")),
                 // no reference: compared with the CPU plugin's result
                 RecordedCallLine(
                     "view", 1,
                     F32("[2,3]", "") + ",{\"name\":\"size\",\"kind\":\"int_list\",\"value\":[6]}"),
             });
  const CliRun r = Conformance(Plugin("wrong_dtype") + " --cases-from " + path);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const Json& rec = RecordingOf(r);
  EXPECT_EQ(rec["calls"].as_number(), 13);
  EXPECT_EQ(rec["failed"].as_number(), 4) << r.output;
  EXPECT_EQ(rec["unsupported"].as_number(), 2);
  EXPECT_EQ(rec["native"].as_number(), 7);
  EXPECT_EQ(rec["unchecked"].as_number(), 0);
  EXPECT_TRUE(All(Statuses(r, "add.Tensor", "int32", "recorded"), Status::kFail));
  EXPECT_THAT(r.output, HasSubstr("add.Tensor: 10 calls, 60.0 % native"));
  // A kernel that ignores strides passes the contiguous call and fails the transposed one.
  const std::string strided = WriteRecording(
      "strides",
      {RecordedCallLine("neg", 1, F32("[4,5]", "")),
       RecordedCallLine("neg", 1, F32("[4,5]", ",\"strides\":[1,4],\"storage_offset\":2"))});
  const CliRun s = Conformance(Plugin("ignores_strides") + " --cases-from " + strided);
  EXPECT_EQ(s.exit_code, 1) << s.output;
  EXPECT_EQ(RecordingOf(s)["native"].as_number(), 1) << s.output;
  EXPECT_EQ(RecordingOf(s)["failed"].as_number(), 1);
  std::remove(path.c_str());
  std::remove(strided.c_str());
}

// What the recorder writes, the replay reads: the calls of the database's samples (every kind of
// argument: tensors, Scalars, ints, lists, strings, dtypes, devices, generators, None, and the
// error inputs' refused calls), recorded from tessera_dump_cases, replay on the CPU with nothing
// failing and nothing left out.
TEST(Recordings, WhatTheRecorderWritesReplays) {
  const std::string path = TempPath("dump.jsonl"), out = TempPath("dump_cases.jsonl");
  const std::string record =
      "TESSERA_RECORD=" + path + " " + DUMP_CASES_BIN +
      " --op '^(add\\.Tensor|sum\\.dim_IntList|gelu|scatter\\.reduce|native_batch_norm|uniform_|"
      "multinomial|arange\\.start_step|cat|gather|random_\\.from|convolution|clamp)$' --out " +
      out + " > /dev/null 2>&1";
  ASSERT_EQ(std::system(record.c_str()), 0) << record;
  const CliRun r = Conformance("--cases-from " + path);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const Json& rec = RecordingOf(r);
  EXPECT_TRUE(rec["complete"].as_bool());
  EXPECT_GT(rec["distinct"].as_number(), 1000);
  EXPECT_EQ(rec["native"].as_number(), rec["calls"].as_number()) << r.output;
  EXPECT_EQ(rec["not_replayed"].as_number(), 0);
  std::remove(path.c_str());
  std::remove(out.c_str());
}

TEST(Recordings, AnUnfinishedRecordingSaysItsCountsAreLowerBounds) {
  // Its last line cut off, as a process killed while appending it leaves it: left out.
  const std::string path = WriteRecording(
      "unfinished",
      {RecordedCallLine("neg", 1, F32("[3]", "")), "{\"op\":\"abs\",\"schema\":\"x\",\"cou"},
      false);
  const CliRun r = Conformance("--cases-from " + path);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(RecordingOf(r)["complete"].as_bool());
  EXPECT_EQ(RecordingOf(r)["calls"].as_number(), 1);
  EXPECT_THAT(r.output, HasSubstr("line 3 is cut off (the recording's process did not finish "
                                  "it); left out"));
  EXPECT_THAT(r.output, HasSubstr("its process did not exit normally: each call's count is a "
                                  "lower bound"));
  std::remove(path.c_str());
}

TEST(Recordings, CallsNoCaseCanBeMadeOfAreNotReplayedAndOpNarrowsTheReplay) {
  const std::string path = WriteRecording(
      "unreplayable",
      {RecordedCallLine("neg", 2, F32("[3]", "")), RecordedCallLine("abs", 3, F32("[3]", "")),
       // a tensor no replay makes, an argument the recording could not carry, an op this
       // runtime lacks
       RecordedCallLine("neg", 5, F32("[100000, 100000]", "")),
       RecordedCallLine("cat", 7,
                        "{\"name\":\"tensors\",\"kind\":\"unsupported\",\"what\":\"float[]\"},"
                        "{\"name\":\"dim\",\"kind\":\"int\",\"value\":0}"),
       RecordedCallLine("vendor::nothing", 11, F32("[3]", ""))});
  const CliRun r = Conformance("--cases-from " + path);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(RecordingOf(r)["not_replayed"].as_number(), 23);
  EXPECT_EQ(RecordingOf(r)["native"].as_number(), 5);
  EXPECT_THAT(r.output, Not(HasSubstr("FAIL")));
  std::string messages;
  for (const CaseResult& c : r.cases) messages += c.message + "\n";
  EXPECT_THAT(messages, HasSubstr("argument 't': a tensor of shape [100000, 100000], more elements "
                                  "than a replay makes (at most 2^28)"));
  EXPECT_THAT(messages, HasSubstr("the recording could not carry this argument (float[])"));
  EXPECT_THAT(messages, HasSubstr("this runtime has no op vendor::nothing"));
  const CliRun narrowed = Conformance("--cases-from " + path + " --op '^abs$'");
  EXPECT_EQ(RecordingOf(narrowed)["calls"].as_number(), 3) << narrowed.output;
  std::remove(path.c_str());
}

TEST(Recordings, AFileThatIsNotARecordingIsAUsageError) {
  struct Bad {
    std::string text, message;
  };
  const std::string header =
      "{\"format\":\"tessera.recording\",\"format_version\":1,\"complete\":true}\n";
  const std::vector<Bad> bad = {
      {"", "expected a recording's header line, found an empty file"},
      {"{\"op\":\"neg\"}\n", "line 1: expected a recording's header"},
      {"{\"format\":\"tessera.recording\",\"format_version\":2}\n",
       "expected format_version 1 (what this conformance reads), found 2 (written by a newer "
       "Tessera)"},
      {header + "{\"op\": \n", "line 2: expected a JSON object, found text that is not JSON"},
      {header + RecordedCallLine("neg", 0, F32("[3]", "")) + "\n",
       "line 2: expected \"count\" to be an integer >= 1"},
      {header + RecordedCallLine("neg", 1, Typed("float33", "[3]", "")) + "\n",
       "line 2: expected a dtype name (bool, uint8, ..., float64), found 'float33'"},
      {header + RecordedCallLine("neg", 1, F32("[3]", ",\"values\":[1,2]")) + "\n",
       "line 2: expected 3 values for shape [3], found 2"},
      {header + RecordedCallLine("neg", 1, F32("[2,3]", ",\"strides\":[1]")) + "\n",
       "line 2: expected 2 strides for shape [2, 3], found [1]"},
  };
  for (const Bad& b : bad) {
    const std::string path = TempPath("bad.jsonl");
    std::ofstream(path) << b.text;
    const CliRun r = Conformance("--cases-from " + path);
    EXPECT_EQ(r.exit_code, 2) << b.text << r.output;
    EXPECT_THAT(r.output, HasSubstr("--cases-from: " + path)) << b.text;
    EXPECT_THAT(r.output, HasSubstr(b.message)) << b.text;
    std::remove(path.c_str());
  }
  const CliRun missing = Conformance("--cases-from /nonexistent/recording.jsonl");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.output, HasSubstr("/nonexistent/recording.jsonl: cannot read it (No such "
                                        "file or directory)"));
  EXPECT_THAT(missing.output, Not(HasSubstr("usage:")));  // the file's fault, not the flags'
  const CliRun directory = Conformance("--cases-from /tmp");
  EXPECT_EQ(directory.exit_code, 2);
  EXPECT_THAT(directory.output,
              HasSubstr("/tmp: expected a recording (a file), found a directory"));
}

}  // namespace
}  // namespace conformance
}  // namespace tessera
