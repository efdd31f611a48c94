// The independent validator: checks a Deployment against the scenario, the
// profile table and the latency rule, trusting nothing the planner computed.
//
// Rules (DESIGN.md, Semantics):
//  * geometry: every instance's profile exists on the GPU, starts at an
//    allowed slice, and no two instances of a GPU overlap (CheckLayout);
//  * latency: every instance's (model, profile, batch, procs) is in the
//    profile table with the throughput and latency the deployment claims,
//    and the latency rule allows it for its service's SLO;
//  * capacity: each service marked ok has segment capacity >= its rate, a
//    segment counting its profiled throughput x LatencyRule::UsableShare;
//  * consistency: services match the scenario one to one, every instance
//    serves a known service with its model, infeasible services have no
//    instances, capacities and the gpus/gpcs metrics add up.
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

// Every violation found; empty iff the deployment is valid.
std::vector<Violation> ValidateDeployment(const Deployment& deployment, const Scenario& scenario,
                                          const ProfileTable& profiles, const LatencyRule& rule);

// "rule at where: message", one per line.
std::string FormatViolations(const std::vector<Violation>& violations);

}  // namespace tessera

#endif  // TESSERA_VALIDATOR_H_
