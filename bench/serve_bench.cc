// Benchmarks of the serving simulator: wall time per simulated run and
// simulated requests per second of wall time (counter Mreq_per_s), on the
// ParvaGPU planner's plan of S6 (60 simulated seconds, about 2.4 million
// Poisson requests) and on one M/M/1 queue at 80% load.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "tessera/gpu_catalog.h"
#include "tessera/plan/plan.h"
#include "tessera/profile/profile_synth.h"
#include "tessera/simulator.h"

namespace tessera {
namespace {

// Runs `model` under `options` per iteration; reports simulated requests
// per wall-clock second, in millions.
void BenchSimulate(benchmark::State& state, const ServingModel& model, const SimOptions& options) {
  long requests = 0;
  for (auto _ : state) {
    Result<SimReport> r = Simulate(model, options);
    if (!r.ok()) {
      state.SkipWithError(r.status().message().c_str());
      return;
    }
    requests += r->requests;
  }
  state.counters["Mreq_per_s"] =
      benchmark::Counter(static_cast<double>(requests) / 1e6, benchmark::Counter::kIsRate);
}

ServingModel ParvaPlanOfS6() {
  const GpuModel& gpu = **FindGpu("a100-80gb");
  const ProfileTable profiles = DefaultProfiles(gpu);
  Result<Scenario> scenario =
      LoadScenarioYaml(std::string(TESSERA_SOURCE_DIR) + "/examples/scenarios/s6.yaml");
  if (!scenario.ok()) std::abort();
  Result<Problem> problem = Problem::Build(*scenario, gpu, profiles, LatencyRule{});
  Result<std::unique_ptr<Planner>> planner = BuiltinPlanners().Create("parva");
  if (!problem.ok() || !planner.ok()) std::abort();
  Result<PlanReport> plan = RunPlanner(**planner, *problem, PlanContext{});
  if (!plan.ok()) std::abort();
  Result<ServingModel> model = BuildServingModel(plan->deployment, *problem);
  if (!model.ok()) std::abort();
  return *model;
}

void BM_SimulateS6(benchmark::State& state) {
  static const ServingModel model = ParvaPlanOfS6();
  BenchSimulate(state, model, SimOptions{});
}
BENCHMARK(BM_SimulateS6)->Unit(benchmark::kMillisecond);

void BM_SimulateMM1(benchmark::State& state) {
  ServingModel model;
  model.services.push_back({"s", 800, 1000, {0}});
  model.instances.push_back({"s", 0, 0, "7g.80gb", 0, 7, 1, 1, {1.0}});
  SimOptions options;
  options.duration_s = 2500;  // 2 million requests
  options.variability = Variability::kExponential;
  BenchSimulate(state, model, options);
}
BENCHMARK(BM_SimulateMM1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tessera
