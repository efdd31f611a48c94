// FF, BF, MCC and MECC: score every GPU the VM fits (the driver's start, host
// CPU/RAM free) and take the best score; ties go to the lower global index.
// LFR and FRAG score every (GPU, allowed free start) instead and place at the
// start they chose; ties go to a GPU holding VMs, then to an idle GPU of a
// host running VMs, then to the lower index, then to the start first in the
// profile's list. LFR falls back to rearranging one GPU when nothing fits
// (rearrange.h).
#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <optional>
#include <set>
#include <vector>

#include "online/placers.h"
#include "online/rearrange.h"

namespace tessera {
namespace {

// Arrivals of the last `window_s` seconds per profile slot: MECC's estimate of
// the probability that the next request asks for each profile.
class ProfileWindow {
 public:
  ProfileWindow(double window_s, size_t slots) : window_s_(window_s), counts_(slots, 0) {}

  // Adds an arrival of `slot` at `now_s` and forgets those at least a window
  // older (the current request counts, so no estimate is ever all zero).
  // The age is a difference of times, never `now_s - window_s_`: at large
  // times a small window vanishes in that subtraction, and the arrival just
  // added would look as old as the window.
  void Add(double now_s, int slot) {
    arrivals_.push_back({now_s, slot});
    ++counts_[slot];
    while (arrivals_.size() > 1 && now_s - arrivals_.front().time_s >= window_s_) {
      --counts_[arrivals_.front().slot];
      arrivals_.pop_front();
    }
  }

  std::vector<double> Probabilities() const {
    std::vector<double> p(counts_.size(), 0);
    for (size_t s = 0; s < p.size(); ++s) p[s] = static_cast<double>(counts_[s]) / arrivals_.size();
    return p;
  }

 private:
  struct Arrival {
    double time_s;
    int slot;
  };
  double window_s_;
  std::vector<int> counts_;
  std::deque<Arrival> arrivals_;
};

class ScanPlacer : public OnlinePlacer {
 public:
  ScanPlacer(ScanRule rule, const PlacerOptions& options) : rule_(rule), options_(options) {}

  std::string_view Name() const override {
    switch (rule_) {
      case ScanRule::kFirstFit:
        return "ff";
      case ScanRule::kBestFit:
        return "bf";
      case ScanRule::kMaxCc:
        return "mcc";
      case ScanRule::kMaxEcc:
        return "mecc";
      case ScanRule::kLargestFreeRun:
        return "lfr";
      case ScanRule::kLeastFragmentation:
        return "frag";
    }
    return "?";
  }

  void Start(const OnlineCluster& cluster) override {
    window_.emplace(options_.mecc_window_s, cluster.capability().profiles().size());
  }

  bool Place(const VmRequest& vm, OnlineCluster& cluster) override {
    if (rule_ == ScanRule::kMaxEcc) {
      window_->Add(vm.arrival_s, cluster.capability().Slot(vm.profile));
      weights_ = window_->Probabilities();
    }
    const Candidate best = BestPlacement(vm, cluster);
    if (best.gpu >= 0) return cluster.Place(vm.id, best.gpu, best.start).ok();
    return rule_ == ScanRule::kLargestFreeRun && options_.defragment &&
           PlaceByRearranging(vm, cluster);
  }

  std::unique_ptr<OnlinePlacer> Clone() const override {
    return std::make_unique<ScanPlacer>(*this);
  }

 private:
  struct Candidate {
    int gpu = -1;
    int start = -1;
    double score = -std::numeric_limits<double>::infinity();
    int tier = 0;  // see GpuIn

    // Higher score, then higher tier, then the lower index.
    bool Beats(const Candidate& other) const {
      if (score != other.score) return score > other.score;
      if (tier != other.tier) return tier > other.tier;
      return gpu < other.gpu;
    }
  };

  bool ChoosesStart() const {
    return rule_ == ScanRule::kLargestFreeRun || rule_ == ScanRule::kLeastFragmentation;
  }

  // The best-scoring (GPU, start): the driver's start, or every allowed free
  // start when the rule chooses it (the first of equal scores). GPUs with the
  // same occupancy score alike, so each occupancy is scored once, for the GPU
  // GpuIn picks, and only when its score can win.
  Candidate BestPlacement(const VmRequest& vm, const OnlineCluster& cluster) const {
    Candidate best;
    const CapabilityTable& table = cluster.capability();
    const SliceMask masks = SliceMask{1} << cluster.gpu_model().memory_slices;
    for (SliceMask used = 0; used < masks; ++used) {
      const std::set<int>& gpus = cluster.GpusWithMask(used);
      if (gpus.empty()) continue;
      Candidate here;
      for (int start : Starts(table, vm.profile, used)) {
        const double score =
            Score(cluster, used, used | MaskOf(cluster.gpu_model(), {vm.profile, start}));
        if (score > here.score) here.score = score, here.start = start;
      }
      if (here.start < 0 || here.score < best.score) continue;
      const Candidate gpu = GpuIn(gpus, used, vm, cluster);
      here.gpu = gpu.gpu;
      here.tier = gpu.tier;
      if (here.gpu >= 0 && here.Beats(best)) best = here;
    }
    return best;
  }

  // Of `gpus`, every GPU occupied as `used`, the one this rule takes among
  // equal scores, of those whose host has room for `vm` (gpu -1: none), with
  // its tier. FF, BF, MCC and MECC: the lowest index, tier 0. LFR and FRAG
  // keep fewer hosts active: a GPU holding VMs (tier 2), else the
  // lowest-index idle GPU of a host running VMs (tier 1), else of an idle
  // host (tier 0).
  Candidate GpuIn(const std::set<int>& gpus, SliceMask used, const VmRequest& vm,
                  const OnlineCluster& cluster) const {
    const auto fits = [&](int gpu) { return cluster.HostFits(cluster.HostOf(gpu), vm); };
    const auto first_fit = std::find_if(gpus.begin(), gpus.end(), fits);
    if (first_fit == gpus.end()) return {};
    if (!ChoosesStart()) return {.gpu = *first_fit};
    if (used != 0) return {.gpu = *first_fit, .tier = 2};
    // Hosts and their GPUs come in index order: the first idle GPU of a
    // busy host found is the lowest-index one.
    for (int host = 0; host < cluster.num_hosts(); ++host) {
      if (cluster.VmsOnHost(host) == 0) continue;
      const int end = cluster.FirstGpuOf(host) + cluster.host(host).gpus;
      for (int gpu = cluster.FirstGpuOf(host); gpu < end; ++gpu) {
        if (cluster.GpuEmpty(gpu) && fits(gpu)) return {.gpu = gpu, .tier = 1};
      }
    }
    return {.gpu = *first_fit};
  }

  // The starts a VM of `profile` may take on a GPU occupied as `used`: the
  // driver's, or with LFR and FRAG every allowed start that is free.
  std::vector<int> Starts(const CapabilityTable& table, int profile, SliceMask used) const {
    if (!ChoosesStart()) {
      const int start = table.AssignStart(used, profile);
      return start < 0 ? std::vector<int>{} : std::vector<int>{start};
    }
    std::vector<int> free;
    for (int start : table.gpu().profiles[profile].starts) {
      if ((MaskOf(table.gpu(), {profile, start}) & used) == 0) free.push_back(start);
    }
    return free;
  }

  // Higher is better; `after` = `used` with the VM placed.
  double Score(const OnlineCluster& cluster, SliceMask used, SliceMask after) const {
    const CapabilityTable& table = cluster.capability();
    switch (rule_) {
      case ScanRule::kFirstFit:
        return 0;
      case ScanRule::kBestFit:
        return -table.FreeSlices(after);
      case ScanRule::kMaxCc:
        return table.Capability(after);
      case ScanRule::kMaxEcc:
        return table.ExpectedCapability(after, weights_);
      case ScanRule::kLargestFreeRun:
        return table.LargestFreeRun(after);
      case ScanRule::kLeastFragmentation:
        // Lexicographic, exact in a double: the stranding avoided first,
        // then the fewer free slices (best fit); a GPU has at most 8.
        return 16.0 * (table.StrandedSlices(used) - table.StrandedSlices(after)) -
               table.FreeSlices(after);
    }
    return 0;
  }

  ScanRule rule_;
  PlacerOptions options_;
  std::optional<ProfileWindow> window_;
  std::vector<double> weights_;
};

}  // namespace

std::unique_ptr<OnlinePlacer> NewScanPlacer(ScanRule rule, const PlacerOptions& options) {
  return std::make_unique<ScanPlacer>(rule, options);
}

}  // namespace tessera
