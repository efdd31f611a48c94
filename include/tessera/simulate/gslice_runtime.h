// GSLICE runtime: several inference services share one whole GPU through MPS,
// each as one MPS process limited to a share of the GPU's SMs (its "GPU%"),
// simulated request by request on a simulated clock (docs/gslice-runtime.md).
//
// What it models (GSLICE, Dhakal et al., SoCC'20, sections 3.2-3.3; iGniter's
// shadow process, Xu et al., IEEE TPDS, section 4.2):
//  * performance at a GPU% (share_latency_model.h): an approximation built
//    from MIG profiles, where an instance with c of the GPU's C compute slices
//    stands for an MPS process limited to c / C of the SMs;
//  * one FIFO queue per service; an idle process immediately starts a batch
//    of what is queued, at most its current maximum batch size;
//  * SLAB, self-learning adaptive batching: the maximum batch follows the
//    latency headroom after every batch;
//  * self-tuning GPU% (gslice_tuning.h: Algorithm 1, ComputeNewShare) every
//    tuning period, then a max-min fair allocation of the GPU
//    (MaxMinFairShares); a new GPU% takes effect after the shadow process has
//    loaded (reload delay), with a short switch-over downtime;
//  * iGniter's guard, the alternative: a pre-launched shadow process with a
//    few more percent of the GPU, switched to at once when the p99 misses;
//  * the paper's baselines (section 4): default MPS (no GPU% limit, no
//    batching), MPS + SLAB, static GPU% limits with SLAB, and Clipper (each
//    model alone on its own GPU, AIMD batching);
//  * contention between co-located processes (gslice_contention.h): SM
//    oversubscription and iGniter's L2 interference, from the neighbours'
//    GPU% and busy fractions, in every policy unless turned off;
//  * the knee-point initial GPU% (ShareLatencyModel::KneeShare).
// The workload it runs is gslice_workload.h's; its reports are rendered by
// gslice_report_format.h.
//
// Thread-safety: RunGslice is a pure function of its arguments.
#ifndef TESSERA_GSLICE_RUNTIME_H_
#define TESSERA_GSLICE_RUNTIME_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/planners/gslice_tuning.h"
#include "tessera/simulate/arrivals.h"
#include "tessera/simulate/gslice_workload.h"
#include "tessera/status.h"

namespace tessera {

// ---- Policies and options ---------------------------------------------------

enum class GslicePolicy {
  kStatic,        // the initial GPU% and the fixed maximum batch, nothing adapts
  kGslice,        // SLAB + self-tuning GPU% with shadow reloads
  kIgniterGuard,  // fixed GPU% and batch, plus iGniter's shadow with extra GPU%
  kDefaultMps,    // the paper's "default MPS": no GPU% limit (100% each), batch 1
  kMpsSlab,       // the paper's "MPS + SLAB" (M+S): no GPU% limit, SLAB
  kStaticSlab,    // the initial GPU% as a fixed MPS limit, SLAB
  kClipper,       // Clipper: each model alone on its own GPU, AIMD batching
};

// "static", "gslice", "igniter-guard", "default-mps", "mps-slab",
// "static-slab", "clipper".
std::string_view GslicePolicyName(GslicePolicy policy);
// The policy called `name`; InvalidArgument listing the names otherwise.
Result<GslicePolicy> ParseGslicePolicy(std::string_view name);

// Every setting of a run. Shares are fractions of the GPU's SMs (0.3 = 30%).
struct GsliceOptions {
  GslicePolicy policy = GslicePolicy::kGslice;
  // Arrivals stop after this many simulated seconds; the queues then drain.
  // Default: 30.
  double duration_s = 30;
  // Tuning period: reports, GPU% tuning and iGniter's p99 check run at its
  // end. Default: 1 (GSLICE's manager and iGniter's monitor both use 1 s).
  double period_s = 1;
  // Every service's GPU% at the start (gslice, static, static-slab,
  // igniter-guard), in (0, 1]; the services together must fit in the GPU.
  // GSLICE's default for an unprofiled model is 0.3. Default: none, i.e. each
  // model's knee point at `knee_batch` (the paper's "elastic demand"), scaled
  // down by the max-min fair allocation when the knees exceed the GPU.
  std::optional<double> initial_share;
  // The batch whose throughput-vs-GPU% curve gives the knee. Default: 1 (the
  // paper's Fig. 2 profiles batch 1).
  int knee_batch = 1;
  // Model contention between the processes on the GPU (gslice_contention.h):
  // off, each process runs at its GPU%'s solo latency. Default: true.
  bool contention = true;
  // The largest batch: SLAB's ceiling and starting point; the fixed maximum of
  // static and igniter-guard; the ceiling of Clipper's AIMD (which starts at
  // 1). Default: 32.
  int max_batch = 32;
  // Algorithm 1 keeps a GPU% when both |diffL%| and |diffT%| are below this
  // fraction. Default: 0.05 (the paper's 5%; TuningOptions' default).
  double tuning_threshold = TuningOptions{}.tuning_threshold;
  // A service's new GPU% is applied only if it differs from the current one
  // by more than this share of the GPU. Default: 0.05 (5 percentage points).
  double apply_threshold = 0.05;
  // Algorithm 1 never asks for less than this GPU%. Default: 0.05.
  double min_share = TuningOptions{}.min_share;
  // A decrease cuts at most this fraction of the current GPU% in one step
  // (Algorithm 1's changeFactor can exceed 1, which would ask for a negative
  // GPU%). In (0, 1). Default: 0.5.
  double max_decrease = TuningOptions{}.max_decrease;
  // When the demands leave part of the GPU unallocated, share it out in
  // proportion to the demands (the paper: "no IF obtains a share larger than
  // its demand, unless the GPU is underutilized"). Default: true.
  bool distribute_spare = true;
  // Time for a shadow process to load its model with the new GPU% while the
  // old process keeps serving. Default: 5 (the paper reports 2-15 s).
  double reload_delay_s = 5;
  // Switch-over: the service starts no batch for this long once its old
  // process has finished its batch. Default: 100e-6 (the paper: < 100 us).
  double switch_downtime_s = 100e-6;
  // gslice: a service is not retuned until this long after its last GPU%
  // change took effect (the paper's hold-down: "till a specified minimum time
  // (e.g., 10 sec.) has elapsed"). Default: 0 (the other rules suffice on
  // the Fig. 16 example; docs/gslice-runtime.md).
  double hold_down_s = 0;
  // igniter-guard: the shadow's extra GPU% over the original, capped by what
  // the GPU has left. Default: 0.10 (iGniter's 10%).
  double shadow_extra_share = 0.10;
  // Underprovisioned: this many successive batches of one request that each
  // miss the SLO. Default: 5 (the paper's "5 successive").
  int underprovision_batches = 5;
  std::uint64_t seed = 1;
  ArrivalKind arrivals = ArrivalKind::kPoisson;
  BurstShape burst;                                  // for kBursty
  std::map<std::string, std::vector<double>> trace;  // for kTrace: per service

  // InvalidArgument naming the first bad field: "initial_share: ...".
  Status Validate() const;
  // The settings Algorithm 1 reads.
  TuningOptions Tuning() const { return {tuning_threshold, min_share, max_decrease}; }
};

// ---- The run and its report ---------------------------------------------

// One service over one tuning period. Latencies and compliance are of the
// requests completed in the period (NaN when none was). Every p99 here and in
// GsliceServiceSummary is streamed: within QuantileHistogram::kRelativeError
// (0.049%) of the exact nearest-rank p99.
struct GsliceWindow {
  double share = 0;  // GPU% in effect at the period's end
  // The SM share the process got at the period's end after oversubscription,
  // and the factor its batches took for the neighbours' L2 traffic (1 and
  // `share` without contention).
  double effective_share = 0;
  double interference = 1;
  double busy = 0;  // fraction of the period the process ran a batch
  int max_batch = 0;
  long arrivals = 0;
  long completed = 0;
  double arrival_rps = 0;
  double throughput_rps = 0;  // completed / period
  double mean_ms = 0;
  double p99_ms = 0;
  double compliance = 0;  // share of completed requests within the SLO
};

struct GslicePeriod {
  double start_s = 0;
  double end_s = 0;
  std::vector<GsliceWindow> services;  // workload order
};

enum class GsliceEventKind {
  kShareRequested,    // the tuner asked for a new GPU%; its shadow starts loading
  kSwitchOver,        // the shadow took over: the new GPU% is in effect
  kUnderprovisioned,  // SLO missed by that many successive batches of one
};

// "share-requested", "switch-over", "underprovisioned".
std::string_view GsliceEventKindName(GsliceEventKind kind);

struct GsliceEvent {
  double time_s = 0;
  int service = 0;  // workload index
  GsliceEventKind kind = GsliceEventKind::kShareRequested;
  double from_share = 0;
  double to_share = 0;
  std::string note;  // why, in words
};

struct GsliceServiceSummary {
  std::string name;
  std::string model;
  double rate_rps = 0;
  double slo_ms = 0;
  long requests = 0;      // arrived (every one is served: the run drains)
  long violations = 0;    // requests that missed the SLO
  double compliance = 0;  // share of requests within the SLO
  // Requests served while requests arrived, per second of --duration.
  double throughput_rps = 0;
  double mean_ms = 0;
  double p99_ms = 0;
  double knee_share = 0;  // the model's knee point at knee_batch
  double initial_share = 0;
  double final_share = 0;
  int final_max_batch = 0;
  int switch_overs = 0;
  int underprovisioned = 0;  // events
};

struct GsliceReport {
  GslicePolicy policy = GslicePolicy::kGslice;
  std::string gpu;
  double duration_s = 0;
  double period_s = 0;
  std::uint64_t seed = 0;
  bool contention = true;
  // "knee", "fixed" (--initial-share) or "whole-gpu" (default-mps, mps-slab,
  // clipper).
  std::string initial_shares;
  int gpus = 1;               // clipper: one per service
  double throughput_rps = 0;  // the services' throughput_rps summed
  long violations = 0;        // the services' summed
  std::vector<GsliceServiceSummary> services;
  std::vector<GslicePeriod> periods;
  std::vector<GsliceEvent> events;  // by time
  double last_switch_s = -1;        // the last switch-over, -1 if none
};

// Runs the workload under `options`. InvalidArgument for invalid options, no
// service, services whose fixed initial_share together exceeds the GPU (a
// policy with limits), or (kTrace) a service without a trace.
Result<GsliceReport> RunGslice(const GsliceWorkload& workload, const GsliceOptions& options);

}  // namespace tessera

#endif  // TESSERA_GSLICE_RUNTIME_H_
