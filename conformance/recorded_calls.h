// Cases from recordings (--cases-from FILE): the op calls a real program made, recorded with
// TESSERA_RECORD (runtime/call_recorder.cc, Note [Recording calls]), replayed on the device
// under test as cases of the `recorded` oracle and weighted by how often each occurred, as
// ggml's backend test replays a model's calls: "this backend runs 97 % of ResNet-18's calls
// natively". docs/conformance.md, "Cases from recordings".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "conformance/json.h"
#include "conformance/oracles.h"

namespace tessera {
namespace conformance {

struct RecordedCall {
  int line = 0;    // its line in the file
  std::string op;  // as called: "relu_", "add_.Tensor", "convolution"
  int64_t count = 1;
  Sample sample;             // its arguments; values the recording did not keep are drawn
  std::string dtype;         // its first tensor's dtype, or "*"
  std::string error_code;    // the error it gave when recorded ("INVALID_ARGUMENT"), or ""
  std::string unreplayable;  // why it cannot be replayed, or ""
};

struct Recording {
  std::string path;
  std::string name;       // the file's name without its folder and .jsonl
  bool complete = false;  // its process exited normally: the counts are final
  std::vector<RecordedCall> calls;
};

// ReadRecording reads a recording; values it did not keep are drawn from `seed`. A file that
// is not a recording (its header, its version, a malformed line) is refused with the line, what
// was expected and what was found.
bool ReadRecording(const std::string& path, uint64_t seed, Recording* out, std::string* error);

// What the calls of a recording did, counted by call (each distinct call weighs its count).
struct CallTally {
  int64_t calls = 0, distinct = 0;
  int64_t native = 0;     // passed on the device's own kernels, its values checked
  int64_t unchecked = 0;  // ran on the device's own kernels with nothing to compare against
  int64_t fallback = 0;   // passed through the CPU fallback
  int64_t unsupported = 0, failed = 0, flaky = 0;
  int64_t not_replayed = 0;  // the recording could not carry an argument, or the op is unknown
};

struct RecordingResult {
  std::string path, name;
  bool complete = false;
  CallTally total;
  std::vector<std::pair<std::string, CallTally>> by_op;  // in the order ops first occur
};

// RunRecording replays each distinct call as one case (oracle `recorded`, reported through
// `sink`): against the op database's reference where the op has one, else against the CPU
// plugin's result when the device is another, else run only (unchecked). A call recorded with
// an error must fail with the same code.
RecordingResult RunRecording(const Recording& recording, const RunConfig& config,
                             const CaseSink& sink);

// The recordings' part of each report.
Json RecordingsJson(const std::vector<RecordingResult>& results);
std::string RecordingsMarkdown(const std::vector<RecordingResult>& results);
std::string RecordingsTerminal(const std::vector<RecordingResult>& results);

}  // namespace conformance
}  // namespace tessera
