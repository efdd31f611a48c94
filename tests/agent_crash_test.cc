// Crash safety of the node agent (issue 19, item 5): the agent is killed
// with SIGKILL at 20 random points (10 while it applies S3's plan to an empty
// node, 10 while it runs the day-to-night transition; 2 and 2 in the
// sanitized build, where 20 took 253 s against 65 s and the other 16 points
// would only repeat the unsanitized pass on the same code), started again, and
// must converge: the fake machine holds exactly the plan's geometry (each GPU
// instance with its one compute instance: no orphan, no duplicate), exactly
// the plan's processes run (none left behind, none twice), and every
// journaled step has its end. A kill point is a count of journal lines: the
// agent is killed once that many lines of its run are on disk, which spreads
// the points over every kind of step (before and after NVML calls, process
// starts and readiness waits).
#include <gtest/gtest.h>

#include <iostream>
#include <random>

#include "agent_fixture.h"

namespace tessera::testing {
namespace {

namespace fs = std::filesystem;

#ifdef TESSERA_SANITIZED
constexpr int kKillPoints = 4;
#else
constexpr int kKillPoints = 20;
#endif

class AgentCrashTest : public AgentTest {
 protected:
  void SetUp() override {
    AgentTest::SetUp();
    for (const std::string name : {"day", "night"}) {
      const Outcome o =
          Tessera("plan --scenario " +
                  SourcePath("examples/scenarios/" +
                             std::string(name == "day" ? "s3" : "s3-night") + ".yaml") +
                  " --format json -o " + (dir_ / (name + ".json")).string());
      ASSERT_EQ(o.exit_code, 0) << o.err;
    }
    Outcome o = Tessera("transition --scenario " + SourcePath("examples/scenarios/s3-night.yaml") +
                        " --from " + (dir_ / "day.json").string() + " --to " +
                        (dir_ / "night.json").string() + " --spare-gpus 1 --format json -o " +
                        (dir_ / "t.json").string());
    ASSERT_EQ(o.exit_code, 0) << o.err;
    for (const std::string name : {"day", "night"}) {
      o = Tessera("deploy --deployment " + (dir_ / (name + ".json")).string() + " --out " +
                  (dir_ / name).string() + " --base-port 21000 --mps-root " +
                  (dir_ / "mps").string() +
                  (name == "night" ? " --transition " + (dir_ / "t.json").string() : ""));
      ASSERT_EQ(o.exit_code, 0) << o.err;
    }
  }

  std::string Plan(const std::string& name) const {
    return (dir_ / name / "nodes" / "node-0.json").string();
  }
  std::string TransitionArgs() const {
    return AgentArgs(Plan("night")) + " --transition " + (dir_ / "t.json").string();
  }
  std::string Journal() const { return state_dir_ + "/journal.jsonl"; }

  // A new, empty machine and agent state.
  void Fresh() {
    KillUnits(state_dir_);
    fs::remove(fake_state_);
    fs::remove_all(state_dir_);
  }

  // Runs `args` in the background and kills it with SIGKILL once `lines`
  // more journal lines are written; returns false when it finished first.
  bool KillAfter(const std::string& args, int lines) {
    const int target = CountLines(Journal()) + lines;
    Background agent(
        {"TESSERA_FAKE_NVML_STATE=" + fake_state_, "TESSERA_FAKE_NVML_DEVICES=a100-80gb*8"}, args);
    while (agent.Running()) {
      if (CountLines(Journal()) >= target) {
        agent.Kill();
        return true;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    return false;
  }

  // The node runs `plan` and nothing else, and the journal is closed.
  void ExpectConvergedTo(const std::string& plan, const std::string& where) {
    const nlohmann::json p = ReadJson(plan);
    EXPECT_EQ(MachineGeometry(), PlanGeometry(p)) << where;
    EXPECT_EQ(RunningUnits(), PlanUnits(p)) << where;
    ExpectJournalClosed();
  }
};

TEST_F(AgentCrashTest, KilledAtRandomPointsTheAgentConvergesWithNothingOrphaned) {
  // How many journal lines a whole apply and a whole transition write.
  Fresh();
  Outcome o = OnMachine(AgentArgs(Plan("day")) + " --once");
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  const int apply_lines = CountLines(Journal());
  o = OnMachine(TransitionArgs());
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  const int transition_lines = CountLines(Journal()) - apply_lines;
  ASSERT_GT(apply_lines, 10);
  ASSERT_GT(transition_lines, 10);

  std::mt19937 rng(20261125);
  int killed = 0;
  std::string points;  // "a12, t40, ...": where each kill fell (apply or transition, line)
  for (int point = 0; point < kKillPoints; ++point) {
    const bool transition = point >= kKillPoints / 2;
    Fresh();
    if (transition) {
      // Why an apply did not converge, when it does not (it flaked once
      // with exit 3 under a loaded machine).
      o = OnMachine(AgentArgs(Plan("day")) + " --once");
      ASSERT_EQ(o.exit_code, 0) << "before kill point " << point << "\n" << o.out << o.err;
    }
    const int total = transition ? transition_lines : apply_lines;
    const int at = std::uniform_int_distribution<int>(1, total - 1)(rng);
    const std::string args = transition ? TransitionArgs() : AgentArgs(Plan("day")) + " --once";
    const bool hit = KillAfter(args, at);
    killed += hit ? 1 : 0;
    points += (points.empty() ? "" : ", ") + std::string(transition ? "t" : "a") +
              std::to_string(at) + (hit ? "" : " (ended first)");
    const std::string where = std::string(transition ? "transition" : "apply") +
                              " killed after journal line " + std::to_string(at) + " of " +
                              std::to_string(total);
    o = OnMachine(args);
    ASSERT_EQ(o.exit_code, 0) << where << "\n" << o.out << o.err;
    ExpectConvergedTo(Plan(transition ? "night" : "day"), where);
    if (HasFailure()) break;
  }
  // Nearly every point is reached before the run ends by itself.
  EXPECT_GE(killed, kKillPoints * 9 / 10);
  std::cout << "killed at " << killed << " of " << kKillPoints
            << " points (journal lines of an apply: " << apply_lines
            << ", of a transition: " << transition_lines << "): " << points << "\n";
}

}  // namespace
}  // namespace tessera::testing
