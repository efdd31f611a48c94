// The layering checker (tools/layering/checker.h) on the checkout, and on
// small synthetic trees that show what it reports.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "layering/checker.h"
#include "test_paths.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using layering::CheckLayering;
using layering::Violation;

std::vector<std::string> Strings(const std::vector<Violation>& violations) {
  std::vector<std::string> out;
  for (const Violation& violation : violations) out.push_back(violation.ToString());
  return out;
}

TEST(LayeringTest, NoUpwardIncludes) {
  const fs::path root = TESSERA_SOURCE_DIR;
  ASSERT_TRUE(fs::is_directory(root / "src" / "plan")) << root << " is not a Tessera checkout";
  const std::vector<Violation> violations = CheckLayering(root);
  std::string list;
  for (const Violation& violation : violations) list += "  " + violation.ToString() + "\n";
  EXPECT_TRUE(violations.empty())
      << violations.size()
      << " layering violations (floors include only floors below them; simulate and online "
         "not each other; one planner's folder not another's; app only "
         "include/tessera/; see docs/architecture.md):\n"
      << list;
}

// Self-tests on a tiny synthetic tree.
class LayeringSelfTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::FreshTestDir();
    Write("src/util/text.h", "");
    Write("src/util/text.cc", "#include \"util/text.h\"\n");
    Write("src/plan/engine.h", "");
    Write("src/simulate/sim.h", "");
    Write("src/online/replay.h", "");
    Write("src/planners/shared.h", "");
    Write("src/planners/exact/milp.h", "");
    Write("src/planners/parva/parva.h", "");
    Write("include/tessera/status.h", "");
    Write("src/util/status.cc", "#include \"tessera/status.h\"\n");
    Write("include/tessera/simulator.h", "#include \"tessera/status.h\"\n");
    Write("src/simulate/simulator.cc", "#include \"tessera/simulator.h\"\n");
    Write("include/tessera/planner.h", "#include \"tessera/status.h\"\n");  // table: plan
  }
  void TearDown() override { fs::remove_all(root_); }

  void Write(const std::string& relative, const std::string& text) {
    fs::create_directories((root_ / relative).parent_path());
    testing::WriteTextFile(root_ / relative, text);
  }
  std::vector<std::string> Check(std::map<std::string, std::string> dir_floors = {}) {
    return Strings(CheckLayering(root_, std::move(dir_floors)));
  }

  fs::path root_;
};

TEST_F(LayeringSelfTest, DownwardIncludesAreClean) {
  Write("src/plan/engine.cc",
        "#include \"plan/engine.h\"\n"
        "#include \"util/text.h\"\n"
        "#include \"engine.h\"\n"
        "#include \"tessera/planner.h\"\n"
        "#include \"tessera/status.h\"\n"
        "#include <vector>\n"
        "#include \"fmt/format.h\"\n");
  Write("src/emit/svg.cc", "#include \"simulate/sim.h\"\n#include \"online/replay.h\"\n");
  EXPECT_THAT(Check(), ::testing::IsEmpty());
}

TEST_F(LayeringSelfTest, ReportsUpwardIncludeWithFileAndLine) {
  Write("src/plan/engine.cc",
        "// engine\n"
        "#include \"util/text.h\"\n"
        "#include \"simulate/sim.h\"\n");
  Write("include/tessera/planner.h",
        "#include \"tessera/status.h\"\n#include \"tessera/simulator.h\"\n");
  EXPECT_THAT(Check(),
              ::testing::ElementsAre(
                  "include/tessera/planner.h:2: plan includes tessera/simulator.h "
                  "(simulate): upward",
                  "src/plan/engine.cc:3: plan includes simulate/sim.h (simulate): upward"));
}

TEST_F(LayeringSelfTest, ParsesEverySpellingOfAQuotedInclude) {
  Write("src/gpu/catalog.cc",
        "  #include \"plan/engine.h\"\n"
        "#  include \"plan/engine.h\"  // the engine\n"
        "\t# include\t\"plan/engine.h\" /* again */\n"
        "// #include \"plan/engine.h\"\n"
        "#include <plan/engine.h>\n"
        "#define X \"#include \\\"plan/engine.h\\\"\"\n");
  EXPECT_THAT(Check(), ::testing::ElementsAre(
                           "src/gpu/catalog.cc:1: gpu includes plan/engine.h (plan): upward",
                           "src/gpu/catalog.cc:2: gpu includes plan/engine.h (plan): upward",
                           "src/gpu/catalog.cc:3: gpu includes plan/engine.h (plan): upward"));
}

// One planner's folder never includes another's; the shared files directly
// under src/planners/ may include any planner and be included by all.
TEST_F(LayeringSelfTest, ReportsCrossPlannerInclude) {
  Write("src/planners/parva/parva.cc",
        "#include \"planners/parva/parva.h\"\n"
        "#include \"planners/shared.h\"\n"
        "#include \"planners/exact/milp.h\"\n");
  Write("src/planners/builtin_planners.cc",
        "#include \"planners/exact/milp.h\"\n#include \"planners/parva/parva.h\"\n");
  EXPECT_THAT(Check(),
              ::testing::ElementsAre(
                  "src/planners/parva/parva.cc:3: planners/parva includes planners/exact/milp.h "
                  "(planners/exact): another planner's folder (planners/parva/ may include only "
                  "its own folder and src/planners/ itself)"));
}

TEST_F(LayeringSelfTest, ReportsPublicHeaderOfAnotherPlanner) {
  Write("include/tessera/milp.h", "");
  Write("src/planners/exact/milp.cc", "#include \"tessera/milp.h\"\n");
  Write("src/planners/parva/parva.cc", "#include \"tessera/milp.h\"\n");
  EXPECT_THAT(Check(), ::testing::ElementsAre(
                           "src/planners/parva/parva.cc:1: planners/parva includes tessera/milp.h "
                           "(planners/exact): another planner's folder (planners/parva/ may "
                           "include only its own folder and src/planners/ itself)"));
}

TEST_F(LayeringSelfTest, ReportsSimulateAndOnlineIncludingEachOther) {
  Write("src/simulate/sim.cc", "#include \"simulate/sim.h\"\n\n#include \"online/replay.h\"\n");
  Write("src/online/replay.cc", "#include \"simulate/sim.h\"\n");
  EXPECT_THAT(Check(), ::testing::ElementsAre(
                           "src/online/replay.cc:1: online includes simulate/sim.h (simulate): "
                           "sideways (online and simulate are on one level and must not include "
                           "each other)",
                           "src/simulate/sim.cc:3: simulate includes online/replay.h (online): "
                           "sideways (simulate and online are on one level and must not include "
                           "each other)"));
}

TEST_F(LayeringSelfTest, ReportsAppIncludingSrc) {
  Write("app/cli_flags.h", "");
  Write("app/cmd_plan.cc",
        "#include \"cli_flags.h\"\n"
        "#include \"tessera/planner.h\"\n"
        "#include \"util/text.h\"\n");
  EXPECT_THAT(Check(), ::testing::ElementsAre(
                           "app/cmd_plan.cc:3: app includes util/text.h (util): app includes "
                           "only include/tessera/ headers and its own"));
}

TEST_F(LayeringSelfTest, ReportsUnclassifiedPublicHeaderAndUnknownDirectory) {
  Write("include/tessera/mystery.h", "");
  Write("src/serve/server.cc", "#include \"online/replay.h\"\n");
  EXPECT_THAT(
      Check(),
      ::testing::ElementsAre(
          "include/tessera/mystery.h: public header with no floor (no mystery.cc under src/): "
          "classify it",
          "src/serve: directory with no floor: add it to the floors"));
  EXPECT_THAT(Check({{"serve", "simulate"}}),
              ::testing::ElementsAre(
                  "include/tessera/mystery.h: public header with no floor (no mystery.cc under "
                  "src/): classify it",
                  "src/serve/server.cc:1: simulate includes online/replay.h (online): sideways "
                  "(simulate and online are on one level and must not include each other)"));
}

TEST_F(LayeringSelfTest, TestsAndBenchAreOutsideTheFloors) {
  Write("tests/helper.h", "#include \"simulate/sim.h\"\n");
  Write("tests/cli_test.cc", "#include \"simulate/sim.h\"\n#include \"util/text.h\"\n");
  Write("bench/plan_bench.cc", "#include \"online/replay.h\"\n");
  Write("src/util/text_test.cc", "#include \"helper.h\"\n#include \"util/text.h\"\n");
  Write("src/util/clock.cc", "#include \"helper.h\"\n");
  EXPECT_THAT(Check(), ::testing::ElementsAre(
                           "src/util/clock.cc:1: util includes helper.h (tests/helper.h): only "
                           "tests may include tests/ and bench/"));
}

}  // namespace
}  // namespace tessera
