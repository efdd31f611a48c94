// `--score` of `tessera plan` and `tessera compare` (MIG-serving's capped or
// paper score), and the static baselines with MPS inside MIG in compare.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_fixture.h"

namespace tessera {
namespace {

using testing::CliTest;
using testing::Outcome;

std::string S1() { return testing::SourcePath("examples/scenarios/s1.yaml"); }

nlohmann::json Json(const Outcome& o) { return nlohmann::json::parse(o.out, nullptr, false); }

int PlannedGpus(const Outcome& o) {
  const nlohmann::json plan = Json(o);
  return plan.is_object() ? plan["metrics"]["gpus"].get<int>() : -1;
}

TEST_F(CliTest, ScorePaperChangesMigServingsPlanAndDefaultsToCapped) {
  // ParvaGPU's S1: the capped score packs its services on 2 GPUs; the
  // paper's formula spends 6 (docs/migserving-planner.md, "The score").
  const std::string plan = "plan --scenario " + S1() + " --planner migserving-greedy --format json";
  Outcome capped = Tessera(plan);
  Outcome named = Tessera(plan + " --score capped");
  Outcome paper = Tessera(plan + " --score paper");
  ASSERT_EQ(capped.exit_code, 0) << capped.err;
  ASSERT_EQ(named.exit_code, 0) << named.err;
  ASSERT_EQ(paper.exit_code, 0) << paper.err;
  EXPECT_EQ(Json(capped)["gpus"], Json(named)["gpus"]);
  EXPECT_EQ(PlannedGpus(capped), 2);
  EXPECT_EQ(PlannedGpus(paper), 6);
}

TEST_F(CliTest, ScoreIsAnErrorForOtherPlannersAndOtherValues) {
  Outcome parva = Tessera("plan --scenario " + S1() + " --planner parva --score paper");
  EXPECT_EQ(parva.exit_code, 2);
  EXPECT_NE(parva.err.find("--score does not apply to planner parva"), std::string::npos)
      << parva.err;
  Outcome bad = Tessera("plan --scenario " + S1() + " --planner migserving-greedy --score loose");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--score"), std::string::npos) << bad.err;
}

TEST_F(CliTest, CompareListsTheMpsStaticBaselinesAndSaysWhichScore) {
  Outcome list = Tessera("compare --list");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  for (const char* name : {"static-7-mps", "static-7x1-mps", "static-mix-mps"}) {
    EXPECT_NE(list.out.find(name), std::string::npos) << name;
  }
  Outcome o = Tessera("compare --scenario " + S1() + " --repeat 1 --time-limit 2 --score paper");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("static-7x1-mps"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("score: MIG-serving's planners ranked GPU configurations by the paper's"),
            std::string::npos)
      << o.out;
  // The paper's score reaches the MIG-serving planners only: exact keeps its
  // 2 GPUs, migserving-greedy spends 6.
  Outcome json = Tessera("compare --scenario " + S1() +
                         " --repeat 1 --time-limit 2 --score paper --format json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json rows = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_TRUE(rows.is_array()) << json.out;
  int checked = 0;
  for (const nlohmann::json& row : rows) {
    const std::string planner = row["planner"].get<std::string>();
    if (planner != "exact" && planner != "migserving-greedy") continue;
    EXPECT_EQ(row["gpus"].get<int>(), planner == "exact" ? 2 : 6) << planner;
    ++checked;
  }
  EXPECT_EQ(checked, 2) << json.out;
  EXPECT_NE(json.err.find("tessera: note: score: "), std::string::npos) << json.err;
  // On a pool no MIG-serving planner runs, so nothing is said of their score.
  Outcome pool =
      Tessera("compare --scenario " + testing::SourcePath("examples/scenarios/pool.yaml") +
              " --repeat 1 --time-limit 2 --score paper");
  ASSERT_EQ(pool.exit_code, 0) << pool.err;
  EXPECT_EQ(pool.out.find("migserving-greedy "), std::string::npos) << pool.out;
  EXPECT_EQ(pool.out.find("score:"), std::string::npos) << pool.out;
}

}  // namespace
}  // namespace tessera
