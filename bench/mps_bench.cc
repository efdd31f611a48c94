// MPS planners' hot paths: iGniter's placement of 10 to 1,000 workloads on
// V100s (the paper's Fig. 21 scale: 4.61 s for 1,000), FFD+ and GSLICE+ on
// the same, with the GPUs each uses. Skipped with a message when
// ../shared/data is absent (the coefficients come from it).
#include <benchmark/benchmark.h>

#include <memory>
#include <random>
#include <string>

#include "planners/igniter/igniter_planner.h"
#include "tessera/plan/metrics.h"
#include "tessera/planner.h"
#include "tessera/problem.h"

namespace tessera {
namespace {

const std::string kCoefficients =
    std::string(TESSERA_SHARED_DATA_DIR) + "/igniter/derived/fitted_coefficients_v100.json";

// `n` workloads of the four models with SLOs and rates drawn around the
// twelve of the paper's evaluation (seeded: the same every run).
Scenario RandomWorkloads(int n) {
  std::mt19937_64 rng(2023);
  const char* models[] = {"alexnet", "resnet50", "vgg19", "ssd"};
  std::uniform_real_distribution<double> slo(10, 60);
  std::uniform_real_distribution<double> rate(50, 1000);
  Scenario s;
  s.source = "bench";
  for (int i = 0; i < n; ++i) {
    s.services.push_back({"W" + std::to_string(i + 1), models[rng() % 4], rate(rng), slo(rng), 0});
  }
  return s;
}

void RunMps(benchmark::State& state, std::unique_ptr<Planner> (*make)()) {
  Result<MpsCoefficients> c = LoadMpsCoefficients(kCoefficients);
  if (!c.ok()) {
    state.SkipWithError("../shared/data/igniter is absent");
    return;
  }
  Result<Problem> problem = Problem::BuildMps(RandomWorkloads(static_cast<int>(state.range(0))),
                                              {*FindGpu("v100-16gb"), 3.06, 0}, *c, LatencyRule{});
  if (!problem.ok()) {
    state.SkipWithError(problem.status().message().c_str());
    return;
  }
  const std::unique_ptr<Planner> planner = make();
  int gpus = 0;
  for (auto _ : state) {
    Result<PlanResult> r = planner->Plan(*problem, {});
    benchmark::DoNotOptimize(r);
    gpus = static_cast<int>(std::get<MpsGpus>(r->gpus).size());
  }
  state.counters["gpus"] = gpus;
  state.counters["bound"] = StrongestBound(*problem).gpus;
}

void BM_IgniterPlace(benchmark::State& state) { RunMps(state, NewIgniterPlanner); }
void BM_FfdPlusPlace(benchmark::State& state) { RunMps(state, NewFfdPlusPlanner); }
void BM_GslicePlusPlace(benchmark::State& state) { RunMps(state, NewGslicePlusPlanner); }

BENCHMARK(BM_IgniterPlace)->Arg(10)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FfdPlusPlace)->Arg(1000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GslicePlusPlace)->Arg(1000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tessera
