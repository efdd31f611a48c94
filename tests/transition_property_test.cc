// Property test: for random pairs of plans (rates scaled up and down, SLOs
// changed, services added and removed, planned by parva or MIG-serving's
// greedy algorithm, from 1 to 200 GPUs, B's GPUs sometimes renumbered) every
// transition PlanTransition emits passes the independent checker
// (CheckTransition) and its summary is the one the checker measures; when
// it finds none within the spare budget, a plan with the spares it asks for
// exists and passes too. The naive order's summary is measured alike.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <random>
#include <set>
#include <string>

#include "tessera/gpu_catalog.h"
#include "tessera/plan/plan.h"
#include "tessera/profile/profile_synth.h"
#include "tessera/transition.h"
#include "tessera/transition/transition_check.h"

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

// A feasible SLO for `model` (every service is served, so every floor can
// be kept).
double RandomSlo(std::mt19937_64& rng, const ProfileTable& table, const std::string& model) {
  return FastestLatency(table, model, "a100-80gb") / 0.5 * LogUniform(rng, 1.5, 20);
}

Service RandomService(std::mt19937_64& rng, const ProfileTable& table, const std::string& name,
                      double max_rate) {
  const std::vector<std::string> models = table.Models();
  Service svc;
  svc.name = name;
  svc.model = models[rng() % models.size()];
  svc.rate_rps = std::round(LogUniform(rng, 5, max_rate));
  svc.slo_ms = RandomSlo(rng, table, svc.model);
  return svc;
}

// Scenario B from A: rates scaled (x0.3 to x2), a few SLOs changed, some
// services removed, some added.
Scenario Evolve(std::mt19937_64& rng, const ProfileTable& table, const Scenario& a,
                double max_rate) {
  Scenario b = a;
  b.services.clear();
  for (const Service& s : a.services) {
    if (rng() % 8 == 0) continue;  // removed
    Service t = s;
    t.rate_rps = std::max(1.0, std::round(s.rate_rps * LogUniform(rng, 0.3, 2)));
    if (rng() % 6 == 0) t.slo_ms = RandomSlo(rng, table, t.model);
    b.services.push_back(t);
  }
  const int added = static_cast<int>(rng() % 3);
  for (int i = 0; i < added; ++i) {
    b.services.push_back(RandomService(
        rng, table, "new" + std::to_string(i) + "-" + std::to_string(rng() % 1000), max_rate));
  }
  if (b.services.empty()) b.services.push_back(a.services.front());
  return b;
}

Deployment PlanWith(const std::string& planner, const Scenario& scenario,
                    const ProfileTable& table) {
  const GpuModel& gpu = **FindGpu("a100-80gb");
  Result<Problem> problem = Problem::Build(scenario, gpu, table, LatencyRule{});
  EXPECT_TRUE(problem.ok()) << problem.status().ToString();
  Result<PlanReport> report = RunPlanner(**BuiltinPlanners().Create(planner), *problem, {});
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  return report->deployment;
}

void ExpectPasses(const Deployment& a, const Deployment& b, const Transition& t,
                  const std::string& what) {
  const TransitionCheck check = CheckTransition(a, b, t);
  std::string violations;
  for (const std::string& v : check.violations) violations += v + "\n";
  EXPECT_TRUE(check.ok()) << what << ":\n" << violations;
  EXPECT_GE(t.summary.min_capacity_ratio, 1 - 1e-9) << what;
}

void ExpectSameSummary(const TransitionSummary& x, const TransitionSummary& y,
                       const std::string& what) {
  EXPECT_EQ(x.steps, y.steps) << what;
  EXPECT_EQ(x.phases, y.phases) << what;
  EXPECT_EQ(x.gpus_touched, y.gpus_touched) << what;
  EXPECT_EQ(x.peak_gpus, y.peak_gpus) << what;
  EXPECT_NEAR(x.min_capacity_ratio, y.min_capacity_ratio, 1e-9) << what;
}

// Instances a step made that a later step replaced or destroyed (each
// costs at most two steps the naive order on the same mapping does not
// take): made on a GPU whose B GPU then had to move elsewhere.
int TemporaryInstances(const Transition& t) {
  std::set<std::pair<int, int>> made;  // (GPU, start) of instances made so far
  int temporary = 0;
  for (const TransitionPhase& phase : t.phases) {
    for (const TransitionStep& s : phase.steps) {
      const std::pair<int, int> where(s.gpu, s.start);
      temporary += made.count(where) ? 1 : 0;
      if (s.action == StepAction::kDestroy) {
        made.erase(where);
      } else {
        made.insert(where);
      }
    }
  }
  return temporary;
}

TEST(TransitionProperty, EveryPlannedTransitionPassesTheChecker) {
  std::mt19937_64 rng(20261218);
  const ProfileTable table = DefaultProfiles(**FindGpu("a100-80gb"));
  const char* planners[] = {"parva", "migserving-greedy"};
  int transitions = 0, needing_spares = 0, max_gpus = 0, steps = 0, naive_steps = 0, phases = 0,
      max_phases = 0, temporary_instances = 0;
  for (int k = 0; k < 60; ++k) {
    // 1 to ~200 GPUs: up to 40 services of up to 20,000 req/s, every tenth
    // pair 40 to 80 services of 2,000 to 40,000 req/s.
    const bool large = k % 10 == 9;
    const double max_rate = large ? LogUniform(rng, 2000, 40000) : LogUniform(rng, 20, 20000);
    Scenario a_scenario;
    a_scenario.name = "random";
    a_scenario.gpu = "a100-80gb";
    const int n = large ? 40 + static_cast<int>(rng() % 41) : 1 + static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      a_scenario.services.push_back(RandomService(rng, table, "svc" + std::to_string(i), max_rate));
    }
    const Scenario b_scenario = Evolve(rng, table, a_scenario, max_rate);
    const Deployment a = PlanWith(planners[rng() % 2], a_scenario, table);
    Deployment b = PlanWith(planners[rng() % 2], b_scenario, table);
    if (rng() % 3 == 0) {  // B's GPUs renumbered
      std::shuffle(b.gpus.begin(), b.gpus.end(), rng);
      for (size_t g = 0; g < b.gpus.size(); ++g) b.gpus[g].index = static_cast<int>(g);
    }
    max_gpus =
        std::max({max_gpus, static_cast<int>(a.gpus.size()), static_cast<int>(b.gpus.size())});
    const int spare = static_cast<int>(rng() % 3);
    const std::string what = "pair " + std::to_string(k) + " (" + std::to_string(a.gpus.size()) +
                             " -> " + std::to_string(b.gpus.size()) + " GPUs, spare " +
                             std::to_string(spare) + ")";
    Result<TransitionPlan> plan = PlanTransition(a, b, {spare});
    ASSERT_TRUE(plan.ok()) << what << ": " << plan.status().ToString();
    if (!plan->transition) {
      ++needing_spares;
      EXPECT_GT(plan->spare_gpus_needed, spare) << what;
      EXPECT_FALSE(plan->reason.empty()) << what;
      plan = PlanTransition(a, b, {plan->spare_gpus_needed});
      ASSERT_TRUE(plan.ok());
      ASSERT_TRUE(plan->transition.has_value()) << what << ": " << plan->reason;
    }
    ExpectPasses(a, b, *plan->transition, what);
    const Transition naive = NaiveTransition(a, b, plan->transition->gpu_map);
    ExpectSameSummary(naive.summary, CheckTransition(a, b, naive).measured, what + " (naive)");
    // Never more steps than the naive order on the same mapping, but for
    // instances made on a GPU whose B GPU then had to move elsewhere.
    const int temporary = TemporaryInstances(*plan->transition);
    EXPECT_LE(plan->transition->summary.steps, naive.summary.steps + 2 * temporary) << what;
    temporary_instances += temporary;
    steps += plan->transition->summary.steps;
    naive_steps += naive.summary.steps;
    phases += plan->transition->summary.phases;
    max_phases = std::max(max_phases, plan->transition->summary.phases);
    ++transitions;
  }
  EXPECT_GE(max_gpus, 150) << "the generator should reach large plans";
  EXPECT_LE(temporary_instances, naive_steps / 100) << "instances made and dropped again stay rare";
  std::cout << transitions << " transitions checked (largest plan " << max_gpus << " GPUs, "
            << needing_spares << " needing more spares), " << steps << " steps vs " << naive_steps
            << " naive (" << temporary_instances << " temporary instances), " << phases
            << " phases (at most " << max_phases << ")\n";
}

}  // namespace
}  // namespace tessera
