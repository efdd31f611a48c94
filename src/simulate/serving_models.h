// The two halves of BuildServingModel (simulator.h): MIG instances timed
// from the profile table, MPS processes of GPUs shared whole timed by the
// iGniter model. Internal to src/simulate.
#ifndef TESSERA_SRC_SIMULATE_SERVING_MODELS_H_
#define TESSERA_SRC_SIMULATE_SERVING_MODELS_H_

#include "tessera/deployment.h"
#include "tessera/problem.h"
#include "tessera/simulator.h"
#include "tessera/status.h"

namespace tessera {

// Appends every MPS process of `deployment` to `model` (whose services are
// the scenario's, in order). REQUIRES: problem.mps(). InvalidArgument for a
// process of a service not in the scenario.
Status AddMpsInstances(const Deployment& deployment, const Problem& problem, ServingModel& model);

}  // namespace tessera

#endif  // TESSERA_SRC_SIMULATE_SERVING_MODELS_H_
