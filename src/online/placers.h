// Factories of the built-in online placement policies (registered by
// builtin_placers.cc). Internal to the library.
#ifndef TESSERA_ONLINE_PLACERS_H_
#define TESSERA_ONLINE_PLACERS_H_

#include <memory>

#include "tessera/online/online_placer.h"

namespace tessera {

// How a scanning policy ranks the GPUs that can take a VM; every policy scans
// GPUs in global-index order and keeps the first of equal scores.
enum class ScanRule {
  kFirstFit,  // FF: the first GPU that fits
  kBestFit,   // BF: fewest memory slices left free after the placement
  kMaxCc,     // MCC (GRMU Algorithm 6): highest CC after the placement
  kMaxEcc,    // MECC (Algorithm 7): highest probability-weighted CC after it
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
