// Traffic through a transition: the simulator (simulator.h) run while the
// deployment changes phase by phase. The run starts in deployment A and
// lasts (phases + 2) * step_seconds: one step in A, one step per phase, one
// step in the final state. A destroyed (or reconfigured) instance takes no
// new requests from its phase's start and finishes its queue; a created (or
// reconfigured) one takes requests from its phase's end. A request arriving
// while no instance of its service takes requests is dropped. Every other
// rule is the simulator's: arrivals, routing among the instances taking
// requests, batching, latency.
//
// Windows: "before" is [0, X), phase k (1-based) [k X, (k + 1) X), "after"
// the last X seconds (X = step_seconds). A window's report counts the
// requests arriving in it: its rates are per second of the window, and
// achieved_rps counts the requests served by its end.
//
// Thread-safety: pure functions.
#ifndef TESSERA_TRANSITION_SIMULATION_H_
#define TESSERA_TRANSITION_SIMULATION_H_

#include <string>
#include <utility>
#include <vector>

#include "tessera/deployment.h"
#include "tessera/problem.h"
#include "tessera/simulator.h"
#include "tessera/status.h"
#include "tessera/transition.h"

namespace tessera {

// Requests by the window their arrival falls in.
struct TransitionWindowReport {
  std::string name;  // "before", "phase 1", ..., "after"
  double start_s = 0;
  double end_s = 0;
  std::vector<ServiceReport> services;  // model order
};

struct TransitionSimReport {
  SimReport overall;  // the whole run (options.duration_s is replaced)
  std::vector<TransitionWindowReport> windows;
};

// Every instance that lives during the run, on one deployment: A's GPUs in
// A's order, then spare GPUs by index, A's instances and then each one a
// create or reconfigure step starts (two may share a place when one
// replaces the other); a started instance's latency_ms is its planned
// batch's, from the problem's profiles. `model` is BuildServingModel of it
// with every instance's acceptance window set for step_seconds.
struct TransitionLives {
  Deployment deployment;
  ServingModel model;
  // Per instance, in the deployment's order of GPUs and instances (the
  // model's): the phase (1-based) at whose end it starts taking requests,
  // 0 for A's; the phase at whose start it stops, 0 when it never does.
  std::vector<std::pair<int, int>> phases;
};

// The lives of a run of `transition` from `from`; errors as SimulateTransition's.
Result<TransitionLives> BuildTransitionLives(const Deployment& from, const Transition& transition,
                                             const Problem& problem, double step_seconds);

// InvalidArgument when step_seconds is not a finite number > 0, `from` is an
// MPS plan or on another GPU model than the transition, the transition does
// not apply to `from` (a step names an instance that is not there, or
// creates one where one is; the message names the step's id), an instance
// has no profile entry or serves a service not in the scenario
// (BuildServingModel's errors), or the options are invalid (Simulate's).
// `problem` gives the rates and SLOs (the scenario simulated) and the
// latency profiles.
Result<TransitionSimReport> SimulateTransition(const Deployment& from, const Transition& transition,
                                               const Problem& problem, const SimOptions& options,
                                               double step_seconds);

// The report for people: the simulation tables of the whole run
// (FormatSimReportTable), then a table of every window's services. For
// programs: the simulation JSON (FormatSimReportJson) with a "windows" array
// after its other keys, each {"name", "start_s", "end_s", "services"}, its
// services written as the run's are.
std::string FormatTransitionSimTable(const TransitionSimReport& report);
std::string FormatTransitionSimJson(const TransitionSimReport& report);

}  // namespace tessera

#endif  // TESSERA_TRANSITION_SIMULATION_H_
