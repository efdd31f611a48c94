#include "tessera/latency_rule.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "tessera/util/input_limits.h"
#include "tessera/util/text_io.h"

namespace tessera {

namespace {

constexpr std::pair<Router, std::string_view> kRouterNames[] = {
    {Router::kWeighted, "weighted"},   {Router::kShortestQueue, "jsq"}, {Router::kEqual, "equal"},
    {Router::kLeastConn, "leastconn"}, {Router::kFirst, "first"},
};

}  // namespace

std::string_view RouterName(Router router) {
  for (const auto& [r, name] : kRouterNames) {
    if (r == router) return name;
  }
  return "weighted";
}

Result<Router> ParseRouter(std::string_view text) {
  for (const auto& [r, name] : kRouterNames) {
    if (text == name) return r;
  }
  return Status::InvalidArgument("router: expected weighted, jsq, equal, leastconn or first, got " +
                                 QuoteForMessage(text));
}

double RouterCapacity(const LatencyRule& rule, int batch, double latency_ms, double slo_ms,
                      double rate_rps) {
  return batch * 1000.0 / latency_ms *
         std::max(kMinRouterShare, rule.UsableShare(batch, latency_ms, slo_ms, rate_rps));
}

double QueueDelayMs(const LatencyRule& rule, double latency_ms, double slo_ms) {
  return std::max(0.0, rule.BudgetMs(slo_ms) - latency_ms);
}

std::vector<int> ProxyWeights(const std::vector<double>& capacities) {
  const double largest =
      capacities.empty() ? 0 : *std::max_element(capacities.begin(), capacities.end());
  std::vector<int> weights;
  weights.reserve(capacities.size());
  for (const double c : capacities) {
    const double scaled = largest > 0 ? kProxyWeightMax * c / largest : kProxyWeightMax;
    weights.push_back(std::clamp(static_cast<int>(std::lround(scaled)), 1, kProxyWeightMax));
  }
  return weights;
}

bool RouterPools(Router router) {
  return router == Router::kShortestQueue || router == Router::kLeastConn;
}

Status LatencyRule::Validate() const {
  if (!(factor > 0 && factor <= 1)) {
    return Status::InvalidArgument("latency factor must be in (0, 1], got " +
                                   std::to_string(factor));
  }
  if (!(headroom_quantile > 0 && headroom_quantile < 1)) {
    return Status::InvalidArgument("headroom quantile must be in (0, 1), got " +
                                   std::to_string(headroom_quantile));
  }
  if (!(burst_on_share > 0 && burst_on_share <= 1)) {
    return Status::InvalidArgument("burst on-share must be in (0, 1], got " +
                                   std::to_string(burst_on_share));
  }
  if (!limits::kBatchCv.Contains(batch_cv)) {
    return Status::InvalidArgument("batch latency cv " + OutOfRange(limits::kBatchCv, batch_cv));
  }
  if (!limits::kRateMargin.Contains(rate_margin)) {
    return Status::InvalidArgument("rate margin " + OutOfRange(limits::kRateMargin, rate_margin));
  }
  if (pooled && !RouterPools(router)) {
    return Status::InvalidArgument(fmt::format(
        "capacity pooled needs router leastconn or jsq: a service's processes form one pool "
        "only when the router sends each request where the least is waiting; with router {} use "
        "capacity queueing",
        RouterName(router)));
  }
  if (pooled && (!queueing_headroom || burst_on_share != 1)) {
    return Status::InvalidArgument(
        "capacity pooled plans Poisson arrivals with headroom: not with bare or bursty:SHARE");
  }
  if (max_procs < 0) {
    return Status::InvalidArgument("max procs must be >= 0 (0 = no limit), got " +
                                   std::to_string(max_procs));
  }
  return Status::Ok();
}

double LatencyRule::BudgetMs(double slo_ms) const {
  return factor * (truncate_slo ? std::trunc(slo_ms) : slo_ms);
}

namespace {

// The standard normal quantile of p in (0, 1), by bisection on erfc.
double NormalQuantile(double p) {
  double lo = -40, hi = 40;
  for (int i = 0; i < 200 && hi - lo > 1e-12; ++i) {
    const double mid = (lo + hi) / 2;
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

}  // namespace

double LatencyRule::BatchLatencyFactor() const {
  if (!pooled || batch_cv == 0) return 1;
  // Planning asks for it once or twice per profiled configuration, with the
  // same rule: the last answer is kept (per thread), since the quantile's
  // bisection costs a hundred erfc calls.
  struct Memo {
    double quantile = 0, cv = 0, factor = 0;
  };
  thread_local Memo memo;
  if (memo.quantile == headroom_quantile && memo.cv == batch_cv) return memo.factor;
  const double sigma2 = std::log1p(batch_cv * batch_cv);
  memo = {headroom_quantile, batch_cv,
          std::exp(NormalQuantile(headroom_quantile) * std::sqrt(sigma2) - sigma2 / 2)};
  return memo.factor;
}

bool LatencyRule::Allows(double latency_ms, int procs, double slo_ms) const {
  if (max_procs > 0 && procs > max_procs) return false;
  return latency_ms < BudgetMs(slo_ms);
}

LatencyRule ParvaArtifactRule() {
  LatencyRule rule;
  rule.factor = 0.45;
  rule.truncate_slo = true;
  rule.max_procs = 5;
  rule.queueing_headroom = false;
  return rule;
}

namespace {

// The pooled rule's waiting tail for one (K, th, B, q): rho is allowed iff
// rho <= z / (e^z - 1), whose right side falls as rho grows (z grows, the
// budget left shrinks): PooledUtilisation's answer is the crossing.
class PooledTail {
 public:
  PooledTail(double in_flight, double wait_budget, int batch, double quantile)
      : in_flight_(in_flight),
        wait_budget_(wait_budget),
        batch_(batch),
        a_(std::log(1 / (1 - quantile)) / in_flight) {}

  // > 0 exactly where rho is not allowed; rises with rho (to rho itself once
  // no budget is left, continuously).
  double Excess(double rho) const {
    const double left = wait_budget_ - batch_ * rho / in_flight_;
    if (left <= 0) return rho;
    const double z = a_ * rho / left;
    return rho - z / std::expm1(z);
  }

 private:
  double in_flight_, wait_budget_;
  int batch_;
  double a_;  // ln(1 / (1 - q)) / K, the same for every rho
};

}  // namespace

double PooledUtilisation(double in_flight, double wait_budget, int batch, double quantile) {
  const PooledTail tail(in_flight, wait_budget, batch, quantile);
  const auto excess = [&](double rho) { return tail.Excess(rho); };
  const auto allowed = [&](double rho) { return excess(rho) <= 0; };
  if (allowed(1)) return 1;
  // The answer is the bisection's on [0, 1] to 1e-12: the largest multiple
  // of 2^-40 that is allowed (0 when none is). Regula falsi (Illinois)
  // narrows the crossing to less than 2^-40 in a dozen evaluations instead
  // of forty; a bisection step is taken whenever two steps have not halved
  // the bracket. excess(0) is 0 / 0: its limit, -1, stands for it.
  constexpr double kGrid = 0x1p40;
  double lo = 0, hi = 1, f_lo = -1, f_hi = excess(1);
  double width_before = 2;  // the bracket two steps back
  int kept = 0;             // -1: lo moved last, 1: hi moved last
  for (int i = 0; i < 200 && (hi - lo) * kGrid >= 1; ++i) {
    double mid = (lo * f_hi - hi * f_lo) / (f_hi - f_lo);
    if (i % 2 == 0) {
      if (hi - lo > width_before / 2) mid = (lo + hi) / 2;
      width_before = hi - lo;
    }
    if (!(mid > lo && mid < hi)) mid = (lo + hi) / 2;
    const double f = excess(mid);
    if (f <= 0) {
      lo = mid;
      f_lo = f;
      if (kept == -1) f_hi /= 2;
      kept = -1;
    } else {
      hi = mid;
      f_hi = f;
      if (kept == 1) f_lo /= 2;
      kept = 1;
    }
  }
  // lo is allowed and hi is not: so is every grid point up to lo, and at
  // most one lies between them.
  double k = std::floor(lo * kGrid);
  while ((k + 1) / kGrid < hi && allowed((k + 1) / kGrid)) ++k;
  return k / kGrid;
}

double PooledRecoveryBound(double in_flight) {
  const double r = std::sqrt(kPoolRecoveryBatches * in_flight);
  return r / (1 + r);
}

double LatencyRule::UsableShare(int batch, double latency_ms, double slo_ms,
                                double rate_rps) const {
  if (!queueing_headroom) return 1;
  if (pooled) {
    const double in_flight = (1 + rate_margin) * rate_rps * latency_ms / 1000;
    if (!(in_flight > 0) || !(latency_ms > 0)) return 0;
    const double wait_budget = (slo_ms - latency_ms * BatchLatencyFactor()) / latency_ms;
    // The smaller bound: one evaluation of the tail tells whether it is the
    // recovery bound, sparing the search (a dozen) when it is.
    const double recovery = PooledRecoveryBound(in_flight);
    const int b = std::max(1, batch);
    if (PooledTail(in_flight, wait_budget, b, headroom_quantile).Excess(recovery) <= 0) {
      return recovery;
    }
    return PooledUtilisation(in_flight, wait_budget, b, headroom_quantile);
  }
  const double b = std::max(1, batch);
  const double slack_ms = slo_ms - latency_ms * (2 * b - 1) / b;
  if (slack_ms <= 0) return 0;
  const double x = std::log(1 / (1 - headroom_quantile)) * (latency_ms / b) / slack_ms;
  return burst_on_share * x / std::expm1(x);
}

double LatencyRule::UsableRps(int batch, int procs, double throughput_rps,
                              double latency_ms) const {
  if (!pooled || !(latency_ms > 0)) return throughput_rps;
  return std::min(throughput_rps, procs * 1000.0 * std::max(1, batch) / latency_ms);
}

double LatencyRule::CountedRps(int batch, int procs, double throughput_rps, double latency_ms,
                               double slo_ms, double rate_rps) const {
  return UsableRps(batch, procs, throughput_rps, latency_ms) *
         UsableShare(batch, latency_ms, slo_ms, rate_rps) / (1 + rate_margin);
}

std::string LatencyRule::CapacityName() const {
  if (!queueing_headroom) return "bare";
  if (pooled) return batch_cv == 0.05 ? "pooled" : fmt::format("pooled:{:g}", batch_cv);
  if (burst_on_share == 1) return "queueing";
  return fmt::format("bursty:{}", burst_on_share);
}

Status LatencyRule::SetCapacity(std::string_view text) {
  constexpr std::string_view kBursty = "bursty:";
  constexpr std::string_view kPooled = "pooled:";
  if (text == "bare" || text == "queueing" || text == "pooled") {
    queueing_headroom = text != "bare";
    pooled = text == "pooled";
    batch_cv = 0.05;
    burst_on_share = 1;
    return Status::Ok();
  }
  if (text.starts_with(kPooled)) {
    const std::optional<double> cv = ToDouble(text.substr(kPooled.size()));
    if (!cv || !limits::kBatchCv.Contains(*cv)) {
      return Status::InvalidArgument("capacity rule: pooled:CV's CV " +
                                     OutOfRange(limits::kBatchCv, QuoteForMessage(text)));
    }
    queueing_headroom = true;
    pooled = true;
    batch_cv = *cv;
    burst_on_share = 1;
    return Status::Ok();
  }
  const std::optional<double> share =
      text.starts_with(kBursty) ? ToDouble(text.substr(kBursty.size())) : std::nullopt;
  if (!share || !(*share > 0 && *share <= 1)) {
    return Status::InvalidArgument(
        "capacity rule: expected pooled, pooled:CV, queueing, bursty:SHARE (0 < SHARE <= 1) or "
        "bare, got " +
        QuoteForMessage(text));
  }
  queueing_headroom = true;
  pooled = false;
  batch_cv = 0.05;
  burst_on_share = *share;
  return Status::Ok();
}

std::string DescribeRule(const LatencyRule& rule) {
  std::string out =
      fmt::format("latency < {:g} x {}SLO", rule.factor, rule.truncate_slo ? "integer " : "");
  if (rule.max_procs > 0) out += fmt::format(", at most {} processes", rule.max_procs);
  out += ", capacity " + rule.CapacityName();
  if (rule.queueing_headroom) out += fmt::format(" (p{:g})", 100 * rule.headroom_quantile);
  if (rule.rate_margin > 0) out += fmt::format(", rates x {:g}", 1 + rule.rate_margin);
  return out + fmt::format(", router {}", RouterName(rule.router));
}

bool CoversRate(double capacity_rps, double rate_rps) {
  return capacity_rps >= rate_rps * (1 - kCapacityTolerance);
}

}  // namespace tessera
