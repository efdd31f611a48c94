// How long a transition takes (docs/autoscale.md): each step's duration from
// what it does on the node, each phase's from its steps, the transition's
// from its phases, which run one after another.
//
//  * create: make the GPU and compute instance, start the MPS control daemon
//    when the instance runs more than one process, start the serving
//    processes and load the model until they answer ready;
//  * destroy: drain the instance's queue, then destroy its compute and GPU
//    instance;
//  * reconfigure: drain, restart the MPS daemon when it runs more than one
//    process, load the new model;
//  * a phase lasts as long as its slowest GPU, and one GPU's steps run one
//    after another (the driver serialises MIG changes on a GPU): a GPU's
//    share of a phase is the sum of its steps.
//
// The defaults are documented measurements: a MIG reconfiguration takes
// "from milliseconds to a few seconds" (ParvaGPU, SC24, section 4.4), and
// reconfiguring a node's GPUs and launching its inference containers under
// 30 s (ibid., section 6.7); restarting an inference process, framework start
// and model load, 2-15 s (GSLICE, SoCC'20, section 3.2): the defaults take
// the slow end of each (2 s to create an instance, 1 s to destroy one, 1 s
// for the MPS daemon, 15 s to load a model, 1 s to drain).
//
// Thread-safety: values and pure functions.
#ifndef TESSERA_TRANSITION_TRANSITION_DURATION_H_
#define TESSERA_TRANSITION_TRANSITION_DURATION_H_

#include <vector>

#include "tessera/transition.h"

namespace tessera {

struct StepDurations {
  double mig_create_s = 2;
  double mig_destroy_s = 1;
  double mps_start_s = 1;
  double model_load_s = 15;
  double drain_s = 1;
};

// Seconds one step takes on its GPU.
double StepSeconds(const TransitionStep& step, const StepDurations& durations);
// Seconds each phase takes, in order.
std::vector<double> PhaseSeconds(const Transition& transition, const StepDurations& durations);
// The sum of PhaseSeconds.
double TransitionSeconds(const Transition& transition, const StepDurations& durations);

}  // namespace tessera

#endif  // TESSERA_TRANSITION_TRANSITION_DURATION_H_
