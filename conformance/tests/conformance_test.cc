// The conformance suite must be able to fail: each planted bug gets exactly the status it
// deserves, the healthy ops of the same plugin keep passing, and the CLI's flags, exit codes
// and reports behave as documented.
#include <sys/wait.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "conformance/json.h"
#include "conformance/report.h"
#include "conformance/tests/cli_test_support.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace conformance {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The marks of one op's row of the Markdown grid, by dtype, and its coverage column (below).
std::map<std::string, std::string> GridRow(const std::string& markdown, const std::string& op);

std::string CoverageOf(const CliRun& r, const std::string& op) {
  for (const Json& o : r.json["ops"].items()) {
    if (o["op"].as_string() == op) return o["coverage"].as_string();
  }
  return "?";
}

TEST(PlantedBugs, WrongForOneDtypeFailsThatDtypeOnly) {
  const CliRun r =
      Conformance(Plugin("wrong_dtype") + " --op '^(add\\.Tensor|neg|abs)$' --dtype float32,int32");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  // Every int32 sample with elements fails (an empty one has nothing to get wrong).
  EXPECT_TRUE(Any(Statuses(r, "add.Tensor", "int32", "reference"), Status::kFail)) << r.output;
  EXPECT_TRUE(All(Statuses(r, "add.Tensor", "float32", "reference"), Status::kPass)) << r.output;
  EXPECT_TRUE(All(Statuses(r, "neg", "float32", "reference"), Status::kPass));
  EXPECT_TRUE(All(Statuses(r, "neg", "int32", "reference"), Status::kUnsupported));
  EXPECT_EQ(CoverageOf(r, "abs"), "partial");  // float32 native, int32 unsupported
  EXPECT_EQ(r.json["summary"]["device"].as_string(), "bug");
}

TEST(PlantedBugs, IgnoringStridesFailsTheLayoutsOracleOnly) {
  const CliRun r = Conformance(Plugin("ignores_strides") + " --op '^neg$' --dtype float32");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(All(Statuses(r, "neg", "float32", "reference"), Status::kPass)) << r.output;
  EXPECT_TRUE(Any(Statuses(r, "neg", "float32", "layouts", "interleaved"), Status::kFail))
      << r.output;
  EXPECT_TRUE(Any(Statuses(r, "neg", "float32", "layouts", "transposed"), Status::kFail));
  EXPECT_TRUE(All(Statuses(r, "neg", "float32", "variants_out"), Status::kPass));
}

TEST(PlantedBugs, WritingPastTheOutputFailsTheMemoryOracle) {
  const CliRun r = Conformance(Plugin("writes_past") + " --op '^abs$' --dtype float32");
  EXPECT_EQ(r.exit_code, 1);
  const std::vector<Status> memory = Statuses(r, "abs", "float32", "memory");
  EXPECT_TRUE(Any(memory, Status::kFail)) << r.output;
  EXPECT_TRUE(All(Statuses(r, "abs", "float32", "reference"), Status::kPass));
  EXPECT_THAT(r.output, HasSubstr("wrote outside its output"));
}

TEST(PlantedBugs, ACrashIsACaseStatusUnderIsolate) {
  const CliRun r =
      Conformance(Plugin("crashes") + " --op '^(sqrt|neg)$' --dtype float32 --isolate");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(All(Statuses(r, "sqrt", "*", "process"), Status::kCrash)) << r.output;
  EXPECT_EQ(CoverageOf(r, "neg"), "full");  // the healthy op still passes, after the crash
  EXPECT_EQ(CoverageOf(r, "sqrt"), "none");
}

TEST(PlantedBugs, ClaimingAnUnsupportedDtypeFailsTheDtypeClaims) {
  const CliRun r =
      Conformance(Plugin("claims_dtype") + " --op '^silu$' --dtype float32,int32,int64");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(All(Statuses(r, "silu", "int32", "dtype_claims"), Status::kFail)) << r.output;
  EXPECT_TRUE(All(Statuses(r, "silu", "int64", "dtype_claims"), Status::kPass));
  EXPECT_TRUE(All(Statuses(r, "silu", "float32", "reference"), Status::kPass));
}

// std::string PluginPath(bug): the planted plugin's file.
std::string PluginPath(const std::string& bug) {
  return std::string(PLANTED_DIR) + "/libtsr_planted_" + bug + ".so";
}

// A timeout names the case the op's process was running when it was killed, as a crash does,
// and marks its dtype in the Markdown grid.
TEST(PlantedBugs, ASlowOpTimesOutUnderIsolate) {
  const std::string markdown = TempPath("timeout_grid.md");
  const CliRun r = Conformance(
      Plugin("slow") +
      " --op '^(relu|neg)$' --dtype float32 --isolate --jobs 2 --timeout 2 --markdown " + markdown);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(All(Statuses(r, "relu", "*", "process"), Status::kTimeout)) << r.output;
  EXPECT_EQ(CoverageOf(r, "neg"), "full");
  bool found = false;
  for (const CaseResult& c : r.cases) {
    if (c.op != "relu" || c.oracle != "process") continue;
    found = true;
    EXPECT_THAT(c.message, HasSubstr("the op ran past --timeout 2 s and was killed while running "
                                     "case float32 reference [contiguous], sample "))
        << c.message;
    EXPECT_EQ(c.running_dtype, "float32");
  }
  EXPECT_TRUE(found) << r.output;
  const std::map<std::string, std::string> row = GridRow(Slurp(markdown), "relu");
  EXPECT_EQ(row.at("float32"), "T") << Slurp(markdown);
  EXPECT_THAT(row.at("coverage"), HasSubstr("**timed out**"));
  EXPECT_THAT(row.at("coverage"), HasSubstr("float32 reference [contiguous], sample "));
  std::remove(markdown.c_str());
}

// A device that does not survive fork (CUDA's, HIP's): under --isolate the plugin is loaded
// in each op's child, never in the parent that forks them, so every case passes. --jobs above
// 1 runs isolated too (it was ignored without --isolate).
TEST(PlantedBugs, IsolatedOpsLoadThePluginInTheirOwnProcess) {
  for (const char* flags : {" --isolate", " --isolate --jobs 2", " --jobs 2"}) {
    const CliRun r =
        Conformance(Plugin("fork_unsafe") + " --op '^(neg|abs)$' --dtype float32" + flags);
    EXPECT_EQ(r.exit_code, 0) << flags << "\n" << r.output;
    EXPECT_EQ(CoverageOf(r, "neg"), "full") << flags;
    EXPECT_EQ(CoverageOf(r, "abs"), "full") << flags;
  }
  // Without --isolate nothing forks: the same plugin passes in one process.
  const CliRun plain = Conformance(Plugin("fork_unsafe") + " --op '^neg$' --dtype float32");
  EXPECT_EQ(plain.exit_code, 0) << plain.output;
  // A bad --device is a usage error under --isolate too (the probing child says it), not a
  // crash while loading.
  const CliRun bad = Conformance("--op '^neg$' --isolate --device bogus");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("--device: unknown device type 'bogus'"));
  EXPECT_THAT(bad.output, Not(HasSubstr("crashed")));
  // And --jobs 2 alone turns a crash into a case, as --isolate does.
  const CliRun crash =
      Conformance(Plugin("crashes") + " --op '^(sqrt|neg)$' --dtype float32 --jobs 2");
  EXPECT_EQ(crash.exit_code, 1) << crash.output;
  EXPECT_TRUE(All(Statuses(crash, "sqrt", "*", "process"), Status::kCrash)) << crash.output;
  EXPECT_EQ(CoverageOf(crash, "neg"), "full");
}

TEST(PlantedBugs, APluginThatCrashesOrHangsWhileLoadingIsAUsageErrorUnderIsolate) {
  const CliRun crash = Conformance(Plugin("crashes_loading") + " --op '^neg$' --isolate");
  EXPECT_EQ(crash.exit_code, 2) << crash.output;
  // A signal, or under a sanitizer the exit status of its report; and which plugin it was.
  EXPECT_THAT(crash.output, HasSubstr("loading the plugins crashed, with "));
  EXPECT_THAT(crash.output,
              HasSubstr(", while loading plugin '" + PluginPath("crashes_loading") + "'"));
  const CliRun hang = Conformance(Plugin("hangs_loading") + " --op '^neg$' --isolate --timeout 2");
  EXPECT_EQ(hang.exit_code, 2) << hang.output;
  EXPECT_THAT(hang.output,
              HasSubstr("loading the plugins ran past --timeout 2 s and was killed, while loading "
                        "plugin '" +
                        PluginPath("hangs_loading") + "'"));
}

// Without --isolate a plugin that crashes while loading still takes the process with it, but
// the crash handler names the plugin first.
TEST(PlantedBugs, APluginThatCrashesWhileLoadingIsNamedWithoutIsolate) {
  const CliRun r = Conformance(Plugin("crashes_loading") + " --op '^neg$'");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("conformance: the process died of SIGSEGV (segmentation fault) "
                                  "while loading plugin '" +
                                  PluginPath("crashes_loading") +
                                  "' (in its tsr_plugin_init or register_fn)"))
      << r.output;
  EXPECT_THAT(r.output, HasSubstr("--isolate loads the plugins and cases libraries in a child "
                                  "process first"));
}

TEST(ConformanceCli, ACrashIsExpectedOnlyByAProcessLine) {
  const std::string expect = TempPath("expect_crash.txt");
  {
    std::ofstream f(expect);
    f << "sqrt * * # a line for the op's failing cases\n";
  }
  // (--allow-fallback-only: the run's only op crashes, so no value case passes natively, which
  // alone would fail the run; here the expectations are what is tested.)
  const std::string args = Plugin("crashes") +
                           " --op '^sqrt$' --dtype float32 --isolate --allow-fallback-only " +
                           "--expect " + expect;
  const CliRun wildcard = Conformance(args);
  EXPECT_EQ(wildcard.exit_code, 1) << wildcard.output;  // the crash still counts
  EXPECT_TRUE(All(Statuses(wildcard, "sqrt", "*", "process"), Status::kCrash));
  {
    std::ofstream f(expect);
    f << "sqrt * process # the planted crash\n";
  }
  const CliRun named = Conformance(args);
  EXPECT_EQ(named.exit_code, 0) << named.output;
  EXPECT_TRUE(All(Statuses(named, "sqrt", "*", "process"), Status::kXfail));
  {
    std::ofstream f(expect);
    f << "* * * # everything\n";
  }
  const CliRun everything = Conformance(args);
  EXPECT_EQ(everything.exit_code, 2);
  EXPECT_THAT(everything.output, HasSubstr("must name its op, not '*'"));
  std::remove(expect.c_str());
}

// --family selects the ops of parts of the database (a GPU check's shards), with --op.
TEST(ConformanceCli, FamiliesSelectPartsOfTheDatabase) {
  const CliRun r = Conformance("--family reductions,index --op '^(sum|neg|sort|gather)$' --list");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("sum "));
  EXPECT_THAT(r.output, HasSubstr("sort "));
  EXPECT_THAT(r.output, HasSubstr("gather "));
  EXPECT_THAT(r.output, Not(HasSubstr("neg ")));  // pointwise
  const CliRun all = Conformance("--list");
  size_t total = 0, parts = 0;
  for (char c : all.output) total += c == '\n';
  for (const char* family :
       {"pointwise", "reductions", "linalg_nn", "index", "activations", "training", "random"}) {
    const CliRun one = Conformance(std::string("--list --family ") + family);
    size_t n = 0;
    for (char c : one.output) n += c == '\n';
    EXPECT_GT(n, 0u) << family;
    parts += n;
  }
  EXPECT_EQ(parts, total);  // every op in exactly one family
}

TEST(ConformanceCli, BadNumbersPatternsAndFilesAreUsageErrors) {
  for (const char* flags : {"--timeout nan", "--timeout inf", "--timeout -1", "--seed -1",
                            "--seed nan", "--seed 1e300", "--seed 1.5", "--jobs 0", "--jobs x"}) {
    const CliRun r = Conformance(std::string("--op '^neg$' ") + flags);
    EXPECT_EQ(r.exit_code, 2) << flags << "\n" << r.output;
  }
  EXPECT_THAT(
      Conformance("--seed -1").output,
      HasSubstr("expected an integer from 0 to 18446744073709551615 after --seed, got '-1'"));
  const CliRun family = Conformance("--family pointwise,nope");
  EXPECT_EQ(family.exit_code, 2);
  EXPECT_THAT(family.output,
              HasSubstr("--family: unknown family 'nope' (expected pointwise, reductions, "
                        "linalg_nn, index, activations, training, random, cases)"));
  EXPECT_EQ(Conformance("--family ''").exit_code, 2);
  const CliRun nested =
      Conformance("--op '" + std::string(5000, '(') + std::string(5000, ')') + "'");
  EXPECT_EQ(nested.exit_code, 2);
  EXPECT_THAT(nested.output, HasSubstr("more than 1000"));
  const CliRun deep =
      Conformance("--op '" + std::string(200, '(') + "neg" + std::string(200, ')') + "'");
  EXPECT_EQ(deep.exit_code, 2);
  EXPECT_THAT(deep.output, HasSubstr("groups nested 200 deep"));
  const CliRun zero = Conformance("--op '^neg$' --expect /dev/zero");
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_THAT(zero.output, HasSubstr("--expect: '/dev/zero' is not a regular file"));
  const CliRun dir = Conformance("--op '^neg$' --baseline /tmp");
  EXPECT_EQ(dir.exit_code, 2);
  EXPECT_THAT(dir.output, HasSubstr("--baseline: '/tmp' is a directory"));
  const std::string not_report = TempPath("not_report.json");
  {
    std::ofstream f(not_report);
    f << "{\"ops\": []}\n";
  }
  const CliRun bad = Conformance("--op '^neg$' --baseline " + not_report);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.output, HasSubstr("not a conformance report"));
  std::remove(not_report.c_str());
}

TEST(PlantedBugs, RunningStatsLeftUnchangedFailTheReferenceOracle) {
  // A training batch norm that normalizes right but forgets the running statistics: only the
  // training samples that move the running statistics fail; inference and the rest pass.
  const CliRun r =
      Conformance(Plugin("keeps_running_stats") + " --op '^native_batch_norm$' --dtype float32");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  int failed = 0, passed = 0;
  for (const CaseResult& c : r.cases) {
    if (c.oracle != "reference" || c.layout != "contiguous") continue;
    // (momentum 0 leaves the running statistics as they were: right by accident.)
    const bool stateful = c.sample.find("training") != std::string::npos &&
                          c.sample.find("running stats") != std::string::npos &&
                          c.sample.find("momentum 0.000000") == std::string::npos;
    if (stateful) {
      EXPECT_EQ(c.status, Status::kFail) << c.sample;
      failed += c.status == Status::kFail;
    } else {
      EXPECT_EQ(c.status, Status::kPass) << c.sample;
      passed += c.status == Status::kPass;
    }
  }
  EXPECT_GT(failed, 0) << r.output;
  EXPECT_GT(passed, 0) << r.output;
}

TEST(PlantedBugs, WrongBackwardFormulasFailTheGradientOracle) {
  // threshold_backward passing the gradient through below the threshold, and a layer norm
  // backward without its mean term: their forward ops are right, so central differences of the
  // forward disagree with the backward, elementwise and along a random direction. The same
  // kernels without the bug (the wrong_dtype plugin's) pass.
  for (const auto& [bug, op] :
       {std::pair<std::string, std::string>{"passes_threshold_grad", "threshold_backward"},
        {"drops_mean_grad", "native_layer_norm_backward"}}) {
    SCOPED_TRACE(bug);
    for (const std::string& plugin : {bug, std::string("wrong_dtype")}) {
      const bool planted = plugin == bug;
      const CliRun r = Conformance(Plugin(plugin) + " --op '^" + op + "$' --dtype float64");
      for (const std::string oracle : {"gradient", "gradient_fast"}) {
        const std::vector<Status> statuses = Statuses(r, op, "float64", oracle);
        EXPECT_FALSE(statuses.empty()) << oracle << "\n" << r.output;
        for (Status st : statuses) {
          EXPECT_EQ(st, planted ? Status::kFail : Status::kPass) << plugin << " " << oracle << "\n"
                                                                 << r.output;
        }
      }
      if (planted) {
        EXPECT_EQ(r.exit_code, 1) << r.output;
      }
    }
  }
}

TEST(PlantedBugs, ABackwardOpThatIgnoresOutputMaskFailsTheUndefinedGradOracle) {
  // Every gradient returned whatever output_mask asks: right values, so the gradient oracles
  // pass, and each partial mask fails by name. The same kernel honouring the mask (the
  // wrong_dtype plugin's) passes, as the CPU backend's three backward ops with a mask do.
  const std::string op = "native_layer_norm_backward";
  const CliRun bug =
      Conformance(Plugin("ignores_output_mask") + " --op '^" + op + "$' --dtype float64");
  EXPECT_EQ(bug.exit_code, 1) << bug.output;
  EXPECT_TRUE(All(Statuses(bug, op, "float64", "undefined_grad"), Status::kFail)) << bug.output;
  EXPECT_EQ(Statuses(bug, op, "float64", "undefined_grad").size(), 21u);  // 3 samples x 7 masks
  EXPECT_TRUE(All(Statuses(bug, op, "float64", "gradient"), Status::kPass)) << bug.output;
  EXPECT_THAT(bug.output, HasSubstr("output_mask [True, False, False]: return 1: output_mask[1] "
                                    "is False, expected None (an undefined tensor), got a tensor "
                                    "of shape [4]"));
  const CliRun healthy =
      Conformance(Plugin("wrong_dtype") + " --op '^" + op + "$' --dtype float64");
  EXPECT_TRUE(All(Statuses(healthy, op, "float64", "undefined_grad"), Status::kPass))
      << healthy.output;
  const CliRun cpu = Conformance(
      "--op '^(native_layer_norm_backward|native_batch_norm_backward|convolution_backward)$' "
      "--dtype float64");
  EXPECT_EQ(cpu.exit_code, 0) << cpu.output;
  for (const std::string backward :
       {"native_layer_norm_backward", "native_batch_norm_backward", "convolution_backward"}) {
    EXPECT_TRUE(All(Statuses(cpu, backward, "float64", "undefined_grad"), Status::kPass))
        << backward << "\n"
        << cpu.output;
  }
}

TEST(PlantedBugs, ASumInArrivalOrderFailsTheDeterminismOracle) {
  // Each result is within tolerance of the reference, but two identical calls differ in their
  // last bits: only the determinism oracle fails, at 1 thread as at 2. The same kernel adding
  // its partial sums in a fixed order (the wrong_dtype plugin's) passes.
  const CliRun r = Conformance(Plugin("sums_in_arrival_order") + " --op '^sum$' --dtype float32");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  int failed = 0;
  for (const CaseResult& c : r.cases) {
    if (c.oracle == "determinism") {
      failed += c.status == Status::kFail;
    } else if (c.oracle == "reference") {
      EXPECT_EQ(c.status, Status::kPass) << c.Key() << " " << c.message;
    }
  }
  EXPECT_GT(failed, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("two identical calls on 1 thread gave different bits"));
  const CliRun healthy = Conformance(Plugin("wrong_dtype") + " --op '^sum$' --dtype float32");
  const std::vector<Status> statuses = Statuses(healthy, "sum", "float32", "determinism");
  EXPECT_FALSE(statuses.empty()) << healthy.output;
  for (Status st : statuses) EXPECT_EQ(st, Status::kPass) << healthy.output;
}

TEST(PlantedBugs, ADeclaredNondeterministicKernelIsHeldToItsDeterministicPath) {
  // The same arrival-order sum, declared nondeterministic: the determinism oracle runs it with
  // deterministic algorithms on, where the CPU fallback computes sum, the same bits every time.
  const CliRun r = Conformance(Plugin("declares_arrival_order") + " --op '^sum$' --dtype float32");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  int checked = 0;
  for (const CaseResult& c : r.cases) {
    if (c.oracle != "determinism") continue;
    ++checked;
    EXPECT_EQ(c.status, Status::kFallback) << c.Key() << " " << c.message;
    EXPECT_THAT(c.message, HasSubstr("plugin 'planted' declares sum nondeterministic: partial "
                                     "sums added in the order threads finish"));
  }
  EXPECT_GT(checked, 0) << r.output;
  // Without a fallback nothing may run it then: refused, so the case is skipped, saying why.
  const CliRun none =
      Conformance(Plugin("declares_without_fallback") + " --op '^sum$' --dtype float32");
  EXPECT_EQ(none.exit_code, 0) << none.output;
  int refused = 0;
  for (const CaseResult& c : none.cases) {
    if (c.oracle != "determinism") continue;
    ++refused;
    EXPECT_EQ(c.status, Status::kSkipped) << c.Key();
    EXPECT_THAT(c.message, HasSubstr("with deterministic algorithms on it is refused"));
    EXPECT_THAT(c.message, HasSubstr("has no deterministic implementation"));
  }
  EXPECT_GT(refused, 0) << none.output;
}

TEST(PlantedBugs, ARandomKernelThatIgnoresItsOffsetFailsTheReference) {
  // Its numbers are right for offset 0 and the same for every other offset: the reference,
  // which computes each element from the sample's generator state, fails it by name; the same
  // kernel honouring the offset (the wrong_dtype plugin's) passes.
  const std::string filter = " --op '^uniform_$' --dtype float32";
  const CliRun r = Conformance(Plugin("ignores_offset") + filter);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(Any(Statuses(r, "uniform_", "float32", "reference"), Status::kFail)) << r.output;
  const CliRun healthy = Conformance(Plugin("wrong_dtype") + filter);
  EXPECT_EQ(healthy.exit_code, 0) << healthy.output;
  for (Status st : Statuses(healthy, "uniform_", "float32", "reference")) {
    EXPECT_EQ(st, Status::kPass) << healthy.output;
  }
}

TEST(PlantedBugs, AKernelThatFailsSometimesIsFlakyWhenRerun) {
  // Every fifth call of the kernel is wrong. Without reruns its cases fail; rerun, the ones that
  // pass then are flaky: visible in every report with the failure they first gave, counted,
  // neither failures nor passes. The determinism oracle is not rerun (what differs between
  // runs is its finding), so it still fails the run: such a kernel is caught either way.
  const std::string filter = " --op '^neg$' --dtype float32";
  const CliRun plain = Conformance(Plugin("fails_sometimes") + filter);
  EXPECT_EQ(plain.exit_code, 1) << plain.output;
  EXPECT_TRUE(Any(Statuses(plain, "neg", "float32", "reference"), Status::kFail) ||
              Any(Statuses(plain, "neg", "float32", "layouts"), Status::kFail))
      << plain.output;
  const std::string junit = TempPath("flaky.xml");
  const CliRun rerun =
      Conformance(Plugin("fails_sometimes") + filter + " --rerun-failures 2 --junit " + junit);
  EXPECT_EQ(rerun.exit_code, 1) << rerun.output;
  int flaky = 0;  // rerun.cases are read back from the run's JSON report
  for (const CaseResult& c : rerun.cases) {
    if (IsFailure(c.status)) {
      EXPECT_EQ(c.oracle, "determinism") << c.Key() << " " << c.message;
    }
    if (c.status != Status::kFlaky) continue;
    ++flaky;
    EXPECT_NE(c.oracle, "determinism");
    EXPECT_THAT(c.message, HasSubstr("failed, then passed on rerun "));
  }
  EXPECT_GT(flaky, 0) << rerun.output;
  EXPECT_THAT(rerun.output, HasSubstr("FLAKY neg float32 "));
  EXPECT_EQ(CoverageOf(rerun, "neg"), "partial");
  std::ifstream x(junit);
  const std::string xml((std::istreambuf_iterator<char>(x)), std::istreambuf_iterator<char>());
  EXPECT_THAT(xml, HasSubstr("<flakyFailure message=\"failed, then passed on rerun "));
  // A steady failure is not hidden by reruns: the int32 bug fails every time.
  const CliRun steady =
      Conformance(Plugin("wrong_dtype") + " --op '^add.Tensor$' --dtype int32 --rerun-failures 3");
  EXPECT_EQ(steady.exit_code, 1) << steady.output;
  EXPECT_TRUE(Any(Statuses(steady, "add.Tensor", "int32", "reference"), Status::kFail));
  // Nor a sum in arrival order: the determinism oracle's cases are not rerun.
  const CliRun arrival = Conformance(Plugin("sums_in_arrival_order") +
                                     " --op '^sum$' --dtype float32 --rerun-failures 3");
  EXPECT_EQ(arrival.exit_code, 1) << arrival.output;
  EXPECT_TRUE(Any(Statuses(arrival, "sum", "float32", "determinism"), Status::kFail));
  // Against a baseline, a case that turned flaky is a change (CHANGED), never a fix.
  const std::string baseline = TempPath("flaky_baseline.json");
  {
    std::ofstream f(baseline);
    f << plain.json.Dump(1);
  }
  const CliRun after = Conformance(Plugin("fails_sometimes") + filter +
                                   " --rerun-failures 2 --baseline " + baseline);
  EXPECT_THAT(after.output, HasSubstr("CHANGED neg|float32|"));
  for (const CaseResult& c : after.cases) {
    if (c.status == Status::kFlaky) {
      EXPECT_THAT(after.output, Not(HasSubstr("FIXED " + c.Key()))) << c.Key();
    }
  }
}

TEST(ConformanceCli, ExpectedFailuresAndBaselines) {
  const std::string expect = TempPath("expect.txt");
  {
    std::ofstream f(expect);
    f << "# known bugs\nadd.Tensor int32 * # the planted int32 bug\n";
  }
  const CliRun r = Conformance(Plugin("wrong_dtype") +
                               " --op '^add\\.Tensor$' --dtype float32,int32 --expect " + expect);
  EXPECT_EQ(r.exit_code, 0) << r.output;  // every failure is expected
  EXPECT_TRUE(Any(Statuses(r, "add.Tensor", "int32", "reference"), Status::kXfail));
  EXPECT_FALSE(Any(Statuses(r, "add.Tensor", "int32", "reference"), Status::kFail));
  // A reason is required.
  {
    std::ofstream f(expect);
    f << "add.Tensor int32 reference\n";
  }
  const CliRun bad =
      Conformance(Plugin("wrong_dtype") + " --op '^add\\.Tensor$' --expect " + expect);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.output, HasSubstr("needs a reason"));

  // Baseline: the same failures again are not regressions; a healthy op that starts failing is.
  const std::string baseline = TempPath("baseline.json");
  const std::string base_cmd = std::string(CONFORMANCE_BIN) + " " + Plugin("wrong_dtype") +
                               " --op '^add\\.Tensor$' --dtype int32 --json " + baseline +
                               " > /dev/null 2>&1";
  ASSERT_EQ(WEXITSTATUS(std::system(base_cmd.c_str())), 1);
  const CliRun same = Conformance(Plugin("wrong_dtype") +
                                  " --op '^add\\.Tensor$' --dtype int32 --baseline " + baseline);
  EXPECT_EQ(same.exit_code, 0) << same.output;
  EXPECT_THAT(same.output, HasSubstr("0 new failures"));
  std::remove(expect.c_str());
  std::remove(baseline.c_str());
}

TEST(ConformanceCli, ReportsAndExitCodes) {
  const std::string junit = TempPath("junit.xml"), markdown = TempPath("grid.md");
  const CliRun r = Conformance("--op '^(add\\.Tensor|sum)$' --dtype float32,int8 --junit " + junit +
                               " --markdown " + markdown);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.json["summary"]["ops_total"].as_number(), 2);
  EXPECT_EQ(r.json["summary"]["ops_full"].as_number(), 2);
  EXPECT_GT(r.json["summary"]["cases"]["pass"].as_number(), 100);
  EXPECT_EQ(r.json["summary"]["device"].as_string(), "cpu");
  ASSERT_FALSE(r.cases.empty());
  EXPECT_THAT(r.json["cases"].items()[0]["repro"].as_string(), HasSubstr("--op '^add\\.Tensor$'"));
  EXPECT_THAT(Slurp(junit), HasSubstr("<testsuite name=\"sum\""));
  EXPECT_THAT(Slurp(markdown), HasSubstr("| `add.Tensor` | full |"));
  std::remove(junit.c_str());
  std::remove(markdown.c_str());

  EXPECT_EQ(Conformance("--no-such-flag").exit_code, 2);
  const CliRun missing = Conformance("--plugin /nonexistent/libnothing.so");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.output, HasSubstr("cannot load plugin"));
  EXPECT_THAT(Conformance("--dtype float8").output, HasSubstr("unknown dtype 'float8'"));
}

// The marks of one op's row of the Markdown grid, by dtype, and its coverage column.
std::map<std::string, std::string> GridRow(const std::string& markdown, const std::string& op) {
  static const char* const kDtypes[] = {"bool",  "uint8",   "int8",     "int16",   "int32",
                                        "int64", "float16", "bfloat16", "float32", "float64"};
  std::map<std::string, std::string> row;
  std::stringstream lines(markdown);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("| `" + op + "` |", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream fields(line.substr(1));
    std::string f;
    while (std::getline(fields, f, '|')) {
      const size_t a = f.find_first_not_of(' '), b = f.find_last_not_of(' ');
      cells.push_back(a == std::string::npos ? "" : f.substr(a, b - a + 1));
    }
    if (cells.size() < 12) return row;
    row["coverage"] = cells[1];
    for (int i = 0; i < 10; ++i) row[kDtypes[i]] = cells[2 + i];
  }
  return row;
}

// The numbers of one op's row of the terminal table: coverage, native, fallback, checks.
std::vector<std::string> TerminalRow(const std::string& output, const std::string& op) {
  std::stringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    std::stringstream words(line);
    std::string first;
    words >> first;
    if (first != op) continue;
    std::vector<std::string> row;
    std::string w;
    while (row.size() < 4 && words >> w) row.push_back(w);
    return row;
  }
  return {};
}

const Json* OpEntry(const CliRun& r, const std::string& op) {
  for (const Json& o : r.json["ops"].items()) {
    if (o["op"].as_string() == op) return &o;
  }
  return nullptr;
}

// Issue 33: a run in which no value case passed on the device's own kernels tested nothing of
// the backend, so it fails (exit 1) unless --allow-fallback-only says that is what was meant:
// tanh through the npu's CPU fallback only, and an op the planted plugin does not implement at
// all (every case unsupported, no fallback). With one native op among them the run passes.
TEST(ConformanceCli, ARunWithNothingNativeFailsUnlessAllowed) {
  for (const std::string& args :
       {std::string("--plugin ") + NPU_PLUGIN + " --op '^tanh$' --dtype float32",
        Plugin("wrong_dtype") + " --op '^exp$' --dtype float32"}) {
    SCOPED_TRACE(args);
    const CliRun r = Conformance(args);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_THAT(r.output, HasSubstr("nothing native was tested"));
    EXPECT_TRUE(r.json["summary"]["nothing_native"].as_bool()) << r.output;
    for (const CaseResult& c : r.cases) EXPECT_FALSE(IsFailure(c.status)) << c.Key();
    const CliRun allowed = Conformance(args + " --allow-fallback-only");
    EXPECT_EQ(allowed.exit_code, 0) << allowed.output;
  }
  const CliRun mixed = Conformance(std::string("--plugin ") + NPU_PLUGIN +
                                   " --op '^(tanh|add\\.Tensor)$' --dtype float32");
  EXPECT_EQ(mixed.exit_code, 0) << mixed.output;
  EXPECT_THAT(mixed.output, Not(HasSubstr("nothing native was tested")));
  EXPECT_FALSE(mixed.json["summary"]["nothing_native"].as_bool()) << mixed.output;
  // Only an undeclared dtype: refusals, no value case at all, so nothing to call native.
  const CliRun refusals = Conformance("--op '^nll_loss$' --dtype int64");
  EXPECT_EQ(refusals.exit_code, 0) << refusals.output;
}

// Issue 13: on the sample npu (native add, the CPU fallback for tanh and bitwise_not), a run
// without failures has no ✗ in its grid even where an undeclared dtype (bitwise_not on
// float32) was refused through the fallback; the fallback's passes show as F, in the terminal
// as fallback (not pass), and in JUnit as skipped.
TEST(Reports, FallbackPassesAreNeitherFailuresNorNative) {
  const std::string junit = TempPath("npu_junit.xml"), markdown = TempPath("npu_grid.md");
  const CliRun r =
      Conformance(std::string("--plugin ") + NPU_PLUGIN +
                  " --op '^(tanh|bitwise_not|add\\.Tensor)$' --dtype bool,float32 --junit " +
                  junit + " --markdown " + markdown);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string grid = Slurp(markdown);
  EXPECT_EQ(grid.find("| ✗ |"), std::string::npos) << grid;  // no cell (the legend has one)
  std::map<std::string, std::string> tanh = GridRow(grid, "tanh");
  EXPECT_EQ(tanh["float32"], "F") << grid;
  EXPECT_EQ(tanh["bool"], "F") << grid;
  EXPECT_EQ(tanh["coverage"], "none") << grid;
  // Refused by the CPU backend through the fallback: the case that used to be drawn as ✗.
  EXPECT_EQ(GridRow(grid, "bitwise_not")["float32"], "–") << grid;
  EXPECT_TRUE(All(Statuses(r, "bitwise_not", "float32", "dtype_claims"), Status::kFallback))
      << r.output;
  EXPECT_EQ(GridRow(grid, "add.Tensor")["float32"], "✓") << grid;
  EXPECT_EQ(GridRow(grid, "add.Tensor")["bool"], "U") << grid;  // the npu computes float32 only

  // Terminal: tanh has no native pass; its value cases passed through the fallback.
  const std::vector<std::string> row = TerminalRow(r.output, "tanh");
  ASSERT_EQ(row.size(), 4u) << r.output;
  EXPECT_EQ(row[0], "none");
  EXPECT_EQ(row[1], "0") << r.output;           // native
  EXPECT_GT(std::stoi(row[2]), 0) << r.output;  // fallback
  EXPECT_THAT(r.output, HasSubstr("passed: native "));
  const Json* tanh_json = OpEntry(r, "tanh");
  ASSERT_NE(tanh_json, nullptr);
  EXPECT_EQ((*tanh_json)["passes"]["native"].as_number(), 0);
  EXPECT_GT((*tanh_json)["passes"]["fallback"].as_number(), 0);
  const Json* add_json = OpEntry(r, "add.Tensor");
  ASSERT_NE(add_json, nullptr);
  EXPECT_GT((*add_json)["passes"]["native"].as_number(), 0);

  // JUnit: every fallback case is skipped, with a message saying so.
  const std::string xml = Slurp(junit);
  size_t skipped_fallback = 0;
  for (size_t at = 0; (at = xml.find("<skipped message=\"fallback: ", at)) != std::string::npos;
       ++at) {
    ++skipped_fallback;
  }
  EXPECT_EQ(skipped_fallback, r.json["summary"]["cases"]["fallback"].as_number());
  EXPECT_GT(skipped_fallback, 0u);
  std::remove(junit.c_str());
  std::remove(markdown.c_str());
}

TEST(Reports, JUnitTestNamesAreUniquePerOp) {
  const std::string junit = TempPath("unique_junit.xml");
  const CliRun r = Conformance("--op '^(add\\.Tensor|div\\.Tensor_mode)$' --junit " + junit);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string xml = Slurp(junit);
  const std::regex testcase("<testcase classname=\"([^\"]*)\" name=\"([^\"]*)\"");
  std::set<std::string> names;
  int count = 0, renamed = 0;
  for (auto it = std::sregex_iterator(xml.begin(), xml.end(), testcase);
       it != std::sregex_iterator(); ++it) {
    ++count;
    const std::string name = (*it)[1].str() + " / " + (*it)[2].str();
    renamed += name.find(" (#2)") != std::string::npos;
    EXPECT_TRUE(names.insert(name).second) << "duplicate test name: " << name;
  }
  EXPECT_EQ(count, static_cast<int>(r.cases.size()));
  EXPECT_GT(renamed, 0);  // div's error inputs repeat their descriptions
  std::remove(junit.c_str());
}

// Without --isolate a crash takes the process with it; the handler says first which op and
// case it was running, the repro line, and that --isolate goes on past crashes.
TEST(Reports, ACrashWithoutIsolateNamesTheOpAndTheCase) {
  const CliRun r = Conformance(Plugin("crashes") + " --op '^(neg|sqrt)$' --dtype float32");
  // The signal itself, or the shell's 128 + signal; under a sanitizer (UBSan sees the planted
  // null store before it faults), its report's status and its death callback's message.
  const bool sanitizer = r.output.find("Sanitizer") != std::string::npos ||
                         r.output.find("runtime error") != std::string::npos;
  EXPECT_TRUE(r.term_signal == SIGSEGV || r.exit_code == 128 + SIGSEGV ||
              (sanitizer && r.exit_code != 0))
      << r.exit_code << " " << r.term_signal << "\n"
      << r.output;
  EXPECT_THAT(r.output,
              HasSubstr(std::string(sanitizer ? "conformance: a sanitizer stopped the process"
                                              : "conformance: the process died of SIGSEGV "
                                                "(segmentation fault)") +
                        " while running op 'sqrt', case float32 reference [contiguous], sample "));
  EXPECT_THAT(r.output, HasSubstr("repro: conformance --plugin "));
  EXPECT_THAT(r.output, HasSubstr("--op '^sqrt$' --dtype float32 --seed 0"));
  EXPECT_THAT(r.output, HasSubstr("--isolate runs each op in a child process"));
}

// Under --isolate the crash is a case; its message and the grid's row say which case it was.
TEST(Reports, ACrashUnderIsolateNamesTheCaseInTheReports) {
  const std::string markdown = TempPath("crash_grid.md");
  const CliRun r = Conformance(
      Plugin("crashes") + " --op '^(neg|sqrt)$' --dtype float32 --isolate --markdown " + markdown);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  bool found = false;
  for (const CaseResult& c : r.cases) {
    if (c.op != "sqrt" || c.oracle != "process") continue;
    found = true;
    EXPECT_EQ(c.status, Status::kCrash);
    EXPECT_THAT(c.message, HasSubstr("while running case float32 reference [contiguous], sample "))
        << c.message;
  }
  EXPECT_TRUE(found) << r.output;
  const std::string grid = Slurp(markdown);
  const std::map<std::string, std::string> row = GridRow(grid, "sqrt");
  EXPECT_THAT(row.at("coverage"), HasSubstr("**crashed**"));
  EXPECT_THAT(row.at("coverage"), HasSubstr("float32 reference [contiguous], sample "));
  // The dtype it crashed in carries the crash mark (it was blank), which the legend explains.
  EXPECT_EQ(row.at("float32"), "C") << grid;
  EXPECT_THAT(grid, HasSubstr("C the op crashed while running this dtype"));
  EXPECT_EQ(GridRow(grid, "neg").at("float32"), "✓");
  // The JSON record names that dtype too.
  for (const CaseResult& c : r.cases) {
    if (c.op == "sqrt" && c.oracle == "process") {
      EXPECT_EQ(c.running_dtype, "float32");
    }
  }
  std::remove(markdown.c_str());
}

TEST(Reports, JsonDetailFailuresListsOnlyFailingCases) {
  const std::string args =
      Plugin("wrong_dtype") + " --op '^(add\\.Tensor|neg)$' --dtype float32,int32";
  const CliRun all = Conformance(args);
  const CliRun failures = Conformance(args + " --json-detail failures");
  EXPECT_EQ(failures.exit_code, 1) << failures.output;
  EXPECT_EQ(failures.json["summary"]["cases_listed"].as_string(), "failures");
  EXPECT_EQ(all.json["summary"]["cases_listed"].as_string(), "all");
  ASSERT_FALSE(failures.cases.empty());
  EXPECT_LT(failures.cases.size(), all.cases.size() / 2);
  for (const CaseResult& c : failures.cases) EXPECT_TRUE(IsFailure(c.status)) << c.Key();
  EXPECT_EQ(static_cast<double>(failures.cases.size()),
            failures.json["summary"]["cases"]["fail"].as_number());
  // The summary and the per-op roll-up still count every case.
  EXPECT_EQ(failures.json["summary"]["cases"].Dump(), all.json["summary"]["cases"].Dump());
  EXPECT_EQ(failures.json["ops"].Dump(), all.json["ops"].Dump());

  // A failures-only report is a baseline: the same failures again are no new failures.
  const std::string baseline = TempPath("failures_baseline.json");
  {
    std::ofstream f(baseline);
    f << failures.json.Dump(1);
  }
  const CliRun again = Conformance(args + " --baseline " + baseline);
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_THAT(again.output, HasSubstr("0 new failures"));
  std::remove(baseline.c_str());

  const CliRun bad = Conformance("--op '^neg$' --json-detail some");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.output, HasSubstr("--json-detail: expected 'all' or 'failures', got 'some'"));
}

// ---- Vendor op database entries (--cases, tessera/conformance/cases.h) ----

std::string Vendor(const std::string& plugin, const std::string& cases) {
  return std::string("--plugin ") + VENDOR_DIR + "/libtsr_vendor_" + plugin + ".so --cases " +
         VENDOR_DIR + "/libtsr_vendor_cases_" + cases + ".so";
}

// A cases library (vendor_cases.c) describes the vendor plugin's own op; the suite runs it
// through its oracles like an op of its own database.
TEST(VendorCases, ACorrectKernelPassesItsVendorEntries) {
  for (const char* isolate : {"", " --isolate"}) {
    const CliRun r = Conformance(Vendor("correct", "good") + " --op '^vnd::'" + isolate);
    EXPECT_EQ(r.exit_code, 0) << isolate << "\n" << r.output;
    EXPECT_EQ(CoverageOf(r, "vnd::scale_bias"), "full") << r.output;
    for (const char* dtype : {"float32", "float64"}) {
      EXPECT_TRUE(All(Statuses(r, "vnd::scale_bias", dtype, "reference"), Status::kPass))
          << dtype << "\n"
          << r.output;
      EXPECT_TRUE(
          All(Statuses(r, "vnd::scale_bias", dtype, "layouts", "transposed"), Status::kPass));
      EXPECT_TRUE(All(Statuses(r, "vnd::scale_bias", dtype, "layouts", "expanded"),
                      Status::kPass));  // elementwise: declared by the library
      // The plugin's Meta function agrees with its kernel.
      EXPECT_TRUE(All(Statuses(r, "vnd::scale_bias", dtype, "meta"), Status::kPass));
    }
    // An undeclared dtype is refused by the plugin, as it must be; the library's error inputs
    // give INVALID_ARGUMENT; a CPU tensor among the device's is refused.
    EXPECT_TRUE(All(Statuses(r, "vnd::scale_bias", "int32", "dtype_claims"), Status::kPass));
    EXPECT_TRUE(All(Statuses(r, "vnd::scale_bias", "*", "error_inputs"), Status::kPass));
    EXPECT_EQ(Statuses(r, "vnd::scale_bias", "*", "error_inputs").size(), 3u) << r.output;
    ASSERT_EQ(r.json["summary"]["cases_libraries"].items().size(), 1u);
    EXPECT_THAT(r.json["summary"]["cases_libraries"].items()[0].as_string(),
                HasSubstr("libtsr_vendor_cases_good.so"));
  }
  // --list shows the library's op with its dtypes.
  const CliRun list = Conformance(Vendor("correct", "good") + " --op '^vnd::' --list");
  EXPECT_EQ(list.exit_code, 0) << list.output;
  EXPECT_THAT(list.output, HasSubstr("vnd::scale_bias"));
  EXPECT_THAT(list.output, HasSubstr("float32,float64"));
}

// The plugin's float64 kernel adds the bias twice: every report says so, float32 still passes.
TEST(VendorCases, AWrongKernelIsAFailureInEveryReport) {
  const std::string junit = TempPath("vendor_junit.xml"), markdown = TempPath("vendor_grid.md");
  const CliRun r = Conformance(Vendor("wrong", "good") + " --op '^vnd::' --junit " + junit +
                               " --markdown " + markdown);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(Any(Statuses(r, "vnd::scale_bias", "float64", "reference"), Status::kFail));
  EXPECT_TRUE(All(Statuses(r, "vnd::scale_bias", "float32", "reference"), Status::kPass));
  EXPECT_EQ(CoverageOf(r, "vnd::scale_bias"), "partial");
  // Terminal.
  EXPECT_THAT(r.output, HasSubstr("FAIL vnd::scale_bias float64 reference [contiguous]"));
  EXPECT_THAT(r.output, HasSubstr("mismatch at element"));
  // JSON: the failing case with its repro line, which loads the cases library too.
  bool json_failure = false;
  for (const Json& c : r.json["cases"].items()) {
    if (c["status"].as_string() != "fail") continue;
    json_failure = true;
    EXPECT_EQ(c["op"].as_string(), "vnd::scale_bias");
    EXPECT_EQ(c["dtype"].as_string(), "float64");
    EXPECT_THAT(c["repro"].as_string(), HasSubstr("--cases "));
  }
  EXPECT_TRUE(json_failure);
  // JUnit: failures in the op's suite.
  const std::string xml = Slurp(junit);
  EXPECT_THAT(xml, HasSubstr("<testsuite name=\"vnd::scale_bias\""));
  EXPECT_THAT(xml, HasSubstr("name=\"float64 reference contiguous [5] with [5], scale 2.5\">"
                             "<failure message=\"result: mismatch at element"));
  // Markdown: float64 failed, float32 passed natively.
  const std::map<std::string, std::string> row = GridRow(Slurp(markdown), "vnd::scale_bias");
  EXPECT_EQ(row.at("float64"), "✗");
  EXPECT_EQ(row.at("float32"), "✓");
  EXPECT_EQ(row.at("int32"), "–");
  std::remove(junit.c_str());
  std::remove(markdown.c_str());
}

// A malformed cases library is refused before anything runs: exit 2 and a message naming the
// library, what was expected and what was found; never a crash.
TEST(VendorCases, MalformedCasesLibrariesAreRefusedWithExpectedAndFound) {
  struct Row {
    const char* variant;
    std::vector<std::string> says;
  };
  const Row rows[] = {
      {"missing_entry",
       {"libtsr_vendor_cases_missing_entry.so': no entry point 'tsr_conformance_cases'",
        "expected the function of tessera/conformance/cases.h"}},
      {"wrong_version",
       {"built against the cases interface 2.0, but this conformance reads 1.0",
        "the major version must match"}},
      {"unknown_op",
       {"op 'vnd::no_such_op' (ops[0]) is not defined: expected an op that a loaded plugin",
        "defined in its namespace: vnd::scale_bias"}},
      {"bad_dtype",
       {"op 'vnd::scale_bias' declares dtypes 0x1300: expected bits 0 (bool) to 9 (float64) only",
        "found 0x1000 beyond them"}},
  };
  for (const Row& row : rows) {
    const CliRun r = Conformance(Vendor("correct", row.variant) + " --op '^vnd::'");
    EXPECT_EQ(r.exit_code, 2) << row.variant << "\n" << r.output;
    EXPECT_EQ(r.term_signal, 0) << row.variant;
    for (const std::string& text : row.says) EXPECT_THAT(r.output, HasSubstr(text)) << row.variant;
  }
  // Not a shared object; and a library whose op's plugin is not loaded.
  const CliRun missing = Conformance("--cases /nonexistent/libnothing_cases.so");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.output, HasSubstr("cannot load cases library '/nonexistent/"));
  const CliRun no_plugin =
      Conformance(std::string("--cases ") + VENDOR_DIR + "/libtsr_vendor_cases_good.so");
  EXPECT_EQ(no_plugin.exit_code, 2);
  EXPECT_THAT(no_plugin.output, HasSubstr("no op of namespace 'vnd' is defined"));
  // The same refusals under --isolate, where the libraries are first loaded in a child.
  const CliRun isolated =
      Conformance(Vendor("correct", "wrong_version") + " --op '^vnd::' --isolate");
  EXPECT_EQ(isolated.exit_code, 2) << isolated.output;
  EXPECT_THAT(isolated.output, HasSubstr("built against the cases interface 2.0"));
}

// A cases library that crashes while loading is named, like a plugin: without --isolate by the
// crash handler, under --isolate by the probing child's exit 2.
TEST(VendorCases, ACasesLibraryThatCrashesWhileLoadingIsNamed) {
  const std::string path = std::string(VENDOR_DIR) + "/libtsr_vendor_cases_crashes.so";
  const CliRun r = Conformance(Vendor("correct", "crashes") + " --op '^vnd::'");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("conformance: the process died of SIGSEGV (segmentation fault) "
                                  "while loading cases library '" +
                                  path + "' (in its tsr_conformance_cases)"))
      << r.output;
  const CliRun isolated = Conformance(Vendor("correct", "crashes") + " --op '^vnd::' --isolate");
  EXPECT_EQ(isolated.exit_code, 2) << isolated.output;
  EXPECT_THAT(isolated.output, HasSubstr("loading the plugins crashed, with "));
  EXPECT_THAT(isolated.output, HasSubstr(", while loading cases library '" + path + "'"));
}

// A reference that gives a malformed result fails its cases with the library named: the run
// goes on, and the suite does not take the result for a skip.
TEST(VendorCases, AMalformedReferenceFailsItsCasesNotTheRun) {
  const CliRun r = Conformance(Vendor("correct", "bad_result") + " --op '^vnd::' --dtype float32");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const std::vector<Status> reference = Statuses(r, "vnd::scale_bias", "float32", "reference");
  EXPECT_TRUE(All(reference, Status::kFail)) << r.output;
  bool named = false;
  for (const CaseResult& c : r.cases) {
    if (c.oracle != "reference" ||
        c.message.find("libtsr_vendor_cases_bad_result.so', op "
                       "'vnd::scale_bias', reference for sample") == std::string::npos) {
      continue;
    }
    named = true;
    EXPECT_THAT(c.message, HasSubstr("expected")) << c.message;
    EXPECT_THAT(c.message, HasSubstr("(the product of its sizes)")) << c.message;
  }
  EXPECT_TRUE(named) << r.output;
  // The other oracles still ran.
  EXPECT_TRUE(All(Statuses(r, "vnd::scale_bias", "*", "error_inputs"), Status::kPass));

  // A C++ library whose reference throws: its cases fail, naming it.
  const CliRun threw = Conformance(Vendor("correct", "throws") + " --op '^vnd::' --dtype float32");
  EXPECT_EQ(threw.exit_code, 1) << threw.output;
  EXPECT_TRUE(All(Statuses(threw, "vnd::scale_bias", "float32", "reference"), Status::kFail))
      << threw.output;
  EXPECT_THAT(threw.output, HasSubstr("libtsr_vendor_cases_throws.so', op 'vnd::scale_bias', "
                                      "reference for sample '[3] with [3]' threw an exception "
                                      "across the C interface: the reference's own bug"));
}

// The side-by-side tool's first half (conformance/tools/dump_cases.cc) needs no PyTorch: each
// line it writes must parse back, with the arguments in schema order, NaN and infinities as
// strings, and Tessera's returns or error. Its second half (torch_side_by_side.py) needs
// PyTorch and is never run by the tests.
TEST(DumpCases, WritesOneJsonLinePerCaseThatParsesBack) {
  const std::string out = TempPath("cases.jsonl"), log = out + ".txt";
  const std::string cmd = std::string(DUMP_CASES_BIN) + " --op '^(abs|add\\.Tensor)$' --out " +
                          out + " > " + log + " 2>&1";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << Slurp(log);
  std::stringstream lines(Slurp(out));
  std::string line;
  int cases = 0, errors = 0, extremes = 0;
  bool saw_add = false;
  while (std::getline(lines, line)) {
    Json j;
    std::string error;
    ASSERT_TRUE(Json::Parse(line, &j, &error)) << error << ": " << line;
    ++cases;
    EXPECT_THAT(j["schema"].as_string(), HasSubstr(j["op"].as_string() + "("));
    ASSERT_GT(j["args"].items().size(), 0u) << line;
    EXPECT_EQ(j["args"].items()[0]["name"].as_string(), "self") << line;
    if (j["op"].as_string() == "add.Tensor" && j["kind"].as_string() == "sample") {
      saw_add = true;
      EXPECT_EQ(j["args"].items()[1]["name"].as_string(), "other") << line;
    }
    const Json& tessera = j["tessera"];
    if (tessera.find("error")) {
      ++errors;
      EXPECT_FALSE(tessera["error"]["code"].as_string().empty()) << line;
      continue;
    }
    ASSERT_TRUE(tessera.find("outputs")) << line;
    for (const Json& v : j["args"].items()[0]["values"].items())
      extremes += v.kind() == Json::Kind::kString;
  }
  EXPECT_GT(cases, 50);
  EXPECT_GT(errors, 0);    // error inputs and undeclared dtypes
  EXPECT_GT(extremes, 0);  // "nan", "inf", "-inf" of the extreme-value samples
  EXPECT_TRUE(saw_add);

  // --replay runs each line's op and args again: the very same lines come back.
  const std::string replayed = out + ".replayed";
  const std::string replay = std::string(DUMP_CASES_BIN) + " --replay " + out + " --out " +
                             replayed + " > " + log + " 2>&1";
  const int replay_status = std::system(replay.c_str());
  ASSERT_TRUE(WIFEXITED(replay_status) && WEXITSTATUS(replay_status) == 0) << Slurp(log);
  EXPECT_EQ(Slurp(replayed), Slurp(out));
  std::remove(replayed.c_str());
  std::remove(out.c_str());
  std::remove(log.c_str());
}

// ---- the device contract (--device-contract) ----------------------------------------------

// The check statuses of a run's JSON report, by check name.
std::map<std::string, std::string> ContractStatuses(const CliRun& r) {
  std::map<std::string, std::string> out;
  for (const Json& c : r.json["device_contract"].items())
    out[c["check"].as_string()] = c["status"].as_string();
  return out;
}
std::string ContractMessage(const CliRun& r, const std::string& check) {
  for (const Json& c : r.json["device_contract"].items()) {
    if (c["check"].as_string() == check) return c["message"].as_string();
  }
  return "";
}

const char* const kStreamChecks[] = {
    "stream.order",      "stream.copy_on_its_stream", "stream.sync_copy_after_current",
    "event.synchronize", "event.wait_across_streams", "stream.record_stream"};

// The healthy devices pass: the CPU's and the npu sample's (synchronous: no streams to check)
// and the asynchronous test device, which has every slot and two devices (every check runs).
TEST(DeviceContract, HealthyDevicesPassEveryCheckTheyOffer) {
  const CliRun cpu = Conformance("--device-contract");
  EXPECT_EQ(cpu.exit_code, 0) << cpu.output;
  std::map<std::string, std::string> s = ContractStatuses(cpu);
  EXPECT_EQ(s.size(), 17u) << cpu.output;
  EXPECT_EQ(s["copy.device_to_host_bounds"], "pass");
  EXPECT_EQ(s["allocate.out_of_memory"], "pass");
  for (const char* check : kStreamChecks) EXPECT_EQ(s[check], "skipped") << check;
  EXPECT_THAT(ContractMessage(cpu, "stream.order"), HasSubstr("cpu is synchronous"));
  EXPECT_EQ(s["unload.live_memory"], "skipped");
  EXPECT_TRUE(cpu.cases.empty()) << "alone, --device-contract runs no op case";
  EXPECT_THAT(cpu.output, HasSubstr("device contract: 8 passed, 0 failed, 9 skipped"));

  const CliRun npu = Conformance(std::string("--device-contract --plugin ") + NPU_PLUGIN);
  EXPECT_EQ(npu.exit_code, 0) << npu.output;
  s = ContractStatuses(npu);
  EXPECT_EQ(s["unload.live_memory"], "pass") << ContractMessage(npu, "unload.live_memory");
  EXPECT_EQ(s["allocate.distinct_blocks"], "pass");

  const CliRun async = Conformance(std::string("--device-contract --plugin ") + ASYNC_PLUGIN);
  EXPECT_EQ(async.exit_code, 0) << async.output;
  EXPECT_EQ(ContractStatuses(async).size(), 17u) << async.output;
  for (const auto& [check, status] : ContractStatuses(async))
    EXPECT_EQ(status, "pass") << check << ": " << ContractMessage(async, check);
}

// Each planted device bug fails the check named for it, with a message that says what broke;
// a check that never returns fails at its deadline and the run still ends with its reports.
TEST(DeviceContract, EachPlantedDeviceBugFailsTheCheckNamedForIt) {
  const struct {
    const char* bug;
    const char* check;
    const char* message;
  } kBugs[] = {
      {"overlapping_blocks", "allocate.distinct_blocks", "live blocks overlap: block"},
      {"off_by_one_d2h", "copy.device_to_host_bounds", "host byte 0 of the copy reads"},
      {"event_never_completes", "event.synchronize", "did not return within 2 s"},
      {"copy_ignores_stream", "stream.copy_on_its_stream",
       "had not completed when that stream was synchronized"},
  };
  for (const auto& b : kBugs) {
    const std::string junit = TempPath(std::string(b.bug) + ".xml");
    // A short deadline only where a check must hang: a slow (sanitized) build may take more than
    // 2 s over a healthy check.
    const std::string timeout = std::string(b.bug) == "event_never_completes" ? " --timeout 2" : "";
    const CliRun r = Conformance("--device-contract" + timeout + " --plugin " + PLANTED_DIR +
                                 "/libtsr_planted_device_" + b.bug + ".so --junit " + junit);
    EXPECT_EQ(r.exit_code, 1) << b.bug << "\n" << r.output;
    const std::map<std::string, std::string> s = ContractStatuses(r);
    EXPECT_EQ(s.count(b.check) ? s.at(b.check) : "", "fail") << b.bug << "\n" << r.output;
    EXPECT_THAT(ContractMessage(r, b.check), HasSubstr(b.message)) << b.bug;
    EXPECT_THAT(r.output, HasSubstr(b.check));
    const std::string xml = Slurp(junit);
    EXPECT_THAT(xml, HasSubstr("<testsuite name=\"device_contract\""));
    EXPECT_THAT(xml, HasSubstr("name=\"" + std::string(b.check) + "\""));
    std::remove(junit.c_str());
  }
  // Only the bug's own checks fail on a device that is otherwise healthy: an allocator that
  // overlaps blocks breaks nothing else that these checks see.
  const CliRun overlap = Conformance(std::string("--device-contract --plugin ") + PLANTED_DIR +
                                     "/libtsr_planted_device_overlapping_blocks.so");
  EXPECT_EQ(ContractStatuses(overlap).size(), 17u) << overlap.output;
  for (const auto& [check, status] : ContractStatuses(overlap)) {
    if (check != "allocate.distinct_blocks") {
      EXPECT_EQ(status, "pass") << check;
    }
  }
  // After a hang the device may be wedged: the checks after it are skipped, saying why.
  const CliRun hang = Conformance(std::string("--device-contract --timeout 2 --plugin ") +
                                  PLANTED_DIR + "/libtsr_planted_device_event_never_completes.so");
  EXPECT_EQ(ContractStatuses(hang)["stream.record_stream"], "skipped");
  EXPECT_THAT(ContractMessage(hang, "stream.record_stream"), HasSubstr("event.synchronize hung"));
  // Later checks that fail through a broken copy say so.
  const CliRun d2h = Conformance(std::string("--device-contract --plugin ") + PLANTED_DIR +
                                 "/libtsr_planted_device_off_by_one_d2h.so");
  EXPECT_THAT(ContractMessage(d2h, "allocate.sizes"),
              HasSubstr("copy.device_to_host_bounds failed first"));
}

// With --op, the op cases run as well, and the Markdown report has the contract's table.
// float16 and bfloat16 value cases carry their SNR in the JSON report (report_version 2), and
// it reads back; other dtypes carry none.
TEST(Reports, HalfCasesCarryTheirSignalToNoiseRatio) {
  const CliRun r = Conformance("--op '^tanh$' --dtype float16,float32");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  int half = 0;
  for (const Json& c : r.json["cases"].items()) {
    if (c["oracle"].as_string() != "reference") continue;
    const bool has = c.find("snr_db") != nullptr;
    EXPECT_EQ(has, c["dtype"].as_string() == "float16") << c.Dump();
    half += has;
  }
  EXPECT_GT(half, 0);
  for (const CaseResult& c : r.cases) {
    if (c.oracle == "reference" && c.dtype == "float16") {
      EXPECT_FALSE(std::isnan(c.snr_db)) << c.Key();
    }
  }
}

TEST(DeviceContract, RunsBesideOpCasesInEveryReport) {
  const std::string markdown = TempPath("contract.md");
  const CliRun r =
      Conformance("--device-contract --op '^abs$' --dtype float32 --markdown " + markdown);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(r.cases.empty());
  EXPECT_EQ(ContractStatuses(r).size(), 17u);
  EXPECT_EQ(r.json["summary"]["report_version"].as_number(), kReportVersion);
  EXPECT_EQ(kReportVersion, 3);
  const Json& check = r.json["device_contract"].items().at(0);
  EXPECT_EQ(check["check"].as_string(), "copy.device_to_host_bounds");
  EXPECT_EQ(check["status"].as_string(), "pass");
  EXPECT_EQ(check["message"].kind(), Json::Kind::kString);
  EXPECT_EQ(check["seconds"].kind(), Json::Kind::kNumber);
  const std::string md = Slurp(markdown);
  EXPECT_THAT(md, HasSubstr("## Device contract"));
  EXPECT_THAT(md, HasSubstr("| allocate.out_of_memory | pass |"));
  std::remove(markdown.c_str());
}

}  // namespace
}  // namespace conformance
}  // namespace tessera
