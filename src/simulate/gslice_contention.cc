// GsliceContention of gslice_contention.h: SM oversubscription and iGniter's
// L2 interference between co-located MPS processes.
#include "simulate/gslice_contention.h"

#include <algorithm>

namespace tessera {
namespace {

// alpha_cache fitted by iGniter's artifact on its V100 profiles
// (shared/data/igniter/derived/fitted_coefficients_v100.json), rounded to
// 4 significant digits.
struct Alpha {
  std::string_view model;
  double alpha;
};
constexpr Alpha kIgniterAlphaCache[] = {
    {"alexnet", 0.002376}, {"resnet50", 0.002163}, {"vgg19", 0.002018}, {"ssd", 0.002281}};

}  // namespace

double ContentionAlphaCache(std::string_view model) {
  double sum = 0;
  for (const Alpha& a : kIgniterAlphaCache) {
    if (a.model == model) return a.alpha;
    sum += a.alpha;
  }
  return sum / std::size(kIgniterAlphaCache);
}

double EffectiveShare(double limit, std::span<const MpsNeighbour> others) {
  double demand = std::min(limit, 1.0);
  for (const MpsNeighbour& n : others) demand += n.busy * std::min(n.limit, 1.0);
  return std::min(limit, 1.0) / std::max(1.0, demand);
}

double InterferenceFactor(double alpha_cache, std::span<const MpsNeighbour> others) {
  double l2 = 0;
  for (const MpsNeighbour& n : others) l2 += n.busy * kL2PercentPerShare * std::min(n.limit, 1.0);
  return 1 + alpha_cache * l2;
}

}  // namespace tessera
