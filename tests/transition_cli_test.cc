// `tessera transition check` run as a user would: exit codes 0 (passes), 3
// (violations, listed) and 2 (bad input, one error line naming the file), the
// text and JSON reports, -o, and the parent command's help.
#include <gtest/gtest.h>

#include <string>

#include "cli_fixture.h"
#include "deployment_builder.h"
#include "tessera/deployment_format.h"
#include "tessera/transition_format.h"

namespace tessera::testing {
namespace {

// A: one GPU, resnet50 on 3g.40gb@4; B: the same instance moved to @0.
Deployment Plan(int start) {
  return DeploymentBuilder("a100-80gb", "parva")
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

}  // namespace
}  // namespace tessera::testing
