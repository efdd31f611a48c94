#include "planners/migserving/config_space.h"

#include <algorithm>
#include <array>

namespace tessera::migserving {

Coverage::Coverage(const ConfigSpace& space)
    : space_(&space), capacity_(space.num_services(), 0.0) {
  for (int s = 0; s < space.num_services(); ++s) unsatisfied_ += Satisfied(s) ? 0 : 1;
}

void Coverage::Change(int service, double delta) {
  const bool before = Satisfied(service);
  capacity_[service] += delta;
  unsatisfied_ += static_cast<int>(before) - static_cast<int>(Satisfied(service));
}

void Coverage::Add(const GpuConfig& config) {
  const Layout& layout = space_->layouts()[config.layout];
  for (size_t i = 0; i < layout.size(); ++i) {
    const int s = config.services[i];
    if (s != kIdle) Change(s, space_->TripletFor(s, layout[i].profile)->capacity_rps);
  }
}

void Coverage::Remove(const GpuConfig& config) {
  const Layout& layout = space_->layouts()[config.layout];
  for (size_t i = 0; i < layout.size(); ++i) {
    if (config.services[i] != kIdle) RemoveInstance(config.services[i], layout[i].profile);
  }
}

void Coverage::RemoveInstance(int service, int profile) {
  Change(service, -space_->TripletFor(service, profile)->capacity_rps);
}

bool Coverage::Satisfied(int service) const {
  return !space_->servable(service) || CoversRate(capacity_[service], space_->rate(service));
}

std::vector<int> Coverage::Unsatisfied() const {
  std::vector<int> open;
  for (int s = 0; s < static_cast<int>(capacity_.size()); ++s) {
    if (!Satisfied(s)) open.push_back(s);
  }
  return open;
}

double Coverage::Need(int service) const {
  if (Satisfied(service)) return 0;
  return 1 - capacity_[service] / space_->rate(service);
}

namespace {

// The processes a service's instances may run: `max_procs`, or its fewest
// when it has no triplet with that few.
int ProcsCap(const ServiceSpec& spec, int max_procs) {
  int fewest = spec.feasible.empty() ? max_procs : spec.feasible.front().procs;
  for (const Triplet& t : spec.feasible) fewest = std::min(fewest, t.procs);
  return std::max(max_procs, fewest);
}

}  // namespace

ConfigSpace ConfigSpace::Build(const Problem& problem, int max_procs, MigServingScore score) {
  ConfigSpace space;
  space.gpu_ = &problem.gpu();
  space.score_ = score;
  const int n = static_cast<int>(problem.services().size());
  const int profiles = space.num_profiles();
  space.triplets_.assign(n * profiles, Triplet{});
  space.utility_.assign(n * profiles, 0.0);
  std::vector<bool> profile_used(profiles, false);
  for (int s = 0; s < n; ++s) {
    const ServiceSpec& spec = problem.services()[s];
    space.rates_.push_back(spec.service.rate_rps);
    space.servable_.push_back(!spec.feasible.empty());
    const int procs_cap = ProcsCap(spec, max_procs);
    for (const Triplet& t : spec.feasible) {
      if (t.procs > procs_cap || space.gpu_->profiles[t.profile].media_extensions) continue;
      Triplet& best = space.triplets_[space.Index(s, t.profile)];
      if (t.capacity_rps > best.capacity_rps) best = t;
      profile_used[t.profile] = true;
    }
    for (int p = 0; p < profiles; ++p) {
      const double capacity = space.triplets_[space.Index(s, p)].capacity_rps;
      if (spec.service.rate_rps > 0)
        space.utility_[space.Index(s, p)] = capacity / spec.service.rate_rps;
    }
  }
  std::vector<int> used;
  for (int p = 0; p < profiles; ++p) {
    if (profile_used[p]) used.push_back(p);
  }
  space.layouts_ = EnumerateMaximalLayouts(*space.gpu_, used);
  for (const Layout& layout : space.layouts_) {
    std::vector<int> order(layout.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return space.gpu_->profiles[layout[a].profile].compute_slices >
             space.gpu_->profiles[layout[b].profile].compute_slices;
    });
    space.fill_order_.push_back(std::move(order));
  }
  for (int s = 0; s < n; ++s) {
    double best = 0;
    for (const Layout& layout : space.layouts_) {
      double sum = 0;
      for (const Placement& p : layout) sum += space.Utility(s, p.profile);
      best = std::max(best, sum);
    }
    space.whole_gpu_utility_.push_back(best);
  }
  return space;
}

const Triplet* ConfigSpace::TripletFor(int service, int profile) const {
  const Triplet& t = triplets_[Index(service, profile)];
  return t.capacity_rps > 0 ? &t : nullptr;
}

double ConfigSpace::Score(const GpuConfig& config, const Coverage& coverage) const {
  const Layout& layout = layouts_[config.layout];
  std::vector<double> added(num_services(), 0.0);
  for (size_t i = 0; i < layout.size(); ++i) {
    if (config.services[i] != kIdle)
      added[config.services[i]] += Utility(config.services[i], layout[i].profile);
  }
  double score = 0;
  for (int s = 0; s < num_services(); ++s) {
    score += Gain(coverage.Need(s), 0.0, added[s]);
  }
  return score;
}

double ConfigSpace::Fill(int layout, std::span<const int> allowed, std::span<const double> needs,
                         int first, int* services) const {
  const Layout& placements = layouts_[layout];
  constexpr size_t kInline = 8;  // pairs and small sets need no allocation
  std::array<double, kInline> inline_added{};
  std::vector<double> heap_added;
  double* added = inline_added.data();
  if (allowed.size() > kInline) {
    heap_added.assign(allowed.size(), 0.0);
    added = heap_added.data();
  }
  double score = 0;
  // What instance `i` adds to the score serving allowed[j].
  auto gain = [&](size_t j, int i) {
    return Gain(needs[j], added[j], Utility(allowed[j], placements[i].profile));
  };
  auto assign = [&](size_t j, int i) {
    score += gain(j, i);
    added[j] += Utility(allowed[j], placements[i].profile);
    if (services) services[i] = allowed[j];
  };
  int skip = -1;
  if (first >= 0) {
    for (int i : fill_order_[layout]) {
      if (gain(first, i) > 0 && (skip < 0 || gain(first, i) > gain(first, skip))) skip = i;
    }
    if (skip < 0) return 0;
    assign(first, skip);
  }
  for (int i : fill_order_[layout]) {
    if (i == skip) continue;
    double best = 0;
    int chosen = -1;
    for (size_t j = 0; j < allowed.size(); ++j) {
      const double g = gain(j, i);
      if (g > best) {
        best = g;
        chosen = static_cast<int>(j);
      }
    }
    if (chosen >= 0) assign(chosen, i);
  }
  return score;
}

ScoredConfig ConfigSpace::Assemble(int layout, std::span<const int> allowed, int first,
                                   const Coverage& coverage) const {
  ScoredConfig out{{layout, std::vector<int>(layouts_[layout].size(), kIdle)}, 0};
  std::vector<double> needs(allowed.size());
  for (size_t j = 0; j < allowed.size(); ++j) needs[j] = coverage.Need(allowed[j]);
  out.score = Fill(layout, allowed, needs, first, out.config.services.data());
  return out;
}

double ConfigSpace::BestScore(int layout, std::span<const int> allowed,
                              std::span<const double> needs) const {
  return Fill(layout, allowed, needs, -1, nullptr);
}

ScoredConfig ConfigSpace::Best(int layout, std::span<const int> allowed,
                               const Coverage& coverage) const {
  return Assemble(layout, allowed, -1, coverage);
}

ScoredConfig ConfigSpace::BestWith(int layout, int service, std::span<const int> allowed,
                                   const Coverage& coverage) const {
  const auto it = std::find(allowed.begin(), allowed.end(), service);
  if (it == allowed.end()) return {};
  return Assemble(layout, allowed, static_cast<int>(it - allowed.begin()), coverage);
}

std::vector<PlacedSegment> ConfigSpace::Segments(const GpuConfig& config) const {
  const Layout& layout = layouts_[config.layout];
  std::vector<PlacedSegment> segments;
  for (size_t i = 0; i < layout.size(); ++i) {
    const int s = config.services[i];
    if (s != kIdle) segments.push_back({s, *TripletFor(s, layout[i].profile), layout[i].start});
  }
  return segments;
}

namespace {

bool AllIdle(const GpuConfig& config) {
  return std::all_of(config.services.begin(), config.services.end(),
                     [](int s) { return s == kIdle; });
}

}  // namespace

void Trim(const ConfigSpace& space, Deployment& deployment) {
  Coverage coverage(space);
  for (const GpuConfig& config : deployment) coverage.Add(config);
  for (auto g = deployment.rbegin(); g != deployment.rend(); ++g) {
    const Layout& layout = space.layouts()[g->layout];
    for (size_t i = 0; i < layout.size(); ++i) {
      const int s = g->services[i];
      if (s == kIdle) continue;
      const double without =
          coverage.capacity(s) - space.TripletFor(s, layout[i].profile)->capacity_rps;
      if (!CoversRate(without, space.rate(s))) continue;
      coverage.RemoveInstance(s, layout[i].profile);
      g->services[i] = kIdle;
    }
  }
  std::erase_if(deployment, AllIdle);
}

Cost CostOf(const ConfigSpace& space, const Deployment& deployment) {
  Cost cost;
  for (const GpuConfig& config : deployment) {
    if (AllIdle(config)) continue;
    ++cost.gpus;
    const Layout& layout = space.layouts()[config.layout];
    for (size_t i = 0; i < layout.size(); ++i) {
      if (config.services[i] != kIdle) {
        cost.slices += space.gpu().profiles[layout[i].profile].compute_slices;
      }
    }
  }
  return cost;
}

}  // namespace tessera::migserving
