// The shadow guard (iGniter, TPDS 2023, 4.2): a shadow adds min(10%, what is
// left on its GPU), on a hand-made plan and on FFD+'s plan of the twelve
// workloads, whose misses the iGniter model predicts.
#include "tessera/planners/shadow_guard.h"

#include <gtest/gtest.h>

#include "planners/igniter/igniter_planner.h"
#include "tessera/plan/plan.h"
#include "tessera/validator.h"
#include "test_paths.h"

namespace tessera {
namespace {

TEST(ShadowGuard, ExtraIsTenPercentOrWhatIsLeft) {
  EXPECT_DOUBLE_EQ(ShadowExtraPct(40), 10);
  EXPECT_DOUBLE_EQ(ShadowExtraPct(10), 10);
  EXPECT_DOUBLE_EQ(ShadowExtraPct(7.5), 7.5);
  EXPECT_DOUBLE_EQ(ShadowExtraPct(0), 0);
  EXPECT_DOUBLE_EQ(ShadowExtraPct(-1e-12), 0);  // a full GPU's rounding
}

// A workload whose batch takes 100 / (r / 10) ms alone (k2 = 1000, every
// other time 0): 20 ms at 50%, 10 ms at 100%. Fast PCIe, no power or cache.
MpsCoefficients HandCoefficients() {
  MpsCoefficients c;
  c.hardware = {"v100-16gb", 1530, 300, 50, 2.5, 1e12, -1, 0, 0};
  WorkloadCoefficients w;
  w.model = "resnet50";
  w.kernels = 1;
  w.k = {0, 1000, 0, 0, 0};
  c.workloads.push_back(w);
  return c;
}

Problem HandProblem() {
  Scenario s;
  s.source = "hand";
  // Budgets (half the SLO): A 19 ms, B 30 ms, C 9 ms, D 100 ms.
  s.services = {{"A", "resnet50", 10, 38, 0},
                {"B", "resnet50", 10, 60, 0},
                {"C", "resnet50", 10, 18, 0},
                {"D", "resnet50", 10, 200, 0}};
  Result<Problem> p =
      Problem::BuildMps(s, {*FindGpu("v100-16gb"), 3.06, 0}, HandCoefficients(), LatencyRule{});
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return *p;
}

TEST(ShadowGuard, HandPlanGetsMinOfTenPercentAndWhatIsLeft) {
  const Problem problem = HandProblem();
  PlanResult plan;
  // GPU 0: A at 50% misses (20 > 19 ms), D at 45%: 5% free, so A's shadow
  // gets 5%, not 10%. GPU 1: B at 40% meets (25 <= 30), C at 40% misses
  // (25 > 9): 20% free, C's shadow gets 10%.
  plan.gpus = MpsGpus{{{0, 1, 50, 10}, {3, 1, 45, 10}}, {{1, 1, 40, 10}, {2, 1, 40, 10}}};
  const Deployment d = BuildDeployment(problem, plan, "hand", {2, "hand"}, 0);
  ASSERT_EQ(d.metrics.predicted_violations, 2);
  Result<ShadowGuardResult> g = ApplyShadowGuard(d, problem);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_EQ(g->processes.size(), 4u);
  EXPECT_EQ(g->activated, 2);
  // A: min(10, 100 - 95) = 5 -> 55%, 100 / 5.5 = 18.18 ms: meets 19 ms.
  EXPECT_TRUE(g->processes[0].activated);
  EXPECT_DOUBLE_EQ(g->processes[0].standby_extra_pct, 5);
  EXPECT_DOUBLE_EQ(g->processes[0].extra_pct, 5);
  EXPECT_NEAR(g->processes[0].latency_ms, 1000 / 55.0, 1e-9);
  EXPECT_TRUE(g->processes[0].meets_slo);
  EXPECT_FALSE(g->processes[1].activated);
  EXPECT_DOUBLE_EQ(g->processes[1].extra_pct, 0);
  // C: min(10, 20) = 10 -> 50%: 20 ms still misses 9 ms.
  EXPECT_DOUBLE_EQ(g->processes[3].standby_extra_pct, 10);
  EXPECT_DOUBLE_EQ(g->processes[3].extra_pct, 10);
  EXPECT_FALSE(g->processes[3].meets_slo);
  EXPECT_EQ(g->still_missing, 1);
  EXPECT_DOUBLE_EQ(g->deployment.gpus[0].processes()[0].resource_pct, 55);
  EXPECT_DOUBLE_EQ(g->deployment.gpus[1].processes()[1].resource_pct, 50);
  EXPECT_EQ(g->deployment.metrics.predicted_violations, 1);
  EXPECT_TRUE(ValidateDeployment(g->deployment, problem).empty());
}

TEST(ShadowGuard, TwoMissesOnOneGpuShareWhatIsLeftInOrder) {
  const Problem problem = HandProblem();
  PlanResult plan;
  // A 45% and C 40% both miss; 15% free: A's shadow takes 10, C's the 5 left.
  plan.gpus = MpsGpus{{{0, 1, 45, 10}, {2, 1, 40, 10}}};
  Result<ShadowGuardResult> g =
      ApplyShadowGuard(BuildDeployment(problem, plan, "hand", {1, "hand"}, 0), problem);
  ASSERT_TRUE(g.ok());
  EXPECT_DOUBLE_EQ(g->processes[0].extra_pct, 10);
  EXPECT_DOUBLE_EQ(g->processes[1].standby_extra_pct, 10);
  EXPECT_DOUBLE_EQ(g->processes[1].extra_pct, 5);
  EXPECT_DOUBLE_EQ(g->deployment.metrics.resource_pct, 100);
}

TEST(ShadowGuard, RejectsMigPlans) {
  Deployment d;
  d.sharing = Sharing::kMig;
  EXPECT_FALSE(ApplyShadowGuard(d, HandProblem()).ok());
}

constexpr char kCoefficients[] = "igniter/derived/fitted_coefficients_v100.json";

TEST(ShadowGuard, FfdPlusPlanOfTheTwelveWorkloads) {
  TESSERA_SKIP_WITHOUT_SHARED_DATA(kCoefficients);
  Result<MpsCoefficients> c = LoadMpsCoefficients(testing::SharedDataPath(kCoefficients));
  ASSERT_TRUE(c.ok());
  Scenario s;
  s.source = "twelve";
  const std::vector<std::tuple<std::string, double, double>> w = {
      {"alexnet", 10, 1000}, {"alexnet", 15, 500},  {"alexnet", 20, 2000}, {"resnet50", 10, 400},
      {"resnet50", 20, 600}, {"resnet50", 30, 200}, {"vgg19", 20, 300},    {"vgg19", 30, 400},
      {"vgg19", 40, 200},    {"ssd", 30, 200},      {"ssd", 40, 100},      {"ssd", 50, 300}};
  for (const auto& [model, slo, rate] : w) {
    s.services.push_back({"W" + std::to_string(s.services.size() + 1), model, rate, slo, 0});
  }
  Result<Problem> p = Problem::BuildMps(s, {*FindGpu("v100-16gb"), 3.06, 0}, *c, LatencyRule{});
  ASSERT_TRUE(p.ok());
  Result<PlanReport> ffd = RunPlanner(*NewFfdPlusPlanner(), *p, {});
  ASSERT_TRUE(ffd.ok());
  const Deployment& d = ffd->deployment;
  ASSERT_GT(d.metrics.predicted_violations, 0);
  Result<ShadowGuardResult> g = ApplyShadowGuard(d, *p);
  ASSERT_TRUE(g.ok());
  // Every process the model predicts misses gets min(10%, what its GPU has
  // left after the shadows before it); the rest keep their share.
  int misses = 0;
  size_t k = 0;
  for (const GpuAssignment& gpu : d.gpus) {
    double free = 100;
    for (const MpsProcess& proc : gpu.processes()) free -= proc.resource_pct;
    for (const MpsProcess& proc : gpu.processes()) {
      const ShadowProcess& sp = g->processes[k++];
      SCOPED_TRACE(proc.service);
      EXPECT_EQ(sp.activated, !proc.meets_slo);
      const double expected = proc.meets_slo ? 0 : std::min(10.0, std::max(0.0, free));
      EXPECT_DOUBLE_EQ(sp.extra_pct, expected);
      free -= expected;
      misses += !proc.meets_slo;
    }
  }
  EXPECT_EQ(g->activated, misses);
  EXPECT_GT(g->activated, 0);
  EXPECT_EQ(g->deployment.metrics.gpus, d.metrics.gpus);
  EXPECT_GT(g->deployment.metrics.resource_pct, d.metrics.resource_pct);
  EXPECT_TRUE(ValidateDeployment(g->deployment, *p).empty());
  // iGniter's own plan is predicted to meet every budget: nothing changes.
  Result<PlanReport> ig = RunPlanner(*NewIgniterPlanner(), *p, {});
  ASSERT_TRUE(ig.ok());
  Result<ShadowGuardResult> same = ApplyShadowGuard(ig->deployment, *p);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->activated, 0);
  EXPECT_DOUBLE_EQ(same->deployment.metrics.resource_pct, ig->deployment.metrics.resource_pct);
}

}  // namespace
}  // namespace tessera
