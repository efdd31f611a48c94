// GsliceContention: how co-located MPS processes slow each other down in the
// GSLICE runtime (gslice_runtime.h). Two effects, each a pure function:
//
//  * SM oversubscription. MPS limits are ceilings, not reservations: when the
//    limits of the processes that are running add up to more than the GPU
//    (default MPS gives every process 100%), they split the SMs. Process i
//    with limit l_i, among neighbours j with limits l_j busy a fraction a_j
//    of the time, runs at the effective share
//        l_i / max(1, l_i + sum_j a_j l_j).
//    Limits that fit in the GPU (GSLICE, static) leave l_i unchanged.
//  * Memory-system interference, iGniter's term (Xu et al., IEEE TPDS 34(3),
//    2023, Eq. 6; its artifact's predict()): a batch takes
//        t (1 + alpha_i sum_j a_j L2_j)
//    where L2_j is neighbour j's L2 utilisation (% of peak). iGniter reads
//    L2_j off j's throughput; here it is L2_j = kL2PercentPerShare x min(l_j,
//    1), the least-squares line through the origin of iGniter's V100
//    measurements of L2 utilisation at 10%, 50% and 100% of the SMs (batches
//    1, 16 and 32, four models: 2.7-3.7, 16.2-19.0 and 27.3-33.2 %; shared/
//    data/igniter/i-Gniter/Algorithm/config, "l2caches"), and alpha_i is the
//    model's fitted alpha_cache (shared/data/igniter/derived/
//    fitted_coefficients_v100.json), their mean for models iGniter did not
//    profile. docs/gslice-runtime.md, "Contention", derives the numbers.
//
// Thread-safety: pure functions of their arguments.
#ifndef TESSERA_GSLICE_CONTENTION_H_
#define TESSERA_GSLICE_CONTENTION_H_

#include <span>
#include <string_view>

namespace tessera {

// L2 utilisation (% of peak) of a busy process per unit of SM share: the
// fit above: sum(share x L2) / sum(share^2) over the 12 points, 159.74 / 5.04.
inline constexpr double kL2PercentPerShare = 31.7;

// One other process on the same GPU, as its neighbours feel it.
struct MpsNeighbour {
  double limit = 0;  // its GPU% limit, a fraction of the SMs (> 0)
  double busy = 0;   // the fraction of the time it runs a batch, in [0, 1]
};

// iGniter's alpha_cache of `model` (canonical name): slowdown per percentage
// point of the neighbours' L2 utilisation. alexnet 0.002376, resnet50
// 0.002163, vgg19 0.002018, ssd 0.002281; any other model their mean,
// 0.002210.
double ContentionAlphaCache(std::string_view model);

// The SM share process `limit` gets among `others` (formula above).
// REQUIRES: limit > 0.
double EffectiveShare(double limit, std::span<const MpsNeighbour> others);

// The factor (>= 1) a batch's time grows by from the others' L2 traffic.
double InterferenceFactor(double alpha_cache, std::span<const MpsNeighbour> others);

}  // namespace tessera

#endif  // TESSERA_GSLICE_CONTENTION_H_
