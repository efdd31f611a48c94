// The default planner of `tessera plan` (plan.h, RunDefaultPlanner): exact
// where it proves its optimum, the heuristic beside it where it does not,
// and the heuristic alone above kDefaultExactMaxServices.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tessera/plan/plan.h"
#include "tessera/profile/profile_synth.h"
#include "tessera/scenario.h"
#include "test_paths.h"

namespace tessera {
namespace {

Problem ProblemOf(const std::string& scenario_file, int copies) {
  Result<Scenario> s = LoadScenarioYaml(testing::SourcePath(scenario_file));
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  const GpuModel& gpu = **FindGpu("a100-80gb");
  Result<Problem> p =
      Problem::Build(ReplicateScenario(*s, copies), gpu, DefaultProfiles(gpu), LatencyRule{});
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return *p;
}

TEST(DefaultPlanner, ExactProvesSmallScenariosWithoutANote) {
  std::string note = "stale";
  Result<PlanReport> r =
      RunDefaultPlanner(BuiltinPlanners(), ProblemOf("examples/scenarios/s3.yaml", 1), {}, note);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->deployment.planner, "exact");
  EXPECT_EQ(r->deployment.metrics.proven_optimal, true);
  EXPECT_EQ(r->deployment.metrics.gpus, 5);
  EXPECT_EQ(note, "");
}

// Stands in for an exact planner that runs out of time: with no plan at all,
// or with the heuristic's plan and no proof.
class OutOfTime : public Planner {
 public:
  explicit OutOfTime(bool finds_a_plan) : finds_a_plan_(finds_a_plan) {}
  std::string_view Name() const override { return "exact"; }
  Result<PlanResult> Plan(const Problem& problem, const PlanContext& context) const override {
    if (!finds_a_plan_) return Status::InvalidArgument("no plan found within the time limit");
    return (*BuiltinPlanners().Create("parva-unopt"))->Plan(problem, context);
  }

 private:
  bool finds_a_plan_;
};

PlannerRegistry WithExact(bool finds_a_plan) {
  PlannerRegistry r("planner");
  r.MustRegister("exact", "out of time", [=] { return std::make_unique<OutOfTime>(finds_a_plan); });
  r.MustRegister("parva", "ParvaGPU", [] { return BuiltinPlanners().Create("parva").value(); });
  return r;
}

TEST(DefaultPlanner, KeepsTheBetterPlanWhenExactRunsOutOfTime) {
  const Problem p = ProblemOf("examples/scenarios/s6.yaml", 1);
  std::string note;
  Result<PlanReport> worse = RunDefaultPlanner(WithExact(true), p, {}, note);
  ASSERT_TRUE(worse.ok()) << worse.status().ToString();
  EXPECT_EQ(worse->deployment.planner, "parva") << "parva-unopt's plan has more GPUs";
  EXPECT_NE(note.find("proved no optimum"), std::string::npos) << note;
  Result<PlanReport> none = RunDefaultPlanner(WithExact(false), p, {}, note);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(none->deployment.planner, "parva");
  EXPECT_NE(note.find("found no plan in time"), std::string::npos) << note;
}

TEST(DefaultPlanner, PlansManyServicesWithTheHeuristic) {
  std::string note;
  // S6 x 28 = 308 services: above the limit.
  const Problem p = ProblemOf("examples/scenarios/s6.yaml", 28);
  ASSERT_GT(p.services().size(), kDefaultExactMaxServices);
  Result<PlanReport> r = RunDefaultPlanner(BuiltinPlanners(), p, {}, note);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->deployment.planner, kFallbackPlanner);
  EXPECT_NE(note.find("308 services"), std::string::npos) << note;
}

}  // namespace
}  // namespace tessera
