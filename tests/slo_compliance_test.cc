// Every planner's plans for ParvaGPU's scenarios S1-S6 (bundled, embedded
// A100 profiles, latency factor 0.5), simulated for 60 s of Poisson traffic:
// under the default queueing-aware capacity rule every service is served
// within its SLO at least 99% of the time; under the papers' bare rule some
// services of S6 are not (docs/serving-simulator.md).
#include <gtest/gtest.h>

#include <string>

#include "tessera/gpu_catalog.h"
#include "tessera/plan/plan.h"
#include "tessera/profile/profile_synth.h"
#include "tessera/simulator.h"
#include "test_paths.h"

namespace tessera {
namespace {

const GpuModel& A100() { return **FindGpu("a100-80gb"); }

// The simulation report of `planner`'s plan for bundled scenario `number`.
SimReport PlanAndSimulate(const std::string& planner_name, int number, const LatencyRule& rule) {
  const ProfileTable profiles = DefaultProfiles(A100());
  Result<Scenario> scenario = LoadScenarioYaml(
      testing::SourcePath("examples/scenarios/s" + std::to_string(number) + ".yaml"));
  EXPECT_TRUE(scenario.ok()) << scenario.status().ToString();
  Result<Problem> problem = Problem::Build(*scenario, A100(), profiles, rule);
  EXPECT_TRUE(problem.ok()) << problem.status().ToString();
  Result<std::unique_ptr<Planner>> planner = BuiltinPlanners().Create(planner_name);
  EXPECT_TRUE(planner.ok());
  Result<PlanReport> plan = RunPlanner(**planner, *problem, PlanContext{});
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  Result<ServingModel> model = BuildServingModel(plan->deployment, *problem);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  Result<SimReport> report = Simulate(*model, SimOptions{});
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  return *report;
}

TEST(SloCompliance, EveryPlannerMeetsNinetyNinePercentUnderTheDefaultRule) {
  for (const std::string& planner : BuiltinPlanners().Names()) {
    // The MPS planners' plans are checked against the iGniter model instead.
    if ((*BuiltinPlanners().Create(planner))->Mode() == Sharing::kMps) continue;
    for (int s = 1; s <= 6; ++s) {
      const SimReport report = PlanAndSimulate(planner, s, LatencyRule{});
      for (const ServiceReport& service : report.services) {
        EXPECT_GE(service.compliance, 0.99)
            << planner << " S" << s << " " << service.name << ": p99 " << service.p99_ms
            << " ms against an SLO of " << service.slo_ms << " ms";
      }
    }
  }
}

TEST(SloCompliance, TheBareRuleLetsQueuesOutgrowTheSlo) {
  LatencyRule bare;
  bare.queueing_headroom = false;
  const SimReport report = PlanAndSimulate("parva", 6, bare);
  int missed = 0;
  for (const ServiceReport& service : report.services) missed += service.compliance < 0.99;
  // Six services of S6 when written; densenet201, planned at 99.6% of its
  // capacity, met its SLO for about a quarter of its requests.
  EXPECT_GE(missed, 3);
}

}  // namespace
}  // namespace tessera
