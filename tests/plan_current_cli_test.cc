// `tessera plan --current A.json`: incremental re-planning from a running
// deployment (incremental_plan.h), its note line, and its errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_fixture.h"
#include "test_paths.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using testing::CliTest;
using testing::Outcome;

std::string S6() { return testing::SourcePath("examples/scenarios/s6.yaml"); }

class PlanCurrentCliTest : public CliTest {
 protected:
  // S6 planned by the default planner, as JSON.
  fs::path CurrentPlan() {
    const fs::path json = dir_ / "a.json";
    Outcome o = Tessera("plan --scenario " + S6() + " --format json -o " + json.string());
    EXPECT_EQ(o.exit_code, 0) << o.err;
    return json;
  }

  // S6 with bert's rate doubled.
  fs::path BertDoubled() {
    std::string text = testing::ReadAll(S6());
    const std::string from = "rate_rps: 1264,";
    text.replace(text.find(from), from.size(), "rate_rps: 2528,");
    return Write("bert-x2.yaml", text);
  }
};

TEST_F(PlanCurrentCliTest, UnchangedScenarioKeepsEverything) {
  const fs::path a = CurrentPlan();
  Outcome o = Tessera("plan --scenario " + S6() + " --current " + a.string() + " --format json");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("tessera: note: incremental: kept "), std::string::npos) << o.err;
  EXPECT_NE(o.err.find(", moved 0, new 0, removed 0 instances; "), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("(from scratch: "), std::string::npos) << o.err;
  EXPECT_EQ(nlohmann::json::parse(o.out)["gpus"],
            nlohmann::json::parse(testing::ReadAll(a))["gpus"]);
}

// S6 planned from scratch leaves no room: bert at twice its rate needs a GPU
// more than the plan from scratch, which is used by default, with a note;
// one extra GPU allowed, only bert's instances are added.
TEST_F(PlanCurrentCliTest, DoubledRateAddsInstancesAndValidates) {
  const fs::path a = CurrentPlan();
  const fs::path next = BertDoubled();
  Outcome o = Tessera("plan --scenario " + next.string() + " --current " + a.string());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("; 19 GPUs (from scratch: 19, proven; allowed 19)\n"
                       "tessera: note: the incremental plan needs 20 GPUs, more than the 19 "
                       "allowed (19 from scratch + 0); the plan from scratch is used"),
            std::string::npos)
      << o.err;

  const fs::path b = dir_ / "b.json";
  o = Tessera("plan --scenario " + next.string() + " --current " + a.string() +
              " --max-extra-gpus 1 --format json -o " + b.string() + " --svg " +
              (dir_ / "b.svg").string());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("tessera: note: incremental: kept 35, moved 0, new "), std::string::npos)
      << o.err;
  EXPECT_NE(o.err.find(" removed 0 instances; 20 GPUs (from scratch: 19, proven; allowed 20)\n"),
            std::string::npos)
      << o.err;
  EXPECT_EQ(o.err.find("plan from scratch is used"), std::string::npos) << o.err;
  EXPECT_TRUE(fs::exists(dir_ / "b.svg"));
  Outcome v = Tessera("validate --scenario " + next.string() + " --deployment " + b.string());
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;

  Outcome table = Tessera("plan --scenario " + next.string() + " --current " + a.string() +
                          " --max-extra-gpus 1 --planner exact");
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("incremental+exact"), std::string::npos) << table.out;
}

TEST_F(PlanCurrentCliTest, MaxExtraGpusNeedsCurrent) {
  Outcome o = Tessera("plan --scenario " + S6() + " --max-extra-gpus 1");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err.rfind("tessera: error: ", 0), 0u) << o.err;
  EXPECT_NE(o.err.find("--current"), std::string::npos) << o.err;
}

TEST_F(PlanCurrentCliTest, MaxExtraGpusIsBounded) {
  const fs::path a = CurrentPlan();
  Outcome o =
      Tessera("plan --scenario " + S6() + " --current " + a.string() + " --max-extra-gpus -1");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("--max-extra-gpus"), std::string::npos) << o.err;
}

TEST_F(PlanCurrentCliTest, RepackGpusNeedsCurrentAndIsBounded) {
  Outcome o = Tessera("plan --scenario " + S6() + " --repack-gpus 2");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("--current"), std::string::npos) << o.err;
  const fs::path a = CurrentPlan();
  for (const char* bad : {"-1", "x", "1.5", "100001"}) {
    o = Tessera("plan --scenario " + S6() + " --current " + a.string() + " --repack-gpus " + bad);
    EXPECT_EQ(o.exit_code, 2) << bad << ": " << o.err;
    EXPECT_NE(o.err.find("--repack-gpus"), std::string::npos) << bad << ": " << o.err;
  }
}

TEST_F(PlanCurrentCliTest, ConsolidateNeedsCurrentAndTakesNoValue) {
  Outcome o = Tessera("plan --scenario " + S6() + " --consolidate");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("--consolidate"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("--current"), std::string::npos) << o.err;
  const fs::path a = CurrentPlan();
  o = Tessera("plan --scenario " + S6() + " --current " + a.string() + " --consolidate=maybe");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("--consolidate"), std::string::npos) << o.err;
}

// A consolidated re-plan, and one repacking more GPUs than the plan has
// (every instance planned afresh), validate and say what they kept.
TEST_F(PlanCurrentCliTest, ConsolidatingOrRepackingEveryGpuStillValidates) {
  const fs::path a = CurrentPlan();
  const fs::path b = dir_ / "b.json";
  for (const char* option : {"--repack-gpus 1000", "--consolidate"}) {
    Outcome o = Tessera("plan --scenario " + BertDoubled().string() + " --current " + a.string() +
                        " --max-extra-gpus 1 " + option + " --format json -o " + b.string());
    ASSERT_EQ(o.exit_code, 0) << option << ": " << o.err;
    EXPECT_NE(o.err.find("tessera: note: incremental: kept "), std::string::npos) << o.err;
    Outcome v =
        Tessera("validate --scenario " + BertDoubled().string() + " --deployment " + b.string());
    EXPECT_EQ(v.exit_code, 0) << option << ": " << v.out << v.err;
  }
}

TEST_F(PlanCurrentCliTest, BadCurrentFileNamesFileAndField) {
  const fs::path a = CurrentPlan();
  nlohmann::json plan = nlohmann::json::parse(testing::ReadAll(a));
  plan["gpus"][0]["instances"][0]["start"] = "x";
  const fs::path bad = Write("bad.json", plan.dump());
  Outcome o = Tessera("plan --scenario " + S6() + " --current " + bad.string());
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("tessera: error: " + bad.string() + ": gpus[0].instances[0].start"),
            std::string::npos)
      << o.err;

  // Two instances on the same slices: a layout no GPU can hold.
  plan = nlohmann::json::parse(testing::ReadAll(a));
  plan["gpus"][0]["instances"].push_back(plan["gpus"][0]["instances"][0]);
  const fs::path overlap = Write("overlap.json", plan.dump());
  o = Tessera("plan --scenario " + S6() + " --current " + overlap.string());
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("tessera: error: " + overlap.string() + ": gpus[0]: "), std::string::npos)
      << o.err;

  o = Tessera("plan --scenario " + S6() + " --current " + (dir_ / "missing.json").string());
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("missing.json"), std::string::npos) << o.err;
}

TEST_F(PlanCurrentCliTest, CurrentIsForMigPlannersOnly) {
  const fs::path a = CurrentPlan();
  Outcome o = Tessera("plan --scenario " + S6() + " --current " + a.string() +
                      " --planner igniter --coeffs x.json");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("--current"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find('\n'), o.err.size() - 1) << "one line: " << o.err;
}

}  // namespace
}  // namespace tessera
