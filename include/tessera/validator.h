// The independent validator: checks a Deployment against its problem's inputs
// (the scenario, the profile table or, for MPS plans, the iGniter model)
// under the latency rule the deployment records (the rule it was made
// under), trusting nothing the planner computed.
//
// MIG plans (DESIGN.md, Semantics):
//  * geometry: every instance's profile exists on the GPU, starts at an
//    allowed slice, and no two instances of a GPU overlap (CheckLayout);
//  * latency: every instance's (model, profile, batch, procs) is in the
//    profile table with the throughput and latency the deployment claims,
//    and the latency rule allows it for its service's SLO;
//  * capacity: each service marked ok has segment capacity >= its rate, a
//    segment counting its profiled throughput x LatencyRule::UsableShare;
//  * consistency: services match the scenario one to one, with the rate_rps
//    and slo_ms the scenario gives (a plan made for another load is named
//    with both values), every instance serves a known service with its
//    model, infeasible services have no instances, capacities and the
//    gpus/gpcs metrics add up.
// MPS plans (GPUs shared whole): every process's share in (0, 100], each
// GPU's shares summing to at most 100%, batches >= 1, rates > 0, every
// feasible service's processes carrying its rate, processes naming services
// of the scenario with their model, services recording the scenario's rate
// and SLO, and every prediction equal to the iGniter model's. Predicted SLO
// misses are metrics, not invalidity.
//
// Thread-safety: pure function.
#ifndef TESSERA_VALIDATOR_H_
#define TESSERA_VALIDATOR_H_

#include <string>
#include <vector>

#include "tessera/deployment.h"
#include "tessera/problem.h"
#include "tessera/profile_table.h"
#include "tessera/scenario.h"

namespace tessera {

struct Violation {
  std::string rule;     // "geometry" | "latency" | "capacity" | "consistency"
  std::string where;    // e.g. "gpu 3 3g.40gb@4" or "service resnet50"
  std::string message;  // what is wrong, with the numbers
};

// Every violation found; empty iff the deployment is valid. Only the
// problem's inputs are read (scenario, profiles, MPS model), never its
// triplets; the rule is deployment.rule.
std::vector<Violation> ValidateDeployment(const Deployment& deployment, const Problem& problem);

// "rule at where: message", one per line.
std::string FormatViolations(const std::vector<Violation>& violations);

}  // namespace tessera

#endif  // TESSERA_VALIDATOR_H_
