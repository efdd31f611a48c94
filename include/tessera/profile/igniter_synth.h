// Synthesizing the iGniter model's coefficients (igniter_model.h) for a GPU
// nobody profiled, from coefficients fitted on another GPU and the two GPUs'
// catalog figures (gpu_catalog.h). iGniter profiles every GPU type
// (Xu et al., IEEE TPDS 2023, section 4.1: "we only need to obtain the
// hardware-specific coefficients and a part of workload-specific
// coefficients ... for each type of GPU device"); its artifact ships only
// the V100's, so a T4 plan needs this stand-in until the T4 is profiled
// (then `tessera igniter fit` replaces it).
//
// The method (docs/igniter-planner.md, "Other GPU types"), with
// C = (SMs_from x F_from) / (SMs_to x F_to)   compute ratio
// R = (P_to - p_idle_to) / (P_from - p_idle_from)  dynamic-power ratio
// per model:
//   k1, k2, k3, k5 x C   the active time at the same share r of the SMs
//                    is C times longer: r% of fewer, differently clocked SMs
//                    does proportionally less (TensorRT FP32 convolutions,
//                    compute-bound). The memory-bandwidth ratio (3x for the
//                    V100 over the T4, iGniter 5.3) is not applied: scaling
//                    the resource-independent k5 by it puts ResNet-50 at
//                    batch 1 alone on a T4 at 6.7 ms, above the 5 ms budget
//                    of iGniter's W4, which the paper serves on T4s (Fig. 20)
//   k4               kept (an offset in % of the GPU's SMs)
//   power_coef       [slope x C x R, intercept x R]: the same load draws the
//                    same share of the GPU's dynamic power range, at 1/C of
//                    the ability
//   cache_coef       [slope x C, intercept]: the same L2 utilisation at 1/C
//                    of the ability
//   n_k, k_sch_ms, d_load, d_feedback, alpha_cache   kept (the model's and
//                    the host's, not the GPU's)
// and hardware: gpu = the target's catalog name, F, P, B_pcie and p_idle as
// given (p_idle default: the source's x P_to / P_from; B_pcie default: the
// source's), unit = 200 / SMs_to (MPS allots SMs in pairs), alpha_f x
// (F_to / F_from) / R (the same relative clock drop at the same relative
// power above the cap), alpha_sch and beta_sch kept.
//
// Thread-safety: pure functions.
#ifndef TESSERA_IGNITER_SYNTH_H_
#define TESSERA_IGNITER_SYNTH_H_

#include <optional>

#include "tessera/gpu_catalog.h"
#include "tessera/profile/igniter_model.h"
#include "tessera/status.h"

namespace tessera {

// The GPU the coefficients are synthesized for, beyond its catalog entry.
struct SynthTarget {
  const GpuModel* from = nullptr;           // the GPU `base` was fitted on
  const GpuModel* to = nullptr;             // the GPU to synthesize for
  double max_frequency_mhz = 0;             // F of `to` (> 0)
  double power_cap_w = 0;                   // P of `to` (> 0)
  std::optional<double> idle_power_w;       // p_idle of `to`; default: scaled by P
  std::optional<double> pcie_bytes_per_ms;  // B_pcie of `to`; default: the source's
};

// The ratios the method applies (above), for reports.
struct SynthRatios {
  double compute = 1;  // C
  double power = 1;    // R
};

// The coefficients of `base` carried to `target.to` by the method above.
// Errors (InvalidArgument): from or to null or without SMs in the catalog, F or P not > 0, p_idle
// not in [0, P), the source's p_idle not below its P, or a result outside the ranges of
// input_limits.h (ValidateMpsCoefficients, so that what is written reads back).
Result<MpsCoefficients> SynthesizeMpsCoefficients(const MpsCoefficients& base,
                                                  const SynthTarget& target,
                                                  SynthRatios* ratios = nullptr);

}  // namespace tessera

#endif  // TESSERA_IGNITER_SYNTH_H_
