// Conformance of MIG-serving's optimizer and static baselines to the paper
// (Tan et al., "Serving DNN Models with Multi-Instance GPUs: A Case of the
// Reconfigurable Machine Scheduling Problem", section 8.1, "Combining MIG
// and MPS", Figure 11): with up to four MPS processes in each MIG instance,
// MIG-serving "saves about 10% GPUs" against the A100-7x1/7 baseline given
// the same MPS processes. Measured on Tessera's stand-ins for the paper's
// four simulation workloads (`tessera gen --preset`, whose parameters the
// paper does not give) under the CLI's default latency rule, with the
// embedded A100-80GB profiles.
#include <gtest/gtest.h>

#include <memory>

#include "planners/static/static_planner.h"
#include "tessera/gpu_catalog.h"
#include "tessera/plan/plan.h"
#include "tessera/profile/profile_synth.h"
#include "tessera/validator.h"
#include "tessera/workload/workload_gen.h"

namespace tessera {
namespace {

// The rule `tessera plan` and `tessera compare` plan MIG problems under
// without rule flags: the pooled capacity rule behind the jsq router.
LatencyRule CliDefaultRule() {
  LatencyRule rule;
  rule.pooled = true;
  rule.router = Router::kShortestQueue;
  return rule;
}

int PlannedGpus(const Planner& planner, const Problem& problem) {
  Result<PlanReport> report = RunPlanner(planner, problem, PlanContext{});
  EXPECT_TRUE(report.ok()) << planner.Name() << ": " << report.status().ToString();
  if (!report.ok()) return 0;
  EXPECT_TRUE(ValidateDeployment(report->deployment, problem).empty()) << planner.Name();
  return report->deployment.metrics.gpus;
}

TEST(MigServingConformance, FourMpsProcessesSaveAboutTenPercentOverSevenSinglesWithMps) {
  const GpuModel& gpu = **FindGpu("a100-80gb");
  const ProfileTable table = DefaultProfiles(gpu);
  const std::unique_ptr<Planner> migserving =
      std::move(BuiltinPlanners().Create("migserving-greedy-mps4")).value();
  // A100-7x1/7 with the paper's N = 4 processes per instance (static-7x1-mps
  // runs as many as the profiles allow, five on these).
  const std::unique_ptr<Planner> baseline =
      NewStaticPlanner({StaticPartition::kSingles, 4}, "static-7x1-mps4");
  ASSERT_EQ(WorkloadPresets().size(), 4u);
  for (const WorkloadPreset& preset : WorkloadPresets()) {
    Result<Scenario> scenario = GenerateWorkload(preset.options);
    ASSERT_TRUE(scenario.ok()) << scenario.status().ToString();
    Result<Problem> problem = Problem::Build(*scenario, gpu, table, CliDefaultRule());
    ASSERT_TRUE(problem.ok()) << problem.status().ToString();
    const int ours = PlannedGpus(*migserving, *problem);
    const int static_gpus = PlannedGpus(*baseline, *problem);
    ASSERT_GT(static_gpus, 0);
    const double saved = 1.0 - static_cast<double>(ours) / static_gpus;
    // The paper: "about 10%", a figure read off Figure 11's bars (the text
    // gives no exact value per workload). We accept 10% +- 2.5 percentage
    // points, the interval "about 10%" rounds from at a 5% step; measured
    // when written: 8.7% (normal-1, 230 of 252 GPUs), 9.0% (normal-2),
    // 8.8% (lognormal-1), 9.1% (lognormal-2). The fast algorithm stands in
    // for the two-phase optimizer: on these workloads the GA saves no GPU
    // over it (docs/migserving-planner.md).
    EXPECT_GE(saved, 0.075) << preset.name << ": " << ours << " against " << static_gpus;
    EXPECT_LE(saved, 0.125) << preset.name << ": " << ours << " against " << static_gpus;
  }
}

}  // namespace
}  // namespace tessera
