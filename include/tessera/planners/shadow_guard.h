// iGniter's guard against performance prediction errors (Xu et al., IEEE
// TPDS 2023, section 4.2, "Dealing with Performance Prediction Errors"),
// applied to MPS plans. iGniter pre-launches a standby "shadow" serving
// process beside every process, with "an extra amount of GPU resources when
// active, which is set as the smaller value of the 10.0% of GPU resources
// (i.e., the maximum prediction error measured in Sec. 5.2) and the remaining
// resources on a GPU device"; when a process misses its SLO, its shadow takes
// over and the original is killed.
//
// On a plan, with the iGniter model as the judge (Deployment's predictions):
//  * every process's standby shadow has extra = min(10%, free), free = 100%
//    minus the GPU's shares as planned (the resources left when the shadows
//    are launched);
//  * every process the model predicts to miss (MpsProcess::meets_slo false),
//    GPU by GPU in process order, is replaced by its shadow, whose share is
//    the process's plus min(10%, what is still free on its GPU): shadows
//    activated earlier on the same GPU took theirs first, so the GPU never
//    exceeds 100%;
//  * the plan is described again (BuildDeployment: predictions of every
//    process of a changed GPU, outcomes, metrics), so a shadow's neighbours
//    show the interference it adds. Processes that still miss are counted;
//    the guard acts once, as iGniter's shadow is launched once.
// A plan the model predicts meets every budget is unchanged (activated 0).
//
// Inputs: an MPS Deployment of `problem` (Sharing::kMps; made by any MPS
// planner or read back from JSON) and the problem. Output: the guarded
// deployment and one entry per process. Errors (InvalidArgument): the
// problem or the deployment is not MPS, or a process names a service the
// scenario does not have.
//
// Thread-safety: pure functions.
#ifndef TESSERA_SHADOW_GUARD_H_
#define TESSERA_SHADOW_GUARD_H_

#include <string>
#include <vector>

#include "tessera/deployment.h"
#include "tessera/problem.h"
#include "tessera/status.h"

namespace tessera {

// The most a shadow adds: iGniter's largest measured prediction error, 10%
// of a GPU (section 4.2, from section 5.2).
inline constexpr double kShadowMaxExtraPct = 10.0;

// The share a shadow adds on a GPU with `free_pct` still free:
// min(kShadowMaxExtraPct, free_pct), and 0 when nothing is free.
double ShadowExtraPct(double free_pct);

// One process of the plan and its shadow.
struct ShadowProcess {
  int gpu = 0;      // Deployment GPU index
  int process = 0;  // index into that GPU's processes
  std::string service;
  double resource_pct = 0;        // as planned
  double standby_extra_pct = 0;   // min(10%, free as planned)
  bool activated = false;         // predicted to miss as planned: the shadow serves
  double extra_pct = 0;           // what the activated shadow added (may be < standby)
  double planned_latency_ms = 0;  // predicted, as planned
  double latency_ms = 0;          // predicted, after the guard
  bool meets_slo = true;          // after the guard
};

struct ShadowGuardResult {
  Deployment deployment;                 // the guarded plan
  std::vector<ShadowProcess> processes;  // GPU by GPU, in process order
  int activated = 0;                     // shadows that took over
  int still_missing = 0;                 // processes predicted to miss after the guard
};

Result<ShadowGuardResult> ApplyShadowGuard(const Deployment& plan, const Problem& problem);

}  // namespace tessera

#endif  // TESSERA_SHADOW_GUARD_H_
