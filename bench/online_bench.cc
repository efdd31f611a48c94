// Benchmarks of online placement: replaying the Alibaba GPU trace 2023
// (8,063 VMs) through each policy, as recorded (6,212 GPUs), stressed (one
// GPU per host, VMs never leave) and with departures (100 single-GPU hosts,
// lifetimes x 10), plus every policy back to back (BM_ReplayAllPolicies: the
// figure `tessera replay --compare` needs).
// Counters: accepted share and active-hardware AUC (percent-hours).
// Skipped with a message when ../shared/data is absent.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "online/alibaba_trace.h"
#include "tessera/online/online_placer.h"
#include "tessera/online/replay.h"

namespace tessera {
namespace {

const std::string kTraceDir = std::string(TESSERA_SHARED_DATA_DIR) + "/alibaba-gpu-2023/csv/";

enum class Shape { kRecorded, kStressed, kDepartures };

// The trace, shaped; nullopt when the data is absent.
std::optional<VmTrace> LoadTrace(Shape shape) {
  Result<VmTrace> trace =
      LoadAlibabaTrace(kTraceDir + "openb_node_list_gpu_node.csv",
                       kTraceDir + "openb_pod_list_default.csv", **FindGpu("a100-40gb"));
  if (!trace.ok()) return std::nullopt;
  TraceShaping shaping;
  if (shape != Shape::kRecorded) shaping.gpus_per_host = 1;
  if (shape == Shape::kStressed) shaping.lifetime.mode = Lifetime::Mode::kNone;
  if (shape == Shape::kDepartures) {
    shaping.max_hosts = 100;
    shaping.lifetime = Lifetime::Parse("scale:10").value();
  }
  Result<VmTrace> shaped = ShapeTrace(std::move(*trace), shaping);
  if (!shaped.ok()) return std::nullopt;
  return std::move(*shaped);
}

const std::optional<VmTrace>& Trace(Shape shape) {
  static const std::optional<VmTrace> recorded = LoadTrace(Shape::kRecorded);
  static const std::optional<VmTrace> busy = LoadTrace(Shape::kStressed);
  static const std::optional<VmTrace> departing = LoadTrace(Shape::kDepartures);
  if (shape == Shape::kRecorded) return recorded;
  return shape == Shape::kStressed ? busy : departing;
}

// Replays `policy` (every policy, back to back, when empty) per iteration.
void BenchReplay(benchmark::State& state, Shape shape, const std::string& policy) {
  const std::optional<VmTrace>& trace = Trace(shape);
  if (!trace) {
    state.SkipWithError("../shared/data/alibaba-gpu-2023 is absent");
    return;
  }
  const std::vector<std::string> policies =
      policy.empty() ? BuiltinPlacers().Names() : std::vector<std::string>{policy};
  ReplayReport last;
  for (auto _ : state) {
    for (const std::string& name : policies) {
      auto placer = BuiltinPlacers().Create(name, PlacerOptions{}).value();
      last = Replay(*trace, *placer).value();
    }
  }
  state.counters["acceptance"] = last.acceptance;
  // The lowest acceptance of any profile: a policy that starves one shows it.
  double worst = 1;
  for (const ProfileTally& p : last.per_profile) {
    worst = std::min(worst, static_cast<double>(p.accepted) / p.requests);
  }
  state.counters["worst_profile"] = worst;
  state.counters["hw_auc"] = last.active_hw_auc;
}

void RegisterAll() {
  const std::pair<Shape, std::string> shapes[] = {{Shape::kRecorded, "Recorded"},
                                                  {Shape::kStressed, "Stressed"},
                                                  {Shape::kDepartures, "Departures"}};
  for (const auto& entry : shapes) {
    const Shape shape = entry.first;
    for (const std::string& policy : BuiltinPlacers().Names()) {
      benchmark::RegisterBenchmark(
          ("BM_Replay" + entry.second + "/" + policy).c_str(),
          [shape, policy](benchmark::State& s) { BenchReplay(s, shape, policy); })
          ->Unit(benchmark::kMillisecond);
    }
    benchmark::RegisterBenchmark(("BM_ReplayAllPolicies/" + entry.second).c_str(),
                                 [shape](benchmark::State& s) { BenchReplay(s, shape, ""); })
        ->Unit(benchmark::kMillisecond);
  }
}

const bool registered = (RegisterAll(), true);

}  // namespace
}  // namespace tessera
