// LatencyRule: the rule a plan is made under, travelling with the plan. It
// says which configurations may serve a service (a batch must fit a share of
// the SLO), how much of a segment's throughput counts towards its service's
// rate (the capacity rule), and how requests are routed among a service's
// processes (the router). Planners plan under it, the deployment JSON
// records it, and the validator and the serving simulator read it back, so a
// plan made under rule X is checked and simulated under X.
//
// Text forms (flags and JSON): capacity "pooled" | "pooled:CV" | "queueing" |
// "bursty:SHARE" | "bare"; router "weighted" | "jsq" | "equal" | "leastconn" |
// "first".
//
// Thread-safety: values and pure functions (BatchLatencyFactor keeps its
// last answer in a thread_local).
#ifndef TESSERA_LATENCY_RULE_H_
#define TESSERA_LATENCY_RULE_H_

#include <string>
#include <string_view>
#include <vector>

#include "tessera/status.h"

namespace tessera {

// How the serving side spreads a service's requests over its processes.
// kWeighted, kEqual, kLeastConn and kFirst are what a deployment can ship
// (docs/routing.md): a Kubernetes Service (equal odds) or HAProxy 2.6
// (`balance random(1)`, `leastconn`, `first`) with one server per serving
// process. kShortestQueue is the simulator's own ideal.
enum class Router {
  // At random, weighted by each process's SLO-safe capacity (its throughput
  // times UsableShare): what planners count it for. HAProxy `balance
  // random(1)` with ProxyWeights.
  kWeighted,
  // To the process where the request's batch would end first if batches ran
  // full (join-shortest-queue, the queue measured in time): what is left of
  // its running batch, the full batches queued ahead of the request, and the
  // planned batch's latency. The batch that starts first fills before
  // another opens, processes of different sizes share one pool, and a
  // request does not join a busy process whose next batch it would miss.
  // No proxy the deployment ships decides this way.
  kShortestQueue,
  // At random with equal odds: a Kubernetes Service (kube-proxy picks a
  // ready endpoint per connection; one request per connection).
  kEqual,
  // HAProxy 2.6 `balance leastconn` with ProxyWeights: the process with the
  // smallest key, key = 0 when it has no request outstanding, else
  // (outstanding + 1) x 256 / weight in integers; among equal keys the one
  // whose count changed longest ago (HAProxy requeues a server at the back
  // of its key's group when its count changes).
  kLeastConn,
  // HAProxy 2.6 `balance first` with `maxconn` = FirstMaxconn(the
  // process's planned batch): the first process in the backend's order with
  // fewer than maxconn requests outstanding; when every process is full the
  // request waits in the backend's queue, and a process that finishes a
  // batch takes the oldest waiting requests into its free slots once its
  // batcher has looked at its queue. The batch that starts first fills
  // before another opens, as under kShortestQueue, and the backlog is one
  // queue for the whole service.
  kFirst,
};

// kFirst's maxconn: two batches, the running one and the next, so that a
// process whose batch ends finds its next batch already queued. With one
// batch of slots the proxy refills a process only after its answers are
// through, by when its batcher has started on what little was queued:
// measured through HAProxy 2.6 and the emulator (docs/routing.md), resnet101
// at 92% load ran batches of 8 where 16 were planned.
inline constexpr int kFirstMaxconnBatches = 2;
inline int FirstMaxconn(int batch) { return kFirstMaxconnBatches * batch; }

// "weighted" | "jsq" | "equal" | "leastconn" | "first".
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
  // Queueing-aware capacity: a segment counts only the share of its
  // throughput at which its processes' queues still meet the SLO at
  // `headroom_quantile` (UsableShare). false = the papers' bare rule: the
  // whole throughput counts. Default: true.
  bool queueing_headroom = true;
  double headroom_quantile = 0.995;  // in (0, 1)
  // Arrivals the headroom is sized for: Poisson when 1; an on/off burst that
  // is "on" this share of the time (at rate / share) when < 1. Default: 1.
  double burst_on_share = 1;
  // Pooled capacity (with queueing_headroom; docs/capacity-rules.md): a
  // service's processes form one pool behind the join-shortest-queue router,
  // so the share a process counts grows with the service's rate
  // (PooledUtilisation), and a process counts at most its batch over its
  // latency. Requires a pooling router (RouterPools) and burst_on_share 1.
  bool pooled = false;
  // The pooled rule's batch-latency variability: a lognormal factor of mean
  // 1 and this coefficient of variation. The SLO less a batch's
  // `headroom_quantile` latency is the waiting budget (the batch budget
  // bounds the profiled latency, as for every rule). Within
  // limits::kBatchCv. Default: 0.05.
  double batch_cv = 0.05;
  // Rates are estimates: plan for (1 + rate_margin) x every service's rate
  // (a segment counts its capacity over 1 + rate_margin). Within
  // limits::kRateMargin. Default: 0.
  double rate_margin = 0;
  // How the serving side routes requests among a service's processes.
  Router router = Router::kWeighted;

  // InvalidArgument unless 0 < factor <= 1, max_procs >= 0, 0 <
  // headroom_quantile < 1, 0 < burst_on_share <= 1, batch_cv and
  // rate_margin within their limits, and a pooled rule routes by a pooling
  // router (RouterPools) with burst_on_share 1.
  Status Validate() const;
  // The latency budget (ms) of a batch for a service with `slo_ms`.
  double BudgetMs(double slo_ms) const;
  // The factor over a batch's profiled latency that its `headroom_quantile`
  // latency reaches: exp(z sigma - sigma^2 / 2), sigma^2 = ln(1 + cv^2), z
  // the standard normal quantile, under the pooled rule; 1 otherwise.
  double BatchLatencyFactor() const;
  // True iff a batch of `latency_ms` with `procs` processes may serve `slo_ms`:
  // latency < BudgetMs (and procs within max_procs). The pooled rule's
  // variability is counted where it matters, in the SLO (UsableShare).
  bool Allows(double latency_ms, int procs, double slo_ms) const;
  // The share of a process's usable rate (UsableRps) that may be loaded
  // while its requests' `headroom_quantile` latency stays within `slo_ms`,
  // for a service of `rate_rps`; 1 without queueing_headroom.
  //  * queueing (per process; docs/serving-simulator.md): requests arrive
  //    Poisson at the peak rate and are served B at a time; the
  //    request-level M/D/1 tail P(wait > t) ~ exp(-theta t), with
  //    lambda (e^(theta L / B) - 1) = theta, plus the request's own batch and
  //    a batch's worth of granularity, L (2 B - 1) / B, must fit the SLO.
  //    Closed form: share = on_share x x / (e^x - 1), x = ln(1 / (1 - q))
  //    (L / B) / slack, slack = SLO - L (2 B - 1) / B; 0 when slack <= 0.
  //  * pooled: the smaller of PooledUtilisation(K, th, B, q) and
  //    PooledRecoveryBound(K), with K = (1 + rate_margin) rate_rps L / 1000
  //    and th = (SLO - L BatchLatencyFactor) / L.
  double UsableShare(int batch, double latency_ms, double slo_ms, double rate_rps) const;
  // What a process (or segment) of profiled `throughput_rps` may serve at
  // most: under the pooled rule, no more than `procs` x 1000 batch /
  // latency_ms (profiles may overstate it); its throughput otherwise.
  double UsableRps(int batch, int procs, double throughput_rps, double latency_ms) const;
  // What a segment counts towards its service's rate (Triplet::capacity_rps):
  // UsableRps x UsableShare / (1 + rate_margin).
  double CountedRps(int batch, int procs, double throughput_rps, double latency_ms, double slo_ms,
                    double rate_rps) const;

  // The capacity rule as text: "pooled" (batch_cv 0.05), "pooled:CV",
  // "queueing", "bursty:SHARE" or "bare".
  std::string CapacityName() const;
  // Sets queueing_headroom, burst_on_share, pooled and batch_cv from
  // CapacityName's text; InvalidArgument naming the accepted forms otherwise.
  // It leaves the router as it is (Validate checks the pair).
  Status SetCapacity(std::string_view text);

  friend bool operator==(const LatencyRule&, const LatencyRule&) = default;
};

// What a router counts one process for (the weighted router's odds, the
// base of ProxyWeights): its batch rate, 1000 batch / latency_ms, times
// rule.UsableShare (at least kMinRouterShare, so that a process with no
// slack stays reachable).
inline constexpr double kMinRouterShare = 1e-3;
double RouterCapacity(const LatencyRule& rule, int batch, double latency_ms, double slo_ms,
                      double rate_rps);

// Triton's max_queue_delay under `rule` (ms): a partial batch of a process
// whose planned batch takes `latency_ms` starts once its oldest request has
// waited the rest of the batch budget, BudgetMs(slo_ms) - latency_ms, at
// least 0. A request that waits it fits the batch budget; one that must also
// wait for the batch in flight fits the SLO (budget + latency <= SLO when
// the factor is at most 0.5). The simulator's batcher and the Triton
// configurations `tessera deploy` writes both use it.
double QueueDelayMs(const LatencyRule& rule, double latency_ms, double slo_ms);

// HAProxy's weights (integers 1..kProxyWeightMax) for the processes of one
// backend whose SLO-safe capacities are `capacities` (each > 0): the largest
// gets kProxyWeightMax, every other its capacity's share of it, rounded to
// the nearest integer and at least 1. Both the simulator and `tessera
// deploy` weigh by it, so the simulated router is the shipped one.
inline constexpr int kProxyWeightMax = 256;
std::vector<int> ProxyWeights(const std::vector<double>& capacities);

// True iff `router` makes a service's processes one pool (kShortestQueue,
// kLeastConn): the routers the pooled capacity rule holds for. Least
// outstanding requests per unit of weight is join-shortest-queue counted in
// requests: on ParvaGPU rows 1-6, S3 and S6 the pooled plans keep every
// service at >= 99.74% under it (docs/routing.md). kFirst does not pool
// safely: a process refilled only after its answers go out runs partial
// batches (97.78% on S6's pooled plan).
bool RouterPools(Router router);

// The pooled capacity rule's utilisation bound (docs/capacity-rules.md): the
// largest share rho of a pool's usable rate that its requests may load while
// the share of them waiting longer than `wait_budget` batch times stays
// under 1 - quantile. `in_flight` (K) is the requests arriving per batch
// time, `batch` (B) a process's batch. Model: the pool serves like one
// queue whose batches start every B rho / K batch times on average (n = K /
// (B rho) processes, staggered); a request waits for the next start
// (granularity g = B rho / K) and for the backlog ahead of it, whose tail is
// the request-level M/D/1 one, P(wait > t) ~ exp(-theta t) with
// K (e^(theta rho / K) - 1) = theta in batch times. With z = ln(1 / (1 -
// quantile)) rho / (K (wait_budget - g)), rho is the largest in (0, 1] with
// rho <= z / (e^z - 1); 0 when no rho leaves g below the budget. A pool of
// one process (K = B rho, g = 1) is close to LatencyRule's per-process
// queueing share, which also counts a request's place in its batch.
// Monotone non-decreasing in in_flight and wait_budget; in [0, 1).
// REQUIRES: in_flight > 0, batch >= 1, 0 < quantile < 1.
double PooledUtilisation(double in_flight, double wait_budget, int batch, double quantile);

// The pooled rule's second bound (docs/capacity-rules.md): a pool must
// recover from a fluctuation within kPoolRecoveryBatches batch times. Its
// backlog is a random walk whose variance per batch time is K (Poisson
// arrivals) and whose drift is the spare capacity K (1 - rho) / rho; it
// forgets an excursion in about variance / drift^2 = rho^2 / (K (1 -
// rho)^2) batch times. At most T of them: rho <= r / (1 + r), r = sqrt(T K).
// The waiting tail of PooledUtilisation is a long-run figure: near rho = 1
// (its margin shrinks like 1 / K) a minute's compliance hangs on a few
// excursions (100% in one minute, 58% in the next).
// REQUIRES: in_flight > 0.
inline constexpr double kPoolRecoveryBatches = 10;
double PooledRecoveryBound(double in_flight);

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
