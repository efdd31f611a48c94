#include "tessera/replay_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <utility>

#include "online/alibaba_trace.h"
#include "tessera/durations.h"
#include "tessera/gpu_catalog.h"
#include "tessera/util/input_limits.h"
#include "tessera/util/text_io.h"

namespace tessera {
namespace {

// The range of --optimum-time-limit, seconds per objective.
constexpr InputRange kOptimumTimeLimit{0.001, 3600.0};

Result<TraceShaping> ShapingFrom(const TraceRequest& trace) {
  TraceShaping s;
  s.max_hosts = trace.hosts;
  s.gpus_per_host = trace.gpus_per_host;
  s.max_vms = trace.max_pods;
  Result<Lifetime> lifetime = Lifetime::Parse(trace.lifetime);
  if (!lifetime.ok()) return lifetime.status().WithContext("--lifetime");
  s.lifetime = *lifetime;
  TESSERA_RETURN_IF_ERROR(s.Validate());
  return s;
}

Status CheckWithin(std::string_view flag, const InputRange& range, double value) {
  if (range.Contains(value)) return Status::Ok();
  return Status::InvalidArgument(std::string(flag) + ": " + OutOfRange(range, value));
}

}  // namespace

Result<VmTrace> LoadShapedTrace(const TraceRequest& request) {
  Result<const GpuModel*> gpu = FindMigGpu(request.gpu);
  if (!gpu.ok()) return gpu.status().WithContext("--gpu");
  TESSERA_ASSIGN_OR_RETURN(TraceShaping shaping, ShapingFrom(request));
  TESSERA_ASSIGN_OR_RETURN(VmTrace trace, LoadAlibabaTrace(request.nodes, request.pods, **gpu));
  return ShapeTrace(std::move(trace), shaping);
}

Result<PlacerOptions> PlacerOptionsFor(const ReplayRequest& request) {
  PlacerOptions o;
  TESSERA_RETURN_IF_ERROR(CheckWithin("--heavy-share", InputRange{0.0, 1.0}, request.heavy_share));
  TESSERA_RETURN_IF_ERROR(CheckWithin("--fair-factor", limits::kFairFactor, request.fair_factor));
  TESSERA_RETURN_IF_ERROR(
      CheckWithin("--optimum-time-limit", kOptimumTimeLimit, request.optimum_time_limit_s));
  o.heavy_share = request.heavy_share;
  o.fair_factor = request.fair_factor;
  TESSERA_ASSIGN_OR_RETURN(
      o.consolidate_every_s,
      CheckDuration("--consolidate-every", request.consolidate_every_s, kConsolidation));
  TESSERA_ASSIGN_OR_RETURN(o.mecc_window_s,
                           CheckDuration("--mecc-window", request.mecc_window_s, kMeccWindow));
  o.defragment = request.defragment;
  TESSERA_RETURN_IF_ERROR(o.Validate());
  return o;
}

// Consolidation runs every interval from the first arrival to the last event
// (arrival or departure): on a trace spanning centuries a minute would be
// billions of rounds.
Status CheckConsolidationRounds(const VmTrace& trace, double interval_s) {
  if (interval_s <= 0 || trace.vms.empty()) return Status::Ok();
  double last = 0;
  for (const VmRequest& vm : trace.vms) {
    last = std::max(last, vm.arrival_s);
    if (vm.departure_s != kNeverDeparts) last = std::max(last, vm.departure_s);
  }
  const double span = last - trace.vms.front().arrival_s;
  const double rounds = span / interval_s;
  if (rounds <= kMaxConsolidationRounds) return Status::Ok();
  return Status::InvalidArgument(fmt::format(
      "--consolidate-every: {} over the trace's {:.4g} days makes {:.3g} consolidation rounds; "
      "at most {:.3g}: give a longer interval or off",
      FormatDuration(interval_s), span / kDay, rounds, kMaxConsolidationRounds));
}

std::string DescribeTrace(const VmTrace& trace) {
  std::string out;
  for (const std::string& note : trace.notes) out += "  " + note + "\n";
  out += fmt::format("  replaying {} VMs on {} hosts with {} {} GPUs:", trace.vms.size(),
                     trace.hosts.size(), trace.TotalGpus(), trace.gpu->name);
  const std::vector<int> per_profile = RequestsPerProfile(trace);
  for (size_t p = 0; p < per_profile.size(); ++p) {
    if (per_profile[p] > 0)
      out += fmt::format(" {} {}", trace.gpu->profiles[p].name, per_profile[p]);
  }
  return out + "\n";
}

Result<ReplayInputs> LoadReplayInputs(const ReplayRequest& request) {
  TESSERA_ASSIGN_OR_RETURN(PlacerOptions options, PlacerOptionsFor(request));
  // An unknown policy is reported before the trace is read.
  if (!request.every_policy) {
    if (auto placer = BuiltinPlacers().Create(request.policy, options); !placer.ok()) {
      return placer.status().WithContext("--policy");
    }
  }
  TESSERA_ASSIGN_OR_RETURN(VmTrace trace, LoadShapedTrace(request.trace));
  TESSERA_RETURN_IF_ERROR(CheckConsolidationRounds(trace, options.consolidate_every_s));
  if (request.notes) {
    std::string described = DescribeTrace(trace);
    described.pop_back();  // the sink's note has no final newline
    request.notes("trace\n" + described);
  }
  return ReplayInputs{options, std::move(trace)};
}

Result<std::vector<ReplayReport>> ReplayPolicies(const VmTrace& trace,
                                                 const std::vector<std::string>& policies,
                                                 const PlacerOptions& options) {
  std::vector<ReplayReport> reports;
  for (const std::string& name : policies) {
    Result<std::unique_ptr<OnlinePlacer>> placer = BuiltinPlacers().Create(name, options);
    if (!placer.ok()) return placer.status().WithContext("--policy");
    TESSERA_ASSIGN_OR_RETURN(ReplayReport report, Replay(trace, **placer));
    reports.push_back(std::move(report));
  }
  return reports;
}

Result<ReplayOptimum> SolveOptimumFor(const VmTrace& trace, double time_limit_s) {
  OptimumOptions o;
  o.time_limit_s = time_limit_s;
  Result<ReplayOptimum> optimum = SolveReplayOptimum(trace, o);
  if (!optimum.ok()) return optimum.status().WithContext("--optimum");
  return optimum;
}

Result<ReplayRun> RunReplay(const ReplayRequest& request) {
  TESSERA_ASSIGN_OR_RETURN(ReplayInputs in, LoadReplayInputs(request));
  std::optional<ReplayOptimum> optimum;
  if (request.optimum) {
    TESSERA_ASSIGN_OR_RETURN(optimum, SolveOptimumFor(in.trace, request.optimum_time_limit_s));
  }
  const std::vector<std::string> policies =
      request.every_policy ? BuiltinPlacers().Names() : std::vector<std::string>{request.policy};
  TESSERA_ASSIGN_OR_RETURN(std::vector<ReplayReport> reports,
                           ReplayPolicies(in.trace, policies, in.options));
  return ReplayRun{std::move(in.trace), std::move(reports), std::move(optimum)};
}

}  // namespace tessera
