// Every heuristic planner honours --time-limit (issue 22): stopped at any
// point by its time limit, a planner returns a plan that serves what it
// would have served without one and passes the validator, or an
// InvalidArgument that names --time-limit; never a partial plan. The clock
// is a FakeClock advancing 1 ms per reading, so no wall-clock time is
// measured: where the limit falls is set by how often a planner reads it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tessera/gpu_catalog.h"
#include "tessera/plan/plan.h"
#include "tessera/profile/profile_synth.h"
#include "tessera/util/clock.h"
#include "tessera/validator.h"
#include "tessera/workload/workload_gen.h"

namespace tessera {
namespace {

Problem GeneratedProblem(int services) {
  WorkloadGenOptions options;
  options.services = services;
  options.rates = NormalRates{150, 60};
  options.seed = 22;
  const GpuModel& gpu = **FindGpu("a100-80gb");
  return *Problem::Build(*GenerateWorkload(options), gpu, DefaultProfiles(gpu), LatencyRule{});
}

TEST(TimeLimit, EveryHeuristicStopsWithAWholePlanOrAClearError) {
  const Problem problem = GeneratedProblem(150);
  for (const std::string& name : BuiltinPlanners().Names()) {
    std::unique_ptr<Planner> planner = BuiltinPlanners().Create(name).value();
    if (name == "exact" || planner->Mode() == Sharing::kMps) continue;  // elsewhere
    SCOPED_TRACE(name);
    Result<PlanReport> unlimited = RunPlanner(*planner, problem, PlanContext{});
    ASSERT_TRUE(unlimited.ok()) << unlimited.status().ToString();
    int plans = 0;
    for (double limit_ms : {1, 2, 3, 5, 10, 30, 100, 300, 1000}) {
      FakeClock clock(0, 1);
      const PlanContext context{.time_limit_s = limit_ms / 1000, .clock = &clock};
      Result<PlanReport> r = RunPlanner(*planner, problem, context);
      if (!r.ok()) {
        EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
        EXPECT_NE(r.status().message().find("raise --time-limit"), std::string::npos)
            << r.status().ToString();
        continue;
      }
      ++plans;
      const Deployment& d = r->deployment;
      EXPECT_TRUE(ValidateDeployment(d, problem).empty()) << limit_ms << " ms";
      for (size_t s = 0; s < d.services.size(); ++s) {
        EXPECT_EQ(d.services[s].status, unlimited->deployment.services[s].status) << s;
      }
    }
    EXPECT_GT(plans, 0) << "no limit was long enough";
    if (name == "migserving-ga") continue;  // it searches until its limit
    // A limit never reached: the plan of no limit.
    FakeClock clock(0, 1);
    Result<PlanReport> r =
        RunPlanner(*planner, problem, PlanContext{.time_limit_s = 1e7, .clock = &clock});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->deployment.metrics.gpus, unlimited->deployment.metrics.gpus);
    EXPECT_EQ(r->deployment.metrics.gpcs, unlimited->deployment.metrics.gpcs);
  }
}

}  // namespace
}  // namespace tessera
