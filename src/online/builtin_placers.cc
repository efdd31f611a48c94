// The one list of every built-in online placement policy, and the validation
// of their options.
#include <cmath>
#include <cstdlib>
#include <iostream>

#include "online/placers.h"
#include "tessera/util/input_limits.h"

namespace tessera {
namespace {

PlacerRegistry::Factory Scan(ScanRule rule) {
  return [rule](const PlacerOptions& options) { return NewScanPlacer(rule, options); };
}

PlacerRegistry MakeBuiltins() {
  PlacerRegistry r("policy");
  r.MustRegister("ff", "First-Fit: the first GPU, by global index, the VM fits",
                 Scan(ScanRule::kFirstFit));
  r.MustRegister("bf", "Best-Fit: the GPU left with the fewest free memory slices",
                 Scan(ScanRule::kBestFit));
  r.MustRegister("mcc",
                 "Max CC (GRMU Alg. 6): the GPU left with the highest configuration "
                 "capability",
                 Scan(ScanRule::kMaxCc));
  r.MustRegister("mecc",
                 "Max expected CC (GRMU Alg. 7): CC weighted by the profile mix of "
                 "recent arrivals",
                 Scan(ScanRule::kMaxEcc));
  r.MustRegister("lfr",
                 "Largest free run (HAMi): the GPU and start leaving the longest run of free "
                 "memory slices; rearranges one GPU when nothing fits",
                 Scan(ScanRule::kLargestFreeRun));
  r.MustRegister("frag",
                 "Fragmentation greedy (arXiv 2511.18906): the GPU and start that strand the "
                 "fewest free memory slices, summed over the profiles",
                 Scan(ScanRule::kLeastFragmentation));
  r.MustRegister(
      "grmu",
      "GRMU: dual-basket pooling, defragmentation on rejection, optional "
      "consolidation",
      [](const PlacerOptions& options) { return NewGrmuPlacer(BasketCap::kFixedShare, options); });
  r.MustRegister("fair",
                 "GRMU's baskets, the full-GPU basket capped at a fraction of its demand share "
                 "learned from the requests seen: no profile starves",
                 [](const PlacerOptions& options) {
                   return NewGrmuPlacer(BasketCap::kLearnedShare, options);
                 });
  r.MustRegister("steer",
                 "Tessera's: frag's placements, lfr's rearranging fallback, and fair's full-GPU "
                 "reserve weighted by the share of accepted demand still resident",
                 [](const PlacerOptions& options) { return NewSteerPlacer(options); });
  return r;
}

}  // namespace

Status PlacerOptions::Validate() const {
  if (!std::isfinite(heavy_share) || heavy_share < 0 || heavy_share > 1) {
    return Status::InvalidArgument("heavy share must be between 0 and 1");
  }
  if (!limits::kFairFactor.Contains(fair_factor)) {
    return Status::InvalidArgument("fair factor " + OutOfRange(limits::kFairFactor, fair_factor));
  }
  if (!std::isfinite(consolidate_every_s) || consolidate_every_s < 0) {
    return Status::InvalidArgument("consolidation interval must be a finite time >= 0 (0 = off)");
  }
  if (!limits::kMeccWindowS.Contains(mecc_window_s)) {
    return Status::InvalidArgument("MECC window (s) " +
                                   OutOfRange(limits::kMeccWindowS, mecc_window_s));
  }
  return Status::Ok();
}

const PlacerRegistry& BuiltinPlacers() {
  static const PlacerRegistry registry = MakeBuiltins();
  return registry;
}

}  // namespace tessera
