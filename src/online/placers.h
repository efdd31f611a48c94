// Factories of the built-in online placement policies (registered by
// builtin_placers.cc). Internal to the library.
#ifndef TESSERA_ONLINE_PLACERS_H_
#define TESSERA_ONLINE_PLACERS_H_

#include <memory>

#include "tessera/online/online_placer.h"

namespace tessera {

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

}  // namespace tessera

#endif  // TESSERA_ONLINE_PLACERS_H_
