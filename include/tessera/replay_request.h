// One replay of online MIG placement as every front-end asks for it
// (`tessera replay`, the Python package's replay()): an Alibaba-format node
// and pod list loaded and shaped by the stress knobs, the placement options
// checked, every policy asked for replayed, and GRMU's offline optimum solved
// when asked. The CLI's --sweep is built from the same pieces.
//
// Errors name the input by its command-line spelling ("--policy",
// "--consolidate-every"), or the file's line and field.
//
// Thread-safety: functions of their arguments; they read the files named.
#ifndef TESSERA_REPLAY_REQUEST_H_
#define TESSERA_REPLAY_REQUEST_H_

#include <optional>
#include <string>
#include <vector>

#include "tessera/online/online_placer.h"
#include "tessera/online/replay.h"
#include "tessera/online/replay_optimum.h"
#include "tessera/online/vm_trace.h"
#include "tessera/problem_inputs.h"
#include "tessera/status.h"

namespace tessera {

// A recorded trace and the knobs that replay it against a smaller or busier
// cluster.
struct TraceRequest {
  std::string nodes;                 // node list CSV (sn,cpu_milli,memory_mib,gpu,model)
  std::string pods;                  // pod list CSV
  std::string gpu = "a100-40gb";     // the MIG GPU model every trace GPU becomes
  std::optional<int> hosts;          // keep only the first N hosts
  std::optional<int> gpus_per_host;  // every host gets N GPUs
  std::optional<int> max_pods;       // keep only the first N pods
  std::string lifetime = "trace";    // trace|none|scale:K
};

struct ReplayRequest {
  TraceRequest trace;
  std::string policy = "grmu";     // one of BuiltinPlacers()
  bool every_policy = false;       // replay every policy instead
  double heavy_share = 0.3;        // grmu: the heavy basket's share of the GPUs
  double fair_factor = 0.55;       // fair, steer: the full-GPU cap's factor
  double consolidate_every_s = 0;  // grmu, fair: 0 = never
  bool defragment = true;          // grmu, fair, lfr, steer
  double mecc_window_s = 86400;    // mecc: look-back window of arrivals
  bool optimum = false;            // also solve GRMU's ILP offline
  double optimum_time_limit_s = 60;
  // Receives what the loader did to the trace ("trace" and a line per
  // step); empty: dropped.
  NoteSink notes;
};

struct ReplayRun {
  VmTrace trace;
  std::vector<ReplayReport> reports;     // one per policy replayed
  std::optional<ReplayOptimum> optimum;  // when asked
};

// The trace as loaded (LoadAlibabaTrace) and shaped (ShapeTrace).
Result<VmTrace> LoadShapedTrace(const TraceRequest& trace);

// The placement options of `request`, checked.
Result<PlacerOptions> PlacerOptionsFor(const ReplayRequest& request);

// Consolidation runs every interval over the trace's span: InvalidArgument
// naming --consolidate-every past kMaxConsolidationRounds rounds.
Status CheckConsolidationRounds(const VmTrace& trace, double interval_s);

// What the loader and the stress knobs did, and the requests per profile:
// indented lines, each ending in a newline.
std::string DescribeTrace(const VmTrace& trace);

// The options checked, the policy known, the trace loaded and shaped, its
// consolidation rounds checked; the trace's description to the notes.
struct ReplayInputs {
  PlacerOptions options;
  VmTrace trace;
};
Result<ReplayInputs> LoadReplayInputs(const ReplayRequest& request);

// `trace` replayed by every policy of `policies`, in order.
Result<std::vector<ReplayReport>> ReplayPolicies(const VmTrace& trace,
                                                 const std::vector<std::string>& policies,
                                                 const PlacerOptions& options);

// GRMU's ILP over `trace` (at most 40 VMs); errors name --optimum.
Result<ReplayOptimum> SolveOptimumFor(const VmTrace& trace, double time_limit_s);

// The whole replay `request` asks for.
Result<ReplayRun> RunReplay(const ReplayRequest& request);

}  // namespace tessera

#endif  // TESSERA_REPLAY_REQUEST_H_
