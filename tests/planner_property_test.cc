// Property test: on hundreds of random scenarios under random latency rules,
// every plan of every registered planner, MIG and MPS alike, passes the
// independent validator under the plan's own rule, also after a JSON round
// trip; and a service no configuration can serve is reported infeasible with
// the best achievable latency, never dropped. MIG planners plan every
// catalog GPU with MIG on synthesized profiles; MPS planners plan V100s with
// iGniter's fitted coefficients (and gpu-lets' tables), read from
// ../shared/data.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "tessera/deployment_format.h"
#include "tessera/gpu_catalog.h"
#include "tessera/plan/plan.h"
#include "tessera/profile/gpulet_tables.h"
#include "tessera/profile/profile_synth.h"
#include "tessera/validator.h"
#include "test_paths.h"

namespace tessera {
namespace {

double LogUniform(std::mt19937_64& rng, double lo, double hi) {
  std::uniform_real_distribution<double> u(std::log(lo), std::log(hi));
  return std::exp(u(rng));
}

double FastestLatency(const ProfileTable& table, const std::string& model, const std::string& gpu) {
  double fastest = INFINITY;
  for (const ProfileEntry* e : table.EntriesFor(model, gpu)) {
    fastest = std::min(fastest, e->latency_ms);
  }
  return fastest;
}

// Random model subsets, rates 1 to 20,000 req/s, SLOs from below the
// fastest achievable (infeasible) to 20 times above it.
Scenario RandomScenario(std::mt19937_64& rng, const GpuModel& gpu, const ProfileTable& table) {
  const std::vector<std::string> models = table.Models();
  std::uniform_int_distribution<int> count(1, 12);
  std::uniform_int_distribution<size_t> pick(0, models.size() - 1);
  Scenario s;
  s.name = "random";
  s.gpu = gpu.name;
  const int n = count(rng);
  for (int i = 0; i < n; ++i) {
    Service svc;
    svc.name = "svc" + std::to_string(i);
    svc.model = models[pick(rng)];
    svc.rate_rps = std::round(LogUniform(rng, 1, 20000));
    svc.slo_ms = FastestLatency(table, svc.model, gpu.name) / 0.5 * LogUniform(rng, 0.7, 20);
    s.services.push_back(svc);
  }
  return s;
}

// A random rule: the batch's share of the SLO, the capacity rule and the
// router (what the plan records and the validator must apply).
LatencyRule RandomRule(std::mt19937_64& rng) {
  LatencyRule rule;
  const double factors[] = {0.4, 0.5, 0.6};
  const char* capacities[] = {"queueing", "bare", "bursty:0.5", "pooled", "pooled:0"};
  rule.factor = factors[rng() % 3];
  EXPECT_TRUE(rule.SetCapacity(capacities[rng() % 5]).ok());
  // The pooled rule holds behind the router that pools only.
  rule.router = rng() % 2 && !rule.pooled ? Router::kWeighted : Router::kShortestQueue;
  rule.rate_margin = rng() % 2 ? 0.0 : 0.05;
  return rule;
}

// Plans `problem` with every registered planner of its sharing mode and
// checks each plan; returns the number of plans.
int CheckEveryPlanner(const Problem& problem, const std::string& what) {
  int plans = 0;
  for (const std::string& name : BuiltinPlanners().Names()) {
    auto planner = BuiltinPlanners().Create(name);
    EXPECT_TRUE(planner.ok());
    if (!planner.ok() || !CheckPlannerFits(**planner, problem).ok()) continue;
    Result<PlanReport> report = RunPlanner(**planner, problem, PlanContext{.time_limit_s = 5});
    EXPECT_TRUE(report.ok()) << name << " on " << what << ": " << report.status().ToString();
    if (!report.ok()) continue;
    const Deployment& d = report->deployment;
    EXPECT_EQ(d.rule, problem.rule()) << name << ": the plan records its rule";
    std::vector<Violation> violations = ValidateDeployment(d, problem);
    EXPECT_TRUE(violations.empty()) << name << " on " << what << ":\n"
                                    << FormatViolations(violations);
    Result<Deployment> back = ParseDeploymentJson(FormatDeploymentJson(d), "plan.json");
    EXPECT_TRUE(back.ok()) << back.status().ToString();
    if (back.ok()) {
      EXPECT_EQ(back->rule, problem.rule()) << name;
      EXPECT_EQ(FormatViolations(ValidateDeployment(*back, problem)), "") << name << " (JSON)";
    }
    EXPECT_EQ(d.services.size(), problem.scenario().services.size());
    EXPECT_GE(d.metrics.gpus, d.metrics.lower_bound) << name << " on " << what;
    ++plans;
  }
  return plans;
}

TEST(PlannerProperty, EveryPlanOfEveryMigPlannerPassesTheValidator) {
  std::mt19937_64 rng(20261122);
  constexpr int kScenariosPerGpu = 30;
  int plans = 0, infeasible_services = 0;
  for (const GpuModel* gpu : AllMigGpus()) {
    const ProfileTable table = DefaultProfiles(*gpu);
    ASSERT_FALSE(table.empty()) << gpu->name;
    for (int k = 0; k < kScenariosPerGpu; ++k) {
      const Scenario scenario = RandomScenario(rng, *gpu, table);
      Result<Problem> problem = Problem::Build(scenario, *gpu, table, RandomRule(rng));
      ASSERT_TRUE(problem.ok()) << problem.status().ToString();
      plans += CheckEveryPlanner(*problem, gpu->name + " scenario " + std::to_string(k));
      // Infeasible services are reported with what is achievable.
      Result<PlanReport> report = RunPlanner(**BuiltinPlanners().Create("parva"), *problem, {});
      ASSERT_TRUE(report.ok());
      for (size_t i = 0; i < report->deployment.services.size(); ++i) {
        const ServiceOutcome& s = report->deployment.services[i];
        const bool none = problem->services()[i].feasible.empty();
        EXPECT_EQ(s.status == ServiceStatus::kInfeasible, none);
        if (!none) continue;
        ++infeasible_services;
        EXPECT_NE(s.reason.find("best achievable"), std::string::npos) << s.reason;
      }
    }
  }
  EXPECT_GT(infeasible_services, 0) << "the generator should also produce infeasible SLOs";
  std::cout << plans << " MIG plans validated, " << infeasible_services
            << " infeasible services reported\n";
}

constexpr char kCoefficients[] = "igniter/derived/fitted_coefficients_v100.json";
constexpr char kGpuletTables[] = "igniter/i-Gniter/Profile/tools/gpulet.config";

TEST(PlannerProperty, EveryPlanOfEveryMpsPlannerPassesTheValidator) {
  TESSERA_SKIP_WITHOUT_SHARED_DATA(kCoefficients);
  TESSERA_SKIP_WITHOUT_SHARED_DATA(kGpuletTables);
  Result<MpsCoefficients> coefficients =
      LoadMpsCoefficients(testing::SharedDataPath(kCoefficients));
  ASSERT_TRUE(coefficients.ok()) << coefficients.status().ToString();
  Result<GpuletTables> tables = LoadGpuletTables(testing::SharedDataPath(kGpuletTables));
  ASSERT_TRUE(tables.ok()) << tables.status().ToString();
  const auto shared_tables = std::make_shared<const GpuletTables>(std::move(*tables));
  std::mt19937_64 rng(20261125);
  const GpuModel& v100 = **FindGpu("v100-16gb");
  int plans = 0;
  for (int k = 0; k < 40; ++k) {
    Scenario scenario;
    scenario.name = "random";
    const int n = 1 + static_cast<int>(rng() % 25);
    for (int i = 0; i < n; ++i) {
      const WorkloadCoefficients& w =
          coefficients->workloads[rng() % coefficients->workloads.size()];
      scenario.services.push_back({"svc" + std::to_string(i), w.model,
                                   std::round(LogUniform(rng, 5, 3000)), LogUniform(rng, 4, 200),
                                   0});
    }
    Result<Problem> problem = Problem::BuildMps(scenario, {&v100, v100.cloud.price_per_hour, 0},
                                                *coefficients, RandomRule(rng), shared_tables);
    ASSERT_TRUE(problem.ok()) << problem.status().ToString();
    plans += CheckEveryPlanner(*problem, "V100 scenario " + std::to_string(k));
  }
  EXPECT_EQ(plans, 40 * 4) << "igniter, ffd+, gslice+ and gpulet plan every scenario";
}

}  // namespace
}  // namespace tessera
