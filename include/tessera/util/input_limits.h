// Input limits: the range of every number Tessera reads from a file or a
// flag, in one place. Every parser (scenario YAML, ParvaGPU SLO rows, profile
// CSV and ParvaGPU prof_data, deployment JSON, iGniter coefficients JSON,
// gpu-lets tables, the Alibaba VM trace, the workload and trace generators'
// options) and every CLI flag taking such a number checks against these, and
// the "Input limits" table of docs/cli.md lists them.
//
// The limits lie far beyond any real deployment (a service of ten million
// requests per second, a one-hour SLO, batches of 4096, 48 MPS clients), yet
// keep every computation finite and every planner bounded in time and
// memory on a small machine: a planner's loops scale with a service's rate
// over its segments' throughput, so that ratio is bounded too
// (kSegmentsPerService, kSegmentsPerProblem, checked by Problem::Build*).
//
// Errors: none here. InputRange::Contains is a predicate (false for NaN and
// infinities) and OutOfRange words the "<what>" of an error, e.g. "must be a
// finite number in (0, 1e+07], got '1e308'"; each parser prefixes it with its
// file, line and field (FieldError), each flag with the flag's name.
//
// Thread-safety: constants and pure functions.
#ifndef TESSERA_INPUT_LIMITS_H_
#define TESSERA_INPUT_LIMITS_H_

#include <string>
#include <string_view>

namespace tessera {

// A range of finite numbers: [min, max], or (min, max] when `min_open`; whole
// numbers only when `integer`.
struct InputRange {
  double min = 0;
  double max = 0;
  bool min_open = false;
  bool integer = false;

  // True iff `value` is finite, within the range and (if `integer`) whole.
  bool Contains(double value) const;
  // "a finite number in (0, 1e+07]", "an integer in [1, 4096]".
  std::string Describe() const;
};

// "must be <range.Describe()>, got <got>"; `got` is shown as given (quote it
// with QuoteForMessage when it is raw input).
std::string OutOfRange(const InputRange& range, std::string_view got);
// The same for a number already read ("got 1e+308", "got nan").
std::string OutOfRange(const InputRange& range, double got);

namespace limits {

// ---- Scenarios: YAML, ParvaGPU SLO rows, generated workloads, --replicate --

// Services in one scenario (after --replicate).
inline constexpr InputRange kServices{1, 100'000, false, true};
// A service's request rate (requests per second).
inline constexpr InputRange kRateRps{0, 1e7, true};
// A service's latency SLO: 10 microseconds to one hour (ms).
inline constexpr InputRange kSloMs{0.01, 3.6e6};
// A GPU model's hourly price in a scenario's pool (USD): prices span at
// most 8 orders of magnitude, which the exact planner's solver resolves.
inline constexpr InputRange kPricePerHour{0.001, 1e5};
// The hourly price of --price (MPS planners); 0 = free.
inline constexpr InputRange kPriceFlag{0, 1e5};
// A pool entry's max_count (GPUs of that model).
inline constexpr InputRange kMaxCount{1, 1e6, false, true};
// --replicate: copies of every service.
inline constexpr InputRange kReplicate{1, 10'000, false, true};
// --latency-factor: the share of the SLO a batch may take.
inline constexpr InputRange kLatencyFactor{0, 1, true};
// --rate-margin: plan for (1 + m) x every rate.
inline constexpr InputRange kRateMargin{0, 1};
// --capacity-quantile: the share of requests the queueing and pooled
// capacity rules keep within the SLO at a segment's counted load.
inline constexpr InputRange kCapacityQuantile{0.9, 0.99999};
// The pooled capacity rule's batch-latency coefficient of variation
// (--capacity-rule pooled:CV).
inline constexpr InputRange kBatchCv{0, 0.5};

// ---- Profiles: Tessera CSV, ParvaGPU prof_data, deployment JSON ----------

// Batch size of a profiled (or planned) segment or process.
inline constexpr InputRange kBatch{1, 4096, false, true};
// MPS processes of one segment (the MPS client limit of every GPU).
inline constexpr InputRange kProcs{1, 48, false, true};
// A segment's (or one process's) throughput, requests per second.
inline constexpr InputRange kThroughputRps{1e-3, 1e8};
// A batch's latency (ms): one microsecond to one hour; p99_ms too.
inline constexpr InputRange kLatencyMs{1e-3, 3.6e6};
// Peak memory of a segment (GiB).
inline constexpr InputRange kMemGib{0, 1e4, true};
// ParvaGPU's `Mig instance`: compute slices of a MIG instance.
inline constexpr InputRange kComputeSlices{1, 8, false, true};

// ---- Plan size: what a problem may ask of the planners -------------------

// Segments one service may need: for each MIG profile that can serve it,
// its rate over the best capacity of that profile, rounded up. A planner
// that keeps to one profile places that many.
inline constexpr double kSegmentsPerService = 100'000;
// The same summed over a scenario's services: a bound on memory. Planning
// takes about 1.1 KB of peak memory per segment of this count (measured with
// the default planner, parva above 300 services: `gen --preset normal-1`
// with 10,000 services, 674,638 segments, peaked at 0.79 GB in 3.7 s; with
// 25,000, 1.69 million, at 1.75 GB in 7.1 s; exact with a 20 s limit peaked
// at 0.65 and 1.74 GB and returned its best plan and bound), so 3.5 million
// segments keep a plan within about 4 GB. Time is each planner's own limit
// (--time-limit).
inline constexpr double kSegmentsPerProblem = 3'500'000;
// Peak bytes of planning per segment of kSegmentsPerProblem's count, as
// measured above; messages say what a scenario would take.
inline constexpr double kPlanBytesPerSegment = 1'100;
// MPS planners: whole GPUs one service may need at its largest batch.
inline constexpr double kMpsGpusPerService = 100'000;

// ---- iGniter coefficients JSON -------------------------------------------

// F (MHz), P and p_idle (W).
inline constexpr InputRange kFrequencyMhz{0, 1e5, true};
inline constexpr InputRange kPowerW{0, 1e5, true};
inline constexpr InputRange kIdlePowerW{0, 1e5};
// unit: the MPS resource step (% of the SMs).
inline constexpr InputRange kUnitPct{0, 100, true};
// B_pcie (bytes per ms).
inline constexpr InputRange kPcieBytesPerMs{0, 1e15, true};
// n_k: kernels per inference.
inline constexpr InputRange kKernels{1, 1e6, false, true};
// k_sch_ms: scheduling time per batch (ms).
inline constexpr InputRange kSchedMs{0, 3.6e6};
// d_load, d_feedback: bytes per request.
inline constexpr InputRange kRequestBytes{0, 1e12};
// Every other coefficient (k1..k5, alpha_cache, power_coef, cache_coef,
// alpha_f, alpha_sch, beta_sch): any sign.
inline constexpr InputRange kCoefficient{-1e9, 1e9};

// ---- gpu-lets tables (batch, latency and throughput: as profiles) --------

// A partition's share of the GPU (%, whole).
inline constexpr InputRange kResourcePct{1, 100, false, true};
// L2 and DRAM utilisation (% of peak).
inline constexpr InputRange kUtilisationPct{0, 100};

// ---- Serving simulation ----------------------------------------------------

// simulate --variability lognormal:CV: the coefficient of variation of batch
// execution times (keeps CV^2 and its logarithm finite).
inline constexpr InputRange kVariabilityCv{0, 100, true};

// ---- VM traces: Alibaba node and pod lists, synthetic traces, replay -----

// Hosts of a trace, and GPUs in all (after shaping).
inline constexpr InputRange kHosts{1, 1'000'000, false, true};
inline constexpr InputRange kClusterGpus{1, 1'000'000, false, true};
// GPUs of one host.
inline constexpr InputRange kGpusPerHost{0, 65'536, false, true};
// CPU (thousandths of a core) and RAM (MiB) of a host or a VM.
inline constexpr InputRange kCpuMilli{0, 1e9};
inline constexpr InputRange kMemoryMib{0, 1e12};
// GPUs a pod asks for (num_gpu), and thousandths of each (gpu_milli).
inline constexpr InputRange kPodGpus{0, 65'536, false, true};
inline constexpr InputRange kGpuMilli{0, 1000};
// Creation and deletion times (s): up to 317 years after the trace's zero.
inline constexpr InputRange kTraceTimeS{0, 1e10};
// replay --mecc-window: MECC's look-back window (s), a millisecond to the
// span of any trace.
inline constexpr InputRange kMeccWindowS{1e-3, 1e10};
// replay/serve --fair-factor: the share of the full-GPU requests' demand
// share that fair's heavy basket may hold.
inline constexpr InputRange kFairFactor{0, 1, true};

// ---- Transitions: transition --spare-gpus, transition JSON ---------------

// Spare GPUs a transition may use beyond the larger of its two plans, and
// the cluster GPU indices a transition names.
inline constexpr InputRange kSpareGpus{0, 100'000, false, true};
inline constexpr InputRange kClusterGpuIndex{0, 1'000'000, false, true};
// plan --max-extra-gpus: GPUs an incremental re-plan may use beyond the
// plan from scratch.
inline constexpr InputRange kMaxExtraGpus{0, 100'000, false, true};
// plan --repack-gpus: the least-filled current GPUs a re-plan repacks.
inline constexpr InputRange kRepackGpus{0, 100'000, false, true};

// ---- Deployment artifacts: deploy's flags, the NodePlan JSON --------------

// GPUs of one node (deploy --gpus-per-node, a NodePlan's gpus_per_node): 16
// keeps every port of the ports rule (node_plan.h) within 65535 from a
// base port of 20000.
inline constexpr InputRange kGpusPerNode{1, 16, false, true};
// A TCP port: deploy --base-port, a NodePlan's base_port and each process's
// ports (the ports rule must also keep the highest one within range).
inline constexpr InputRange kPort{1, 65535, false, true};
// A NodePlan's node_index.
inline constexpr InputRange kNodeIndex{0, 1'000'000, false, true};
// A serving process's CUDA_MPS_ACTIVE_THREAD_PERCENTAGE.
inline constexpr InputRange kThreadPercentage{1, 100, false, true};

}  // namespace limits
}  // namespace tessera

#endif  // TESSERA_INPUT_LIMITS_H_
