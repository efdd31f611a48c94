#include "cli_flags.h"

#include <fmt/format.h>

#include <cstdlib>
#include <memory>

#include "cli_output.h"
#include "tessera/durations.h"
#include "tessera/util/input_limits.h"
#include "tessera/util/text_io.h"

namespace tessera::cli {

void AddInputFlags(CLI::App& command, ProblemInputs& flags) {
  auto* scenario = command.add_option("--scenario", flags.scenario,
                                      "Scenario YAML: gpu and services {name, model, rate_rps, "
                                      "slo_ms} (see examples/scenarios/)");
  auto* slo = command.add_option("--parva-slo", flags.parva_slo,
                                 "Import a scenario from a ParvaGPU SLO directory "
                                 "(SLO_req_rate.csv + SLO_latency.csv); needs --row");
  command.add_option("--row", flags.row, "Row of the ParvaGPU SLO files, 1-based")
      ->needs(slo)
      ->check(CLI::PositiveNumber);
  scenario->excludes(slo);
  command.add_option("--gpu", flags.gpu,
                     "GPU model (" + GpuNames() + "); default: the scenario's, else a100-80gb");
  auto* factor = command
                     .add_option("--latency-factor", flags.latency_factor,
                                 "A batch may take this share of the SLO (default 0.5)")
                     ->check(Within(limits::kLatencyFactor));
  command.add_option("--router", flags.router,
                     "How the serving side routes a service's requests among its processes, "
                     "recorded in the plan: leastconn (default: HAProxy's weighted leastconn, "
                     "what deploy ships), first (HAProxy's balance first, two batches of slots "
                     "per process), weighted (at random by SLO-safe capacity), equal (a "
                     "Kubernetes Service) or jsq (the simulator's ideal, which deploy cannot "
                     "ship); first, weighted and equal plan under --capacity-rule queueing "
                     "unless one is given (docs/routing.md)");
  command
      .add_option("--rate-margin", flags.rate_margin,
                  "Rates are estimates: plan for (1 + M) x every service's rate, " +
                      limits::kRateMargin.Describe() + " (default 0)")
      ->check(Within(limits::kRateMargin));
  command
      .add_option("--replicate", flags.replicate,
                  "Serve K copies of every service, named <name>#k (ParvaGPU's scalability "
                  "study grows S5 to 110 services with K = 10)")
      ->check(Within(limits::kReplicate));
  command.add_option("--profiles", flags.profiles,
                     "MIG planners: profile CSV file or ParvaGPU prof_data directory (format "
                     "detected); default: the embedded synthesized profiles");
  command
      .add_option("--compat", flags.compat,
                  "MIG planners: parva-artifact: ParvaGPU artifact's rule (latency < 0.45 x "
                  "integer SLO, at most 5 processes, bare capacity)")
      ->check(CLI::IsMember({"parva-artifact"}))
      ->excludes(factor);
  command.add_option(
      "--capacity-rule", flags.capacity_rule,
      "MIG planners: pooled (default): a service's processes form one pool behind the "
      "leastconn (or jsq) router, which may run closer to its capacity the more requests it serves "
      "per batch time (pooled:CV: batch latencies vary with coefficient CV, "
      "default 0.05; docs/capacity-rules.md); queueing: a segment counts only the "
      "share of its throughput at which its own queue still meets the SLO at "
      "p99.5 under Poisson arrivals; bursty:SHARE: the same for on/off bursts "
      "that are on SHARE of the time; bare: its whole throughput, as the papers "
      "do (--compat parva-artifact implies bare)");
  command
      .add_option("--capacity-quantile", flags.capacity_quantile,
                  "MIG planners, queueing and pooled rules: the share of a service's requests "
                  "that must still meet the SLO at the load a segment is counted for, " +
                      limits::kCapacityQuantile.Describe() +
                      " (default 0.995); higher leaves more headroom where a pool serves few "
                      "requests per batch time, where a minute's requests vary most "
                      "(docs/capacity-rules.md)")
      ->check(Within(limits::kCapacityQuantile));
  command.add_option(
      "--coeffs", flags.coefficients,
      "MPS planners (igniter, ffd+, gslice+, gpulet): the GPU's iGniter "
      "coefficients (JSON), to plan whole GPUs shared through MPS; e.g. "
      "fitted_coefficients_v100.json of iGniter's artifact (docs/data-sources.md), or fit your "
      "own with `tessera igniter fit`; default on a GPU with MIG: derived, with "
      "gpu-lets' tables, from its profiles (docs/igniter-planner.md, \"On MIG "
      "workloads\")");
  command.add_option("--gpulet-tables", flags.gpulet_tables,
                     "MPS planner gpulet: gpu-lets' profiling tables (JSON Lines), e.g. "
                     "gpulet.config of iGniter's artifact (docs/data-sources.md)");
  command
      .add_option("--price", flags.price_per_hour,
                  "MPS planners: hourly price of one GPU (default: the scenario pool's price, "
                  "else the catalog's one-GPU cloud instance, e.g. p3.2xlarge $3.06)")
      ->check(Within(limits::kPriceFlag));
}

CLI::Validator Within(const InputRange& range) {
  return CLI::Validator(
      [range](std::string& text) -> std::string {
        const std::optional<double> v = ToDouble(Trim(text));
        return v && range.Contains(*v) ? "" : OutOfRange(range, QuoteForMessage(text));
      },
      range.Describe());
}

CLI::Validator DurationFlag(const DurationRange& range, double plain_unit_s) {
  return CLI::Validator(
      [range, plain_unit_s](std::string& text) -> std::string {
        Result<double> seconds = ParseDuration("", text, range, plain_unit_s);
        if (!seconds.ok()) return seconds.status().message();
        text = fmt::format("{}", *seconds / plain_unit_s);
        return "";
      },
      plain_unit_s == 1 ? "DURATION" : "MS");
}

CLI::Validator NonNegative() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const std::optional<double> v = ToDouble(Trim(text));
        return v && *v >= 0 ? "" : "must be a number >= 0, got " + QuoteForMessage(text);
      },
      "NUMBER >= 0");
}

void AddSearchFlags(CLI::App& command, SearchOptions& flags) {
  command
      .add_option("--time-limit", flags.time_limit_s,
                  "Wall-clock time a planner may take, " + DescribeRange(kTimeLimit) +
                      ", e.g. 10, 30s or 2m (exact: returns the best plan found, its proven "
                      "bound and gap; migserving-ga: the best plan its rounds found; "
                      "migserving-greedy: the services its fast algorithm has not reached get "
                      "GPUs of their own; parva: the GPUs its allocation optimization has not "
                      "reached keep their segments; any planner with no plan covering every "
                      "service yet: an error); default: the planner's own (10 s for exact and "
                      "migserving-ga, none for the others)")
      ->transform(DurationFlag(kTimeLimit));
  command
      .add_option("--seed", flags.seed,
                  "Seed of a randomised planner (migserving-ga): same seed, same plan, unless "
                  "the time limit cuts the search short")
      ->check(NonNegative())
      ->capture_default_str();
  command
      .add_option("--score", flags.score,
                  "The heuristic score MIG-serving's planners (migserving-*) rank GPU "
                  "configurations by: capped (a service's utility counts up to what it still "
                  "needs) or paper (the paper's formula as written, each unsatisfied service's "
                  "whole utility); docs/migserving-planner.md")
      ->check(CLI::IsMember({"capped", "paper"}))
      ->capture_default_str();
}

PlanContext ContextFrom(const SearchOptions& flags, const Planner& planner) {
  PlanContext context = ContextFor(flags, planner);
  context.progress = CliProgress();
  return context;
}

// The token of --token-file: its one line, the trailing newline stripped.
Result<std::string> ReadTokenFile(const std::string& path) {
  Result<std::string> text = ReadTextFile(path);
  if (!text.ok()) return Status::InvalidArgument("--token-file: " + text.status().message());
  std::string token = std::move(*text);
  if (token.ends_with('\n')) token.pop_back();
  if (token.ends_with('\r')) token.pop_back();
  if (token.empty())
    return Status::InvalidArgument("--token-file: " + path + " is empty: write the token in it");
  if (token.find_first_of("\r\n") != std::string::npos)
    return Status::InvalidArgument("--token-file: " + path +
                                   " holds more than one line: it must hold the token alone");
  return token;
}

}  // namespace tessera::cli
