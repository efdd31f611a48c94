// The MPS half of the planning engine and validator: describing and checking
// plans of GPUs shared whole through MPS (Sharing::kMps) with the iGniter
// model. Internal to src/plan; plan.h and validator.h are the entry points.
#ifndef TESSERA_SRC_PLAN_MPS_DEPLOYMENT_H_
#define TESSERA_SRC_PLAN_MPS_DEPLOYMENT_H_

#include <string>
#include <vector>

#include "tessera/deployment.h"
#include "tessera/planner.h"
#include "tessera/problem.h"
#include "tessera/validator.h"

namespace tessera {

// The Theorem 1 bound on GPUs of an MPS problem: ceil(sum over services of
// Theorem 1's resource / 100), a service too large for one GPU counting its
// rate over one whole GPU's most within its budget. A plan of one process per
// service that meets every budget by the model (co-location only slows a
// process) uses no fewer GPUs. REQUIRES: problem.mps().
int MpsLowerBound(const Problem& problem);

// Fills `d`'s GPUs (processes with predictions), services (capacity, worst
// latency, predicted violations, infeasible reasons) and the MPS metrics
// from an MPS planner's GPUs. REQUIRES: problem.mps().
void DescribeMpsPlan(const Problem& problem, const MpsGpus& gpus, Deployment& d);

// The validator's MPS checks: every share in (0, 100], each GPU's shares
// summing to at most 100%, batches >= 1, rates > 0, every feasible service's
// shares covering its rate, processes naming services of the scenario, and
// predictions equal to the model's. Predicted SLO violations are metrics, not
// invalidity. REQUIRES: problem.mps().
void CheckMpsDeployment(const Deployment& d, const Problem& problem,
                        std::vector<Violation>& violations);

}  // namespace tessera

#endif  // TESSERA_SRC_PLAN_MPS_DEPLOYMENT_H_
