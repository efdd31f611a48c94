// Factories of the built-in online placement policies (registered by
// builtin_placers.cc). Internal to the library.
#ifndef TESSERA_ONLINE_PLACERS_H_
#define TESSERA_ONLINE_PLACERS_H_

#include <algorithm>
#include <cmath>
#include <memory>

#include "tessera/online/online_placer.h"

namespace tessera {

// True iff `profile` spans every memory slice (7g.40gb on an A100-40GB):
// GRMU's heavy class; every other profile is light.
inline bool IsFullGpuProfile(const GpuModel& gpu, int profile) {
  return gpu.profiles[profile].memory_slices == gpu.memory_slices;
}

// The share of a GPU a request for `profile` takes at its densest,
// 1 / max_instances: a whole GPU for 7g.40gb and 4g.20gb on an A100.
inline double GpuShareOf(const MigProfile& profile) {
  return 1.0 / std::max(1, profile.max_instances);
}

// fair's demand learning: the GPU demand (GpuShareOf per request) counted so
// far per class, and the heavy cap it implies.
class ClassDemand {
 public:
  void Count(const GpuModel& gpu, int profile) {
    (IsFullGpuProfile(gpu, profile) ? heavy_ : light_) += GpuShareOf(gpu.profiles[profile]);
  }
  // round(factor x the heavy share of the demand x gpus). REQUIRES: a request counted.
  int HeavyCap(double factor, int gpus) const {
    return static_cast<int>(std::lround(factor * heavy_ / (heavy_ + light_) * gpus));
  }

 private:
  double heavy_ = 0;
  double light_ = 0;
};

// How a scanning policy ranks the placements that can take a VM. FF, BF, MCC
// and MECC rank GPUs (the start is the driver's) and keep the lowest index of
// equal scores; LFR and FRAG rank (GPU, start) pairs and keep, of equal
// scores, a GPU holding VMs, then an idle GPU of a host running VMs, then the
// lowest index, then the first start.
enum class ScanRule {
  kFirstFit,            // FF: the first GPU that fits
  kBestFit,             // BF: fewest memory slices left free after the placement
  kMaxCc,               // MCC (GRMU Algorithm 6): highest CC after the placement
  kMaxEcc,              // MECC (Algorithm 7): highest probability-weighted CC after it
  kLargestFreeRun,      // LFR (HAMi): longest run of free slices left on the GPU;
                        // rearranges one GPU when nothing fits (defragment on)
  kLeastFragmentation,  // FRAG (arXiv 2511.18906): least growth of the GPU's
                        // stranded slices (CapabilityTable::StrandedSlices)
};

std::unique_ptr<OnlinePlacer> NewScanPlacer(ScanRule rule, const PlacerOptions& options);

// How GRMU's dual-basket pooling caps the heavy (full-GPU) basket.
enum class BasketCap {
  kFixedShare,    // grmu: heavy_share x GPUs (Algorithm 2)
  kLearnedShare,  // fair: fair_factor x the heavy requests' share of the
                  // GPU demand seen so far, x GPUs
};

// GRMU (Algorithms 2-5): dual-basket pooling, defragmentation, consolidation;
// "fair" with BasketCap::kLearnedShare.
std::unique_ptr<OnlinePlacer> NewGrmuPlacer(BasketCap cap, const PlacerOptions& options);

// steer: frag's placements, lfr's rearranging fallback, and fair's heavy cap
// weighted by the share of the accepted GPU demand still resident
// (docs/online-placement.md).
std::unique_ptr<OnlinePlacer> NewSteerPlacer(const PlacerOptions& options);

}  // namespace tessera

#endif  // TESSERA_ONLINE_PLACERS_H_
