// FF, BF, MCC and MECC: score every GPU the VM fits (the driver's start, host
// CPU/RAM free) and take the best score; ties go to the lower global index.
#include <cmath>
#include <deque>
#include <limits>
#include <optional>
#include <set>
#include <vector>

#include "online/placers.h"

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
    const Candidate best = BestGpu(vm, cluster);
    return best.gpu >= 0 && cluster.Place(vm.id, best.gpu, best.start).ok();
  }

 private:
  struct Candidate {
    int gpu = -1;
    int start = -1;
    double score = -std::numeric_limits<double>::infinity();
  };

  // The best-scoring GPU, lowest index among equals. GPUs with the same
  // occupancy score alike, so each occupancy is scored once and only its
  // lowest-index GPU whose host has room competes.
  Candidate BestGpu(const VmRequest& vm, const OnlineCluster& cluster) const {
    Candidate best;
    const SliceMask masks = SliceMask{1} << cluster.gpu_model().memory_slices;
    for (SliceMask used = 0; used < masks; ++used) {
      const std::set<int>& gpus = cluster.GpusWithMask(used);
      const int start = gpus.empty() ? -1 : cluster.capability().AssignStart(used, vm.profile);
      if (start < 0) continue;
      const double score = Score(cluster, vm, used, start);
      if (score < best.score) continue;
      const int must_beat = score == best.score ? best.gpu : std::numeric_limits<int>::max();
      for (int gpu : gpus) {
        if (gpu >= must_beat) break;
        if (!cluster.HostFits(cluster.HostOf(gpu), vm)) continue;
        best = {gpu, start, score};
        break;
      }
    }
    return best;
  }

  // Higher is better.
  double Score(const OnlineCluster& cluster, const VmRequest& vm, SliceMask used, int start) const {
    const CapabilityTable& table = cluster.capability();
    const SliceMask after = used | MaskOf(cluster.gpu_model(), {vm.profile, start});
    switch (rule_) {
      case ScanRule::kFirstFit:
        return 0;
      case ScanRule::kBestFit:
        return -table.FreeSlices(after);
      case ScanRule::kMaxCc:
        return table.Capability(after);
      case ScanRule::kMaxEcc:
        return table.ExpectedCapability(after, weights_);
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
