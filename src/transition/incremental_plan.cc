#include "transition/incremental_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "tessera/gpu/mig_layout.h"
#include "tessera/plan/metrics.h"
#include "tessera/validator.h"

namespace tessera {
namespace {

// How many times Consolidate replaces instances of one service.
constexpr int kConsolidateRounds = 8;
// Shares and capacities per share equal within rounding.
constexpr double kShareSlack = 1e-6;

// One GPU of the plan being built: a GPU of `current` (its index kept) or a
// new one (index -1).
struct OpenGpu {
  int index = -1;
  MigSlots slots;
  std::vector<PlacedSegment> segments;
};

// Larger profiles first: by compute slices, then memory slices.
bool LargerProfile(const GpuModel& gpu, int a, int b) {
  const MigProfile& pa = gpu.profiles[a];
  const MigProfile& pb = gpu.profiles[b];
  if (pa.compute_slices != pb.compute_slices) return pa.compute_slices > pb.compute_slices;
  return pa.memory_slices > pb.memory_slices;
}

void SortLargestFirst(const GpuModel& gpu, std::vector<PlacedSegment>& segments) {
  std::stable_sort(segments.begin(), segments.end(),
                   [&](const PlacedSegment& a, const PlacedSegment& b) {
                     return LargerProfile(gpu, a.triplet.profile, b.triplet.profile);
                   });
}

// The highest allowed start of `profile` free on `slots`, or -1. Filling
// GPUs from the top keeps the low starts, which every profile allows (and
// the only ones 4g and 7g allow), free the longest.
int FreeStart(const GpuModel& gpu, const MigSlots& slots, int profile) {
  const std::vector<int>& starts = gpu.profiles[profile].starts;
  for (auto it = starts.rbegin(); it != starts.rend(); ++it) {
    if (slots.CanPlace(profile, *it)) return *it;
  }
  return -1;
}

// The best triplet of each profile for `spec`: the most capacity (ties: the
// first in the problem's order).
std::map<int, Triplet> BestByProfile(const ServiceSpec& spec) {
  std::map<int, Triplet> best;
  for (const Triplet& t : spec.feasible) {
    auto it = best.find(t.profile);
    if (it == best.end() || t.capacity_rps > it->second.capacity_rps) best[t.profile] = t;
  }
  return best;
}

struct Spot {
  int gpu = -1;  // position in Cluster::gpus(); -1 = none
  int start = -1;
};

// The GPUs of the plan being built and each service's capacity on them.
class Cluster {
 public:
  explicit Cluster(const Problem& problem)
      : problem_(problem), gpu_(problem.gpu()), capacity_(problem.services().size(), 0.0) {}

  std::vector<OpenGpu>& gpus() { return gpus_; }
  // Capacity each service has on the cluster (Triplet::capacity_rps).
  double Capacity(int service) const { return capacity_[service]; }

  void Open(int index) { gpus_.push_back({index, MigSlots(gpu_), {}}); }

  void Put(const Spot& spot, PlacedSegment seg) {
    seg.start = spot.start;
    gpus_[spot.gpu].slots.Place(seg.triplet.profile, seg.start);
    gpus_[spot.gpu].segments.push_back(seg);
    capacity_[seg.service] += seg.triplet.capacity_rps;
  }

  void Take(int gpu, const PlacedSegment& seg) {
    OpenGpu& g = gpus_[gpu];
    g.slots.Remove(seg.triplet.profile, seg.start);
    g.segments.erase(std::find_if(g.segments.begin(), g.segments.end(),
                                  [&](const PlacedSegment& s) { return s.start == seg.start; }));
    capacity_[seg.service] -= seg.triplet.capacity_rps;
  }

  // Takes every segment off the `count` occupied GPUs with the fewest used
  // compute slices (current GPUs only; ties: the first).
  void Clear(int count) {
    std::vector<int> order;
    for (int i = 0; i < static_cast<int>(gpus_.size()); ++i) {
      if (!gpus_[i].segments.empty()) order.push_back(i);
    }
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return gpus_[a].slots.used_compute_slices() < gpus_[b].slots.used_compute_slices();
    });
    order.resize(std::min<size_t>(order.size(), std::max(count, 0)));
    for (int i : order) {
      const std::vector<PlacedSegment> segments = gpus_[i].segments;
      for (const PlacedSegment& seg : segments) Take(i, seg);
    }
  }

  int Occupied() const {
    return static_cast<int>(std::count_if(gpus_.begin(), gpus_.end(),
                                          [](const OpenGpu& g) { return !g.segments.empty(); }));
  }

  // Best fit for `profile`: the GPU with the fewest free compute slices that
  // has a free start, GPUs of `current` before new ones. `skip` is never
  // chosen; with `occupied_only`, neither is an empty GPU.
  Spot BestFit(int profile, int skip, bool occupied_only) const {
    Spot best;
    auto key = [&](int i) {
      return std::make_pair(gpus_[i].index < 0, gpus_[i].slots.free_compute_slices());
    };
    for (int i = 0; i < static_cast<int>(gpus_.size()); ++i) {
      if (i == skip || (occupied_only && gpus_[i].segments.empty())) continue;
      if (best.gpu >= 0 && key(i) >= key(best.gpu)) continue;
      const int start = FreeStart(gpu_, gpus_[i].slots, profile);
      if (start >= 0) best = {i, start};
    }
    return best;
  }

  // Covers what `service` lacks of its rate with segments in free places of
  // the occupied GPUs but `skip`: each time the smallest profile whose best
  // segment covers the rest, when one fits somewhere, else the fitting one
  // with the most capacity. Returns the rate still uncovered (0 = none).
  double FillHoles(int service, int skip) {
    const std::map<int, Triplet> best = BestByProfile(problem_.services()[service]);
    const double rate = problem_.services()[service].service.rate_rps;
    while (!CoversRate(capacity_[service], rate)) {
      const double missing = rate - capacity_[service];
      const Triplet* chosen = nullptr;
      Spot spot;
      for (const auto& [profile, t] : best) {
        const Spot fit = BestFit(profile, skip, true);
        if (fit.gpu < 0) continue;
        const bool covers = CoversRate(t.capacity_rps, missing);
        const bool chosen_covers = chosen && CoversRate(chosen->capacity_rps, missing);
        const bool better =
            !chosen ||
            (covers && (!chosen_covers || LargerProfile(gpu_, chosen->profile, profile))) ||
            (!covers && !chosen_covers && t.capacity_rps > chosen->capacity_rps);
        if (better) {
          chosen = &t;
          spot = fit;
        }
      }
      if (!chosen) return missing;
      Put(spot, {service, *chosen, 0});
    }
    return 0;
  }

  // New segments, largest first, into free places of the current GPUs, then
  // of new GPUs, opening one when none has room.
  void PlaceNew(std::vector<PlacedSegment> segments) {
    SortLargestFirst(gpu_, segments);
    for (const PlacedSegment& seg : segments) {
      Spot spot = BestFit(seg.triplet.profile, -1, false);
      if (spot.gpu < 0) {
        Open(-1);
        spot = {static_cast<int>(gpus_.size()) - 1,
                FreeStart(gpu_, gpus_.back().slots, seg.triplet.profile)};
      }
      Put(spot, seg);
    }
  }

  // Serves each service on a smaller share of the GPUs where one instance
  // of another profile can replace several of its instances: of the
  // profiles whose best triplet serves more requests per GPU share (Share)
  // than some of the service's instances, the one freeing the most share
  // when it replaces those instances, smallest first, while the rest and it
  // still cover the rate; up to kConsolidateRounds times per service. The
  // new instance goes where best fit puts it, on a new GPU when none has
  // room: Compact then empties what GPUs the freed places allow.
  void Consolidate() {
    for (int s = 0; s < static_cast<int>(problem_.services().size()); ++s) {
      const ServiceSpec& spec = problem_.services()[s];
      const std::map<int, Triplet> best = BestByProfile(spec);
      for (int round = 0; round < kConsolidateRounds; ++round) {
        const Triplet* chosen = nullptr;
        std::vector<std::pair<int, PlacedSegment>> replaced;
        double freed = kShareSlack;
        for (const auto& [profile, t] : best) {
          std::vector<std::pair<int, PlacedSegment>> cut = Replaceable(s, t);
          const double share = std::accumulate(
              cut.begin(), cut.end(), -Share(profile),
              [&](double sum, const auto& c) { return sum + Share(c.second.triplet.profile); });
          if (share > freed) {
            freed = share;
            chosen = &t;
            replaced = std::move(cut);
          }
        }
        if (!chosen) break;
        Spot spot = BestFit(chosen->profile, -1, false);
        if (spot.gpu < 0) {
          Open(-1);
          spot = {static_cast<int>(gpus_.size()) - 1,
                  FreeStart(gpu_, gpus_.back().slots, chosen->profile)};
        }
        Put(spot, {s, *chosen, 0});
        for (const auto& [gpu, seg] : replaced) Take(gpu, seg);
      }
    }
  }

  // While more than `allowed` GPUs are occupied, empties the least-filled
  // GPU whose segments move into holes of the others (new GPUs first on a
  // tie), or, failing that, whose services' rates holes of the others can
  // serve with segments of other sizes.
  void Compact(int allowed) {
    while (Occupied() > allowed) {
      std::vector<int> order;
      for (int i = 0; i < static_cast<int>(gpus_.size()); ++i) {
        if (!gpus_[i].segments.empty()) order.push_back(i);
      }
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return std::make_pair(gpus_[a].slots.used_compute_slices(), gpus_[a].index >= 0) <
               std::make_pair(gpus_[b].slots.used_compute_slices(), gpus_[b].index >= 0);
      });
      const bool moved = std::any_of(order.begin(), order.end(),
                                     [&](int i) { return TryEmpty(i, /*reserve=*/false); });
      if (!moved && std::none_of(order.begin(), order.end(),
                                 [&](int i) { return TryEmpty(i, /*reserve=*/true); })) {
        return;
      }
    }
  }

 private:
  // Empties gpus[from]: its segments move to holes of the occupied GPUs as
  // they are, or (`reserve`) their services' rates are served anew there.
  // False, and nothing changed, when they do not fit.
  bool TryEmpty(int from, bool reserve) {
    const std::vector<OpenGpu> before = gpus_;
    const std::vector<double> capacity = capacity_;
    std::vector<PlacedSegment> moving = gpus_[from].segments;
    SortLargestFirst(gpu_, moving);
    for (const PlacedSegment& seg : moving) Take(from, seg);
    bool fits = true;
    for (const PlacedSegment& seg : moving) {
      if (reserve) {
        fits = FillHoles(seg.service, from) == 0;
      } else {
        const Spot spot = BestFit(seg.triplet.profile, from, true);
        fits = spot.gpu >= 0;
        if (fits) Put(spot, seg);
      }
      if (!fits) break;
    }
    if (!fits) {
      gpus_ = before;
      capacity_ = capacity;
    }
    return fits;
  }

  // How much of a GPU `profile` takes: the larger of its compute and
  // memory shares (on an A100 a 3g.40gb takes half the memory, as a 4g.40gb
  // does, so two 3g leave a compute slice no instance can use).
  double Share(int profile) const {
    const MigProfile& p = gpu_.profiles[profile];
    return std::max(static_cast<double>(p.compute_slices) / gpu_.compute_slices,
                    static_cast<double>(p.memory_slices) / gpu_.memory_slices);
  }

  // The instances of `service` (GPU, segment) that one instance of `t`
  // replaces: those serving fewer requests per share than `t`, smallest
  // first, while the rest of the service's and `t` still cover its rate.
  std::vector<std::pair<int, PlacedSegment>> Replaceable(int service, const Triplet& t) const {
    const auto per_share = [&](const Triplet& x) { return x.capacity_rps / Share(x.profile); };
    std::vector<std::pair<int, PlacedSegment>> weaker;
    for (int k = 0; k < static_cast<int>(gpus_.size()); ++k) {
      for (const PlacedSegment& seg : gpus_[k].segments) {
        if (seg.service == service && per_share(seg.triplet) < per_share(t) * (1 - kShareSlack)) {
          weaker.push_back({k, seg});
        }
      }
    }
    std::stable_sort(weaker.begin(), weaker.end(), [](const auto& a, const auto& b) {
      return a.second.triplet.capacity_rps < b.second.triplet.capacity_rps;
    });
    const double rate = problem_.services()[service].service.rate_rps;
    double kept = capacity_[service] + t.capacity_rps;
    size_t n = 0;
    while (n < weaker.size() && CoversRate(kept - weaker[n].second.triplet.capacity_rps, rate)) {
      kept -= weaker[n++].second.triplet.capacity_rps;
    }
    weaker.resize(n);
    return weaker;
  }

  const Problem& problem_;
  const GpuModel& gpu_;
  std::vector<OpenGpu> gpus_;
  std::vector<double> capacity_;
};

// InvalidArgument unless `current` is a MIG plan of the problem's one GPU
// model with a legal layout on every GPU.
Status CheckCurrent(const Problem& problem, const Deployment& current) {
  const GpuModel& gpu = problem.gpu();
  if (problem.mps() || problem.pool().size() > 1) {
    return Status::InvalidArgument(
        "incremental re-planning keeps MIG instances of one GPU model: plan the scenario for one "
        "MIG GPU model");
  }
  if (current.sharing == Sharing::kMps) {
    return Status::InvalidArgument(
        "sharing: the plan shares GPUs whole through MPS; incremental re-planning keeps MIG "
        "instances");
  }
  if (current.gpu != gpu.name) {
    return Status::InvalidArgument(
        fmt::format("gpu: the plan is for {} but the scenario is planned for {} (use --gpu {})",
                    current.gpu, gpu.name, current.gpu));
  }
  std::set<int> indices;
  for (size_t k = 0; k < current.gpus.size(); ++k) {
    const GpuAssignment& g = current.gpus[k];
    if (!indices.insert(g.index).second) {
      return Status::InvalidArgument(fmt::format("gpus[{}].index: {} twice", k, g.index));
    }
    if (!g.gpu.empty() && g.gpu != gpu.name) {
      return Status::InvalidArgument(
          fmt::format("gpus[{}].gpu: {} in a plan of {}; incremental re-planning keeps one GPU "
                      "model",
                      k, g.gpu, gpu.name));
    }
    std::vector<Placement> placements;
    for (size_t j = 0; j < g.instances().size(); ++j) {
      const int profile = gpu.ProfileIndex(g.instances()[j].profile);
      if (profile < 0) {
        return Status::InvalidArgument(fmt::format("gpus[{}].instances[{}].profile: {} has no {}",
                                                   k, j, gpu.name, g.instances()[j].profile));
      }
      placements.push_back({profile, g.instances()[j].start});
    }
    TESSERA_RETURN_IF_ERROR(CheckLayout(gpu, placements).WithContext(fmt::format("gpus[{}]", k)));
  }
  return Status::Ok();
}

// The current deployment's GPUs with the instances the new scenario keeps:
// those of services with the same model and SLO whose triplet the rule
// still allows, less those a fallen rate no longer needs.
class Keeper {
 public:
  Keeper(const Problem& problem, const Deployment& current) : problem_(problem), cluster_(problem) {
    std::map<std::string, int> index;
    for (size_t i = 0; i < problem.services().size(); ++i) {
      index.emplace(problem.services()[i].service.name, static_cast<int>(i));
    }
    std::vector<bool> same_inputs(problem.services().size(), false);
    std::map<int, double> old_rate;
    for (const ServiceOutcome& o : current.services) {
      auto it = index.find(o.name);
      if (it == index.end()) continue;
      const Service& s = problem.services()[it->second].service;
      same_inputs[it->second] = o.model == s.model && o.slo_ms == s.slo_ms;
      old_rate.emplace(it->second, o.rate_rps);
    }
    for (const GpuAssignment& g : current.gpus) {
      cluster_.Open(g.index);
      for (const Instance& inst : g.instances()) {
        auto it = index.find(inst.service);
        if (it == index.end() || !same_inputs[it->second]) continue;
        if (std::optional<Triplet> t = Feasible(it->second, inst)) {
          cluster_.Put({static_cast<int>(cluster_.gpus().size()) - 1, inst.start},
                       {it->second, *t, inst.start});
        }
      }
    }
    for (const auto& [service, rate] : old_rate) {
      if (same_inputs[service] && problem.services()[service].service.rate_rps < rate) {
        DropSurplus(service);
      }
    }
  }

  Cluster& cluster() { return cluster_; }

 private:
  // The problem's triplet that `inst` runs, if the rule allows it.
  std::optional<Triplet> Feasible(int service, const Instance& inst) const {
    const int profile = problem_.gpu().ProfileIndex(inst.profile);
    for (const Triplet& t : problem_.services()[service].feasible) {
      if (t.profile == profile && t.batch == inst.batch && t.procs == inst.procs) return t;
    }
    return std::nullopt;
  }

  // Drops the instances of `service` its new rate does not need, those on
  // the emptiest GPUs first (larger ones first on a GPU), while the rest
  // still cover the rate.
  void DropSurplus(int service) {
    const double rate = problem_.services()[service].service.rate_rps;
    std::vector<OpenGpu>& gpus = cluster_.gpus();
    std::vector<std::pair<int, PlacedSegment>> held;
    for (int k = 0; k < static_cast<int>(gpus.size()); ++k) {
      for (const PlacedSegment& seg : gpus[k].segments) {
        if (seg.service == service) held.push_back({k, seg});
      }
    }
    std::stable_sort(held.begin(), held.end(), [&](const auto& a, const auto& b) {
      const int fa = gpus[a.first].slots.used_compute_slices();
      const int fb = gpus[b.first].slots.used_compute_slices();
      if (fa != fb) return fa < fb;
      return LargerProfile(problem_.gpu(), a.second.triplet.profile, b.second.triplet.profile);
    });
    for (const auto& [k, seg] : held) {
      if (CoversRate(cluster_.Capacity(service) - seg.triplet.capacity_rps, rate)) {
        cluster_.Take(k, seg);
      }
    }
  }

  const Problem& problem_;
  Cluster cluster_;
};

// Segments covering `deficits`, planned by `planner` on the problem
// restricted to them (services renumbered back to `problem`'s).
Result<std::vector<PlacedSegment>> PlanDeficits(const Planner& planner, const Problem& problem,
                                                const std::vector<double>& deficits,
                                                const PlanContext& context) {
  Scenario sub = problem.scenario();
  sub.services.clear();
  std::vector<int> original;
  for (size_t i = 0; i < deficits.size(); ++i) {
    if (deficits[i] <= 0) continue;
    sub.services.push_back(problem.services()[i].service);
    sub.services.back().rate_rps = deficits[i];
    original.push_back(static_cast<int>(i));
  }
  if (sub.services.empty()) return std::vector<PlacedSegment>{};
  TESSERA_ASSIGN_OR_RETURN(Problem restricted,
                           Problem::Build(sub, problem.gpu(), problem.profiles(), problem.rule()));
  TESSERA_RETURN_IF_ERROR(
      CheckPlannerFits(planner, restricted).WithContext("planner " + std::string(planner.Name())));
  TESSERA_ASSIGN_OR_RETURN(PlanResult planned, planner.Plan(restricted, context));
  std::vector<PlacedSegment> segments;
  for (const std::vector<PlacedSegment>& g : planned.mig()) {
    for (PlacedSegment seg : g) {
      seg.service = original[seg.service];
      // A segment counts what the rule gives it at the service's whole rate
      // (the pooled rule's share grows with the rate), not at the deficit's.
      // Feasibility does not depend on the rate, so `problem` lists it.
      for (const Triplet& t : problem.services()[seg.service].feasible) {
        if (t.profile == seg.triplet.profile && t.batch == seg.triplet.batch &&
            t.procs == seg.triplet.procs && t.pool == seg.triplet.pool) {
          seg.triplet = t;
          break;
        }
      }
      segments.push_back(seg);
    }
  }
  return segments;
}

// Gives `d`'s GPUs the indices in `kept` (-1 = none: the lowest index no
// other GPU holds), sets their nodes and sorts them by index.
void Renumber(Deployment& d, const std::vector<int>& kept, int gpus_per_node) {
  std::set<int> taken(kept.begin(), kept.end());
  int next = 0;
  for (size_t k = 0; k < d.gpus.size(); ++k) {
    int index = kept[k];
    if (index < 0) {
      while (taken.count(next)) ++next;
      index = next++;
    }
    d.gpus[k].index = index;
    d.gpus[k].node = index / gpus_per_node;
  }
  std::sort(d.gpus.begin(), d.gpus.end(),
            [](const GpuAssignment& a, const GpuAssignment& b) { return a.index < b.index; });
}

using SegmentKey = std::tuple<std::string, std::string, std::string, int, int>;
using PlaceKey = std::tuple<int, int, SegmentKey>;

SegmentKey SegmentOf(const Instance& inst) {
  return {inst.service, inst.model, inst.profile, inst.batch, inst.procs};
}

// The current GPU holding the most instances identical (place included) to
// each of `d`'s GPUs, matched greedily, most shared instances first; -1 for
// a GPU matched to none.
std::vector<int> MatchGpus(const Deployment& d, const Deployment& current) {
  std::map<std::pair<int, SegmentKey>, std::vector<int>> holders;  // (start, segment) -> GPUs
  for (const GpuAssignment& g : current.gpus) {
    for (const Instance& inst : g.instances()) {
      holders[{inst.start, SegmentOf(inst)}].push_back(g.index);
    }
  }
  std::map<std::pair<int, int>, int> shared;  // (position in d, current index) -> instances
  for (size_t k = 0; k < d.gpus.size(); ++k) {
    for (const Instance& inst : d.gpus[k].instances()) {
      auto it = holders.find({inst.start, SegmentOf(inst)});
      if (it == holders.end()) continue;
      for (int index : it->second) ++shared[{static_cast<int>(k), index}];
    }
  }
  std::vector<std::pair<std::pair<int, int>, int>> pairs(shared.begin(), shared.end());
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<int> match(d.gpus.size(), -1);
  std::set<int> used;
  for (const auto& [pair, count] : pairs) {
    if (match[pair.first] >= 0 || used.count(pair.second)) continue;
    match[pair.first] = pair.second;
    used.insert(pair.second);
  }
  return match;
}

// Kept, moved, added and removed instances from `current` to `next`.
void CountChanges(const Deployment& current, const Deployment& next, IncrementalPlan& plan) {
  std::multiset<PlaceKey> before;
  for (const GpuAssignment& g : current.gpus) {
    for (const Instance& inst : g.instances())
      before.insert({g.index, inst.start, SegmentOf(inst)});
  }
  std::vector<SegmentKey> placed_elsewhere;
  for (const GpuAssignment& g : next.gpus) {
    for (const Instance& inst : g.instances()) {
      auto it = before.find({g.index, inst.start, SegmentOf(inst)});
      if (it == before.end()) {
        placed_elsewhere.push_back(SegmentOf(inst));
        continue;
      }
      before.erase(it);
      ++plan.counts.kept;
    }
  }
  std::multiset<SegmentKey> left;
  for (const PlaceKey& key : before) left.insert(std::get<2>(key));
  for (const SegmentKey& key : placed_elsewhere) {
    auto it = left.find(key);
    if (it == left.end()) {
      ++plan.counts.added;
      continue;
    }
    left.erase(it);
    ++plan.counts.moved;
  }
  plan.counts.removed = static_cast<int>(left.size());
}

}  // namespace

Result<IncrementalPlan> PlanIncremental(const PlannerRegistry& planners, const Problem& problem,
                                        const Deployment& current,
                                        const IncrementalOptions& options,
                                        const PlanContext& context, const Clock& clock) {
  const double start_ms = clock.NowMs();
  TESSERA_RETURN_IF_ERROR(CheckCurrent(problem, current));
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<Planner> planner, planners.Create(options.planner));
  if (planner->Mode() == Sharing::kMps) {
    return Status::InvalidArgument(
        fmt::format("planner {} shares GPUs whole through MPS; incremental re-planning places "
                    "MIG segments",
                    planner->Name()));
  }
  IncrementalPlan plan;
  std::string scratch_note;
  TESSERA_ASSIGN_OR_RETURN(PlanReport scratch,
                           RunDefaultPlanner(planners, problem, context, scratch_note, clock));
  const Metrics& sm = scratch.deployment.metrics;
  plan.scratch_gpus = sm.gpus;
  plan.scratch_proven = sm.proven_optimal.value_or(false) || sm.gpus <= sm.lower_bound;
  plan.allowed_gpus =
      plan.scratch_gpus + options.max_extra_gpus.value_or(plan.scratch_proven ? 0 : 1);

  Keeper keeper(problem, current);
  Cluster& cluster = keeper.cluster();
  cluster.Clear(options.repack_gpus);
  // What the kept instances leave uncovered goes to holes of the current
  // GPUs first, the rest to segments the planner plans.
  std::vector<double> deficits;
  for (size_t i = 0; i < problem.services().size(); ++i) {
    const bool served = !problem.services()[i].feasible.empty();
    deficits.push_back(served ? cluster.FillHoles(static_cast<int>(i), -1) : 0);
  }
  TESSERA_ASSIGN_OR_RETURN(std::vector<PlacedSegment> added,
                           PlanDeficits(*planner, problem, deficits, context));
  cluster.PlaceNew(std::move(added));
  if (options.consolidate) {
    cluster.Consolidate();
    // As few GPUs as moving instances into holes reaches, so no fewer for
    // the allowed count below.
    cluster.Compact(0);
  } else if (cluster.Occupied() > plan.allowed_gpus) {
    cluster.Compact(plan.allowed_gpus);
  }
  const int needed = cluster.Occupied();
  Deployment d;
  std::vector<int> indices;
  if (needed <= plan.allowed_gpus) {
    PlanResult result;
    for (OpenGpu& g : cluster.gpus()) {
      if (g.segments.empty()) continue;
      result.mig().push_back(std::move(g.segments));
      indices.push_back(g.index);
    }
    d = BuildDeployment(problem, result, "incremental+" + std::string(planner->Name()),
                        StrongestBound(problem), clock.NowMs() - start_ms);
  } else {
    plan.note = fmt::format(
        "the incremental plan needs {} GPUs, more than the {} allowed ({} from scratch + {}); the "
        "plan from scratch is used, its GPUs matched to the current ones",
        needed, plan.allowed_gpus, plan.scratch_gpus, plan.allowed_gpus - plan.scratch_gpus);
    d = std::move(scratch.deployment);
    indices = MatchGpus(d, current);
  }
  Renumber(d, indices, problem.gpus_per_node());
  const std::vector<Violation> violations = ValidateDeployment(d, problem);
  if (!violations.empty()) {
    return Status::Internal("incremental re-planning produced an invalid plan:\n" +
                            FormatViolations(violations));
  }
  CountChanges(current, d, plan);
  // A service is infeasible when no triplet serves it, in either plan.
  plan.report.outcome = scratch.outcome;
  plan.report.deployment = std::move(d);
  return plan;
}

}  // namespace tessera
