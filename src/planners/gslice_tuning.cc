// GSLICE's self-tuning of gslice_tuning.h: Algorithm 1 and the max-min fair
// allocation.
#include "tessera/planners/gslice_tuning.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tessera {
namespace {

// Slack for comparing shares that went through sums.
constexpr double kEpsilon = 1e-9;

}  // namespace

TuningDecision ComputeNewShare(const TuningInput& in, const TuningOptions& options) {
  TuningDecision d;
  d.new_share = in.current_share;
  const double residual_l = in.slo_ms - in.avg_latency_ms;
  const double residual_t = in.avg_throughput_rps - in.arrival_rps;
  d.diff_latency = residual_l / in.slo_ms;
  d.diff_throughput = residual_t / in.arrival_rps;
  if (std::fabs(d.diff_latency) < options.tuning_threshold &&
      std::fabs(d.diff_throughput) < options.tuning_threshold) {
    return d;
  }
  d.change_factor = std::max(std::fabs(residual_l) / in.avg_latency_ms,
                             std::fabs(residual_t) / in.avg_throughput_rps);
  if (residual_l < 0 || residual_t < 0) {
    d.action = TuningAction::kIncrease;
    d.new_share = std::min(1.0, in.current_share * (1 + d.change_factor));
  } else if (residual_l > 0 && residual_t > 0) {
    d.action = TuningAction::kDecrease;
    const double cut = std::min(d.change_factor, options.max_decrease);
    d.new_share = std::max(options.min_share, in.current_share * (1 - cut));
  }
  return d;
}

std::vector<double> MaxMinFairShares(std::span<const double> demands, double capacity,
                                     bool distribute_spare) {
  const size_t n = demands.size();
  std::vector<double> shares(n, 0.0);
  std::vector<size_t> open;  // unsatisfied, demand > 0
  for (size_t i = 0; i < n; ++i)
    if (demands[i] > 0) open.push_back(i);
  double left = std::max(0.0, capacity);
  // Progressive filling: whoever fits in an equal split of what is left is
  // satisfied (the smallest demands first); repeat until nobody fits.
  for (bool satisfied_some = true; satisfied_some && !open.empty();) {
    satisfied_some = false;
    const double equal = left / open.size();
    std::vector<size_t> still_open;
    for (size_t i : open) {
      if (demands[i] <= equal + kEpsilon) {
        shares[i] = demands[i];
        left -= demands[i];
        satisfied_some = true;
      } else {
        still_open.push_back(i);
      }
    }
    open = std::move(still_open);
  }
  double open_demand = 0;
  for (size_t i : open) open_demand += demands[i];
  for (size_t i : open) shares[i] = left * demands[i] / open_demand;
  if (open.empty() && distribute_spare && left > kEpsilon) {
    const double total = std::accumulate(demands.begin(), demands.end(), 0.0);
    if (total > 0)
      for (size_t i = 0; i < n; ++i) shares[i] += left * demands[i] / total;
  }
  return shares;
}

}  // namespace tessera
