#include "cli_common.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "tessera/mps_plan.h"
#include "tessera/profile_io.h"
#include "tessera/profile_synth.h"
#include "tessera/text_io.h"

namespace tessera::cli {

int ExitCodeFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return kExitOk;
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kIoError:
      return kExitBadInput;
    case StatusCode::kInternal:
      return kExitInternal;
  }
  return kExitInternal;
}

int ReportError(const Status& status) {
  std::cerr << "tessera: error: " << status.message() << "\n";
  return ExitCodeFor(status);
}

void AddInputFlags(CLI::App& command, InputFlags& flags) {
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
  command.add_option("--profiles", flags.profiles,
                     "Profile CSV file or ParvaGPU prof_data directory (format detected); "
                     "default: the embedded synthesized profiles");
  command.add_option("--gpu", flags.gpu,
                     "GPU model (" + GpuNames() + "); default: the scenario's, else a100-80gb");
  auto* factor = command.add_option("--latency-factor", flags.latency_factor,
                                    "A batch may take this share of the SLO (default 0.5)");
  command
      .add_option("--compat", flags.compat,
                  "parva-artifact: ParvaGPU artifact's rule (latency < 0.45 x integer SLO, "
                  "at most 5 processes)")
      ->check(CLI::IsMember({"parva-artifact"}))
      ->excludes(factor);
  command.add_option("--capacity-rule", flags.capacity_rule,
                     "queueing (default): a segment counts only the share of its throughput at "
                     "which its queue still meets the SLO at p99.5 under Poisson arrivals; "
                     "bursty:SHARE: the same for on/off bursts that are on SHARE of the time; "
                     "bare: its whole throughput, as the papers do (--compat parva-artifact "
                     "implies bare)");
  command
      .add_option("--replicate", flags.replicate,
                  "Serve K copies of every service, named <name>#k (ParvaGPU's scalability "
                  "study grows S5 to 110 services with K = 10)")
      ->check(CLI::Range(1, 10000));
}

void AddSearchFlags(CLI::App& command, SearchFlags& flags) {
  command
      .add_option("--time-limit", flags.time_limit_s,
                  "Seconds a searching planner may take (exact: returns the best plan found, "
                  "its proven bound and gap; migserving-ga: the best plan its rounds found); "
                  "default: the planner's own (10 for both)")
      ->check(CLI::PositiveNumber);
  command
      .add_option("--seed", flags.seed,
                  "Seed of a randomised planner (migserving-ga): same seed, same plan, unless "
                  "the time limit cuts the search short")
      ->capture_default_str();
}

PlanContext ContextFrom(const SearchFlags& flags) {
  PlanContext context;
  context.time_limit_s = flags.time_limit_s;
  context.seed = flags.seed;
  context.progress = [](std::string_view line) { std::cerr << "tessera: " << line << "\n"; };
  return context;
}

namespace {

Result<Scenario> LoadScenario(const InputFlags& flags) {
  if (!flags.scenario.empty()) return LoadScenarioYaml(flags.scenario);
  if (!flags.parva_slo.empty()) {
    if (flags.row <= 0) return Status::InvalidArgument("--parva-slo needs --row N (1-based)");
    return ImportParvaSloRow(flags.parva_slo, flags.row);
  }
  return Status::InvalidArgument("give a scenario: --scenario FILE or --parva-slo DIR --row N");
}

// --capacity-rule: "queueing", "bursty:SHARE" or "bare" (empty: keep `rule`'s).
Status ApplyCapacityRule(const std::string& text, LatencyRule& rule) {
  if (text.empty()) return Status::Ok();
  rule.queueing_headroom = text != "bare";
  rule.burst_on_share = 1;
  if (text == "bare" || text == "queueing") return Status::Ok();
  constexpr std::string_view kBursty = "bursty:";
  const std::optional<double> share = text.starts_with(kBursty)
                                          ? ToDouble(std::string_view(text).substr(kBursty.size()))
                                          : std::nullopt;
  if (!share || !(*share > 0 && *share <= 1)) {
    return Status::InvalidArgument(
        "--capacity-rule: expected queueing, bursty:SHARE (0 < SHARE <= 1) or bare, got " +
        QuoteForMessage(text));
  }
  rule.burst_on_share = *share;
  return Status::Ok();
}

Result<LatencyRule> RuleFrom(const InputFlags& flags) {
  LatencyRule rule;
  if (flags.compat == "parva-artifact") rule = ParvaArtifactRule();
  if (flags.latency_factor) rule.factor = *flags.latency_factor;
  TESSERA_RETURN_IF_ERROR(rule.Validate().WithContext("--latency-factor"));
  TESSERA_RETURN_IF_ERROR(ApplyCapacityRule(flags.capacity_rule, rule));
  return rule;
}

// The scenario's pool as offers of catalog models (names already checked),
// or the one model of `--gpu`, the scenario, or a100-80gb.
Status ChoosePool(const InputFlags& flags, Inputs& in) {
  if (!in.scenario.pool.empty()) {
    if (!flags.gpu.empty()) {
      return Status::InvalidArgument(
          "--gpu: the scenario lists a pool of GPU models; edit its "
          "pool instead of giving --gpu");
    }
    for (const PoolEntry& entry : in.scenario.pool) {
      TESSERA_ASSIGN_OR_RETURN(const GpuModel* gpu, FindGpu(entry.gpu));
      in.pool.push_back({gpu, entry.price_per_hour, entry.max_count});
    }
    in.gpu = in.pool.front().gpu;
    return Status::Ok();
  }
  TESSERA_ASSIGN_OR_RETURN(in.gpu, ChooseGpu(flags.gpu, in.scenario));
  in.pool = {{in.gpu, 0, 0}};
  return Status::Ok();
}

}  // namespace

Result<const GpuModel*> ChooseGpu(const std::string& gpu_flag, const Scenario& scenario) {
  const std::string name =
      !gpu_flag.empty() ? gpu_flag : (!scenario.gpu.empty() ? scenario.gpu : "a100-80gb");
  Result<const GpuModel*> gpu = FindGpu(name);
  if (gpu.ok()) return gpu;
  const std::string where = gpu_flag.empty() ? scenario.source : "--gpu";
  if (FindMpsGpu(name).ok()) {
    return Status::InvalidArgument(where + ": " + name +
                                   " has no MIG: plan it with an MPS planner, e.g. --planner "
                                   "igniter --coeffs FILE (see `tessera plan --help`)");
  }
  return gpu.status().WithContext(where);
}

Result<ProfileTable> EmbeddedProfiles(const std::vector<const GpuModel*>& gpus) {
  ProfileTable table;
  for (const GpuModel* gpu : gpus) TESSERA_RETURN_IF_ERROR(table.Merge(DefaultProfiles(*gpu)));
  return table;
}

Result<Inputs> LoadInputs(const InputFlags& flags) {
  Inputs in;
  TESSERA_ASSIGN_OR_RETURN(in.scenario, LoadScenario(flags));
  in.scenario = ReplicateScenario(in.scenario, flags.replicate);
  TESSERA_RETURN_IF_ERROR(ChoosePool(flags, in));
  TESSERA_ASSIGN_OR_RETURN(in.rule, RuleFrom(flags));
  if (flags.profiles.empty()) {
    std::vector<const GpuModel*> gpus;
    for (const GpuOffer& offer : in.pool) gpus.push_back(offer.gpu);
    TESSERA_ASSIGN_OR_RETURN(in.profiles, EmbeddedProfiles(gpus));
    in.profiles_source = "embedded (synthesized)";
  } else {
    TESSERA_ASSIGN_OR_RETURN(in.profiles, LoadProfiles(flags.profiles));
    in.profiles_source = flags.profiles;
  }
  return in;
}

Result<Problem> BuildProblem(const Inputs& in) {
  return Problem::BuildPool(in.scenario, in.pool, in.profiles, in.rule);
}

Status WriteOutput(const std::string& path, const std::string& content) {
  if (path.empty() || path == "-") {
    std::cout << content;
    std::cout.flush();
    return std::cout ? Status::Ok() : Status::IoError("cannot write to stdout");
  }
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Status::IoError("cannot write " + path);
    out << content;
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      return Status::IoError("cannot write " + path);
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    return Status::IoError("cannot write " + path + ": " + ec.message());
  }
  return Status::Ok();
}

}  // namespace tessera::cli
