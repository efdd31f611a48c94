// Benchmarks of the heuristic planners at scale (issue 22), on workloads of
// `tessera gen --services N --rates normal:300,100` (SLO 100 ms, every
// builtin model, seed 1) on the embedded A100-80GB profiles:
//  * plan_ms of MIG-serving's fast algorithm on 300 and 1,000 services and
//    of ParvaGPU on 11,000, with the GPUs planned as a counter;
//  * how closely every heuristic MIG planner keeps a time limit on 3,000 and
//    10,000 services: `overrun` = wall time / limit - 1 (negative when it
//    finished first), `planned` = 1 for a plan, 0 for the time-limit error.
#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <string>

#include "tessera/gpu_catalog.h"
#include "tessera/plan/plan.h"
#include "tessera/problem_inputs.h"
#include "tessera/profile/profile_synth.h"
#include "tessera/util/clock.h"
#include "tessera/workload/workload_gen.h"

namespace tessera {
namespace {

// The problem of `tessera gen --services N --rates normal:300,100`, built
// once per size.
const Result<Problem>& Generated(int services) {
  static std::map<int, Result<Problem>> problems;
  auto it = problems.find(services);
  if (it != problems.end()) return it->second;
  static const GpuModel& gpu = **FindGpu("a100-80gb");
  static const ProfileTable profiles = DefaultProfiles(gpu);
  WorkloadGenOptions options;
  options.services = services;
  options.rates = NormalRates{300, 100};
  Result<Problem> problem = Status::Internal("unset");
  if (Result<Scenario> scenario = GenerateWorkload(options); scenario.ok()) {
    problem = Problem::Build(*scenario, gpu, profiles, LatencyRule{});
  } else {
    problem = scenario.status();
  }
  return problems.emplace(services, std::move(problem)).first->second;
}

// The problem of <Arg 0> services, or null with the benchmark skipped.
const Problem* ProblemOrSkip(benchmark::State& state) {
  const Result<Problem>& problem = Generated(static_cast<int>(state.range(0)));
  if (problem.ok()) return &*problem;
  state.SkipWithError(problem.status().message().c_str());
  return nullptr;
}

// Plans the workload of <Arg> services with `planner`, no time limit.
void BM_HeuristicPlan(benchmark::State& state, const char* planner_name) {
  const Problem* problem = ProblemOrSkip(state);
  if (!problem) return;
  std::unique_ptr<Planner> planner = BuiltinPlanners().Create(planner_name).value();
  Result<PlanResult> result = Status::Internal("not run");
  for (auto _ : state) {
    result = planner->Plan(*problem, PlanContext{});
    benchmark::DoNotOptimize(result);
  }
  if (!result.ok()) {
    state.SkipWithError(result.status().message().c_str());
    return;
  }
  int gpus = 0;
  for (const auto& gpu : result->mig()) gpus += gpu.empty() ? 0 : 1;
  state.counters["gpus"] = gpus;
}
BENCHMARK_CAPTURE(BM_HeuristicPlan, migserving_greedy, "migserving-greedy")
    ->ArgName("services")
    ->Arg(300)
    ->Arg(1000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_HeuristicPlan, parva, "parva")
    ->ArgName("services")
    ->Arg(11000)
    ->Unit(benchmark::kMillisecond);

// Plans the workload of <Arg 0> services with `planner` under a time limit
// of <Arg 1> ms, timed on the wall clock.
void BM_HeuristicTimeLimit(benchmark::State& state, const char* planner_name) {
  const Problem* problem = ProblemOrSkip(state);
  if (!problem) return;
  std::unique_ptr<Planner> planner = BuiltinPlanners().Create(planner_name).value();
  const double limit_ms = static_cast<double>(state.range(1));
  double wall_ms = 0;
  bool planned = false;
  for (auto _ : state) {
    const double start_ms = SystemClock().NowMs();
    Result<PlanResult> result =
        planner->Plan(*problem, PlanContext{.time_limit_s = limit_ms / 1000});
    wall_ms = SystemClock().NowMs() - start_ms;
    planned = result.ok();
    benchmark::DoNotOptimize(result);
  }
  state.counters["limit_ms"] = limit_ms;
  state.counters["overrun"] = wall_ms / limit_ms - 1;
  state.counters["planned"] = planned ? 1 : 0;
}
#define TESSERA_TIME_LIMIT_BENCH(id, name)           \
  BENCHMARK_CAPTURE(BM_HeuristicTimeLimit, id, name) \
      ->ArgNames({"services", "limit_ms"})           \
      ->Args({3000, 1000})                           \
      ->Args({10000, 1000})                          \
      ->Iterations(1)                                \
      ->UseRealTime()                                \
      ->Unit(benchmark::kMillisecond)
TESSERA_TIME_LIMIT_BENCH(parva, "parva");
TESSERA_TIME_LIMIT_BENCH(parva_single, "parva-single");
TESSERA_TIME_LIMIT_BENCH(parva_unopt, "parva-unopt");
TESSERA_TIME_LIMIT_BENCH(static_7, "static-7");
TESSERA_TIME_LIMIT_BENCH(static_7x1, "static-7x1");
TESSERA_TIME_LIMIT_BENCH(static_mix, "static-mix");
TESSERA_TIME_LIMIT_BENCH(migserving_greedy, "migserving-greedy");
TESSERA_TIME_LIMIT_BENCH(migserving_greedy_mps2, "migserving-greedy-mps2");
TESSERA_TIME_LIMIT_BENCH(migserving_greedy_mps4, "migserving-greedy-mps4");
TESSERA_TIME_LIMIT_BENCH(migserving_ga, "migserving-ga");

// Fleet scale: `tessera gen --preset normal-1 --services 10000` (about
// 90,000 A100 GPUs) planned as `tessera plan` plans it by default
// (RunDefaultPlanner: parva above kDefaultExactMaxServices services). Peak
// memory is `tessera plan`'s to measure (docs/performance.md): 0.77 GB.
void BM_FleetPlan(benchmark::State& state) {
  WorkloadGenOptions options;
  for (const WorkloadPreset& preset : WorkloadPresets()) {
    if (preset.name == "normal-1") options = preset.options;
  }
  options.services = static_cast<int>(state.range(0));
  Result<Scenario> scenario = GenerateWorkload(options);
  if (!scenario.ok()) {
    state.SkipWithError(scenario.status().message().c_str());
    return;
  }
  // The inputs `tessera plan` starts from: the embedded profiles, the default rule.
  Result<Problem> problem = LoadProblem(ProblemInputs{}, *scenario, /*mps=*/false, nullptr, {});
  if (!problem.ok()) {
    state.SkipWithError(problem.status().message().c_str());
    return;
  }
  Result<PlanReport> report = Status::Internal("not run");
  for (auto _ : state) {
    std::string note;
    report = RunDefaultPlanner(BuiltinPlanners(), *problem, PlanContext{}, note);
    benchmark::DoNotOptimize(report);
  }
  if (!report.ok()) {
    state.SkipWithError(report.status().message().c_str());
    return;
  }
  state.counters["gpus"] = report->deployment.metrics.gpus;
}
BENCHMARK(BM_FleetPlan)->ArgName("services")->Arg(10000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tessera
