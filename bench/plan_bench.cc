// Benchmarks of the planners' hot path: plan_ms (Problem -> PlanResult,
// files excluded) on ParvaGPU's scenarios S1-S6 and S5 replicated 10 times
// (110 services), on the embedded profiles and, when ../shared/data is
// present, on ParvaGPU's measured A100 profiles under its artifact's rule.
// The exact planner also runs on 1,000 generated services; its benchmarks
// report the GPUs, the proven bound and their gap as counters. Also the
// inputs: the synthesis of the embedded profiles (DefaultProfiles) and the
// parse of a large scenario YAML.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "tessera/gpu_catalog.h"
#include "tessera/plan/plan.h"
#include "tessera/profile/profile_synth.h"
#include "tessera/profile_io.h"
#include "tessera/scenario.h"
#include "tessera/workload/workload_gen.h"

namespace tessera {
namespace {

const GpuModel& A100() { return **FindGpu("a100-80gb"); }

const ProfileTable& EmbeddedProfiles() {
  static const ProfileTable table = DefaultProfiles(A100());
  return table;
}

// DefaultProfiles(a100-80gb): the embedded profiles every run without
// --profiles synthesizes (timed here, never asserted in a test).
void BM_DefaultProfiles(benchmark::State& state) {
  size_t entries = 0;
  for (auto _ : state) {
    const ProfileTable table = DefaultProfiles(A100());
    entries = table.size();
    benchmark::DoNotOptimize(entries);
  }
  state.counters["entries"] = static_cast<double>(entries);
}
BENCHMARK(BM_DefaultProfiles)->Unit(benchmark::kMillisecond);

// ParseScenarioYaml on a generated scenario of N services (one flow mapping
// per line, as `tessera gen` writes it): the file is parsed once.
void BM_ParseScenarioYaml(benchmark::State& state) {
  WorkloadGenOptions options;
  options.services = static_cast<int>(state.range(0));
  Result<Scenario> generated = GenerateWorkload(options);
  if (!generated.ok()) {
    state.SkipWithError(generated.status().message().c_str());
    return;
  }
  const std::string text = FormatScenarioYaml(*generated);
  size_t services = 0;
  for (auto _ : state) {
    Result<Scenario> parsed = ParseScenarioYaml(text, "bench.yaml");
    services = parsed.ok() ? parsed->services.size() : 0;
    benchmark::DoNotOptimize(services);
  }
  state.counters["MB"] = static_cast<double>(text.size()) / 1e6;
  state.counters["services"] = static_cast<double>(services);
}
BENCHMARK(BM_ParseScenarioYaml)
    ->ArgName("services")
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);

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

// ParvaGPU's measured profiles and SLO row `row`, or nullopt (with the
// benchmark skipped) when ../shared/data is absent.
std::optional<Scenario> ArtifactRow(benchmark::State& state, const ProfileTable** profiles,
                                    int row) {
  const std::string data = TESSERA_SHARED_DATA_DIR;
  if (!std::filesystem::exists(data + "/parvagpu/prof_data")) {
    state.SkipWithError("../shared/data/parvagpu is absent");
    return std::nullopt;
  }
  static const Result<ProfileTable> table = LoadProfiles(data + "/parvagpu/prof_data");
  Result<Scenario> scenario = ImportParvaSloRow(data + "/parvagpu/SLO", row);
  if (!table.ok() || !scenario.ok()) {
    state.SkipWithError("cannot load ParvaGPU data");
    return std::nullopt;
  }
  *profiles = &*table;
  return *scenario;
}

// ParvaGPU's measured profiles and SLO rows, artifact rule (--compat parva-artifact).
void BM_ParvaArtifact(benchmark::State& state) {
  const ProfileTable* profiles = nullptr;
  const std::optional<Scenario> row =
      ArtifactRow(state, &profiles, static_cast<int>(state.range(0)));
  if (!row) return;
  BenchPlan(state, "parva", ReplicateScenario(*row, static_cast<int>(state.range(1))), *profiles,
            ParvaArtifactRule());
}
BENCHMARK(BM_ParvaArtifact)->ArgNames({"row", "copies"})->Apply(ScenariosOneToSixAndS5x10);

// Reports `gpus`, the proven lower `bound` and `gap` = gpus / bound - 1 of
// the exact planner's `result`; false (the benchmark skipped) without one.
bool ReportProof(benchmark::State& state, const Result<PlanResult>& result) {
  if (!result.ok() || !result->proof) {
    state.SkipWithError(result.ok() ? "no proof" : result.status().message().c_str());
    return false;
  }
  const auto gpus = std::count_if(result->mig().begin(), result->mig().end(),
                                  [](const auto& segments) { return !segments.empty(); });
  state.counters["gpus"] = static_cast<double>(gpus);
  state.counters["bound"] = result->proof->bound;
  state.counters["gap"] = result->proof->bound > 0 ? gpus / result->proof->bound - 1 : 0;
  return true;
}

// Times the exact planner like BenchPlan and reports, from the last run,
// its GPUs, bound and gap (ReportProof).
void BenchExact(benchmark::State& state, const Scenario& scenario, const ProfileTable& profiles,
                const PlanContext& context) {
  Result<Problem> problem = Problem::Build(scenario, A100(), profiles, ParvaArtifactRule());
  auto planner = BuiltinPlanners().Create("exact");
  if (!problem.ok() || !planner.ok()) {
    state.SkipWithError("cannot build the exact planner's problem");
    return;
  }
  Result<PlanResult> result = Status::Internal("not run");
  for (auto _ : state) {
    result = (*planner)->Plan(*problem, context);
    benchmark::DoNotOptimize(result);
  }
  ReportProof(state, result);
}

// The exact planner on ParvaGPU's data, artifact rule, its default time
// limit (10 s). Args: row, copies.
void BM_ExactArtifact(benchmark::State& state) {
  const ProfileTable* profiles = nullptr;
  const std::optional<Scenario> row =
      ArtifactRow(state, &profiles, static_cast<int>(state.range(0)));
  if (!row) return;
  BenchExact(state, ReplicateScenario(*row, static_cast<int>(state.range(1))), *profiles, {});
}
BENCHMARK(BM_ExactArtifact)
    ->ArgNames({"row", "copies"})
    ->Apply(ScenariosOneToSixAndS5x10)
    ->Unit(benchmark::kMillisecond);

// `count` services cycling through the 11 models of S5 (row 5) with S5's
// SLOs and rates drawn uniformly in [0.3, 1.7] x S5's rate of the model.
// Seeded: every run plans the same scenario.
Scenario GeneratedServices(const Scenario& s5, int count) {
  std::mt19937_64 rng(20241117);
  std::uniform_real_distribution<double> scale(0.3, 1.7);
  Scenario out;
  out.name = std::to_string(count) + " services";
  out.gpu = s5.gpu;
  for (int i = 0; i < count; ++i) {
    Service svc = s5.services[i % s5.services.size()];
    svc.name += "#" + std::to_string(i);
    svc.rate_rps *= scale(rng);
    out.services.push_back(std::move(svc));
  }
  return out;
}

// The exact planner on 1,000 generated services with an 8 s time limit.
void BM_ExactGenerated(benchmark::State& state) {
  const ProfileTable* profiles = nullptr;
  const std::optional<Scenario> s5 = ArtifactRow(state, &profiles, 5);
  if (!s5) return;
  BenchExact(state, GeneratedServices(*s5, static_cast<int>(state.range(0))), *profiles,
             PlanContext{.time_limit_s = 8});
}
BENCHMARK(BM_ExactGenerated)->ArgName("services")->Arg(1000)->Unit(benchmark::kMillisecond);

// The exact planner against its time limit at scale, on the embedded
// profiles and the default rule: `tessera gen --services N --rates
// normal:1500,400` (seed 1), N = 3,000 and 10,000, with a limit of 2 s and
// 5 s. Reports the limit, overrun = wall / limit - 1, and the plan's GPUs,
// proven bound and gap. Args: services, limit in seconds.
void BM_ExactTimeLimit(benchmark::State& state) {
  WorkloadGenOptions options;
  options.services = static_cast<int>(state.range(0));
  options.rates = NormalRates{1500, 400};
  Result<Scenario> scenario = GenerateWorkload(options);
  if (!scenario.ok()) {
    state.SkipWithError(scenario.status().message().c_str());
    return;
  }
  const double limit_s = static_cast<double>(state.range(1));
  Result<Problem> problem = Problem::Build(*scenario, A100(), EmbeddedProfiles(), LatencyRule{});
  auto planner = BuiltinPlanners().Create("exact");
  if (!problem.ok() || !planner.ok()) {
    state.SkipWithError("cannot build the exact planner's problem");
    return;
  }
  Result<PlanResult> result = Status::Internal("not run");
  double wall_s = 0;
  for (auto _ : state) {
    const double start = SystemClock().NowMs();
    result = (*planner)->Plan(*problem, PlanContext{.time_limit_s = limit_s});
    wall_s = (SystemClock().NowMs() - start) / 1000;
    benchmark::DoNotOptimize(result);
  }
  if (!ReportProof(state, result)) return;
  state.counters["limit_ms"] = limit_s * 1000;
  state.counters["overrun"] = wall_s / limit_s - 1;
}
BENCHMARK(BM_ExactTimeLimit)
    ->ArgNames({"services", "limit_s"})
    ->Args({3000, 2})
    ->Args({10000, 5})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tessera

BENCHMARK_MAIN();
