// `tessera simulate --transition T.json --step-seconds X`: the pieces that
// run a deployment through a transition (transition_simulation.h) on top of
// the plain simulation's inputs (cmd_simulate.cc).
#ifndef TESSERA_APP_SIMULATE_TRANSITION_H_
#define TESSERA_APP_SIMULATE_TRANSITION_H_

#include <optional>
#include <string>

#include "tessera/deployment.h"
#include "tessera/status.h"
#include "tessera/transition.h"

namespace tessera::cli {

// The transition JSON at `path` (transition_format.h).
Result<Transition> LoadTransition(const std::string& path);

// How long the run lasts: one --step-seconds before, one per phase, one
// after. InvalidArgument naming --step-seconds when it is missing or the run
// would last longer than the longest simulated duration.
Result<double> TransitionRunSeconds(const Transition& transition,
                                    const std::optional<double>& step_seconds);

// `d` with an entry for every service a step of `transition` starts that `d`
// lacks: the services the scenario simulated must name.
Deployment WithStartedServices(Deployment d, const Transition& transition);

}  // namespace tessera::cli

#endif  // TESSERA_APP_SIMULATE_TRANSITION_H_
