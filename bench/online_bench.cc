// Benchmarks of online placement: replaying the Alibaba GPU trace 2023
// (8,063 VMs) through each policy, as recorded (6,212 GPUs) and stressed
// (one GPU per host, VMs never leave), plus every policy back to back
// (BM_ReplayAllPolicies: the figure `tessera replay --compare` needs).
// Counters: accepted share and active-hardware AUC (percent-hours).
// Skipped with a message when ../shared/data is absent.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <optional>
#include <string>

#include "online/alibaba_trace.h"
#include "tessera/online/online_placer.h"
#include "tessera/online/replay.h"

namespace tessera {
namespace {

const std::string kTraceDir = std::string(TESSERA_SHARED_DATA_DIR) + "/alibaba-gpu-2023/csv/";

// The trace, shaped; nullopt when the data is absent.
std::optional<VmTrace> LoadTrace(bool stressed) {
  Result<VmTrace> trace =
      LoadAlibabaTrace(kTraceDir + "openb_node_list_gpu_node.csv",
                       kTraceDir + "openb_pod_list_default.csv", **FindGpu("a100-40gb"));
  if (!trace.ok()) return std::nullopt;
  TraceShaping shaping;
  if (stressed) {
    shaping.gpus_per_host = 1;
    shaping.lifetime.mode = Lifetime::Mode::kNone;
  }
  Result<VmTrace> shaped = ShapeTrace(std::move(*trace), shaping);
  if (!shaped.ok()) return std::nullopt;
  return std::move(*shaped);
}

const std::optional<VmTrace>& Trace(bool stressed) {
  static const std::optional<VmTrace> recorded = LoadTrace(false);
  static const std::optional<VmTrace> busy = LoadTrace(true);
  return stressed ? busy : recorded;
}

// Replays `policy` (every policy, back to back, when empty) per iteration.
void BenchReplay(benchmark::State& state, bool stressed, const std::string& policy) {
  const std::optional<VmTrace>& trace = Trace(stressed);
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
  for (bool stressed : {false, true}) {
    const std::string shape = stressed ? "Stressed" : "Recorded";
    for (const std::string& policy : BuiltinPlacers().Names()) {
      benchmark::RegisterBenchmark(
          ("BM_Replay" + shape + "/" + policy).c_str(),
          [stressed, policy](benchmark::State& s) { BenchReplay(s, stressed, policy); })
          ->Unit(benchmark::kMillisecond);
    }
    benchmark::RegisterBenchmark(("BM_ReplayAllPolicies/" + shape).c_str(),
                                 [stressed](benchmark::State& s) { BenchReplay(s, stressed, ""); })
        ->Unit(benchmark::kMillisecond);
  }
}

const bool registered = (RegisterAll(), true);

}  // namespace
}  // namespace tessera
