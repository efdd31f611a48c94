// GSLICE's self-tuning of GPU% (Dhakal et al., SoCC'20, section 3.3): the
// per-service rule of its Algorithm 1 (ComputeNewShare) and the max-min fair
// allocation of a GPU among the services' demands (MaxMinFairShares).
//
// Two users share it: the GSLICE runtime (gslice_runtime.h) applies it every
// tuning period to what it measured, and the "gslice+" MPS planner applies it
// for a few rounds to what the iGniter model predicts. Shares are fractions of
// the GPU's SMs (0.3 = 30%).
//
// Thread-safety: pure functions of their arguments.
#ifndef TESSERA_GSLICE_TUNING_H_
#define TESSERA_GSLICE_TUNING_H_

#include <span>
#include <vector>

namespace tessera {

// The settings Algorithm 1 reads.
struct TuningOptions {
  // Keep a GPU% when both |diffL%| and |diffT%| are below this fraction.
  // Default: 0.05 (the paper's 5%).
  double tuning_threshold = 0.05;
  // Never ask for less than this GPU%. Default: 0.05.
  double min_share = 0.05;
  // A decrease cuts at most this fraction of the current GPU% in one step
  // (Algorithm 1's changeFactor can exceed 1, which would ask for a negative
  // GPU%). In (0, 1). Default: 0.5.
  double max_decrease = 0.5;
};

// What Algorithm 1 reads for one service, measured over the last period(s).
struct TuningInput {
  double current_share = 0;       // currentGPU%, in (0, 1]
  double slo_ms = 0;              // SLO, > 0
  double arrival_rps = 0;         // arrivalRate, > 0
  double avg_latency_ms = 0;      // avgL: mean request latency, > 0
  double avg_throughput_rps = 0;  // avgT: requests served per busy second, > 0
};

enum class TuningAction { kKeep, kIncrease, kDecrease };

struct TuningDecision {
  TuningAction action = TuningAction::kKeep;
  double new_share = 0;        // newGPU%
  double change_factor = 0;    // max(|residualL| / avgL, |residualT| / avgT)
  double diff_latency = 0;     // diffL% as a fraction: residualL / SLO
  double diff_throughput = 0;  // diffT% as a fraction: residualT / arrivalRate
};

// GSLICE's Algorithm 1. residualL = SLO - avgL, residualT = avgT - arrivalRate;
// keep when |residualL / SLO| and |residualT / arrivalRate| are both below
// options.tuning_threshold; otherwise changeFactor = max(|residualL| / avgL,
// |residualT| / avgT) and, if either residual is < 0, newGPU% = current x
// (1 + changeFactor) (at most 1); if both are > 0, current x (1 -
// min(changeFactor, max_decrease)) (at least min_share); otherwise (a residual
// exactly 0) keep. REQUIRES: the input's fields as documented.
TuningDecision ComputeNewShare(const TuningInput& in, const TuningOptions& options);

// Max-min fair allocation of `capacity` over `demands` (each >= 0): demands
// are fulfilled smallest first while they fit in an equal split of what is
// left; the unsatisfied then share what is left in proportion to their
// demands. Nobody gets more than its demand, unless everybody is satisfied,
// capacity is left and `distribute_spare`: then the rest is shared out in
// proportion to the demands. Returns one share per demand.
std::vector<double> MaxMinFairShares(std::span<const double> demands, double capacity,
                                     bool distribute_spare);

}  // namespace tessera

#endif  // TESSERA_GSLICE_TUNING_H_
