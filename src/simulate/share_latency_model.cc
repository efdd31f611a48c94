// ShareLatencyModel of share_latency_model.h: batch latency at a GPU%,
// interpolated from the MIG profiles of one model on one GPU.
#include "tessera/simulate/share_latency_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <string>

#include "tessera/util/text_io.h"

namespace tessera {
namespace {

double Lerp(double x0, double y0, double x1, double y1, double x) {
  return y0 + (x - x0) / (x1 - x0) * (y1 - y0);
}

}  // namespace

Result<ShareLatencyModel> ShareLatencyModel::Build(const ProfileTable& profiles,
                                                   const GpuModel& gpu, std::string_view model) {
  // Per compute size: the profile the column is read from (the primary one
  // when it is profiled, else the first seen), then its points.
  std::map<int, std::string> chosen;
  for (const ProfileEntry* e : profiles.EntriesFor(model, gpu.name)) {
    const MigProfile* p = gpu.FindProfile(e->key.profile);
    if (e->key.procs != 1 || p == nullptr) continue;
    const int primary = gpu.PrimaryProfileWithComputeSlices(p->compute_slices);
    const bool is_primary = primary >= 0 && gpu.profiles[primary].name == p->name;
    auto [it, inserted] = chosen.emplace(p->compute_slices, p->name);
    if (!inserted && is_primary) it->second = p->name;
  }
  if (chosen.empty()) {
    return Status::NotFound(fmt::format("no profile of model {} on {} with one process (procs = 1)",
                                        QuoteForMessage(model), gpu.name));
  }
  ShareLatencyModel m;
  for (const auto& [slices, name] : chosen) {
    Column column{static_cast<double>(slices) / gpu.compute_slices, {}};
    for (const ProfileEntry* e : profiles.EntriesFor(model, gpu.name)) {
      if (e->key.procs == 1 && e->key.profile == name)
        column.points.emplace_back(e->key.batch, e->latency_ms);
    }
    std::sort(column.points.begin(), column.points.end());
    m.columns_.push_back(std::move(column));
  }
  return m;
}

double ShareLatencyModel::AtBatch(const Column& column, int batch) {
  const auto& pts = column.points;
  if (batch <= pts.front().first) return pts.front().second;
  if (batch >= pts.back().first) return pts.back().second * batch / pts.back().first;
  auto above = std::lower_bound(pts.begin(), pts.end(), std::make_pair(batch, 0.0));
  if (above->first == batch) return above->second;
  auto below = std::prev(above);
  return Lerp(below->first, below->second, above->first, above->second, batch);
}

double ShareLatencyModel::LatencyMs(int batch, double share) const {
  share = std::min(share, 1.0);
  const Column& first = columns_.front();
  if (share <= first.share) return AtBatch(first, batch) * first.share / share;
  const Column& last = columns_.back();
  if (share >= last.share) return AtBatch(last, batch);
  auto above = std::lower_bound(columns_.begin(), columns_.end(), share,
                                [](const Column& c, double s) { return c.share < s; });
  auto below = std::prev(above);
  return Lerp(below->share, AtBatch(*below, batch), above->share, AtBatch(*above, batch), share);
}

std::vector<double> ShareLatencyModel::Shares() const {
  std::vector<double> shares;
  for (const Column& c : columns_) shares.push_back(c.share);
  return shares;
}

double ShareLatencyModel::KneeShare(int batch) const {
  constexpr int kSteps = 100;  // 1% apart
  std::vector<std::pair<double, double>> curve;
  for (int k = 1; k <= kSteps; ++k) {
    const double share = static_cast<double>(k) / kSteps;
    curve.emplace_back(share, ThroughputRps(batch, share));
  }
  return KneePoint(curve);
}

double KneePoint(std::span<const std::pair<double, double>> curve) {
  const auto [last_share, last_throughput] = curve.back();
  double best = curve.front().first;
  double best_gain = -std::numeric_limits<double>::infinity();
  for (const auto& [share, throughput] : curve) {
    const double gain = throughput / last_throughput - share / last_share;
    if (gain > best_gain + 1e-12) {
      best_gain = gain;
      best = share;
    }
  }
  return best;
}

}  // namespace tessera
