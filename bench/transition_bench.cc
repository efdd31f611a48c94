// Benchmarks of the transition planner (transition.h): PlanTransition
// between two plans of about 100 and about 1,000 A100-80GB GPUs, 2 spare
// GPUs. Each pair is one generated workload (tessera gen: normal rates,
// mean 300 req/s, sd 100, 100 ms SLO, every builtin model) planned by parva
// at its rates ("day") and with every other service at half its rate and
// every fifth at 1.3 times ("night"); day -> night and night -> day. The
// counters: the GPUs of A and B, the plan's steps, phases, GPUs touched,
// peak GPUs and lowest capacity / floor, the same for the naive order
// (destroy all that differs, then create) on the same GPU mapping, and the
// spare GPUs the planner asks for when 2 are not enough (0 otherwise).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>

#include "tessera/gpu_catalog.h"
#include "tessera/plan/plan.h"
#include "tessera/profile/profile_synth.h"
#include "tessera/transition.h"
#include "tessera/workload/workload_gen.h"

namespace tessera {
namespace {

constexpr int kSpareGpus = 2;

const GpuModel& A100() { return **FindGpu("a100-80gb"); }

Deployment PlanParva(const Scenario& scenario) {
  static const ProfileTable table = DefaultProfiles(A100());
  Result<Problem> problem = Problem::Build(scenario, A100(), table, LatencyRule{});
  if (!problem.ok()) std::abort();
  Result<PlanReport> report = RunPlanner(**BuiltinPlanners().Create("parva"), *problem, {});
  if (!report.ok()) std::abort();
  return report->deployment;
}

struct Pair {
  Deployment day, night;
};

// The day and night plans of `services` generated services (320 make about
// 100 GPUs, 3,200 about 1,000), planned once.
const Pair& DayAndNight(int services) {
  static std::map<int, Pair> pairs;
  auto it = pairs.find(services);
  if (it != pairs.end()) return it->second;
  WorkloadGenOptions options;
  options.services = services;
  options.rates = NormalRates{300, 100};
  Result<Scenario> day = GenerateWorkload(options);
  if (!day.ok()) std::abort();
  Scenario night = *day;
  for (size_t i = 0; i < night.services.size(); ++i) {
    double& rate = night.services[i].rate_rps;
    if (i % 5 == 4) {
      rate = std::round(rate * 1.3);
    } else if (i % 2 == 0) {
      rate = std::max(1.0, std::round(rate * 0.5));
    }
  }
  return pairs.emplace(services, Pair{PlanParva(*day), PlanParva(night)}).first->second;
}

// Args: services, direction (0: day -> night, 1: night -> day).
void BM_PlanTransition(benchmark::State& state) {
  const Pair& pair = DayAndNight(static_cast<int>(state.range(0)));
  const Deployment& from = state.range(1) == 0 ? pair.day : pair.night;
  const Deployment& to = state.range(1) == 0 ? pair.night : pair.day;
  Result<TransitionPlan> plan = Status::Internal("not run");
  for (auto _ : state) {
    plan = PlanTransition(from, to, {kSpareGpus});
    benchmark::DoNotOptimize(plan);
  }
  if (!plan.ok()) {
    state.SkipWithError(plan.status().message().c_str());
    return;
  }
  state.counters["gpus_a"] = static_cast<double>(from.gpus.size());
  state.counters["gpus_b"] = static_cast<double>(to.gpus.size());
  state.counters["spare_needed"] = plan->transition ? 0 : plan->spare_gpus_needed;
  if (!plan->transition) {
    plan = PlanTransition(from, to, {plan->spare_gpus_needed});
    if (!plan.ok() || !plan->transition) {
      state.SkipWithError("no transition with the spare GPUs asked for");
      return;
    }
  }
  const TransitionSummary& s = plan->transition->summary;
  const TransitionSummary naive = NaiveTransition(from, to, plan->transition->gpu_map).summary;
  state.counters["steps"] = s.steps;
  state.counters["phases"] = s.phases;
  state.counters["touched"] = s.gpus_touched;
  state.counters["peak"] = s.peak_gpus;
  state.counters["min_ratio"] = s.min_capacity_ratio;
  state.counters["naive_steps"] = naive.steps;
  state.counters["naive_phases"] = naive.phases;
  state.counters["naive_ratio"] = naive.min_capacity_ratio;
}
BENCHMARK(BM_PlanTransition)
    ->ArgNames({"services", "night_to_day"})
    ->Args({320, 0})
    ->Args({320, 1})
    ->Args({3200, 0})
    ->Args({3200, 1})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tessera
