// Benchmarks of the planners' hot path: plan_ms (Problem -> PlanResult,
// files excluded) on ParvaGPU's scenarios S1-S6 and S5 replicated 10 times
// (110 services), on the embedded profiles and, when ../shared/data is
// present, on ParvaGPU's measured A100 profiles under its artifact's rule.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <memory>
#include <string>

#include "tessera/gpu_catalog.h"
#include "tessera/plan.h"
#include "tessera/profile_io.h"
#include "tessera/profile_synth.h"
#include "tessera/scenario.h"

namespace tessera {
namespace {

const GpuModel& A100() { return **FindGpu("a100-80gb"); }

const ProfileTable& EmbeddedProfiles() {
  static const ProfileTable table = DefaultProfiles(A100());
  return table;
}

Scenario BundledScenario(int number, int copies) {
  const std::string path =
      std::string(TESSERA_SOURCE_DIR) + "/examples/scenarios/s" + std::to_string(number) + ".yaml";
  Result<Scenario> s = LoadScenarioYaml(path);
  if (!s.ok()) std::abort();
  return ReplicateScenario(*s, copies);
}

// S1..S6 once each, then S5 replicated 10 times (110 services, as in
// ParvaGPU's scalability study), in microseconds.
void ScenariosOneToSixAndS5x10(benchmark::internal::Benchmark* b) {
  for (int s = 1; s <= 6; ++s) b->Args({s, 1});
  b->Args({5, 10})->Unit(benchmark::kMicrosecond);
}

// Times `planner_name` on `scenario`; reports an input error as a skip.
void BenchPlan(benchmark::State& state, const std::string& planner_name, const Scenario& scenario,
               const ProfileTable& profiles, const LatencyRule& rule) {
  Result<Problem> problem = Problem::Build(scenario, A100(), profiles, rule);
  if (!problem.ok()) {
    state.SkipWithError(problem.status().message().c_str());
    return;
  }
  auto planner = BuiltinPlanners().Create(planner_name);
  if (!planner.ok()) {
    state.SkipWithError(planner.status().message().c_str());
    return;
  }
  for (auto _ : state) {
    Result<PlanResult> result = (*planner)->Plan(*problem, PlanContext{});
    benchmark::DoNotOptimize(result);
  }
}

// Embedded profiles, default latency rule. Args: scenario number, copies.
void BM_ParvaEmbedded(benchmark::State& state) {
  const Scenario s =
      BundledScenario(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  BenchPlan(state, "parva", s, EmbeddedProfiles(), LatencyRule{});
}
BENCHMARK(BM_ParvaEmbedded)->ArgNames({"S", "copies"})->Apply(ScenariosOneToSixAndS5x10);

// ParvaGPU's measured profiles and SLO rows, artifact rule (--compat parva-artifact).
void BM_ParvaArtifact(benchmark::State& state) {
  const std::string data = TESSERA_SHARED_DATA_DIR;
  if (!std::filesystem::exists(data + "/parvagpu/prof_data")) {
    state.SkipWithError("../shared/data/parvagpu is absent");
    return;
  }
  static const Result<ProfileTable> profiles = LoadProfiles(data + "/parvagpu/prof_data");
  Result<Scenario> row =
      ImportParvaSloRow(data + "/parvagpu/SLO", static_cast<int>(state.range(0)));
  if (!profiles.ok() || !row.ok()) {
    state.SkipWithError("cannot load ParvaGPU data");
    return;
  }
  BenchPlan(state, "parva", ReplicateScenario(*row, static_cast<int>(state.range(1))), *profiles,
            ParvaArtifactRule());
}
BENCHMARK(BM_ParvaArtifact)->ArgNames({"row", "copies"})->Apply(ScenariosOneToSixAndS5x10);

}  // namespace
}  // namespace tessera

BENCHMARK_MAIN();
