// One simulation as every front-end asks for it (`tessera simulate`, the
// Python package's simulate(), rehearse's prediction): a plan replayed
// request by request against a scenario's rates and SLOs, optionally
// through a transition, with typed options. LoadSimulation loads and checks
// everything a run needs (options first, so that a bad option is reported
// before a file is read); SimulatePlan and SimulateThroughTransition run it.
//
// Errors name the input by its command-line spelling ("--duration",
// "--arrivals"), or the file, line and field; a note (the trace cut by the
// duration, profiles taken from the plan's record) goes to the request's
// NoteSink.
//
// Thread-safety: functions of their arguments; they read the files named.
#ifndef TESSERA_SIMULATE_REQUEST_H_
#define TESSERA_SIMULATE_REQUEST_H_

#include <cstdint>
#include <optional>
#include <string>

#include "tessera/deployment.h"
#include "tessera/problem.h"
#include "tessera/problem_inputs.h"
#include "tessera/scenario.h"
#include "tessera/simulate/transition_simulation.h"
#include "tessera/simulator.h"
#include "tessera/status.h"
#include "tessera/transition.h"

namespace tessera {

struct SimulateRequest {
  // The scenario (unless `scenario` is set) and the figures the plan was made
  // with: its MIG profiles (unset: those it records, else the embedded ones)
  // or, for an MPS plan, its iGniter coefficients.
  ProblemInputs inputs;
  std::optional<Scenario> scenario;
  // The plan: the deployment JSON file at `deployment_path`, or `deployment`
  // in memory (`deployment_path` then names it in messages).
  std::string deployment_path;
  std::optional<Deployment> deployment;
  // A transition to run the plan through, phase by phase (the JSON file at
  // `transition_path`, or `transition`), each state lasting `step_s`.
  std::string transition_path;
  std::optional<Transition> transition;
  std::optional<double> step_s;
  // How long requests arrive; unset: 60 s, or a trace's last request rounded
  // up to a second. Not with a transition (its steps set the length).
  std::optional<double> duration_s;
  std::string arrivals = "poisson";  // poisson|constant|bursty|trace:FILE
  std::optional<double> burst_on_share;
  std::optional<double> burst_on_s;
  std::string router;  // empty: the plan's
  std::optional<double> max_queue_delay_ms;
  std::string variability = "none";  // none|exponential|lognormal[:CV]
  double drop_after_ms = 0;
  std::uint64_t seed = 1;
  NoteSink notes;
};

// Everything a run needs, loaded and checked.
struct Simulation {
  Scenario scenario;
  Deployment deployment;  // its rule adopted (AdoptRule)
  std::string name;       // the deployment (and transition) in messages
  std::optional<Transition> transition;
  double step_s = 0;
  Problem problem;  // the scenario on the deployment's GPUs, under its rule
  SimOptions options;
  std::string figures;  // "with the embedded profiles", "with profiles PATH"...
};

// The scenario, transition, options, deployment and problem of `request`:
// the options checked before any file is read; the scenario and the
// deployment (with the services a transition starts) must name the same
// services.
Result<Simulation> LoadSimulation(const SimulateRequest& request);

// The plan replayed; a plan the figures cannot serve is an error naming the
// plan and where its figures came from.
Result<SimReport> SimulatePlan(const Simulation& simulation);

// The plan replayed through the transition; errors name the transition.
Result<TransitionSimReport> SimulateThroughTransition(const Simulation& simulation);

// A note for the trace requests arriving after the run's duration, which
// are not sent; none when every one is.
void NoteTraceCut(const SimOptions& options, const NoteSink& notes);

// The problem of replaying `d` (read from `path`) against `scenario`: with
// the profiles of `inputs` (or those the plan records, else the embedded
// ones of every GPU model it uses), or for an MPS plan the iGniter
// coefficients of `inputs`, else (a MIG GPU run whole) those derived from
// its profiles as planning derives them.
Result<Problem> ProblemForPlan(const ProblemInputs& inputs, const Scenario& scenario,
                               const Deployment& d, const std::string& path, const NoteSink& notes);

// InvalidArgument naming `path` unless `scenario` and `d` name the same
// services: the report would show a mistyped service as idle or as dropping
// everything.
Status CheckSameServices(const Scenario& scenario, const Deployment& d, const std::string& path);

// The transition JSON at `path`.
Result<Transition> LoadTransition(const std::string& path);

// `d` with an entry for every service a step of `transition` starts that `d`
// lacks: the services a scenario simulated through it must name.
Deployment WithStartedServices(Deployment d, const Transition& transition);

}  // namespace tessera

#endif  // TESSERA_SIMULATE_REQUEST_H_
