// The one list of every built-in online placement policy, and the validation
// of their options.
#include <cmath>
#include <cstdlib>
#include <iostream>

#include "online/placers.h"

namespace tessera {
namespace {

void MustRegister(PlacerRegistry& registry, std::string name, std::string description,
                  PlacerRegistry::Factory factory) {
  Status s = registry.Register(std::move(name), std::move(description), std::move(factory));
  if (!s.ok()) {  // a duplicate built-in name is a bug caught by every test run
    std::cerr << "tessera: " << s.ToString() << "\n";
    std::abort();
  }
}

PlacerRegistry::Factory Scan(ScanRule rule) {
  return [rule](const PlacerOptions& options) { return NewScanPlacer(rule, options); };
}

PlacerRegistry MakeBuiltins() {
  PlacerRegistry r("policy");
  MustRegister(r, "ff", "First-Fit: the first GPU, by global index, the VM fits",
               Scan(ScanRule::kFirstFit));
  MustRegister(r, "bf", "Best-Fit: the GPU left with the fewest free memory slices",
               Scan(ScanRule::kBestFit));
  MustRegister(r, "mcc",
               "Max CC (GRMU Alg. 6): the GPU left with the highest configuration "
               "capability",
               Scan(ScanRule::kMaxCc));
  MustRegister(r, "mecc",
               "Max expected CC (GRMU Alg. 7): CC weighted by the profile mix of "
               "recent arrivals",
               Scan(ScanRule::kMaxEcc));
  MustRegister(r, "grmu",
               "GRMU: dual-basket pooling, defragmentation on rejection, optional "
               "consolidation",
               NewGrmuPlacer);
  return r;
}

}  // namespace

Status PlacerOptions::Validate() const {
  if (!std::isfinite(heavy_share) || heavy_share < 0 || heavy_share > 1) {
    return Status::InvalidArgument("heavy share must be between 0 and 1");
  }
  if (!std::isfinite(consolidate_every_s) || consolidate_every_s < 0) {
    return Status::InvalidArgument("consolidation interval must be a finite time >= 0 (0 = off)");
  }
  if (!std::isfinite(mecc_window_s) || mecc_window_s <= 0) {
    return Status::InvalidArgument("MECC window must be a finite time > 0");
  }
  return Status::Ok();
}

const PlacerRegistry& BuiltinPlacers() {
  static const PlacerRegistry registry = MakeBuiltins();
  return registry;
}

}  // namespace tessera
