#include "simulate_flags.h"

#include <fmt/format.h>

#include <optional>
#include <string>

#include "cli_flags.h"
#include "tessera/durations.h"
#include "tessera/util/text_io.h"

namespace tessera::cli {
namespace {

// --burst-on-share: a share in [kMinBurstOnShare, 1], NaN rejected.
CLI::Validator BurstOnShare() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const std::optional<double> v = ToDouble(Trim(text));
        if (v && *v >= kMinBurstOnShare && *v <= 1) return "";
        return fmt::format("expected a share of time in [{:g}, 1], got {}", kMinBurstOnShare,
                           QuoteForMessage(text));
      },
      "SHARE");
}

void AddArrivalFlags(CLI::App& cmd, SimulateRequest& flags) {
  auto* duration =
      cmd.add_option("--duration", flags.duration_s,
                     "How long requests arrive, " + DescribeRange(kSimulatedTime) +
                         ": 60, 60s, 500ms, 2m or 1h (default 60s; with trace:FILE, the trace's "
                         "last request rounded up to a second)")
          ->transform(DurationFlag(kSimulatedTime));
  auto* transition = cmd.add_option(
      "--transition", flags.transition_path,
      "Transition JSON (tessera transition) to run the deployment through, phase by phase");
  cmd.add_option("--step-seconds", flags.step_s,
                 "With --transition: how long each phase (and the states before and after) is "
                 "simulated, " +
                     DescribeRange(kTransitionStep) + "; a plain number is seconds")
      ->transform(DurationFlag(kTransitionStep))
      ->needs(transition);
  transition->excludes(duration);
  cmd.add_option("--arrivals", flags.arrivals,
                 "poisson, constant, bursty (on/off Markov-modulated Poisson, same mean rate) "
                 "or trace:FILE (CSV service,time_s)")
      ->capture_default_str();
  cmd.add_option("--burst-on-share", flags.burst_on_share,
                 fmt::format("bursty: long-run share of time 'on', in [{:g}, 1]; the rate while "
                             "on is rate / share (default 0.5)",
                             kMinBurstOnShare))
      ->check(BurstOnShare());
  cmd.add_option("--burst-on-s", flags.burst_on_s,
                 "bursty: mean length of an 'on' period, " + DescribeRange(kBurstOn) +
                     "; a plain number is seconds (default 1)")
      ->transform(DurationFlag(kBurstOn));
  cmd.add_option("--seed", flags.seed, "Seed of every random draw; same seed, same report")
      ->check(NonNegative())
      ->capture_default_str();
}

void AddServingFlags(CLI::App& cmd, SimulateRequest& flags) {
  cmd.add_option("--router", flags.router,
                 "weighted (at random, by each process's SLO-safe capacity under the plan's "
                 "rule), jsq (the process whose batch would end first), equal (at random, equal "
                 "odds: a Kubernetes Service), leastconn or first (HAProxy's balance leastconn "
                 "or first, as deploy ships them; docs/routing.md); default: the router the "
                 "plan records")
      ->check(CLI::IsMember({"weighted", "jsq", "equal", "leastconn", "first"}));
  cmd.add_option("--max-queue-delay-ms", flags.max_queue_delay_ms,
                 "A partial batch starts once its oldest request has waited this long (default: "
                 "the plan's batch budget, e.g. half the SLO, minus the planned batch's latency, "
                 "at least 0); " +
                     DescribeRange(kServingDelay) + ", a plain number is ms")
      ->transform(DurationFlag(kServingDelay, kMillisecond));
  cmd.add_option("--variability", flags.variability,
                 "Batch execution time: none, exponential, lognormal or lognormal:CV (mean 1 x "
                 "the profiled latency; CV in (0, 100], default 0.1)")
      ->capture_default_str();
  cmd.add_option("--drop-after-ms", flags.drop_after_ms,
                 "Drop a request that has waited longer than this when its batch forms (counted "
                 "as missing its SLO); 0 = never, else up to " +
                     FormatDuration(kServingDelay.max_s) + ", a plain number is ms")
      ->transform(DurationFlag(kServingDelay, kMillisecond))
      ->capture_default_str();
}

}  // namespace

void AddSimulationFlags(CLI::App& cmd, SimulateRequest& flags) {
  AddArrivalFlags(cmd, flags);
  AddServingFlags(cmd, flags);
}

}  // namespace tessera::cli
