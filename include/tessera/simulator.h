// Simulator: a discrete-event model of serving a Deployment, request by
// request, to check that its services meet their SLOs at the tail.
//
// Model (docs/serving-simulator.md):
//  * each service's requests arrive by its ArrivalStream (arrivals.h) during
//    `duration_s`; the run then drains, so every request gets a latency;
//  * a router per service sends each request to one MPS process of one of
//    its segments, by the router of the plan's LatencyRule (or SimOptions'),
//    as latency_rule.h's Router says: HAProxy's balance first (a backlog
//    queue per service when every process is full) or weighted leastconn,
//    counting requests outstanding at each process; at random with equal
//    odds or weighted by the process's SLO-safe capacity (RouterCapacity);
//    or to the process whose queue would empty first (join-shortest-queue);
//  * each process has a FIFO queue and a dynamic batcher: when idle it starts
//    a batch as soon as the queue holds the planned batch size, or the oldest
//    request has waited `max_queue_delay_ms` (by default QueueDelayMs: the
//    rest of the rule's batch budget, as deploy's Triton configs say), with
//    what is there;
//  * a batch of b requests runs for the profiled latency at batch b (linear
//    interpolation between profiled batch sizes), times a variability factor
//    of mean 1 (none, lognormal with a coefficient of variation, or
//    exponential);
//  * a request that has waited longer than `drop_after_ms` when its batch
//    would form is dropped and counted (it misses its SLO).
// Latency = queueing + batching + execution, measured on the simulated clock.
// No request is kept once served: counts are exact and the percentiles
// streamed (quantile_histogram.h), so memory does not grow with the duration.
//
// An instance takes new requests only within its acceptance window
// (ServingInstance::accepts_from_s / accepts_until_s; by default always):
// the routers pass over an instance outside it, which still finishes its
// queue. An arrival finding no instance of its service within its window is
// dropped.
//
// Thread-safety: pure functions of their arguments.
#ifndef TESSERA_SIMULATOR_H_
#define TESSERA_SIMULATOR_H_

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tessera/deployment.h"
#include "tessera/latency_rule.h"
#include "tessera/problem.h"
#include "tessera/profile_table.h"
#include "tessera/scenario.h"
#include "tessera/simulate/arrivals.h"
#include "tessera/status.h"

namespace tessera {

// One segment as the simulator runs it.
struct ServingInstance {
  std::string service;
  int service_index = 0;  // into ServingModel::services
  int gpu = 0;            // GpuAssignment::index
  std::string profile;
  int start = 0;
  int compute_slices = 0;
  int procs = 1;
  int batch = 1;  // planned batch size
  // Execution time (ms) of a batch of b requests, b = 1..batch, at index b - 1.
  std::vector<double> latency_ms;
  // It takes new requests that arrive in [accepts_from_s, accepts_until_s).
  double accepts_from_s = 0;
  double accepts_until_s = std::numeric_limits<double>::infinity();
};

struct ServingService {
  std::string name;
  double rate_rps = 0;
  double slo_ms = 0;
  std::vector<int> instances;  // into ServingModel::instances
};

struct ServingModel {
  std::vector<ServingService> services;  // scenario order
  std::vector<ServingInstance> instances;
  // The plan's rule: its router, its capacity rule (the weighted router's
  // weights) and its batch budget (the batcher's default wait).
  LatencyRule rule;
};

// The serving model of `deployment` for the scenario of `problem`, under the
// deployment's own rule. MIG plans: every instance's batch latencies from
// the problem's profiles (the planned batch's entry, and the smaller
// profiled batches of the same model, GPU model, profile and procs;
// interpolated linearly between them; below the smallest profiled batch,
// that batch's latency, which errs on the slow side). MPS plans: one
// instance per process, its batch times (b = 1..planned batch) predicted by
// the iGniter model with the GPU's other processes at their planned batches:
// 1000 b / throughput, GPU time plus the results' copy back (the input copy
// overlaps the previous batch, as the model's throughput assumes).
// InvalidArgument when the deployment's services do not match the scenario's,
// or an instance's planned batch has no profile entry.
Result<ServingModel> BuildServingModel(const Deployment& deployment, const Problem& problem);

// The execution time (ms) of a batch of b = 1..key.batch of key.model on
// key.profile of key.gpu with key.procs processes, at index b - 1, as
// BuildServingModel times a MIG instance: the profiled entries of smaller
// batches, interpolated linearly between them, the smallest's below it.
// InvalidArgument naming the key when key.batch has no profile entry.
Result<std::vector<double>> ProfiledBatchLatencies(const ProfileTable& profiles,
                                                   const ProfileKey& key);

enum class Variability { kNone, kLognormal, kExponential };

struct SimOptions {
  double duration_s = 60;  // arrivals stop after this; > 0
  std::uint64_t seed = 1;
  ArrivalKind arrivals = ArrivalKind::kPoisson;
  BurstShape burst;                                  // for kBursty
  std::map<std::string, std::vector<double>> trace;  // for kTrace: per service
  // The router; unset: the plan's (ServingModel::rule.router).
  std::optional<Router> router;
  // A partial batch starts once its oldest request has waited this long.
  // < 0: the rule's batch budget (LatencyRule::BudgetMs of the service's
  // SLO) minus the planned batch's latency (at least 0), so a full wait
  // still fits the latency rule. Default: -1.
  double max_queue_delay_ms = -1;
  Variability variability = Variability::kNone;
  double cv = 0.1;  // coefficient of variation for kLognormal: limits::kVariabilityCv
  // Requests waiting longer than this are dropped; 0 = never. Default: 0.
  double drop_after_ms = 0;

  // InvalidArgument naming the first bad field.
  Status Validate() const;
};

// A service meets its SLO when at least this share of its requests is
// served within it: the "p99 latency <= SLO" reading of a latency objective.
inline constexpr double kComplianceTarget = 0.99;

struct ServiceReport {
  std::string name;
  double rate_rps = 0;
  double slo_ms = 0;
  long requests = 0;  // arrived
  long dropped = 0;
  double offered_rps = 0;   // requests / duration
  double achieved_rps = 0;  // served within the duration / duration
  double mean_wait_ms = 0;  // queueing + batching, served requests
  // Served requests: the percentiles by nearest rank, streamed, within
  // QuantileHistogram::kRelativeError (0.049%) of the exact ones; the max exact.
  double p50_ms = 0, p95_ms = 0, p99_ms = 0, max_ms = 0;
  double compliance = 0;  // share of requests served within the SLO
};

struct InstanceReport {
  int gpu = 0;
  std::string profile;
  int start = 0;
  std::string service;
  double busy_share = 0;  // mean over its processes of busy time / duration
};

struct GpuReport {
  int gpu = 0;
  double busy_share = 0;  // compute-slice-weighted mean of its instances'
};

struct SimReport {
  double duration_s = 0;
  long requests = 0;
  std::vector<ServiceReport> services;  // model order
  std::vector<InstanceReport> instances;
  std::vector<GpuReport> gpus;
};

// Runs the simulation. A service without instances (infeasible) has every
// request dropped. InvalidArgument for invalid options or a service without
// a trace under kTrace.
Result<SimReport> Simulate(const ServingModel& model, const SimOptions& options);

// The report as a table for people, and as JSON for programs.
std::string FormatSimReportTable(const SimReport& report);
std::string FormatSimReportJson(const SimReport& report);

}  // namespace tessera

#endif  // TESSERA_SIMULATOR_H_
