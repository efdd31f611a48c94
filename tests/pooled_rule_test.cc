// The default pooled capacity rule (docs/capacity-rules.md) judged by the
// serving simulator: on ParvaGPU's own A100 profiles and SLO rows 1 to 6 the
// default planner needs 2, 3, 5, 7, 13, 15 GPUs (ParvaGPU's artifact's
// counts, which miss SLOs under its bare rule, and one fewer on row 6) and
// every service is served within its SLO for at least 99% of its requests;
// on generated scenarios every service does too, on no more GPUs than the
// per-process queueing rule. Every plan passes the independent validator.
// 15 s of simulated Poisson traffic, seed 1.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tessera/gpu_catalog.h"
#include "tessera/plan/plan.h"
#include "tessera/profile/profile_synth.h"
#include "tessera/profile_io.h"
#include "tessera/scenario.h"
#include "tessera/simulator.h"
#include "tessera/validator.h"
#include "tessera/workload/workload_gen.h"
#include "test_paths.h"

namespace tessera {
namespace {

constexpr const char* kProfiles = "parvagpu/prof_data";
constexpr const char* kSlo = "parvagpu/SLO";
constexpr double kSimulatedS = 15;

const GpuModel& A100() { return **FindGpu("a100-80gb"); }

// What `tessera plan` plans MIG problems under by default.
LatencyRule PooledRule() {
  LatencyRule rule;
  EXPECT_TRUE(rule.SetCapacity("pooled").ok());
  rule.router = Router::kShortestQueue;
  return rule;
}

struct Outcome {
  int gpus = 0;
  double lowest_compliance = 0;
  std::string lowest;  // its service
};

// The default planner's plan of `scenario` under `rule`, validated and
// simulated under its own rule.
Outcome PlanAndSimulate(const Scenario& scenario, const ProfileTable& profiles,
                        const LatencyRule& rule) {
  Outcome out;
  Result<Problem> problem = Problem::Build(scenario, A100(), profiles, rule);
  if (!problem.ok()) {
    ADD_FAILURE() << problem.status().ToString();
    return out;
  }
  std::string note;
  Result<PlanReport> plan =
      RunDefaultPlanner(BuiltinPlanners(), *problem, PlanContext{.time_limit_s = 10}, note);
  if (!plan.ok()) {
    ADD_FAILURE() << plan.status().ToString();
    return out;
  }
  const std::vector<Violation> violations = ValidateDeployment(plan->deployment, *problem);
  EXPECT_TRUE(violations.empty()) << FormatViolations(violations);
  out.gpus = plan->deployment.metrics.gpus;
  Result<ServingModel> model = BuildServingModel(plan->deployment, *problem);
  if (!model.ok()) {
    ADD_FAILURE() << model.status().ToString();
    return out;
  }
  SimOptions options;
  options.duration_s = kSimulatedS;
  Result<SimReport> report = Simulate(*model, options);
  if (!report.ok()) {
    ADD_FAILURE() << report.status().ToString();
    return out;
  }
  out.lowest_compliance = 1;
  for (const ServiceReport& s : report->services) {
    if (s.compliance < out.lowest_compliance)
      out.lowest_compliance = s.compliance, out.lowest = s.name;
  }
  return out;
}

TEST(PooledRuleConformance, ParvaRowsNeedTheArtifactsGpusOrOneFewerAndMeetEverySlo) {
  TESSERA_SKIP_WITHOUT_SHARED_DATA(kProfiles);
  Result<ProfileTable> profiles = LoadProfiles(testing::SharedDataPath(kProfiles));
  ASSERT_TRUE(profiles.ok()) << profiles.status().ToString();
  const std::vector<int> expected = {2, 3, 5, 7, 13, 15};
  for (int row = 1; row <= 6; ++row) {
    Result<Scenario> scenario = ImportParvaSloRow(testing::SharedDataPath(kSlo), row);
    ASSERT_TRUE(scenario.ok()) << scenario.status().ToString();
    const Outcome out = PlanAndSimulate(*scenario, *profiles, PooledRule());
    EXPECT_EQ(out.gpus, expected[row - 1]) << "row " << row;
    EXPECT_GE(out.lowest_compliance, kComplianceTarget) << "row " << row << " " << out.lowest;
  }
}

TEST(PooledRuleConformance, GeneratedScenariosMeetEverySloOnNoMoreGpusThanPerProcess) {
  const LatencyRule per_process;  // queueing, weighted: the rule before the pooled one
  const ProfileTable profiles = DefaultProfiles(A100());
  for (std::uint64_t seed : {3, 7, 11}) {
    WorkloadGenOptions options;
    options.services = 10;
    options.rates = LognormalRates{6.5, 1};
    options.slo_ms = 100 + 25 * (seed % 5);
    options.seed = seed;
    Result<Scenario> scenario = GenerateWorkload(options);
    ASSERT_TRUE(scenario.ok()) << scenario.status().ToString();
    const Outcome pooled = PlanAndSimulate(*scenario, profiles, PooledRule());
    const Outcome today = PlanAndSimulate(*scenario, profiles, per_process);
    EXPECT_GE(pooled.lowest_compliance, kComplianceTarget)
        << "seed " << seed << " " << pooled.lowest;
    EXPECT_LE(pooled.gpus, today.gpus) << "seed " << seed;
  }
}

}  // namespace
}  // namespace tessera
