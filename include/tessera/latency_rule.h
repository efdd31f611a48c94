// LatencyRule: the rule a plan is made under, travelling with the plan. It
// says which configurations may serve a service (a batch must fit a share of
// the SLO), how much of a segment's throughput counts towards its service's
// rate (the capacity rule), and how requests are routed among a service's
// processes (the router). Planners plan under it, the deployment JSON
// records it, and the validator and the serving simulator read it back, so a
// plan made under rule X is checked and simulated under X.
//
// Text forms (flags and JSON): capacity "queueing" | "bursty:SHARE" | "bare";
// router "weighted" | "jsq".
//
// Thread-safety: values and pure functions.
#ifndef TESSERA_LATENCY_RULE_H_
#define TESSERA_LATENCY_RULE_H_

#include <string>
#include <string_view>

#include "tessera/status.h"

namespace tessera {

// How the serving side spreads a service's requests over its processes.
enum class Router {
  // At random, weighted by each process's SLO-safe capacity (its throughput
  // times UsableShare): what planners count it for.
  kWeighted,
  // To the process whose queue would empty first (join-shortest-queue).
  kShortestQueue,
};

// "weighted" | "jsq".
std::string_view RouterName(Router router);
// InvalidArgument naming the accepted words.
Result<Router> ParseRouter(std::string_view text);

// Which profiled configurations may serve a service (DESIGN.md, Latency
// rule): a triplet is allowed iff its latency < factor x SLO; and what its
// throughput counts for.
struct LatencyRule {
  // Share of the SLO a batch may take; the rest is left for queueing and
  // batching. Default: 0.5, as the papers do.
  double factor = 0.5;
  // Truncate the SLO to an integer number of ms first (ParvaGPU's artifact
  // reads it with atoi). Default: false.
  bool truncate_slo = false;
  // Largest number of MPS processes per segment; 0 = no limit. Default: 0.
  int max_procs = 0;
  // Queueing-aware capacity (the SLO-safe default): a segment counts only the
  // share of its throughput at which its processes' queues still meet the
  // SLO at `headroom_quantile` (UsableShare). false = the papers' bare rule:
  // the whole throughput counts. Default: true.
  bool queueing_headroom = true;
  double headroom_quantile = 0.995;  // in (0, 1)
  // Arrivals the headroom is sized for: Poisson when 1; an on/off burst that
  // is "on" this share of the time (at rate / share) when < 1. Default: 1.
  double burst_on_share = 1;
  // How the serving side routes requests among a service's processes.
  Router router = Router::kWeighted;

  // InvalidArgument unless 0 < factor <= 1, max_procs >= 0, 0 <
  // headroom_quantile < 1 and 0 < burst_on_share <= 1.
  Status Validate() const;
  // The latency budget (ms) of a batch for a service with `slo_ms`.
  double BudgetMs(double slo_ms) const;
  // True iff a batch of `latency_ms` with `procs` processes may serve `slo_ms`.
  bool Allows(double latency_ms, int procs, double slo_ms) const;
  // The share of a process's throughput (batches of `batch` taking
  // `latency_ms`) that may be loaded while its requests' `headroom_quantile`
  // latency stays within `slo_ms`; 1 without queueing_headroom. Model
  // (docs/serving-simulator.md): requests arrive Poisson at the peak rate
  // and are served B at a time; the request-level M/D/1 tail
  // P(wait > t) ~ exp(-theta t), with lambda (e^(theta L / B) - 1) = theta,
  // plus the request's own batch and a batch's worth of granularity,
  // L (2 B - 1) / B, must fit the SLO. Solved in closed form:
  // share = on_share x x / (e^x - 1), x = ln(1 / (1 - q)) (L / B) / slack,
  // slack = SLO - L (2 B - 1) / B; 0 when slack <= 0.
  double UsableShare(int batch, double latency_ms, double slo_ms) const;

  // The capacity rule as text: "queueing", "bursty:SHARE" or "bare".
  std::string CapacityName() const;
  // Sets queueing_headroom and burst_on_share from CapacityName's text;
  // InvalidArgument naming the accepted forms otherwise.
  Status SetCapacity(std::string_view text);

  friend bool operator==(const LatencyRule&, const LatencyRule&) = default;
};

// One line for people: "latency < 0.5 x SLO, capacity queueing (p99.5),
// router weighted".
std::string DescribeRule(const LatencyRule& rule);

// Relative tolerance of the capacity rule, so that sums of the same segment
// throughputs taken in another order (or read back from rounded JSON) agree.
inline constexpr double kCapacityTolerance = 1e-9;

// The capacity rule of DESIGN.md: capacity >= rate, up to kCapacityTolerance
// (capacity counted as Triplet::capacity_rps).
bool CoversRate(double capacity_rps, double rate_rps);

// ParvaGPU artifact compatibility: latency < 0.45 x trunc(SLO), up to 5
// processes, bare capacity (`--compat parva-artifact`). Never the default.
LatencyRule ParvaArtifactRule();

}  // namespace tessera

#endif  // TESSERA_LATENCY_RULE_H_
