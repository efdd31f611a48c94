// Scale (issue 17, class 9): planners honour --time-limit on scenarios far
// larger than the bundled ones. No test here asserts a time (timing belongs
// in `make bench`): a regression shows as a run that does not finish.
#include <gtest/gtest.h>

#include <string>

#include "cli_fixture.h"

namespace tessera {
namespace {

class ScaleCliTest : public testing::CliTest {};

// 600 services: MIG-serving's fast algorithm needs a second or so (its pair
// scores alone are 600 x 599 / 2 x 19 configurations); under a 1 ms limit it
// stops, gives the services it has not reached GPUs of their own, and says
// so; the plan passes the validator (`plan` checks it).
TEST_F(ScaleCliTest, MigServingStopsItsFastAlgorithmAtTheTimeLimit) {
  const std::string scenario = (dir_ / "s600.yaml").string();
  ASSERT_EQ(Tessera("gen --services 600 --rates normal:300,100 -o " + scenario).exit_code, 0);
  for (const char* planner : {"migserving-greedy", "migserving-ga"}) {
    const testing::Outcome o = Tessera(std::string("plan --planner ") + planner + " --scenario " +
                                       scenario + " --time-limit 1ms --format json");
    EXPECT_EQ(o.exit_code, 0) << planner << ": " << o.err;
    EXPECT_NE(o.err.find("passed during the fast algorithm"), std::string::npos)
        << planner << ": " << o.err;
    EXPECT_NE(o.out.find("\"planner\": \"" + std::string(planner) + "\""), std::string::npos);
  }
}

}  // namespace
}  // namespace tessera
