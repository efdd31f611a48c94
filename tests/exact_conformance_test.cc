// Conformance of the exact planner on ParvaGPU's own A100 profiles and SLO
// rows under the artifact's feasibility rule: it proves the fewest GPUs of
// rows 1 to 6 (2, 3, 5, 7, 12, 15: one fewer than ParvaGPU on rows 5 and 6),
// and plans S5 x 10 (110 services) in at most 118 GPUs, optimal or within 1%
// of its proven bound. Every deployment passes the independent validator.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "tessera/gpu_catalog.h"
#include "tessera/plan/plan.h"
#include "tessera/profile_io.h"
#include "tessera/scenario.h"
#include "tessera/validator.h"
#include "test_paths.h"

namespace tessera {
namespace {

constexpr const char* kProfiles = "parvagpu/prof_data";
constexpr const char* kSlo = "parvagpu/SLO";
constexpr double kTimeLimitS = 30;

struct ExactRun {
  SolverProof proof;
  Deployment deployment;
  std::vector<Violation> violations;
};

// Plans ParvaGPU row `row` replicated `copies` times with "exact": Plan()
// directly for the proof, RunPlanner for the deployment the engine builds.
ExactRun PlanRow(int row, int copies) {
  ExactRun run;
  Result<ProfileTable> profiles = LoadProfiles(testing::SharedDataPath(kProfiles));
  Result<Scenario> imported = ImportParvaSloRow(testing::SharedDataPath(kSlo), row);
  if (!profiles.ok() || !imported.ok()) {
    ADD_FAILURE() << "cannot load ParvaGPU data for row " << row;
    return run;
  }
  const Scenario scenario = ReplicateScenario(*imported, copies);
  Result<Problem> problem =
      Problem::Build(scenario, **FindGpu("a100-80gb"), *profiles, ParvaArtifactRule());
  auto planner = BuiltinPlanners().Create("exact");
  if (!problem.ok() || !planner.ok()) {
    ADD_FAILURE() << "cannot build row " << row;
    return run;
  }
  const PlanContext context{.time_limit_s = kTimeLimitS};
  Result<PlanResult> result = (*planner)->Plan(*problem, context);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  if (result.ok() && result->proof) run.proof = *result->proof;
  EXPECT_TRUE(result.ok() && result->proof) << "the exact planner reports no proof";
  Result<PlanReport> report = RunPlanner(**planner, *problem, context);
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  if (!report.ok()) return run;
  run.deployment = report->deployment;
  run.violations = ValidateDeployment(run.deployment, *problem);
  return run;
}

TEST(ExactConformance, ProvesTheFewestGpusOfRowsOneToSix) {
  TESSERA_SKIP_WITHOUT_SHARED_DATA(kProfiles);
  const std::vector<int> expected = {2, 3, 5, 7, 12, 15};
  for (int row = 1; row <= 6; ++row) {
    const ExactRun run = PlanRow(row, 1);
    EXPECT_EQ(run.deployment.metrics.gpus, expected[row - 1]) << "row " << row;
    EXPECT_TRUE(run.proof.optimal)
        << "row " << row << ": objective " << run.proof.objective << ", bound " << run.proof.bound;
    EXPECT_EQ(run.proof.objective, expected[row - 1]) << "row " << row;
    EXPECT_EQ(run.proof.bound, expected[row - 1]) << "row " << row;
    EXPECT_EQ(run.deployment.metrics.proven_optimal, std::optional<bool>(true)) << "row " << row;
    EXPECT_TRUE(run.violations.empty()) << "row " << row << "\n"
                                        << FormatViolations(run.violations);
  }
}

TEST(ExactConformance, S5TimesTenIsWithinOnePercentOfItsProvenBound) {
  TESSERA_SKIP_WITHOUT_SHARED_DATA(kProfiles);
  const ExactRun run = PlanRow(5, 10);
  EXPECT_LE(run.deployment.metrics.gpus, 118);
  EXPECT_GT(run.proof.bound, 0);
  EXPECT_LE(run.proof.bound, run.proof.objective);
  EXPECT_TRUE(run.proof.optimal || run.proof.objective <= 1.01 * run.proof.bound)
      << "objective " << run.proof.objective << ", bound " << run.proof.bound;
  // A GPU count the deployment does not reach would make the bound vacuous.
  EXPECT_LE(run.proof.bound, run.deployment.metrics.gpus);
  EXPECT_TRUE(run.violations.empty()) << FormatViolations(run.violations);
}

}  // namespace
}  // namespace tessera
