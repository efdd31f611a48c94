// The SVG of a Transition (transition.h): every service's capacity (req/s)
// over the transition's states -- the start (A), then each phase's worst
// state (its destroys and reconfigures done, its creates not yet) and its
// end -- one small chart per service, with the service's floor min(rate in
// A, rate in B) as a dashed line and the states below it marked; then the
// GPU layouts before (A) and after (B on the cluster's GPUs, by gpu_map),
// drawn as FormatDeploymentSvg draws a deployment's GPUs.
//
// The capacities come from replaying the steps on A (a service's capacity:
// the summed throughput_rps of its instances); the services drawn are A's,
// then those only B has. Drawing judges nothing: a step that does not apply
// changes nothing (`tessera transition check` says why it is wrong).
// Standalone SVG 1.1, no external resources, text escaped; equal inputs give
// equal bytes.
//
// Thread-safety: pure function.
#ifndef TESSERA_TRANSITION_SVG_H_
#define TESSERA_TRANSITION_SVG_H_

#include <string>

#include "tessera/deployment.h"
#include "tessera/gpu_catalog.h"
#include "tessera/transition.h"

namespace tessera {

std::string FormatTransitionSvg(const Deployment& from, const Deployment& to,
                                const Transition& transition, const GpuModel& gpu);

}  // namespace tessera

#endif  // TESSERA_TRANSITION_SVG_H_
