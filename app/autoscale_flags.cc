#include "autoscale_flags.h"

#include "cli_flags.h"
#include "tessera/autoscale_request.h"
#include "tessera/workload/forecaster.h"

namespace tessera::cli {

std::vector<CLI::Option*> AddAutoscalePolicyFlags(CLI::App& cmd, AutoscalePolicyOptions& o,
                                                  std::string& durations) {
  std::vector<CLI::Option*> added;
  added.push_back(cmd.add_option("--forecaster", o.forecaster,
                                 "Forecaster: " + BuiltinForecasters().JoinedNames())
                      ->capture_default_str());
  added.push_back(
      cmd.add_option("--lead", o.lead_s, "Plan for the forecast peak this far ahead, 1m to 1d")
          ->transform(DurationFlag(kAutoscaleLead))
          ->default_str("10m"));
  added.push_back(
      cmd.add_option("--margin", o.margin, "Plan for (1 + MARGIN) x the forecast need, 0..1")
          ->check(Within(kAutoscaleMargin))
          ->capture_default_str());
  added.push_back(
      cmd.add_option(
             "--hysteresis", o.hysteresis,
             "Move down only when a service needs less than (1 - H) x its planned rate, 0..0.9")
          ->check(Within(kAutoscaleHysteresis))
          ->capture_default_str());
  added.push_back(cmd.add_option("--down-hold", o.down_hold_s, "... for this long, 0 to 1d")
                      ->transform(DurationFlag(kAutoscaleDownHold))
                      ->default_str("5m"));
  added.push_back(
      cmd.add_option("--plan-windows", o.plan_windows,
                     "A move plans for the forecast peak over this many lead windows, 1..10: "
                     "more, fewer moves along a ramp; fewer, a plan closer to the load")
          ->check(Within(kAutoscalePlanWindows))
          ->capture_default_str());
  added.push_back(cmd.add_flag(
      "--hedge-turns", o.hedge_turns,
      "A falling service's plan keeps room for the load to turn and rise as fast as it falls "
      "while a move down and a move up after it run, and no move down outlasts --lead: fewer "
      "minutes short where a fall turns, more GPU-hours on falls (docs/autoscale.md, step 4)"));
  added.push_back(cmd.add_flag(
      "--consolidate", o.consolidate,
      "Re-plans replace several instances of a service by one larger where that takes less of "
      "the GPUs (plan --consolidate): on many services rising rates otherwise pile up small "
      "instances (docs/autoscale.md, step 6)"));
  added.push_back(cmd.add_option(
      "--step-durations", durations,
      "Step durations over the defaults (" + FormatStepDurations(StepDurations{}) + ")"));
  return added;
}

Status ApplyStepDurations(const std::string& durations, AutoscalePolicyOptions& options) {
  if (durations.empty()) return Status::Ok();
  TESSERA_ASSIGN_OR_RETURN(options.durations, ParseStepDurations("--step-durations", durations));
  return Status::Ok();
}

}  // namespace tessera::cli
