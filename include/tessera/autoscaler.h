// The autoscaling policy (docs/autoscale.md), one component that
// `tessera autoscale` (autoscale_request.h) runs over a simulated day and
// `tessera serve`'s auto mode runs over the rates its routers observe.
//
// The policy is fed one minute of every service's rate at a time
// (Observe) and, while no transition runs, weighs a move (Decide):
//  * it forecasts each service over the lead window (forecaster.h; at least
//    the last move's length and two minutes) and needs (1 + margin) x the
//    highest of that forecast and the last minute seen;
//  * it moves up when a service needs more than the rate its plan holds
//    (the rate it was planned for, or its SLO-safe capacity when less),
//    unless the forecast says the need is gone before the move would end
//    (a spike shorter than a transition);
//  * it moves down when some service needs less than (1 - hysteresis) x
//    its planned rate and no service more, for `down_hold_s` running, and
//    the plan for the need uses fewer GPUs; and, when no service moves
//    either way, every `down_hold_s` it compacts when a plan from scratch
//    for the need takes fewer GPUs than the running one (moves keep what
//    they can, and GPUs pile up);
//  * a move plans for the need over `plan_windows` lead windows (two by
//    default) and at least until a move up started as it ends could end
//    (twice the last move up's length and two minutes); with `hedge_turns`,
//    a falling service keeps room for the load to turn at once and rise as
//    fast as its forecast falls until the last move down's and the last
//    move up's lengths have passed, and no move down outlasts the lead (a
//    longer one would keep a move up from starting past the forecast's
//    horizon, and its turn would need more room). It plans incrementally from the
//    running plan (with `consolidate`, several instances of a service
//    replaced by one larger where that takes less of the GPUs: moves that
//    keep what they can pile up small instances as rates rise), and plans
//    the transition with at most `spare_gpus` spare GPUs and times it
//    (transition_duration.h):
//    - a move up takes the fewest GPUs (no more than a plan from scratch)
//      when that transition ends within the lead (`lead_s`, however long
//      the last move); else the shortest transition of the plans on 0 to
//      `spare_gpus` more GPUs, or, when still longer or none moves within
//      the spare GPUs, the plan that keeps every running instance and adds
//      what the need lacks (its transition only creates);
//    - a move down weighs the plan on the fewest GPUs (on many services the
//      plan from scratch mapped onto the running one: a repack of the
//      cluster) beside plans on fewer GPUs than the running one that keep
//      its instances but repack its 0, 1, 2, 4, ... least-filled GPUs, and
//      takes the one holding the fewest GPU-seconds (while its transition
//      runs: the running and spare GPUs) until the longest of them has
//      ended and its plan held two lead windows;
//    and it is never started when the forecast crosses its floors (min of
//    the two plans' rates) before it ends, but for the rising services' own
//    floors on a move up (not moving crosses them too: such a move is
//    counted late).
// Moves weighed and not started are counted by why (declined()).
//
// A "minute" is one Observe: `tessera serve` may feed it shorter ticks (a
// compressed day); every duration of the options is then in ticks x 60 s.
//
// Errors: planning errors name the minute and the service (`source` names
// the rates).
//
// Thread-safety: one Autoscaler per thread; none is shared.
#ifndef TESSERA_AUTOSCALER_H_
#define TESSERA_AUTOSCALER_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/deployment.h"
#include "tessera/durations.h"
#include "tessera/problem_inputs.h"
#include "tessera/scenario.h"
#include "tessera/status.h"
#include "tessera/transition.h"
#include "tessera/transition/transition_duration.h"
#include "tessera/util/input_limits.h"

namespace tessera {

// The range of each policy option (the CLI's flags, the Python keywords,
// serve's flags), which CheckAutoscalePolicy checks.
inline constexpr DurationRange kAutoscaleLead{kMinute, kDay};
inline constexpr DurationRange kAutoscaleDownHold{0, kDay, true};
inline constexpr InputRange kAutoscaleMargin{0, 1};
inline constexpr InputRange kAutoscaleHysteresis{0, 0.9};
inline constexpr InputRange kAutoscaleSpareGpus{0, 1000, false, true};
inline constexpr InputRange kAutoscalePlanWindows{1, 10, false, true};

struct AutoscalePolicyOptions {
  std::string forecaster = "holt";  // BuiltinForecasters()
  double lead_s = 10 * 60;          // plan for the forecast peak this far ahead
  double margin = 0.05;             // plan for (1 + margin) x the need
  double hysteresis = 0.08;         // move down below (1 - hysteresis) x planned
  double down_hold_s = 5 * 60;      // ... for this long
  int spare_gpus = 2;               // GPUs a transition may add
  // A move plans for the forecast peak over this many lead windows: more,
  // fewer moves along a ramp; fewer, a plan closer to the load.
  int plan_windows = 2;
  // A falling service's plan keeps room for the load to turn and rise as
  // fast as it falls while a move down and a move up after it run: fewer
  // minutes short where a fall turns to a rise, more GPU-hours on falls.
  // No move down then outlasts the lead.
  bool hedge_turns = false;
  // Re-plans consolidate (PlanRequest::consolidate): several instances of a
  // service replaced by one larger where that takes less of the GPUs.
  bool consolidate = false;
  StepDurations durations;
};

// InvalidArgument naming the flag (--forecaster, --lead, --down-hold,
// --margin, --hysteresis, --spare-gpus, --plan-windows) of the first option
// out of range.
Status CheckAutoscalePolicy(const AutoscalePolicyOptions& options);

// What the policy plans with.
struct AutoscalePlanning {
  Scenario scenario;     // the services, in order; their rates are replaced
  ProblemInputs inputs;  // the profiles (in memory best), GPU, rule
  std::string planner;   // a MIG planner; empty: the default one
  std::string source;    // names the rates in errors (a file, "observed rates")
};

// The plan for `rates` (scenario order; each at least a thousandth of a
// request a second), from scratch or incrementally from `current` with up
// to `extra_gpus` more GPUs, repacking its `repack_gpus` least-filled GPUs
// (PlanRequest::repack_gpus), consolidating its instances with
// `consolidate` (PlanRequest::consolidate). InvalidArgument naming `minute`, the service
// and its rate when no plan serves it.
Result<Deployment> PlanForRates(const AutoscalePlanning& planning, const std::vector<double>& rates,
                                const Deployment* current, int minute, int extra_gpus = 0,
                                int repack_gpus = 0, bool consolidate = false);

// Each service's SLO-safe capacity in `d` (req/s; scenario order).
std::vector<double> SloSafeCapacity(const Deployment& d, const std::vector<std::string>& services);

struct AutoscaleMove {
  int minute = 0;  // starts at the beginning of this minute
  double seconds = 0;
  int phases = 0;
  int steps = 0;
  int from_gpus = 0;
  int to_gpus = 0;
  int peak_gpus = 0;
  int spare_gpus = 0;  // beyond both plans' GPUs, at the peak
  bool up = false;
  bool late = false;  // a rising service's forecast crosses its floor before the end
};

// Whole minutes covering `seconds` (rounded up).
int MinutesCovering(double seconds);
// How many minutes a move runs through: its seconds rounded up, at least 1.
int MoveMinutes(const AutoscaleMove& move);

// A move the policy decided: the plan to move to and the transition there
// (no steps: the running plan serves the need as it is).
struct AutoscaleDecision {
  AutoscaleMove move;
  Transition transition;
  Deployment to;
  std::vector<double> rates;  // what `to` was planned for
};

class Autoscaler {
 public:
  // InvalidArgument for options out of range or an unknown forecaster.
  // `season`: the previous day's rates per service (may be empty).
  static Result<std::unique_ptr<Autoscaler>> Create(AutoscalePlanning planning,
                                                    AutoscalePolicyOptions options,
                                                    std::vector<std::vector<double>> season = {});
  ~Autoscaler();
  Autoscaler(const Autoscaler&) = delete;
  Autoscaler& operator=(const Autoscaler&) = delete;

  // The plan running and the rates it was planned for: at the start, and
  // whenever the plan changed other than by a decision of this policy.
  void Rebase(Deployment running, std::vector<double> planned);
  // One more minute: every service's rate over it (scenario order).
  void Observe(const std::vector<double>& minute);
  int minutes_seen() const;
  // Weighs a move at the end of the minutes seen (at least one), with no
  // transition running; nullopt when none is started.
  Result<std::optional<AutoscaleDecision>> Decide();
  // The decision's move was started (its plan runs from now; `minutes`: its
  // length rounded up, which the next lead windows cover).
  void Adopt(const AutoscaleDecision& decision, int minutes);

  const Deployment& running() const;
  const std::vector<double>& planned() const;
  const std::vector<double>& capacity() const;  // SloSafeCapacity of running()
  const std::map<std::string, int>& declined() const;

 private:
  class Impl;
  explicit Autoscaler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera

#endif  // TESSERA_AUTOSCALER_H_
