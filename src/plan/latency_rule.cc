#include "tessera/latency_rule.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "tessera/text_io.h"

namespace tessera {

std::string_view RouterName(Router router) {
  return router == Router::kShortestQueue ? "jsq" : "weighted";
}

Result<Router> ParseRouter(std::string_view text) {
  if (text == "weighted") return Router::kWeighted;
  if (text == "jsq") return Router::kShortestQueue;
  return Status::InvalidArgument("router: expected weighted or jsq, got " + QuoteForMessage(text));
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
  if (max_procs < 0) {
    return Status::InvalidArgument("max procs must be >= 0 (0 = no limit), got " +
                                   std::to_string(max_procs));
  }
  return Status::Ok();
}

double LatencyRule::BudgetMs(double slo_ms) const {
  return factor * (truncate_slo ? std::trunc(slo_ms) : slo_ms);
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

double LatencyRule::UsableShare(int batch, double latency_ms, double slo_ms) const {
  if (!queueing_headroom) return 1;
  const double b = std::max(1, batch);
  const double slack_ms = slo_ms - latency_ms * (2 * b - 1) / b;
  if (slack_ms <= 0) return 0;
  const double x = std::log(1 / (1 - headroom_quantile)) * (latency_ms / b) / slack_ms;
  return burst_on_share * x / std::expm1(x);
}

std::string LatencyRule::CapacityName() const {
  if (!queueing_headroom) return "bare";
  if (burst_on_share == 1) return "queueing";
  return fmt::format("bursty:{}", burst_on_share);
}

Status LatencyRule::SetCapacity(std::string_view text) {
  constexpr std::string_view kBursty = "bursty:";
  if (text == "bare" || text == "queueing") {
    queueing_headroom = text == "queueing";
    burst_on_share = 1;
    return Status::Ok();
  }
  const std::optional<double> share =
      text.starts_with(kBursty) ? ToDouble(text.substr(kBursty.size())) : std::nullopt;
  if (!share || !(*share > 0 && *share <= 1)) {
    return Status::InvalidArgument(
        "capacity rule: expected queueing, bursty:SHARE (0 < SHARE <= 1) or bare, got " +
        QuoteForMessage(text));
  }
  queueing_headroom = true;
  burst_on_share = *share;
  return Status::Ok();
}

std::string DescribeRule(const LatencyRule& rule) {
  std::string out =
      fmt::format("latency < {:g} x {}SLO", rule.factor, rule.truncate_slo ? "integer " : "");
  if (rule.max_procs > 0) out += fmt::format(", at most {} processes", rule.max_procs);
  out += ", capacity " + rule.CapacityName();
  if (rule.queueing_headroom) out += fmt::format(" (p{:g})", 100 * rule.headroom_quantile);
  return out + fmt::format(", router {}", RouterName(rule.router));
}

bool CoversRate(double capacity_rps, double rate_rps) {
  return capacity_rps >= rate_rps * (1 - kCapacityTolerance);
}

}  // namespace tessera
