// End-to-end tests of the `tessera` binary as a user runs it: exit codes,
// error messages naming file, line and field, and no output file left behind.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli_fixture.h"
#include "test_paths.h"

namespace tessera {
namespace {

using testing::CliTest;
using testing::Outcome;
using testing::ReadAll;
namespace fs = std::filesystem;

constexpr const char* kGoodScenario =
    "name: tiny\n"
    "gpu: a100-80gb\n"
    "services:\n"
    "  - {name: web, model: resnet50, rate_rps: 500, slo_ms: 200}\n"
    "  - {name: qa, model: bert-large, rate_rps: 20, slo_ms: 2000}\n";

TEST_F(CliTest, HelpTeachesWithExamples) {
  Outcome o = Tessera("--help");
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_NE(o.out.find("tessera plan"), std::string::npos);
  for (const char* cmd : {"plan", "compare", "gpus", "profiles synth"}) {
    Outcome c = Tessera(std::string(cmd) + " --help");
    EXPECT_EQ(c.exit_code, 0) << cmd;
    EXPECT_NE(c.out.find("Example"), std::string::npos) << cmd;
  }
}

// A mistyped command is an error that names it, --help or not (CLI11 alone
// would print the main help and exit 0).
TEST_F(CliTest, AnUnknownCommandIsNamedWithTheClosestOne) {
  for (const char* args : {"rehaerse --help", "rehaerse", "plna --scenario x.yaml"}) {
    Outcome o = Tessera(args);
    EXPECT_EQ(o.exit_code, 2) << args;
    EXPECT_EQ(o.out, "") << args;
    EXPECT_NE(o.err.find("unknown command '"), std::string::npos) << args << ": " << o.err;
  }
  EXPECT_NE(Tessera("rehaerse --help").err.find("did you mean 'rehearse'?"), std::string::npos);
  EXPECT_NE(Tessera("plna").err.find("did you mean 'plan'?"), std::string::npos);
  const Outcome far = Tessera("frobnicate");
  EXPECT_EQ(far.err.find("did you mean"), std::string::npos) << far.err;
  EXPECT_NE(far.err.find("tessera --help"), std::string::npos) << far.err;
}

TEST_F(CliTest, PlansWritesJsonAndSvg) {
  const fs::path scenario = Write("s.yaml", kGoodScenario);
  const fs::path json = dir_ / "plan.json", svg = dir_ / "plan.svg";
  Outcome o = Tessera("plan --scenario " + scenario.string() + " --format json -o " +
                      json.string() + " --svg " + svg.string());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  const std::string text = ReadAll(json);
  EXPECT_NE(text.find("\"planner\": \"exact\""), std::string::npos);  // the default
  EXPECT_NE(text.find("\"latency_rule\": {"), std::string::npos);
  EXPECT_NE(ReadAll(svg).find("<svg"), std::string::npos);
}

TEST_F(CliTest, ValidateAcceptsAPlanAndRejectsATamperedOne) {
  const fs::path scenario = Write("s.yaml", kGoodScenario);
  const fs::path json = dir_ / "plan.json";
  ASSERT_EQ(Tessera("plan --scenario " + scenario.string() + " --format json -o " + json.string())
                .exit_code,
            0);
  Outcome ok =
      Tessera("validate --scenario " + scenario.string() + " --deployment " + json.string());
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("valid"), std::string::npos);
  // Claim twice the rate: the same plan no longer has the capacity.
  std::string doubled = kGoodScenario;
  doubled.replace(doubled.find("rate_rps: 500"), 13, "rate_rps: 5000");
  Outcome bad = Tessera("validate --scenario " + Write("more.yaml", doubled).string() +
                        " --deployment " + json.string());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("capacity at service web"), std::string::npos) << bad.err;
}

TEST_F(CliTest, InfeasibleServiceExitsThreeAndIsReported) {
  const fs::path scenario = Write("s.yaml",
                                  "services:\n"
                                  "  - {name: web, model: resnet50, rate_rps: 500, slo_ms: 200}\n"
                                  "  - {name: fast, model: bert-large, rate_rps: 20, slo_ms: 1}\n");
  Outcome o = Tessera("plan --scenario " + scenario.string() + " --format json");
  EXPECT_EQ(o.exit_code, 3) << o.err;
  EXPECT_NE(o.out.find("\"status\": \"infeasible\""), std::string::npos);
  EXPECT_NE(o.err.find("fast"), std::string::npos);
  EXPECT_NE(o.err.find("best achievable"), std::string::npos);
}

// Every kind of bad input: exit 2, a message naming the file (and the line
// and field where there is one), and no output file.
TEST_F(CliTest, BadInputExitsTwoNamingFileLineAndField) {
  struct Case {
    std::string name;
    std::string file;                   // scenario file name ("" = none written)
    std::string contents;               // its contents
    std::string extra;                  // extra flags
    std::vector<std::string> expected;  // substrings of stderr
  };
  const std::vector<Case> cases = {
      {"missing file", "", "", "--scenario /nonexistent/s.yaml", {"/nonexistent/s.yaml"}},
      {"negative rate",
       "neg.yaml",
       "services:\n  - {name: a, model: resnet50, rate_rps: -5, slo_ms: 100}\n",
       "",
       {"neg.yaml:2", "rate_rps"}},
      {"NaN rate",
       "nan.yaml",
       "services:\n  - {name: a, model: resnet50, rate_rps: .nan, slo_ms: 100}\n",
       "",
       {"nan.yaml:2", "rate_rps"}},
      {"unknown model",
       "model.yaml",
       "services:\n  - {name: a, model: resnet9000, rate_rps: 5, slo_ms: 100}\n",
       "",
       {"model.yaml:2", "model", "resnet9000"}},
      {"unknown GPU in the scenario",
       "gpu.yaml",
       "gpu: v100\nservices:\n  - {name: a, model: resnet50, rate_rps: 5, slo_ms: 100}\n",
       "",
       {"gpu.yaml:1", "gpu", "v100"}},
      {"unknown GPU flag", "ok.yaml", kGoodScenario, "--gpu t4", {"--gpu", "t4"}},
      {"duplicate service",
       "dup.yaml",
       "services:\n  - {name: a, model: resnet50, rate_rps: 5, slo_ms: 100}\n"
       "  - {name: a, model: vgg16, rate_rps: 5, slo_ms: 100}\n",
       "",
       {"dup.yaml:3", "name", "a"}},
      {"empty scenario", "empty.yaml", "services: []\n", "", {"empty.yaml", "services"}},
      {"bad profile header",
       "ok.yaml",
       kGoodScenario,
       "--profiles PROFILES_BAD_HEADER",
       {"bad_header.csv:1", "header"}},
      {"wrong column count",
       "ok.yaml",
       kGoodScenario,
       "--profiles PROFILES_SHORT_ROW",
       {"short_row.csv:2"}},
  };
  const fs::path bad_header =
      Write("bad_header.csv", "model,gpu,profile,batch\nresnet50,a100-80gb,1g.10gb,1\n");
  const fs::path short_row = Write(
      "short_row.csv",
      "model,gpu,profile,batch,procs,throughput_rps,latency_ms\nresnet50,a100-80gb,1g.10gb,1,1\n");
  for (const Case& c : cases) {
    std::string args = "plan -o " + (dir_ / "out.json").string() + " ";
    if (!c.file.empty()) args += "--scenario " + Write(c.file, c.contents).string() + " ";
    std::string extra = c.extra;
    for (const auto& [key, path] : {std::pair{"PROFILES_BAD_HEADER", bad_header},
                                    std::pair{"PROFILES_SHORT_ROW", short_row}}) {
      if (auto at = extra.find(key); at != std::string::npos) {
        extra.replace(at, std::string(key).size(), path.string());
      }
    }
    Outcome o = Tessera(args + extra);
    EXPECT_EQ(o.exit_code, 2) << c.name << ": " << o.err;
    for (const std::string& s : c.expected) {
      EXPECT_NE(o.err.find(s), std::string::npos) << c.name << ": expected '" << s << "' in\n"
                                                  << o.err;
    }
    EXPECT_FALSE(fs::exists(dir_ / "out.json")) << c.name << " left an output file";
  }
}

TEST_F(CliTest, UnknownFlagsAndPlannersAreBadInput) {
  const fs::path scenario = Write("s.yaml", kGoodScenario);
  EXPECT_EQ(Tessera("plan --scenario " + scenario.string() + " --frobnicate").exit_code, 2);
  Outcome o = Tessera("plan --scenario " + scenario.string() + " --planner nope");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("parva"), std::string::npos);  // lists the known planners
}

TEST_F(CliTest, CompareShowsEveryPlannerAndGpusListsLayouts) {
  const fs::path scenario = Write("s.yaml", kGoodScenario);
  Outcome o = Tessera("compare --repeat 1 --scenario " + scenario.string());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  for (const char* p : {"parva ", "parva-single", "parva-unopt"}) {
    EXPECT_NE(o.out.find(p), std::string::npos) << p;
  }
  Outcome g = Tessera("gpus --gpu a100-80gb --layouts");
  EXPECT_EQ(g.exit_code, 0);
  EXPECT_NE(g.out.find("19 maximal layouts, 14 distinct profile mixes"), std::string::npos);
  Outcome j = Tessera("gpus --gpu a30-24gb --layouts --format json");
  EXPECT_EQ(j.exit_code, 0);
  const nlohmann::json parsed = nlohmann::json::parse(j.out, nullptr, false);
  ASSERT_TRUE(parsed.is_array()) << j.out;
  EXPECT_EQ(parsed[0]["name"], "a30-24gb");
  EXPECT_EQ(parsed[0]["layouts"].size(), 5u);  // 4 | 2,2 | 2,1,1 | 1,1,2 | 1,1,1,1
}

TEST_F(CliTest, ProfilesSynthRoundTripsThroughPlan) {
  const fs::path csv = dir_ / "h100.csv";
  ASSERT_EQ(Tessera("profiles synth --gpu h100-80gb -o " + csv.string()).exit_code, 0);
  const fs::path scenario = Write("s.yaml", kGoodScenario);
  Outcome o = Tessera("plan --scenario " + scenario.string() + " --gpu h100-80gb --profiles " +
                      csv.string() + " --format csv");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("Num instance,Num GPU,Model"), std::string::npos);
}

// A plan records the profiles it was made on (their source and content
// hash): validate and simulate find a recorded file again without
// --profiles, and say so when given other ones.
TEST_F(CliTest, APlanRecordsItsProfilesAndIsCheckedOnThemAgain) {
  const fs::path csv = dir_ / "a100.csv";
  ASSERT_EQ(Tessera("profiles synth --gpu a100-80gb -o " + csv.string()).exit_code, 0);
  const fs::path scenario = Write("s.yaml", kGoodScenario);
  const fs::path plan = dir_ / "plan.json", embedded = dir_ / "embedded.json";
  ASSERT_EQ(Tessera("plan --scenario " + scenario.string() + " --profiles " + csv.string() +
                    " --format json -o " + plan.string())
                .exit_code,
            0);
  ASSERT_EQ(
      Tessera("plan --scenario " + scenario.string() + " --format json -o " + embedded.string())
          .exit_code,
      0);
  const nlohmann::json recorded = nlohmann::json::parse(ReadAll(plan))["profiles"];
  EXPECT_EQ(recorded["source"], csv.string());
  ASSERT_TRUE(recorded["fnv1a64"].is_string());
  EXPECT_EQ(recorded["fnv1a64"].get<std::string>().size(), 16u);
  // The embedded profiles are the synthesized ones: the same rows, the same hash.
  const nlohmann::json builtin = nlohmann::json::parse(ReadAll(embedded))["profiles"];
  EXPECT_EQ(builtin["source"], "embedded");
  EXPECT_EQ(builtin["fnv1a64"], recorded["fnv1a64"]);

  Outcome found =
      Tessera("validate --deployment " + plan.string() + " --scenario " + scenario.string());
  EXPECT_EQ(found.exit_code, 0) << found.err;
  EXPECT_NE(found.err.find("profiles: " + csv.string() + ", which the plan records"),
            std::string::npos)
      << found.err;
  Outcome simulated = Tessera("simulate --deployment " + plan.string() + " --scenario " +
                              scenario.string() + " --duration 2s");
  EXPECT_EQ(simulated.exit_code, 0) << simulated.err;
  EXPECT_NE(simulated.err.find("which the plan records"), std::string::npos) << simulated.err;

  // Other profiles (the same table less its last row): noted by name and hash.
  const std::string text = ReadAll(csv);
  const fs::path fewer = Write("fewer.csv", text.substr(0, text.rfind('\n', text.size() - 2) + 1));
  Outcome other = Tessera("validate --deployment " + plan.string() + " --scenario " +
                          scenario.string() + " --profiles " + fewer.string());
  EXPECT_NE(other.err.find("the plan was made on other profiles (" + csv.string()),
            std::string::npos)
      << other.err;
  // The same rows in another file: nothing to say.
  const fs::path copy = Write("copy.csv", text);
  Outcome same = Tessera("validate --deployment " + plan.string() + " --scenario " +
                         scenario.string() + " --profiles " + copy.string());
  EXPECT_EQ(same.exit_code, 0) << same.err;
  EXPECT_EQ(same.err.find("other profiles"), std::string::npos) << same.err;
}

// ---- Pools, --replicate and --time-limit ------------------------------------

std::string PoolScenario() { return testing::SourcePath("examples/scenarios/pool.yaml"); }
std::string S5Scenario() { return testing::SourcePath("examples/scenarios/s5.yaml"); }

TEST_F(CliTest, PoolPlanDefaultsToExactAndPrintsItsCost) {
  Outcome o = Tessera("plan --scenario " + PoolScenario());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("Deployment: exact on a100-80gb"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("\nCost\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("proven optimal"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("cost per hour"), std::string::npos) << o.out;
  // The JSON of the same run names the models used; the header lists them.
  Outcome j = Tessera("plan --scenario " + PoolScenario() + " --format json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const nlohmann::json d = nlohmann::json::parse(j.out, nullptr, false);
  ASSERT_TRUE(d.is_object()) << j.out;
  EXPECT_EQ(d["planner"], "exact");
  EXPECT_EQ(d["metrics"]["proven_optimal"], true);
  ASSERT_TRUE(d["pool"].is_array());
  ASSERT_EQ(d["pool"].size(), 2u);
  int h100 = 0;
  for (const auto& g : d["gpus"]) h100 += g.contains("gpu") && g["gpu"] == "h100-80gb";
  EXPECT_EQ(d["pool"][1]["used"], h100);
  if (h100 > 0) {
    EXPECT_NE(o.out.find("a100-80gb + h100-80gb"), std::string::npos) << o.out;
  }
}

TEST_F(CliTest, PoolRejectsGpuFlagAndSingleModelPlanners) {
  const fs::path out = dir_ / "out.json";
  Outcome gpu = Tessera("plan --scenario " + PoolScenario() + " --gpu a30-24gb -o " + out.string());
  EXPECT_EQ(gpu.exit_code, 2) << gpu.err;
  EXPECT_NE(gpu.err.find("--gpu"), std::string::npos) << gpu.err;
  EXPECT_NE(gpu.err.find("pool"), std::string::npos) << gpu.err;
  Outcome parva =
      Tessera("plan --scenario " + PoolScenario() + " --planner parva -o " + out.string());
  EXPECT_EQ(parva.exit_code, 2) << parva.err;
  EXPECT_NE(parva.err.find("parva"), std::string::npos) << parva.err;
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(CliTest, ReplicatedS5IsPlannedExactly) {
  Outcome o =
      Tessera("plan --scenario " + S5Scenario() + " --replicate 10 --planner exact --format json");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const nlohmann::json d = nlohmann::json::parse(o.out, nullptr, false);
  ASSERT_TRUE(d.is_object()) << o.out;
  ASSERT_EQ(d["services"].size(), 110u);
  EXPECT_EQ(d["services"][11]["name"], "bert#2");  // copy-major order
  EXPECT_EQ(d["services"][109]["name"], "vgg19#10");
  EXPECT_EQ(d["metrics"]["proven_optimal"], true);
  EXPECT_FALSE(d.contains("pool"));  // one unpriced model: no cost table
  EXPECT_FALSE(d["metrics"].contains("cost_per_hour"));
}

TEST_F(CliTest, BadReplicateAndTimeLimitAreBadInput) {
  for (const char* flags :
       {"--replicate 0", "--replicate -3", "--replicate x", "--time-limit 0", "--time-limit -1"}) {
    Outcome o = Tessera("plan --scenario " + S5Scenario() + " " + flags);
    EXPECT_EQ(o.exit_code, 2) << flags << ": " << o.err;
    EXPECT_TRUE(o.out.empty()) << flags;
  }
}

TEST_F(CliTest, CompareMeasuresEveryRowAgainstTheSolversBound) {
  Outcome o = Tessera("compare --scenario " + S5Scenario() + " --repeat 1 --format json");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const nlohmann::json rows = nlohmann::json::parse(o.out, nullptr, false);
  ASSERT_TRUE(rows.is_array()) << o.out;
  ASSERT_GE(rows.size(), 2u);
  bool has_exact = false;
  for (const auto& r : rows) {
    SCOPED_TRACE(r.dump());
    // MPS rows (whole GPUs) are measured against the iGniter bound of theirs.
    if (r["sharing"] == "mps") continue;
    has_exact |= r["planner"] == "exact";
    EXPECT_EQ(r["lower_bound"], rows[0]["lower_bound"]);
    EXPECT_EQ(r["lower_bound_kind"], "solver");
    EXPECT_EQ(r["valid"], true);
    // gap = gpus / lower_bound - 1, never negative against a proven bound.
    const double bound = r["lower_bound"].get<double>();
    ASSERT_GT(bound, 0);
    EXPECT_NEAR(r["gap"].get<double>(), r["gpus"].get<double>() / bound - 1, 1e-9);
    EXPECT_GE(r["gap"].get<double>(), -1e-9);
    if (r["planner"] == "exact") {
      EXPECT_NEAR(r["gap"].get<double>(), 0, 1e-9);
    }
  }
  EXPECT_TRUE(has_exact);
}

TEST_F(CliTest, CompareSaysTheTimeLimitsItGivesWithoutTimeLimit) {
  // MIG-serving's fast algorithm scores every pair of services, so compare
  // runs it under a default limit, as it runs exact and migserving-ga under
  // theirs, and says so under its table; --time-limit replaces them all.
  const std::string limits =
      "time limits (no --time-limit given; --time-limit T sets T for every planner): "
      "migserving-greedy, migserving-greedy-mps2, migserving-greedy-mps4 5 s; exact, "
      "migserving-ga 10 s\n";
  Outcome table = Tessera("compare --scenario " + S5Scenario() + " --repeat 1");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find(limits), std::string::npos) << table.out;
  EXPECT_EQ(table.err.find("time limits"), std::string::npos) << table.err;
  Outcome json = Tessera("compare --scenario " + S5Scenario() + " --repeat 1 --format json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.err.find("tessera: note: " + limits), std::string::npos) << json.err;
  EXPECT_TRUE(nlohmann::json::parse(json.out, nullptr, false).is_array()) << json.out;
  Outcome given = Tessera("compare --scenario " + S5Scenario() + " --repeat 1 --time-limit 20");
  ASSERT_EQ(given.exit_code, 0) << given.err;
  EXPECT_EQ(given.out.find("time limits"), std::string::npos) << given.out;
  EXPECT_EQ(given.err.find("time limits"), std::string::npos) << given.err;
}

TEST_F(CliTest, CompareOnAPoolRunsOnlyPoolPlanners) {
  Outcome o = Tessera("compare --scenario " + PoolScenario() + " --repeat 1 --format json");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const nlohmann::json rows = nlohmann::json::parse(o.out, nullptr, false);
  ASSERT_TRUE(rows.is_array()) << o.out;
  ASSERT_EQ(rows.size(), 1u) << o.out;
  EXPECT_EQ(rows[0]["planner"], "exact");
  EXPECT_EQ(rows[0]["valid"], true);
  EXPECT_NE(o.err.find("note: skipped migserving-ga, migserving-greedy, migserving-greedy-mps2, "
                       "migserving-greedy-mps4, parva, parva-single, parva-unopt, static-7, "
                       "static-7-mps, static-7x1, static-7x1-mps, static-mix, static-mix-mps: "
                       "plans one GPU model"),
            std::string::npos)
      << o.err;
  EXPECT_NE(o.err.find("skipped"), std::string::npos) << o.err;
}

TEST_F(CliTest, PlanAndCompareHelpDescribeTheNewFlags) {
  for (const char* cmd : {"plan", "compare"}) {
    Outcome o = Tessera(std::string(cmd) + " --help");
    EXPECT_EQ(o.exit_code, 0) << cmd;
    EXPECT_NE(o.out.find("--time-limit"), std::string::npos) << cmd;
    EXPECT_NE(o.out.find("--replicate"), std::string::npos) << cmd;
  }
}

// The header lists the GPU models the plan uses: with A100s ten times dearer
// than H100s the cheapest plan has H100s only, and no A100 is listed.
TEST_F(CliTest, PoolHeaderListsOnlyTheModelsUsed) {
  std::string text = ReadAll(PoolScenario());
  const size_t services = text.find("services:");
  ASSERT_NE(services, std::string::npos);
  text =
      "pool:\n  - {gpu: a100-80gb, price_per_hour: 40}\n"
      "  - {gpu: h100-80gb, price_per_hour: 2}\n" +
      text.substr(services);
  Outcome j = Tessera("plan --format json --scenario " + Write("h100.yaml", text).string());
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const nlohmann::json d = nlohmann::json::parse(j.out, nullptr, false);
  ASSERT_TRUE(d.is_object()) << j.out;
  ASSERT_EQ(d["pool"][0]["used"], 0) << "the premise (no A100 used) no longer holds";
  Outcome o = Tessera("plan --scenario " + (dir_ / "h100.yaml").string());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::string header = o.out.substr(0, o.out.find('\n'));
  EXPECT_TRUE(header.starts_with("Deployment: exact on h100-80gb |")) << header;
  EXPECT_EQ(header.find("a100-80gb"), std::string::npos) << header;
}

// ---- simulate and plan --verify ---------------------------------------------

std::string S1Scenario() { return testing::SourcePath("examples/scenarios/s1.yaml"); }

// The six services of S1, in scenario order.
const std::vector<std::string> kS1Services = {"bert",        "densenet121", "inceptionv3",
                                              "mobilenetv2", "resnet50",    "vgg19"};

class SimulateCliTest : public CliTest {
 protected:
  // Plans S1 to plan.json in the test's directory.
  fs::path PlanS1() {
    const fs::path plan = dir_ / "plan.json";
    Outcome o = Tessera("plan --scenario " + S1Scenario() + " --format json -o " + plan.string());
    EXPECT_EQ(o.exit_code, 0) << o.err;
    return plan;
  }

  Outcome Simulate(const fs::path& plan, const std::string& flags) {
    return Tessera("simulate --scenario " + S1Scenario() + " --deployment " + plan.string() + " " +
                   flags);
  }
};

TEST_F(SimulateCliTest, ReportsEveryServiceAsTableAndJson) {
  const fs::path plan = PlanS1();
  Outcome table = Simulate(plan, "--duration 3s");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_TRUE(table.out.starts_with("Simulation: 3 s simulated, ")) << table.out;
  for (const char* section : {"\nServices\n", "\nLatency ms", "\nGPUs\n", "\nInstances\n"}) {
    EXPECT_NE(table.out.find(section), std::string::npos) << section << "\n" << table.out;
  }
  for (const std::string& name : kS1Services) {
    EXPECT_NE(table.out.find("\n  " + name + " "), std::string::npos) << name;
  }

  Outcome json = Simulate(plan, "--duration 3s --format json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::ordered_json r = nlohmann::ordered_json::parse(json.out, nullptr, false);
  ASSERT_TRUE(r.is_object()) << json.out;
  std::vector<std::string> keys;
  for (const auto& [key, value] : r.items()) keys.push_back(key);
  EXPECT_EQ(keys,
            (std::vector<std::string>{"duration_s", "requests", "services", "gpus", "instances"}));
  EXPECT_EQ(r["duration_s"], 3);
  ASSERT_EQ(r["services"].size(), kS1Services.size());
  long requests = 0;
  for (size_t i = 0; i < kS1Services.size(); ++i) {
    const auto& s = r["services"][i];
    SCOPED_TRACE(s.dump());
    EXPECT_EQ(s["name"], kS1Services[i]);
    requests += s["requests"].get<long>();
    EXPECT_GT(s["requests"].get<long>(), 0);
    EXPECT_GE(s["compliance"].get<double>(), 0);
    EXPECT_LE(s["compliance"].get<double>(), 1);
    EXPECT_LE(s["p50_ms"].get<double>(), s["p95_ms"].get<double>());
    EXPECT_LE(s["p95_ms"].get<double>(), s["p99_ms"].get<double>());
    EXPECT_LE(s["p99_ms"].get<double>(), s["max_ms"].get<double>());
  }
  EXPECT_EQ(r["requests"].get<long>(), requests);
  // One row per instance of the plan, one per GPU it uses.
  const nlohmann::json d = nlohmann::json::parse(ReadAll(plan), nullptr, false);
  size_t instances = 0;
  for (const auto& g : d["gpus"]) instances += g["instances"].size();
  EXPECT_EQ(r["instances"].size(), instances);
  EXPECT_EQ(r["gpus"].size(), d["metrics"]["gpus"].get<size_t>());
}

TEST_F(SimulateCliTest, SameSeedSameReport) {
  const fs::path plan = PlanS1();
  const std::string flags =
      "--duration 2s --format json --arrivals bursty --router jsq "
      "--variability lognormal:0.2 --seed ";
  Outcome a = Simulate(plan, flags + "7"), b = Simulate(plan, flags + "7");
  Outcome c = Simulate(plan, flags + "8");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out, c.out);  // thousands of random arrivals: another seed, another run
}

// A plan replayed at ten times its rate cannot keep up: the service is
// marked and noted, and the run still succeeds (a finding, not an error).
TEST_F(SimulateCliTest, OverloadIsAFindingNotAnError) {
  const fs::path scenario = Write("s.yaml", kGoodScenario);
  const fs::path plan = dir_ / "plan.json";
  ASSERT_EQ(Tessera("plan --scenario " + scenario.string() + " --format json -o " + plan.string())
                .exit_code,
            0);
  std::string heavier = kGoodScenario;
  heavier.replace(heavier.find("rate_rps: 500"), 13, "rate_rps: 5000");
  Outcome o = Tessera("simulate --scenario " + Write("x10.yaml", heavier).string() +
                      " --deployment " + plan.string() + " --duration 2s");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  const size_t web = o.out.find("\n  web ");
  ASSERT_NE(web, std::string::npos) << o.out;
  const std::string row = o.out.substr(web + 1, o.out.find('\n', web + 1) - web - 1);
  EXPECT_TRUE(row.ends_with("MISS")) << row;
  EXPECT_NE(o.err.find("tessera: note: service web "), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("service qa"), std::string::npos) << o.err;
}

// A trace sets every request's arrival: the counts are the trace's, and its
// last request sets the default duration.
TEST_F(SimulateCliTest, TraceArrivalsAreReplayedExactly) {
  const fs::path plan = PlanS1();
  std::string trace = "service,time_s\r\n";
  for (const std::string& name : kS1Services) {
    for (int i = 9; i >= 0; --i) trace += name + "," + std::to_string(0.05 + 0.1 * i) + "\r\n";
  }
  trace += "vgg19,7.5\r\n";  // after a 2 s run; sets the default duration to 8 s
  const fs::path file = Write("trace.csv", trace);
  Outcome all = Simulate(plan, "--arrivals trace:" + file.string() + " --format json");
  ASSERT_EQ(all.exit_code, 0) << all.err;
  const nlohmann::json r = nlohmann::json::parse(all.out, nullptr, false);
  ASSERT_TRUE(r.is_object()) << all.out;
  EXPECT_EQ(r["duration_s"], 8);
  EXPECT_EQ(r["requests"], 61);
  EXPECT_EQ(r["services"][5]["requests"], 11);

  Outcome cut = Simulate(plan, "--arrivals trace:" + file.string() + " --format json --duration 2");
  ASSERT_EQ(cut.exit_code, 0) << cut.err;
  const nlohmann::json c = nlohmann::json::parse(cut.out, nullptr, false);
  ASSERT_TRUE(c.is_object()) << cut.out;
  for (const auto& s : c["services"]) EXPECT_EQ(s["requests"], 10) << s.dump();
  EXPECT_NE(cut.err.find("1 request(s) of the trace arrive after --duration"), std::string::npos)
      << cut.err;
}

// Every kind of bad input: exit 2, a message naming the flag or the file
// (and line and field), nothing on stdout and no output file.
TEST_F(SimulateCliTest, BadInputExitsTwoNamingFlagOrFile) {
  const fs::path plan = PlanS1();
  const fs::path bad_trace = Write("bad.csv", "service,time_s\nbert,0.5\nbert,-1\n");
  const fs::path web_trace = Write("web.csv", "service,time_s\nweb,0.5\n");
  const fs::path out = dir_ / "sim.txt";
  const std::string good = "--scenario " + S1Scenario() + " --deployment " + plan.string();
  struct Case {
    std::string args;
    std::vector<std::string> expected;  // substrings of stderr
  };
  const std::vector<Case> cases = {
      {good + " --duration abc", {"--duration", "'abc'"}},
      {good + " --duration 0s", {"--duration"}},
      {good + " --duration 5 min", {}},  // a stray argument
      {good + " --arrivals uniform", {"--arrivals", "'uniform'"}},
      {good + " --arrivals trace:", {"--arrivals", "trace:"}},
      {good + " --arrivals trace:" + bad_trace.string(), {"bad.csv:3", "time_s", "'-1'"}},
      {good + " --arrivals trace:" + web_trace.string(), {"web.csv", "bert"}},
      {good + " --arrivals trace:/nonexistent/t.csv", {"/nonexistent/t.csv"}},
      {good + " --variability lognormal:0", {"--variability"}},
      {good + " --variability gamma", {"--variability", "'gamma'"}},
      {good + " --arrivals bursty --burst-on-share 1.5", {"--burst-on-share"}},
      {good + " --burst-on-s 2", {"--burst-on-s", "bursty"}},
      {good + " --drop-after-ms -1", {"--drop-after-ms"}},
      {good + " --router random", {"--router"}},
      {"--scenario " + S1Scenario(), {"--deployment"}},
      {"--scenario " + S1Scenario() + " --deployment /nonexistent/p.json", {"/nonexistent/p.json"}},
      {"--deployment " + plan.string(), {"--scenario"}},
      {"--scenario " + testing::SourcePath("examples/scenarios/s2.yaml") + " --deployment " +
           plan.string(),
       {"plan.json", "s2.yaml", "not in the deployment"}},
  };
  for (const Case& c : cases) {
    Outcome o = Tessera("simulate -o " + out.string() + " " + c.args);
    EXPECT_EQ(o.exit_code, 2) << c.args << ": " << o.err;
    for (const std::string& s : c.expected) {
      EXPECT_NE(o.err.find(s), std::string::npos) << c.args << ": expected '" << s << "' in\n"
                                                  << o.err;
    }
    EXPECT_TRUE(o.out.empty()) << c.args;
    EXPECT_FALSE(fs::exists(out)) << c.args << " left an output file";
  }
}

TEST_F(SimulateCliTest, PlanVerifyAppendsTheSimulation) {
  Outcome table = Tessera("plan --scenario " + S1Scenario() + " --verify --verify-duration 2s");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  const size_t metrics = table.out.find("\nMetrics\n");
  const size_t simulation = table.out.find("\nSimulation: 2 s simulated");
  ASSERT_NE(metrics, std::string::npos) << table.out;
  ASSERT_NE(simulation, std::string::npos) << table.out;
  EXPECT_LT(metrics, simulation);

  // JSON stays the deployment alone, as without --verify; the simulation
  // goes to stderr.
  Outcome json = Tessera("plan --scenario " + S1Scenario() +
                         " --format json --verify "
                         "--verify-duration 2s");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  Outcome plain = Tessera("plan --scenario " + S1Scenario() + " --format json");
  nlohmann::json verified = nlohmann::json::parse(json.out, nullptr, false);
  nlohmann::json unverified = nlohmann::json::parse(plain.out, nullptr, false);
  ASSERT_TRUE(verified.is_object()) << json.out;
  ASSERT_TRUE(unverified.is_object()) << plain.out;
  verified["metrics"].erase("plan_ms");  // a wall time
  unverified["metrics"].erase("plan_ms");
  EXPECT_EQ(verified, unverified);
  EXPECT_NE(json.err.find("Simulation: 2 s simulated"), std::string::npos) << json.err;

  for (const char* bad : {"--verify --verify-duration 5x", "--verify-duration 5s"}) {
    Outcome o = Tessera("plan --scenario " + S1Scenario() + " " + bad);
    EXPECT_EQ(o.exit_code, 2) << bad;
    EXPECT_NE(o.err.find("--verify-duration"), std::string::npos) << bad << ": " << o.err;
  }
}

TEST_F(CliTest, SimulateHelpTeaches) {
  Outcome o = Tessera("simulate --help");
  EXPECT_EQ(o.exit_code, 0);
  for (const char* s : {"Examples:", "--arrivals", "trace:FILE", "--router", "--variability",
                        "MISS", "service,time_s"}) {
    EXPECT_NE(o.out.find(s), std::string::npos) << s;
  }
  Outcome plan = Tessera("plan --help");
  EXPECT_NE(plan.out.find("--verify"), std::string::npos);
  EXPECT_NE(Tessera("--help").out.find("simulate"), std::string::npos);
}

}  // namespace
}  // namespace tessera
