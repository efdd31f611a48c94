#include "planners/static/static_planner.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "tessera/plan/plan.h"
#include "tessera/profile/profile_synth.h"
#include "tessera/validator.h"
#include "tiny_problem.h"

namespace tessera {
namespace {

using testing::A100;
using testing::BareRule;
using testing::TinyScenario;
using testing::TinyTable;

// TinyTable plus a 4g (420 req/s, 8 ms) and MPS entries that beat every
// one-process segment of their profile, which the baselines must not use:
// 1g batch 1 x 2 procs (180 req/s), 3g batch 1 x 2 procs (500 req/s, 9 ms)
// and 7g batch 8 x 2 procs (1200 req/s).
ProfileTable TableWith4gAndMps() {
  ProfileTable t = TinyTable();
  EXPECT_TRUE(t.Add({{"m", "a100-80gb", "4g.40gb", 1, 1}, 420, 8, {}, {}}).ok());
  EXPECT_TRUE(t.Add({{"m", "a100-80gb", "1g.10gb", 1, 2}, 180, 10, {}, {}}).ok());
  EXPECT_TRUE(t.Add({{"m", "a100-80gb", "3g.40gb", 1, 2}, 500, 9, {}, {}}).ok());
  EXPECT_TRUE(t.Add({{"m", "a100-80gb", "7g.80gb", 8, 2}, 1200, 40, {}, {}}).ok());
  return t;
}

// Plans `rates` (services s0, s1, ...) with `partition` (and at most
// `max_procs` processes an instance, 0 = any) under the bare rule and checks
// the plan with the validator.
Deployment PlanWith(StaticPartition partition, const std::vector<double>& rates,
                    const ProfileTable& table, double slo_ms = 1000, int max_procs = 1) {
  const Scenario scenario = TinyScenario(rates, slo_ms);
  Result<Problem> problem = Problem::Build(scenario, A100(), table, BareRule());
  EXPECT_TRUE(problem.ok()) << problem.status().ToString();
  auto planner = NewStaticPlanner({partition, max_procs}, "static");
  Result<PlanReport> report = RunPlanner(*planner, *problem, PlanContext{});
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  const std::vector<Violation> violations = ValidateDeployment(report->deployment, *problem);
  EXPECT_TRUE(violations.empty()) << FormatViolations(violations);
  return report->deployment;
}

// One line per GPU: "s0 1g.10gb@0, s1 1g.10gb@1", with " x2" for 2 processes.
std::vector<std::string> Gpus(const Deployment& d) {
  std::vector<std::string> out;
  for (const GpuAssignment& g : d.gpus) {
    std::vector<std::string> instances;
    for (const Instance& i : g.instances()) {
      instances.push_back(fmt::format("{} {}@{}{}", i.service, i.profile, i.start,
                                      i.procs > 1 ? fmt::format(" x{}", i.procs) : ""));
    }
    out.push_back(fmt::format("{}", fmt::join(instances, ", ")));
  }
  return out;
}

std::vector<std::string> CutNames(const GpuModel& gpu, StaticPartition partition) {
  Result<std::vector<Placement>> cut = StaticCut(gpu, partition);
  EXPECT_TRUE(cut.ok()) << cut.status().ToString();
  std::vector<std::string> out;
  for (const Placement& p : *cut)
    out.push_back(fmt::format("{}@{}", gpu.profiles[p.profile].name, p.start));
  return out;
}

using Names = std::vector<std::string>;

TEST(StaticCut, IsALegalLayoutOfPrimaryProfilesOnEveryCatalogGpu) {
  for (const GpuModel* mig : AllMigGpus()) {
    const GpuModel& gpu = *mig;
    for (StaticPartition partition :
         {StaticPartition::kWhole, StaticPartition::kSingles, StaticPartition::kMix}) {
      Result<std::vector<Placement>> cut = StaticCut(gpu, partition);
      ASSERT_TRUE(cut.ok()) << gpu.name << ": " << cut.status().ToString();
      EXPECT_TRUE(CheckLayout(gpu, *cut).ok()) << gpu.name;
      const std::vector<int> primary = gpu.PrimaryProfiles();
      int slices = 0;
      for (const Placement& p : *cut) {
        EXPECT_NE(std::find(primary.begin(), primary.end(), p.profile), primary.end()) << gpu.name;
        slices += gpu.profiles[p.profile].compute_slices;
      }
      EXPECT_EQ(slices, gpu.compute_slices) << gpu.name << ": the cut uses every compute slice";
    }
  }
}

TEST(StaticCut, CutsAnA100AsMigServingDoes) {
  EXPECT_EQ(CutNames(A100(), StaticPartition::kWhole), Names{"7g.80gb@0"});
  EXPECT_EQ(CutNames(A100(), StaticPartition::kSingles),
            (Names{"1g.10gb@0", "1g.10gb@1", "1g.10gb@2", "1g.10gb@3", "1g.10gb@4", "1g.10gb@5",
                   "1g.10gb@6"}));
  EXPECT_EQ(CutNames(A100(), StaticPartition::kMix),
            (Names{"4g.40gb@0", "2g.20gb@4", "1g.10gb@6"}));
}

TEST(StaticCut, HalvesAnA30IntoTwoOneOne) {
  const GpuModel& a30 = **FindGpu("a30-24gb");
  EXPECT_EQ(CutNames(a30, StaticPartition::kWhole), Names{"4g.24gb@0"});
  EXPECT_EQ(CutNames(a30, StaticPartition::kSingles),
            (Names{"1g.6gb@0", "1g.6gb@1", "1g.6gb@2", "1g.6gb@3"}));
  EXPECT_EQ(CutNames(a30, StaticPartition::kMix), (Names{"2g.12gb@0", "1g.6gb@2", "1g.6gb@3"}));
}

TEST(StaticWhole, GivesEachServiceWholeGpusOfItsOwn) {
  // 7g serves 800 (one process; the 1200 of 2 processes is MPS): s0 needs
  // ceil(1000/800) = 2 GPUs, s1 exactly 1 (800 covers 800), s2 1.
  const Deployment d = PlanWith(StaticPartition::kWhole, {1000, 800, 50}, TableWith4gAndMps());
  EXPECT_EQ(Gpus(d), (Names{"s0 7g.80gb@0", "s0 7g.80gb@0", "s1 7g.80gb@0", "s2 7g.80gb@0"}));
}

TEST(StaticSingles, PacksServicesOntoSharedOneGInstancesInOrder) {
  // 1g serves 100 (not the 180 of 2 processes): s0 takes 3 instances, s1 5
  // (4 left on GPU 0, then GPU 1 from start 0), s2 7 (6 left, then GPU 2).
  const Deployment d = PlanWith(StaticPartition::kSingles, {250, 500, 700}, TableWith4gAndMps());
  EXPECT_EQ(Gpus(d), (Names{"s0 1g.10gb@0, s0 1g.10gb@1, s0 1g.10gb@2, s1 1g.10gb@3, s1 1g.10gb@4, "
                            "s1 1g.10gb@5, s1 1g.10gb@6",
                            "s1 1g.10gb@0, s2 1g.10gb@1, s2 1g.10gb@2, s2 1g.10gb@3, s2 1g.10gb@4, "
                            "s2 1g.10gb@5, s2 1g.10gb@6",
                            "s2 1g.10gb@0"}));
}

TEST(StaticMix, UsesWholeFourTwoOneGpusThenOnlyWhatTheLastNeeds) {
  // A 4-2-1 GPU serves 420 + 220 + 100 = 740. s0 (1500): two whole GPUs
  // (1480), then the 4g alone. s1 (70): the 4g, although a 1g would do.
  const Deployment d = PlanWith(StaticPartition::kMix, {1500, 70}, TableWith4gAndMps());
  EXPECT_EQ(Gpus(d),
            (Names{"s0 4g.40gb@0, s0 2g.20gb@4, s0 1g.10gb@6",
                   "s0 4g.40gb@0, s0 2g.20gb@4, s0 1g.10gb@6", "s0 4g.40gb@0", "s1 4g.40gb@0"}));
}

TEST(StaticMix, LeavesInstancesAServiceCannotRunOnIdle) {
  // TinyTable has no 4g: a GPU serves 220 + 100 = 320 with its 2g and 1g.
  // s0 (700): 320, 640, then the 2g (860). s1 (250): 2g + 1g. s2 (50): 2g.
  const Deployment d = PlanWith(StaticPartition::kMix, {700, 250, 50}, TinyTable());
  EXPECT_EQ(Gpus(d), (Names{"s0 2g.20gb@4, s0 1g.10gb@6", "s0 2g.20gb@4, s0 1g.10gb@6",
                            "s0 2g.20gb@4", "s1 2g.20gb@4, s1 1g.10gb@6", "s2 2g.20gb@4"}));
}

TEST(StaticPlanners, ServeAServiceTheCutCannotOnGpusOfItsOwn) {
  // SLO 19 ms: a batch may take 9.5 ms, so the 1g (10 ms) and the 7g (40 ms)
  // are too slow; 2g (220) and 3g (300) are allowed. The 7/7 and 7x1/7 cuts
  // cannot serve 500 req/s: it gets GPUs of its own with its best segment,
  // ceil(500/300) = 2 3g. The mix serves it with its 2g: ceil(500/220) = 3.
  EXPECT_EQ(Gpus(PlanWith(StaticPartition::kWhole, {500}, TinyTable(), 19)),
            (Names{"s0 3g.40gb@0", "s0 3g.40gb@0"}));
  EXPECT_EQ(Gpus(PlanWith(StaticPartition::kSingles, {500}, TinyTable(), 19)),
            (Names{"s0 3g.40gb@0", "s0 3g.40gb@0"}));
  EXPECT_EQ(Gpus(PlanWith(StaticPartition::kMix, {500}, TinyTable(), 19)),
            (Names{"s0 2g.20gb@4", "s0 2g.20gb@4", "s0 2g.20gb@4"}));
  // Its own GPUs run one process where they can: the 4g (420), not the 3g
  // with 2 processes (500). ceil(800/420) = 2.
  EXPECT_EQ(Gpus(PlanWith(StaticPartition::kWhole, {800}, TableWith4gAndMps(), 19)),
            (Names{"s0 4g.40gb@0", "s0 4g.40gb@0"}));
}

// The MPS-inside-MIG variants: the same cuts, each instance running the
// service's highest-capacity triplet of any process count.
TEST(StaticWholeMps, RunsTheTwoProcessSevenG) {
  // 7g with 2 processes serves 1200: s0 (1000), s1 (800) and s2 (50) one
  // GPU each, where one process needed 2 GPUs for s0.
  const Deployment d =
      PlanWith(StaticPartition::kWhole, {1000, 800, 50}, TableWith4gAndMps(), 1000, 0);
  EXPECT_EQ(Gpus(d), (Names{"s0 7g.80gb@0 x2", "s1 7g.80gb@0 x2", "s2 7g.80gb@0 x2"}));
}

TEST(StaticSinglesMps, PacksTwoProcessOneGInstances) {
  // 1g with 2 processes serves 180: s0 (250) takes 2 instances, s1 (500) 3,
  // s2 (700) 4: nine instances on 2 GPUs, where one process needed 15 on 3.
  const Deployment d =
      PlanWith(StaticPartition::kSingles, {250, 500, 700}, TableWith4gAndMps(), 1000, 0);
  EXPECT_EQ(Gpus(d), (Names{"s0 1g.10gb@0 x2, s0 1g.10gb@1 x2, s1 1g.10gb@2 x2, s1 1g.10gb@3 x2, "
                            "s1 1g.10gb@4 x2, s2 1g.10gb@5 x2, s2 1g.10gb@6 x2",
                            "s2 1g.10gb@0 x2, s2 1g.10gb@1 x2"}));
}

TEST(StaticMixMps, TakesTheBestTripletOfEachProfile) {
  // The 4g has only one process (420), the 2g too (220), the 1g two (180):
  // a 4-2-1 GPU serves 820. s0 (1500): one whole GPU, then 4g + 2g + 1g
  // again (1640 >= 1500). s1 (70): the 4g.
  const Deployment d = PlanWith(StaticPartition::kMix, {1500, 70}, TableWith4gAndMps(), 1000, 0);
  EXPECT_EQ(Gpus(d), (Names{"s0 4g.40gb@0, s0 2g.20gb@4, s0 1g.10gb@6 x2",
                            "s0 4g.40gb@0, s0 2g.20gb@4, s0 1g.10gb@6 x2", "s1 4g.40gb@0"}));
}

TEST(StaticPlannersMps, AServiceTheCutCannotServeGetsItsBestTripletAlone) {
  // SLO 19 ms rules out the 1g and the 7g: the 7/7 cut gives s0 (800) GPUs
  // of its own with its highest-capacity triplet, the 3g with 2 processes
  // (500): ceil(800/500) = 2, where one process took the 4g (420).
  EXPECT_EQ(Gpus(PlanWith(StaticPartition::kWhole, {800}, TableWith4gAndMps(), 19, 0)),
            (Names{"s0 3g.40gb@0 x2", "s0 3g.40gb@0 x2"}));
  // At most 2 processes is the same here; at most 1 is the paper's.
  EXPECT_EQ(Gpus(PlanWith(StaticPartition::kWhole, {800}, TableWith4gAndMps(), 19, 2)),
            (Names{"s0 3g.40gb@0 x2", "s0 3g.40gb@0 x2"}));
}

TEST(StaticPlannersMps, NeverNeedMoreGpusThanOneProcessAndStayValid) {
  // Random scenarios on the embedded A100 profiles (which profile up to 5
  // processes), under the CLI's default rule (pooled capacity behind jsq;
  // under the queueing rule these profiles' extra processes rarely add
  // capacity): with MPS each instance serves at least what one process
  // does, so no cut needs more GPUs; and MPS does save GPUs somewhere.
  const ProfileTable table = DefaultProfiles(A100());
  LatencyRule rule;
  rule.pooled = true;
  rule.router = Router::kShortestQueue;
  const std::vector<std::string> models = table.Models();
  std::mt19937_64 rng(20261128);
  int saved = 0;
  for (int k = 0; k < 30; ++k) {
    Scenario s;
    s.name = "random";
    s.gpu = "a100-80gb";
    const int n = 1 + static_cast<int>(rng() % 10);
    for (int i = 0; i < n; ++i) {
      const double rate =
          std::round(20 * std::pow(500.0, std::generate_canonical<double, 53>(rng)));
      const double slo = 40 + static_cast<double>(rng() % 160);
      s.services.push_back({fmt::format("s{}", i), models[rng() % models.size()], rate, slo, 0});
    }
    Result<Problem> problem = Problem::Build(s, A100(), table, rule);
    ASSERT_TRUE(problem.ok()) << problem.status().ToString();
    for (StaticPartition partition :
         {StaticPartition::kWhole, StaticPartition::kSingles, StaticPartition::kMix}) {
      Result<PlanReport> one = RunPlanner(*NewStaticPlanner({partition, 1}, "one"), *problem, {});
      Result<PlanReport> mps = RunPlanner(*NewStaticPlanner({partition, 0}, "mps"), *problem, {});
      ASSERT_TRUE(one.ok() && mps.ok());
      const std::vector<Violation> violations = ValidateDeployment(mps->deployment, *problem);
      EXPECT_TRUE(violations.empty()) << FormatViolations(violations);
      EXPECT_LE(mps->deployment.metrics.gpus, one->deployment.metrics.gpus) << "scenario " << k;
      saved += mps->deployment.metrics.gpus < one->deployment.metrics.gpus;
    }
  }
  EXPECT_GT(saved, 0);
}

TEST(StaticPlanners, LeaveOutAServiceNothingCanServe) {
  // SLO 5 ms allows no triplet: the service is left out and reported
  // infeasible; the others are planned as usual.
  const Scenario scenario = [] {
    Scenario s = TinyScenario({100, 100});
    s.services[1].slo_ms = 5;
    return s;
  }();
  Result<Problem> problem = Problem::Build(scenario, A100(), TinyTable(), BareRule());
  ASSERT_TRUE(problem.ok());
  for (StaticPartition partition :
       {StaticPartition::kWhole, StaticPartition::kSingles, StaticPartition::kMix}) {
    Result<PlanReport> report =
        RunPlanner(*NewStaticPlanner({partition, 1}, "static"), *problem, PlanContext{});
    ASSERT_TRUE(report.ok());
    const Deployment& d = report->deployment;
    EXPECT_TRUE(ValidateDeployment(d, *problem).empty());
    EXPECT_EQ(d.metrics.gpus, 1);
    EXPECT_EQ(d.services[0].status, ServiceStatus::kOk);
    EXPECT_EQ(d.services[1].status, ServiceStatus::kInfeasible);
    EXPECT_EQ(report->outcome, PlanOutcome::kInfeasible);
  }
}

TEST(StaticPlanners, AreRegisteredAsMigServingsBaselines) {
  for (const auto& [name, baseline] : {std::pair{"static-7", "A100-7/7"},
                                       {"static-7x1", "A100-7x1/7"},
                                       {"static-mix", "A100-MIX"},
                                       {"static-7-mps", "A100-7/7"},
                                       {"static-7x1-mps", "A100-7x1/7"},
                                       {"static-mix-mps", "A100-MIX"}}) {
    Result<std::unique_ptr<Planner>> planner = BuiltinPlanners().Create(name);
    ASSERT_TRUE(planner.ok()) << name;
    EXPECT_EQ((*planner)->Name(), name);
    EXPECT_FALSE((*planner)->SupportsPools());
    EXPECT_NE(BuiltinPlanners().Description(name).find(baseline), std::string::npos) << name;
  }
}

}  // namespace
}  // namespace tessera
