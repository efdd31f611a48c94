// `tessera transition check` run as a user would: exit codes 0 (passes), 3
// (violations, listed) and 2 (bad input, one error line naming the file), the
// text and JSON reports, -o, and the parent command's help. Then planning a
// transition between real plans of S6 (`tessera transition --scenario ...`):
// the transition written passes `transition check`, exit 3 names the spare
// GPUs that would do, and bad inputs exit 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "cli_fixture.h"
#include "deployment_builder.h"
#include "tessera/deployment_format.h"
#include "tessera/transition/transition_format.h"

namespace tessera::testing {
namespace {

// A: one GPU, resnet50 on 3g.40gb@4; B: the same instance moved to @0.
Deployment Plan(int start) {
  return DeploymentBuilder("a100-80gb", "parva")
      .BareCapacity()
      .Gpu()
      .Instance("3g.40gb", start, "resnet50", 32, 2, 300, 60)
      .Service("resnet50", 200, 200)
      .Build();
}

TransitionStep Step(std::string id, StepAction action, int start) {
  TransitionStep s;
  s.id = std::move(id);
  s.action = action;
  s.gpu = 0;
  s.profile = "3g.40gb";
  s.start = start;
  s.service = "resnet50";
  s.model = "resnet50";
  s.batch = 32;
  s.procs = 2;
  s.throughput_rps = 300;
  return s;
}

// Move resnet50 through spare GPU 1: create there, destroy the old, create
// the new, destroy the spare's. Floor 200 <= 300 throughout: ratio 1.5.
Transition Move() {
  Transition t;
  t.gpu = "a100-80gb";
  t.spare_gpus = 1;
  t.gpu_map = {{0, 0}};
  TransitionStep via = Step("s1", StepAction::kCreate, 0);
  via.gpu = 1;
  TransitionStep via_gone = Step("s4", StepAction::kDestroy, 0);
  via_gone.gpu = 1;
  t.phases = {{{via}},
              {{Step("s2", StepAction::kDestroy, 4)}},
              {{Step("s3", StepAction::kCreate, 0)}},
              {{via_gone}}};
  t.summary = {4, 4, 2, 2, 1.5};
  return t;
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "'" << from << "' not in the text";
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

class TransitionCliTest : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    Write("a.json", FormatDeploymentJson(Plan(4)));
    Write("b.json", FormatDeploymentJson(Plan(0)));
  }
  // A file of the test's directory, as the command line names it.
  std::string P(const std::string& name) const { return (dir_ / name).string(); }
  std::string Check() const {
    return "transition check --from " + P("a.json") + " --to " + P("b.json") + " --plan " +
           P("t.json");
  }
};

TEST_F(TransitionCliTest, ALegalTransitionPrintsOkAndExits0) {
  Write("t.json", FormatTransitionJson(Move()));
  const Outcome o = Tessera(Check());
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(o.out, "ok: 4 steps, 4 phases, 2 GPUs touched, peak 2 GPUs, min capacity ratio 1.5\n");
}

TEST_F(TransitionCliTest, ViolationsAreListedAndExit3) {
  Transition t = Move();
  t.spare_gpus = 0;  // GPU 1 is then one GPU too many
  Write("t.json", FormatTransitionJson(t));
  const Outcome o = Tessera(Check());
  EXPECT_EQ(o.exit_code, 3) << o.out << o.err;
  // Every phase holds GPUs 0 and 1.
  EXPECT_TRUE(o.out.starts_with(P("t.json") +
                                ": 4 violation(s):\n  phase 1: 2 GPUs hold an instance, more than "
                                "max(GPUs of A, GPUs of B) + 0 spare = 1 (rule c)\n  phase 2: "))
      << o.out;
  EXPECT_NE(o.out.find("\nmeasured: 4 steps, 4 phases"), std::string::npos) << o.out;
  EXPECT_EQ(o.err, "");
}

TEST_F(TransitionCliTest, JsonReportToAFile) {
  Transition t = Move();
  t.summary.steps = 5;
  Write("t.json", FormatTransitionJson(t));
  const Outcome o = Tessera(Check() + " --format json -o " + P("check.json"));
  EXPECT_EQ(o.exit_code, 3) << o.out << o.err;
  EXPECT_EQ(o.out, "");
  EXPECT_EQ(ReadAll(dir_ / "check.json"),
            "{\n  \"ok\": false,\n  \"violations\": [\n"
            "    \"summary.steps: records 5, the replay measures 4\"\n  ],\n"
            "  \"summary\": {\n    \"steps\": 4,\n    \"phases\": 4,\n    \"gpus_touched\": 2,\n"
            "    \"peak_gpus\": 2,\n    \"min_capacity_ratio\": 1.5\n  }\n}\n");
}

TEST_F(TransitionCliTest, BadInputIsOneErrorLineNamingTheFileAndExits2) {
  Write("t.json", Replace(FormatTransitionJson(Move()), "\"batch\": 32", "\"batch\": 4.5"));
  Outcome o = Tessera(Check());
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err, "tessera: error: " + P("t.json") +
                       ": phases[0].steps[0].batch: expected an integer, got 4.5\n");
  EXPECT_EQ(o.out, "");

  o = Tessera("transition check --from " + P("none.json") + " --to " + P("b.json") + " --plan " +
              P("t.json"));
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err, "tessera: error: " + P("none.json") + ": no such file or directory\n");

  Write("b.json", "{\"gpu\": 1}");
  o = Tessera(Check());
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("tessera: error: " + P("b.json") + ": "), std::string::npos) << o.err;

  o = Tessera(Check() + " --format yaml");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("--format"), std::string::npos) << o.err;
}

TEST_F(TransitionCliTest, TheParentCommandNeedsASubcommandAndHelpTeaches) {
  Outcome o = Tessera("transition");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("tessera: error:"), std::string::npos) << o.err;
  o = Tessera("transition --help");
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_NE(o.out.find("check"), std::string::npos) << o.out;
  o = Tessera("transition check --help");
  EXPECT_EQ(o.exit_code, 0);
  for (const char* part : {"(a) every GPU's layout", "min(its rate in A, its rate in B)",
                           "Exit codes: 0 the transition passes, 3", "--format json"}) {
    EXPECT_NE(o.out.find(part), std::string::npos) << part << " not in:\n" << o.out;
  }
}

// Plans of S6 by day and at night (examples/scenarios), and of S6 with bert's
// rate doubled, by the default (exact) planner.
class TransitionPlanCliTest : public TransitionCliTest {
 protected:
  std::string Scenario(const std::string& name) const {
    return SourcePath("examples/scenarios/" + name + ".yaml");
  }
  void PlanTo(const std::string& scenario, const std::string& json, const std::string& flags = "") {
    const Outcome o =
        Tessera("plan --scenario " + scenario + " --format json -o " + P(json) + " " + flags);
    ASSERT_EQ(o.exit_code, 0) << o.err;
  }
  std::string Transition(const std::string& scenario, const std::string& to) const {
    return "transition --scenario " + scenario + " --from " + P("day.json") + " --to " + P(to);
  }
};

TEST_F(TransitionPlanCliTest, DayToNightPassesTheCheckerAndBeatsTheNaiveOrder) {
  PlanTo(Scenario("s6"), "day.json");
  PlanTo(Scenario("s6-night"), "night.json");
  Outcome o = Tessera(Transition(Scenario("s6-night"), "night.json") +
                      " --spare-gpus 2 --format json -o " + P("t.json") + " --svg " + P("t.svg"));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "");
  EXPECT_NE(o.err.find("tessera: note: checked by the independent checker: "), std::string::npos)
      << o.err;
  // The naive order on the same GPUs empties some service: its ratio is 0.
  EXPECT_NE(o.err.find("then create) on the same GPUs: "), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("min capacity ratio 0\n"), std::string::npos) << o.err;
  EXPECT_TRUE(ReadAll(dir_ / "t.svg").find("<svg") != std::string::npos);
  o = Tessera("transition check --from " + P("day.json") + " --to " + P("night.json") + " --plan " +
              P("t.json"));
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_TRUE(o.out.starts_with("ok: ")) << o.out;
}

TEST_F(TransitionPlanCliTest, TooFewSpareGpusExit3NamingHowManyWould) {
  const std::string doubled = P("s6-bert-x2.yaml");
  Write("s6-bert-x2.yaml", Replace(ReadAll(Scenario("s6")), "rate_rps: 1264", "rate_rps: 2528"));
  // Under the per-process rule S6's plan is tight enough that moving to the
  // doubled rate needs spare GPUs (under the default pooled rule it does not).
  const std::string per_process = "--capacity-rule queueing --router weighted";
  PlanTo(Scenario("s6"), "day.json", per_process);
  PlanTo(doubled, "b.json", per_process);
  Outcome o = Tessera(Transition(doubled, "b.json"));
  ASSERT_EQ(o.exit_code, 3) << o.out << o.err;
  EXPECT_EQ(o.out, "");
  const std::string hint = "; rerun with --spare-gpus ";
  const size_t at = o.err.find(hint);
  ASSERT_NE(at, std::string::npos) << o.err;
  EXPECT_TRUE(o.err.starts_with("tessera: error: transition: with 0 spare GPUs")) << o.err;
  const int needed = std::stoi(o.err.substr(at + hint.size()));
  EXPECT_GT(needed, 0);
  o = Tessera(Transition(doubled, "b.json") + " --spare-gpus " + std::to_string(needed));
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("\nsummary: "), std::string::npos) << o.out;
}

TEST_F(TransitionPlanCliTest, BadInputsExit2WithOneLine) {
  PlanTo(Scenario("s6"), "day.json");
  // Without --to (and without `check`): the command says what it needs.
  Outcome o = Tessera("transition --scenario " + Scenario("s6") + " --from " + P("day.json"));
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err,
            "tessera: error: transition: --scenario, --from and --to are required to plan a "
            "transition (or run `tessera transition check`); see tessera transition --help\n");
  // B must serve the new scenario: the day plan does not serve the night rates.
  o = Tessera(Transition(Scenario("s6-night"), "day.json"));
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_TRUE(o.err.starts_with("tessera: error: " + P("day.json") + ": does not serve ")) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  // An MPS flag does not apply to MIG transitions.
  o = Tessera(Transition(Scenario("s6"), "day.json") + " --price 3");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("--price"), std::string::npos) << o.err;
  o = Tessera(Transition(Scenario("s6"), "day.json") + " --spare-gpus -1");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("--spare-gpus"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace tessera::testing
