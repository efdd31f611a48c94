// The iGniter model's coefficients and gpu-lets' tables for a MIG GPU run
// whole through MPS, derived from its MIG profiles (ProfileTable), so that
// the MPS planners (igniter, ffd+, gslice+, gpulet) plan the same workloads
// as the MIG planners without profiling the GPU a second time
// (docs/igniter-planner.md, "On MIG workloads").
//
// Method, per model of the table on `gpu`:
//  * Resource. A MIG instance of profile p is read as an MPS share of
//    r = 100 x SMs(p) / SMs(gpu) (A100: 1g 13.0%, 2g 25.9%, 3g 38.9%,
//    4g 51.9%, 7g 90.7%): its SMs as a share of the board's, which is what
//    MPS partitions. Its private L2 and memory bandwidth are ignored.
//  * Active time. k1..k5 of t_act(b, r) = (k1 b^2 + k2 b + k3)/(r + k4) + k5
//    are fitted (FitMpsCoefficients, relative least squares) on the
//    single-process entries: t_act = the profiled per-batch latency, the
//    host-device copies included (d_load = d_feedback = 0).
//  * L2 use. cache_coef = [100 / x_peak, 0]: a workload's L2 utilisation (%)
//    is its solo ability x = 1000 b / t_act as a share of the model's peak,
//    x_peak, the most over the profiled batches at r = 100.
//  * Interference. alpha_cache is fitted, by relative least squares, on the
//    entries with P >= 2 processes in one instance, each read as a share r/P
//    running next to P - 1 identical ones: latency = t_act(b, r/P)
//    (1 + alpha (P - 1) l2(b, r/P)). Only shares r/P no smaller than the
//    smallest profiled r are used (the curve is not fitted below it).
//    alpha_cache is clamped at 0 (co-location never speeds a process up).
//  * Scheduling and power. The profiles cannot tell scheduling delay from
//    cache contention, so all co-location slowdown is the L2 term:
//    n_k = 1, k_sch = alpha_sch = beta_sch = 0. Their latencies already
//    include the clock the GPU ran at, and shares within 100% are assumed
//    not to draw more power than the whole GPU running one model: power_coef
//    = [0, 0], p_idle = 0, so the clock stays at F. F = 1410 MHz and
//    P = 400 W (A100 SXM4), B_pcie = 25.6e6 bytes/ms (PCIe 4.0 x16, unused
//    with zero copy sizes), unit = 100 / (SMs / 2) rounded to 0.01% (so that plans
//    written with 4 decimals read back exactly; A100 1.85%).
//  * gpu-lets' tables. At batches 1..32 and partitions 20, 40, 50, 60, 80
//    and 100%: latency and throughput predicted alone by the derived
//    coefficients, l2 from cache_coef, dram 0 (not measured); interference
//    rows: the two-process entries of the largest profile, as two
//    processes of 50% each. With one utilisation column, gpu-lets' fit
//    (FitGpuletInterference) falls back to its mean slowdown.
//
// Thread-safety: pure functions.
#ifndef TESSERA_MPS_FROM_PROFILES_H_
#define TESSERA_MPS_FROM_PROFILES_H_

#include <string>
#include <vector>

#include "tessera/gpu_catalog.h"
#include "tessera/profile/gpulet_tables.h"
#include "tessera/profile/igniter_model.h"
#include "tessera/profile_table.h"
#include "tessera/status.h"

namespace tessera {

// How well the derived coefficients of one model reproduce its profiles.
struct DerivedFit {
  std::string model;
  int solo_points = 0;     // single-process entries fitted
  double solo_rms = 0;     // RMS relative error of t_act on them (0.05 = 5%)
  int shared_points = 0;   // multi-process entries that fitted alpha_cache
  double shared_rms = 0;   // RMS relative error of their predicted latency
  double alpha_cache = 0;  // as fitted (after the clamp)
};

struct DerivedMps {
  MpsCoefficients coefficients;  // hardware.gpu = the GPU's catalog name
  GpuletTables gpulet;
  std::vector<DerivedFit> fits;      // one per derived model, coefficients' order
  std::vector<std::string> skipped;  // "<model>: <why>" for models not derived
};

// Derives the coefficients and tables of every model `profiles` has on
// `gpu` (method above). A model whose entries cannot be fitted (fewer than
// 6 single-process entries, 3 batches or 3 profiles) is left out and named
// in `skipped`. Errors (InvalidArgument): `gpu` has no MIG, or no model of
// the table could be derived (the message lists why for each).
Result<DerivedMps> DeriveMpsFromProfiles(const ProfileTable& profiles, const GpuModel& gpu);

// One line: the models derived, and the median and largest RMS errors of
// the two fits, e.g. for a note. REQUIRES: derived.fits not empty (as
// DeriveMpsFromProfiles returns it).
std::string DescribeDerivedFits(const DerivedMps& derived);

}  // namespace tessera

#endif  // TESSERA_MPS_FROM_PROFILES_H_
