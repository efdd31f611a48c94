// A mixed, priced pool end to end: the exact planner on
// examples/scenarios/pool.yaml (S5's services on A100-80GB at 4.10/h or
// H100-80GB at 6.98/h, at most 8 H100s) over the embedded profiles of both.
// Its plan validates, is proven cheapest, costs what its GPUs cost, is never
// dearer than the best plan on one model alone, and survives a JSON round
// trip; planners without pool support and caps too tight are input errors.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/deployment_format.h"
#include "tessera/gpu_catalog.h"
#include "tessera/plan/plan.h"
#include "tessera/profile/profile_synth.h"
#include "tessera/scenario.h"
#include "tessera/validator.h"
#include "test_paths.h"

namespace tessera {
namespace {

constexpr double kTimeLimitS = 30;

class PoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<Scenario> scenario =
        LoadScenarioYaml(testing::SourcePath("examples/scenarios/pool.yaml"));
    ASSERT_TRUE(scenario.ok()) << scenario.status().ToString();
    scenario_ = *scenario;
    ASSERT_EQ(scenario_.pool.size(), 2u);
    for (const PoolEntry& entry : scenario_.pool) {
      Result<const GpuModel*> gpu = FindGpu(entry.gpu);
      ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
      offers_.push_back({*gpu, entry.price_per_hour, entry.max_count});
      Status merged = profiles_.Merge(DefaultProfiles(**gpu));
      ASSERT_TRUE(merged.ok()) << merged.ToString();
    }
  }

  Result<Problem> Build(const std::vector<GpuOffer>& offers) const {
    return Problem::BuildPool(scenario_, offers, profiles_, LatencyRule{});
  }

  static Result<PlanReport> Run(const std::string& planner_name, const Problem& problem) {
    Result<std::unique_ptr<Planner>> planner = BuiltinPlanners().Create(planner_name);
    if (!planner.ok()) return planner.status();
    return RunPlanner(**planner, problem, PlanContext{.time_limit_s = kTimeLimitS});
  }

  // The exact plan of the scenario's own pool, computed once for the suite.
  const Deployment& MixedPlan() {
    static std::optional<Deployment> plan;
    if (!plan) {
      Result<Problem> problem = Build(offers_);
      EXPECT_TRUE(problem.ok()) << problem.status().ToString();
      if (!problem.ok()) return Empty();
      Result<PlanReport> report = Run("exact", *problem);
      EXPECT_TRUE(report.ok()) << report.status().ToString();
      if (!report.ok()) return Empty();
      EXPECT_EQ(report->outcome, PlanOutcome::kFeasible);
      plan = report->deployment;
    }
    return *plan;
  }

  static const Deployment& Empty() {
    static const Deployment empty;
    return empty;
  }

  double PriceOf(const std::string& gpu) const {
    for (const GpuOffer& offer : offers_) {
      if (offer.gpu->name == gpu) return offer.price_per_hour;
    }
    ADD_FAILURE() << gpu << " is not in the pool";
    return 0;
  }

  Scenario scenario_;
  std::vector<GpuOffer> offers_;
  ProfileTable profiles_;
};

TEST_F(PoolTest, ExactPlanValidatesAndIsProvenCheapest) {
  const Deployment& d = MixedPlan();
  ASSERT_FALSE(d.gpus.empty());
  EXPECT_EQ(d.planner, "exact");
  EXPECT_EQ(d.gpu, "a100-80gb");  // the first of the pool
  Result<Problem> problem = Build(offers_);
  ASSERT_TRUE(problem.ok());
  const std::vector<Violation> violations = ValidateDeployment(d, *problem);
  EXPECT_TRUE(violations.empty()) << FormatViolations(violations);
  ASSERT_TRUE(d.metrics.proven_optimal.has_value());
  EXPECT_TRUE(*d.metrics.proven_optimal);
  for (const ServiceOutcome& s : d.services) EXPECT_EQ(s.status, ServiceStatus::kOk) << s.name;

  // The cost is the sum of every GPU's own price.
  double cost = 0;
  std::map<std::string, int> used;
  for (const GpuAssignment& g : d.gpus) {
    const std::string& model = GpuModelName(d, g);
    cost += PriceOf(model);
    ++used[model];
    // A GPU names its model only when it differs from the deployment's.
    if (!g.gpu.empty()) {
      EXPECT_NE(g.gpu, d.gpu) << "gpu " << g.index;
    }
  }
  EXPECT_NEAR(d.metrics.cost_per_hour, cost, 1e-9);
  EXPECT_GT(d.metrics.cost_lower_bound, 0);
  EXPECT_LE(d.metrics.cost_lower_bound, d.metrics.cost_per_hour + 1e-9);
  // Proven optimal: the bound meets the cost.
  EXPECT_NEAR(d.metrics.cost_lower_bound, d.metrics.cost_per_hour, 1e-6 * cost);

  // The cost table lists every model of the pool, in pool order, with its
  // price, cap and use; its total is the plan's cost.
  ASSERT_EQ(d.pool.size(), offers_.size());
  double total = 0;
  int gpus = 0;
  for (size_t m = 0; m < offers_.size(); ++m) {
    const PoolUse& use = d.pool[m];
    EXPECT_EQ(use.gpu, offers_[m].gpu->name);
    EXPECT_DOUBLE_EQ(use.price_per_hour, offers_[m].price_per_hour);
    EXPECT_EQ(use.max_count, offers_[m].max_count);
    EXPECT_EQ(use.used, used[use.gpu]) << use.gpu;
    if (use.max_count > 0) {
      EXPECT_LE(use.used, use.max_count) << use.gpu;
    }
    total += use.used * use.price_per_hour;
    gpus += use.used;
  }
  EXPECT_NEAR(total, d.metrics.cost_per_hour, 1e-9);
  EXPECT_EQ(gpus, d.metrics.gpus);
  EXPECT_EQ(gpus, static_cast<int>(d.gpus.size()));
}

TEST_F(PoolTest, EveryInstanceIsProfiledOnItsOwnGpuModel) {
  const Deployment& d = MixedPlan();
  ASSERT_FALSE(d.gpus.empty());
  for (const GpuAssignment& g : d.gpus) {
    Result<const GpuModel*> model = FindGpu(GpuModelName(d, g));
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    for (const Instance& i : g.instances()) {
      const std::string where = "gpu " + std::to_string(g.index) + " " + i.profile;
      EXPECT_GE((*model)->ProfileIndex(i.profile), 0) << where;
      const ProfileEntry* e =
          profiles_.Find({i.model, (*model)->name, i.profile, i.batch, i.procs});
      ASSERT_NE(e, nullptr) << where << " on " << (*model)->name;
      EXPECT_DOUBLE_EQ(e->throughput_rps, i.throughput_rps) << where;
      EXPECT_DOUBLE_EQ(e->latency_ms, i.latency_ms) << where;
    }
  }
}

// Mixing never hurts: each model alone (with the same cap, unpriced so the
// planner minimises GPUs) costs its GPUs x its price, never less than the mix.
TEST_F(PoolTest, MixIsNoDearerThanTheCheapestSingleModelPlan) {
  const Deployment& mixed = MixedPlan();
  ASSERT_FALSE(mixed.gpus.empty());
  int planned = 0;
  for (const GpuOffer& offer : offers_) {
    Result<Problem> problem = Build({{offer.gpu, 0, offer.max_count}});
    ASSERT_TRUE(problem.ok()) << problem.status().ToString();
    EXPECT_FALSE(problem->priced());
    Result<PlanReport> report = Run("exact", *problem);
    if (!report.ok()) {
      // Only a cap too small to serve everything on this model alone.
      EXPECT_EQ(report.status().code(), StatusCode::kInvalidArgument)
          << offer.gpu->name << ": " << report.status().ToString();
      EXPECT_GT(offer.max_count, 0) << offer.gpu->name << ": " << report.status().ToString();
      continue;
    }
    ++planned;
    const Deployment& single = report->deployment;
    EXPECT_TRUE(ValidateDeployment(single, *problem).empty());
    EXPECT_TRUE(single.pool.empty());            // unpriced: no cost table
    EXPECT_EQ(single.metrics.cost_per_hour, 0);  // and no cost
    EXPECT_FALSE(single.metrics.cost_lower_bound > 0);
    const double single_cost = single.metrics.gpus * offer.price_per_hour;
    EXPECT_LE(mixed.metrics.cost_per_hour, single_cost + 1e-6)
        << "mixed " << mixed.metrics.cost_per_hour << " vs " << single.metrics.gpus << " x "
        << offer.gpu->name;
  }
  EXPECT_GE(planned, 1) << "no single model could serve the scenario";
}

TEST_F(PoolTest, CapsTooSmallToServeAreInvalidArgument) {
  std::vector<GpuOffer> capped = offers_;
  for (GpuOffer& offer : capped) offer.max_count = 1;  // 2 GPUs for 11 heavy services
  Result<Problem> problem = Build(capped);
  ASSERT_TRUE(problem.ok()) << problem.status().ToString();
  Result<PlanReport> report = Run("exact", *problem);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), StatusCode::kInvalidArgument) << report.status().ToString();
}

TEST_F(PoolTest, PlannersWithoutPoolSupportAreRejected) {
  Result<Problem> problem = Build(offers_);
  ASSERT_TRUE(problem.ok()) << problem.status().ToString();
  Result<std::unique_ptr<Planner>> parva = BuiltinPlanners().Create("parva");
  ASSERT_TRUE(parva.ok());
  EXPECT_FALSE((*parva)->SupportsPools());
  Result<PlanReport> report = Run("parva", *problem);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(report.status().message().find("parva"), std::string::npos)
      << report.status().message();
  // The same planner on one model of the pool is fine.
  Result<Problem> one = Build({offers_.front()});
  ASSERT_TRUE(one.ok());
  EXPECT_TRUE(Run("parva", *one).ok());
}

TEST_F(PoolTest, MixedDeploymentRoundTripsThroughJson) {
  const Deployment& d = MixedPlan();
  ASSERT_FALSE(d.gpus.empty());
  const std::string once = FormatDeploymentJson(d);
  EXPECT_NE(once.find("\"pool\": ["), std::string::npos);
  EXPECT_NE(once.find("\"proven_optimal\": true"), std::string::npos);
  EXPECT_NE(once.find("\"cost_per_hour\": "), std::string::npos);
  Result<Deployment> parsed = ParseDeploymentJson(once, "pool.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->gpu, d.gpu);
  ASSERT_EQ(parsed->gpus.size(), d.gpus.size());
  for (size_t g = 0; g < d.gpus.size(); ++g) {
    EXPECT_EQ(parsed->gpus[g].gpu, d.gpus[g].gpu) << "gpu " << g;
    EXPECT_EQ(GpuModelName(*parsed, parsed->gpus[g]), GpuModelName(d, d.gpus[g])) << "gpu " << g;
  }
  ASSERT_EQ(parsed->pool.size(), d.pool.size());
  for (size_t m = 0; m < d.pool.size(); ++m) {
    EXPECT_EQ(parsed->pool[m].gpu, d.pool[m].gpu);
    EXPECT_DOUBLE_EQ(parsed->pool[m].price_per_hour, d.pool[m].price_per_hour);
    EXPECT_EQ(parsed->pool[m].max_count, d.pool[m].max_count);
    EXPECT_EQ(parsed->pool[m].used, d.pool[m].used);
  }
  EXPECT_EQ(parsed->metrics.proven_optimal, d.metrics.proven_optimal);
  EXPECT_NEAR(parsed->metrics.cost_per_hour, d.metrics.cost_per_hour, 1e-4);  // 4 decimals
  EXPECT_NEAR(parsed->metrics.cost_lower_bound, d.metrics.cost_lower_bound, 1e-4);
  EXPECT_EQ(parsed->metrics.gpus, d.metrics.gpus);
  EXPECT_EQ(FormatDeploymentJson(*parsed), once);
  // What was read back still validates (per-GPU models included).
  Result<Problem> problem = Build(offers_);
  ASSERT_TRUE(problem.ok());
  const std::vector<Violation> violations = ValidateDeployment(*parsed, *problem);
  EXPECT_TRUE(violations.empty()) << FormatViolations(violations);
}

// With one price for both models the cheapest plan is the one with the
// fewest GPUs, so the GPU bounds of metrics.h (valid for pools) apply to it.
TEST_F(PoolTest, EqualPricesMinimiseGpusAboveTheBound) {
  std::vector<GpuOffer> equal = offers_;
  for (GpuOffer& offer : equal) {
    offer.price_per_hour = 2;
    offer.max_count = 0;
  }
  Result<Problem> problem = Build(equal);
  ASSERT_TRUE(problem.ok()) << problem.status().ToString();
  Result<PlanReport> report = Run("exact", *problem);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  const Metrics& m = report->deployment.metrics;
  EXPECT_EQ(m.proven_optimal, std::optional<bool>(true));
  EXPECT_NEAR(m.cost_per_hour, 2.0 * m.gpus, 1e-9);
  EXPECT_GT(m.lower_bound, 0);
  EXPECT_LE(m.lower_bound, m.gpus) << m.lower_bound_kind;
  EXPECT_LE(m.cost_lower_bound, m.cost_per_hour + 1e-9);
  EXPECT_GE(m.gap, 0);
  // No plan on either model alone uses fewer GPUs.
  for (const GpuOffer& offer : offers_) {
    Result<Problem> one = Build({{offer.gpu, 0, 0}});
    ASSERT_TRUE(one.ok()) << one.status().ToString();
    Result<PlanReport> single = Run("exact", *one);
    ASSERT_TRUE(single.ok()) << single.status().ToString();
    EXPECT_LE(m.gpus, single->deployment.metrics.gpus) << offer.gpu->name;
    EXPECT_LE(m.lower_bound, single->deployment.metrics.gpus) << offer.gpu->name;
  }
}

// Issue 17, class 6: prices span at most limits::kPricePerHour, and the exact
// planner scales them so that its solver sees the cheapest at 1. Prices of
// any scale within the limits plan the same GPUs for the same ratio, and
// the extremes of the range still pick the cheap model.
TEST_F(PoolTest, PricesOfEveryScaleWithinTheLimitsPlanAlike) {
  const Deployment& base = MixedPlan();
  ASSERT_FALSE(base.gpus.empty());
  for (const double scale : {1e-3 / 4.1, 1e5 / 6.98}) {
    std::vector<GpuOffer> scaled = offers_;
    for (GpuOffer& offer : scaled) offer.price_per_hour *= scale;
    Result<Problem> problem = Build(scaled);
    ASSERT_TRUE(problem.ok()) << problem.status().ToString();
    Result<PlanReport> report = Run("exact", *problem);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    const Metrics& m = report->deployment.metrics;
    EXPECT_EQ(m.proven_optimal, std::optional<bool>(true)) << scale;
    EXPECT_EQ(m.gpus, base.metrics.gpus) << scale;
    EXPECT_NEAR(m.cost_per_hour, base.metrics.cost_per_hour * scale, 1e-9 * m.cost_per_hour);
    EXPECT_NEAR(m.cost_lower_bound, m.cost_per_hour, 1e-6 * m.cost_per_hour) << scale;
  }
  // The whole span: the cheap model alone (its cap allows it), never the dear one.
  std::vector<GpuOffer> span = offers_;
  span[0].price_per_hour = 1e-3;
  span[1].price_per_hour = 1e5;
  Result<Problem> problem = Build(span);
  ASSERT_TRUE(problem.ok()) << problem.status().ToString();
  Result<PlanReport> report = Run("exact", *problem);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_EQ(report->deployment.pool.size(), 2u);
  EXPECT_EQ(report->deployment.pool[1].used, 0);
  Result<Problem> a100 = Build({{offers_[0].gpu, 0, 0}});
  ASSERT_TRUE(a100.ok());
  Result<PlanReport> alone = Run("exact", *a100);
  ASSERT_TRUE(alone.ok());
  EXPECT_EQ(report->deployment.metrics.gpus, alone->deployment.metrics.gpus);
}

// Prices beyond the limit are input errors: 1e16..1e24 gave a false
// "max_count caps" error, 1e25 and above a Clp assertion (an abort).
TEST_F(PoolTest, PricesBeyondTheLimitAreInputErrors) {
  for (const double price : {1e16, 1e25, 1e300}) {
    std::vector<GpuOffer> dear = offers_;
    dear[0].price_per_hour = price;
    Result<Problem> problem = Build(dear);
    ASSERT_FALSE(problem.ok()) << price;
    EXPECT_EQ(problem.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(problem.status().message().find("[0.001, 100000]"), std::string::npos)
        << problem.status().message();
  }
}

// Issue 17, class 7: planners without pool support ignored a pool entry's
// max_count and used more GPUs than allowed, silently. The engine checks
// every plan against the caps, naming the entry, the planner and both counts.
TEST_F(PoolTest, EveryPlannerKeepsWithinMaxCountOrSaysSo) {
  std::vector<GpuOffer> one = {offers_[0]};
  one[0].max_count = 2;  // S5 needs about 15 A100s
  Result<Problem> problem = Build(one);
  ASSERT_TRUE(problem.ok()) << problem.status().ToString();
  for (const std::string& name : BuiltinPlanners().Names()) {
    Result<std::unique_ptr<Planner>> planner = BuiltinPlanners().Create(name);
    ASSERT_TRUE(planner.ok());
    if (!CheckPlannerFits(**planner, *problem).ok()) continue;  // MPS planners
    Result<PlanReport> report = Run(name, *problem);
    if (report.ok()) {
      EXPECT_LE(report->deployment.metrics.gpus, 2) << name;
      continue;
    }
    EXPECT_EQ(report.status().code(), StatusCode::kInvalidArgument) << name;
    if (name == "exact") continue;  // plans within the caps, or says they are too tight
    EXPECT_NE(
        report.status().message().find("field 'max_count': planner " + name + "'s plan needs "),
        std::string::npos)
        << report.status().message();
    EXPECT_NE(report.status().message().find("a100-80gb GPUs, more than the pool's max_count 2"),
              std::string::npos)
        << report.status().message();
  }
}

}  // namespace
}  // namespace tessera
