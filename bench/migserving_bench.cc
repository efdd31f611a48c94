// Benchmarks of MIG-serving's optimizer: the fast algorithm's plan_ms on the
// four generated workloads (hundreds of A100 GPUs each; the paper's takes
// minutes), with its GPUs, the strongest bound and the gap as counters; and
// how closely the GA keeps to its time limit when rounds never stall out.
#include <benchmark/benchmark.h>

#include "planners/migserving/migserving_planner.h"
#include "tessera/gpu_catalog.h"
#include "tessera/plan/metrics.h"
#include "tessera/plan/plan.h"
#include "tessera/profile/profile_synth.h"
#include "tessera/util/clock.h"
#include "tessera/workload/workload_gen.h"

namespace tessera {
namespace {

// The problem of workload preset `index` on the embedded A100 profiles.
Result<Problem> PresetProblem(int index) {
  static const GpuModel& gpu = **FindGpu("a100-80gb");
  static const ProfileTable profiles = DefaultProfiles(gpu);
  TESSERA_ASSIGN_OR_RETURN(Scenario scenario, GenerateWorkload(WorkloadPresets()[index].options));
  return Problem::Build(scenario, gpu, profiles, LatencyRule{});
}

// Arg: preset index (0 normal-1, 1 normal-2, 2 lognormal-1, 3 lognormal-2).
void BM_MigServingGreedy(benchmark::State& state) {
  Result<Problem> problem = PresetProblem(static_cast<int>(state.range(0)));
  if (!problem.ok()) {
    state.SkipWithError(problem.status().message().c_str());
    return;
  }
  state.SetLabel(WorkloadPresets()[state.range(0)].name);
  auto planner = BuiltinPlanners().Create("migserving-greedy");
  Result<PlanResult> result = Status::Internal("not run");
  for (auto _ : state) {
    result = (*planner)->Plan(*problem, {});
    benchmark::DoNotOptimize(result);
  }
  if (!result.ok()) {
    state.SkipWithError(result.status().message().c_str());
    return;
  }
  const LowerBound bound = StrongestBound(*problem);
  const double gpus = static_cast<double>(result->mig().size());
  state.counters["gpus"] = gpus;
  state.counters["bound"] = bound.gpus;
  state.counters["gap"] = bound.gpus > 0 ? gpus / bound.gpus - 1 : 0;
}
BENCHMARK(BM_MigServingGreedy)->ArgName("preset")->DenseRange(0, 3)->Unit(benchmark::kMillisecond);

// The GA on normal-1 with rounds that never stall out, so only the time
// limit (Arg, in seconds) stops it; `overrun` = wall time / limit - 1.
void BM_MigServingGaTimeLimit(benchmark::State& state) {
  Result<Problem> problem = PresetProblem(0);
  if (!problem.ok()) {
    state.SkipWithError(problem.status().message().c_str());
    return;
  }
  MigServingOptions options;
  options.genetic = true;
  options.ga.stall_rounds = 0;
  auto planner = NewMigServingPlanner(options, "migserving-ga");
  const double limit_s = static_cast<double>(state.range(0));
  double wall_ms = 0;  // of the last run
  for (auto _ : state) {
    const double start_ms = SystemClock().NowMs();
    benchmark::DoNotOptimize(planner->Plan(*problem, PlanContext{.time_limit_s = limit_s}));
    wall_ms = SystemClock().NowMs() - start_ms;
  }
  state.counters["limit_ms"] = limit_s * 1000;
  state.counters["overrun"] = wall_ms / (limit_s * 1000) - 1;
}
BENCHMARK(BM_MigServingGaTimeLimit)
    ->ArgName("limit_s")
    ->Arg(1)
    ->Arg(3)
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tessera
