// Property test: on hundreds of random scenarios, on every catalog GPU with
// synthesized profiles, every plan of every registered planner passes the
// independent validator, and a service no triplet can serve is reported
// infeasible with the best achievable latency, never dropped.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "tessera/gpu_catalog.h"
#include "tessera/plan.h"
#include "tessera/profile_synth.h"
#include "tessera/validator.h"

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

TEST(PlannerProperty, EveryPlanOfEveryPlannerPassesTheValidator) {
  std::mt19937_64 rng(20261122);
  constexpr int kScenariosPerGpu = 50;
  int plans = 0, infeasible_services = 0;
  for (const GpuModel& gpu : AllGpus()) {
    const ProfileTable table = DefaultProfiles(gpu);
    ASSERT_FALSE(table.empty()) << gpu.name;
    for (int k = 0; k < kScenariosPerGpu; ++k) {
      const Scenario scenario = RandomScenario(rng, gpu, table);
      Result<Problem> problem = Problem::Build(scenario, gpu, table, LatencyRule{});
      ASSERT_TRUE(problem.ok()) << problem.status().ToString();
      for (const std::string& name : BuiltinPlanners().Names()) {
        auto planner = BuiltinPlanners().Create(name);
        ASSERT_TRUE(planner.ok());
        Result<PlanReport> report = RunPlanner(**planner, *problem, PlanContext{});
        ASSERT_TRUE(report.ok()) << report.status().ToString();
        const Deployment& d = report->deployment;
        const std::vector<Violation> violations =
            ValidateDeployment(d, scenario, table, LatencyRule{});
        ASSERT_TRUE(violations.empty()) << name << " on " << gpu.name << " scenario " << k << ":\n"
                                        << FormatViolations(violations);
        ASSERT_EQ(d.services.size(), scenario.services.size());
        for (size_t i = 0; i < d.services.size(); ++i) {
          const bool none = problem->services()[i].feasible.empty();
          EXPECT_EQ(d.services[i].status == ServiceStatus::kInfeasible, none);
          if (none) {
            ++infeasible_services;
            EXPECT_NE(d.services[i].reason.find("best achievable"), std::string::npos)
                << d.services[i].reason;
          }
        }
        EXPECT_GE(d.metrics.gpus, d.metrics.lower_bound);
        ++plans;
      }
    }
  }
  EXPECT_GT(infeasible_services, 0) << "the generator should also produce infeasible SLOs";
  std::cout << plans << " plans validated, " << infeasible_services
            << " infeasible services reported\n";
}

}  // namespace
}  // namespace tessera
