#include "cli_common.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "tessera/gpulet_tables.h"
#include "tessera/igniter_model.h"
#include "tessera/input_limits.h"
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
  command.add_option("--gpu", flags.gpu,
                     "GPU model (" + GpuNames() + "); default: the scenario's, else a100-80gb");
  auto* factor = command
                     .add_option("--latency-factor", flags.latency_factor,
                                 "A batch may take this share of the SLO (default 0.5)")
                     ->check(Within(limits::kLatencyFactor));
  command.add_option("--router", flags.router,
                     "How the serving side routes a service's requests among its processes, "
                     "recorded in the plan: weighted (default: at random by SLO-safe capacity) "
                     "or jsq (join-shortest-queue)");
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
  command.add_option("--capacity-rule", flags.capacity_rule,
                     "MIG planners: queueing (default): a segment counts only the share of its "
                     "throughput at which its queue still meets the SLO at p99.5 under Poisson "
                     "arrivals; bursty:SHARE: the same for on/off bursts that are on SHARE of "
                     "the time; bare: its whole throughput, as the papers do (--compat "
                     "parva-artifact implies bare)");
  command.add_option("--coeffs", flags.coefficients,
                     "MPS planners (igniter, ffd+, gslice+, gpulet): the GPU's iGniter "
                     "coefficients (JSON), to plan whole GPUs shared through MPS; e.g. "
                     "../shared/data/igniter/derived/fitted_coefficients_v100.json, or fit your "
                     "own with `tessera igniter fit`");
  command.add_option("--gpulet-tables", flags.gpulet_tables,
                     "MPS planner gpulet: gpu-lets' profiling tables (JSON Lines), e.g. "
                     "../shared/data/igniter/i-Gniter/Profile/tools/gpulet.config");
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

Result<Scenario> Replicated(const Scenario& scenario, int copies) {
  if (!limits::kReplicate.Contains(copies)) {
    return Status::InvalidArgument("--replicate: " + OutOfRange(limits::kReplicate, copies));
  }
  const double services = static_cast<double>(scenario.services.size()) * copies;
  if (!limits::kServices.Contains(services)) {
    return Status::InvalidArgument(
        fmt::format("--replicate: {} copies of {} services make {:g}; a scenario holds {}", copies,
                    scenario.services.size(), services, limits::kServices.Describe()));
  }
  return ReplicateScenario(scenario, copies);
}

CLI::Validator NonNegative() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const std::optional<double> v = ToDouble(Trim(text));
        return v && *v >= 0 ? "" : "must be a number >= 0, got " + QuoteForMessage(text);
      },
      "NUMBER >= 0");
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
      ->check(NonNegative())
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
  Result<Scenario> scenario =
      Status::InvalidArgument("give a scenario: --scenario FILE or --parva-slo DIR --row N");
  if (!flags.scenario.empty()) {
    scenario = LoadScenarioYaml(flags.scenario);
  } else if (!flags.parva_slo.empty()) {
    if (flags.row <= 0) return Status::InvalidArgument("--parva-slo needs --row N (1-based)");
    scenario = ImportParvaSloRow(flags.parva_slo, flags.row);
  }
  if (!scenario.ok()) return scenario.status();
  return Replicated(*scenario, flags.replicate);
}

// The rule of the flags: --compat, --latency-factor, --capacity-rule and
// --router over the default.
Result<LatencyRule> RuleFrom(const InputFlags& flags) {
  LatencyRule rule;
  if (flags.compat == "parva-artifact") rule = ParvaArtifactRule();
  if (flags.latency_factor) rule.factor = *flags.latency_factor;
  TESSERA_RETURN_IF_ERROR(rule.Validate().WithContext("--latency-factor"));
  if (!flags.capacity_rule.empty()) {
    TESSERA_RETURN_IF_ERROR(rule.SetCapacity(flags.capacity_rule).WithContext("--capacity-rule"));
  }
  if (!flags.router.empty()) {
    TESSERA_ASSIGN_OR_RETURN(rule.router, ParseRouter(flags.router));
  }
  return rule;
}

// A plan is checked under the rule it was made under; a rule flag that says
// otherwise is a contradiction, not an override.
Result<LatencyRule> RuleOf(const InputFlags& flags, const LatencyRule* recorded) {
  TESSERA_ASSIGN_OR_RETURN(LatencyRule from_flags, RuleFrom(flags));
  if (recorded == nullptr) return from_flags;
  const bool given = flags.latency_factor || !flags.compat.empty() ||
                     !flags.capacity_rule.empty() || !flags.router.empty();
  if (given && !(from_flags == *recorded)) {
    return Status::InvalidArgument(
        "the plan records the rule it was made under (" + DescribeRule(*recorded) +
        "); the rule flags give " + DescribeRule(from_flags) +
        ": drop --latency-factor, --compat, --capacity-rule and --router to check it under its "
        "own rule");
  }
  return *recorded;
}

// The scenario's pool as offers of catalog models with MIG, or the one model
// of `--gpu`, the scenario, or a100-80gb.
Result<std::vector<GpuOffer>> ChoosePool(const InputFlags& flags, const Scenario& scenario) {
  std::vector<GpuOffer> pool;
  if (!scenario.pool.empty()) {
    if (!flags.gpu.empty()) {
      return Status::InvalidArgument(
          "--gpu: the scenario lists a pool of GPU models; edit its pool instead of giving "
          "--gpu");
    }
    for (const PoolEntry& entry : scenario.pool) {
      Result<const GpuModel*> gpu = FindMigGpu(entry.gpu);
      if (!gpu.ok()) return gpu.status().WithContext(ServiceLocation(scenario, entry.line));
      pool.push_back({*gpu, entry.price_per_hour, entry.max_count});
    }
    return pool;
  }
  TESSERA_ASSIGN_OR_RETURN(const GpuModel* gpu, ChooseGpu(flags.gpu, scenario));
  return std::vector<GpuOffer>{{gpu, 0, 0}};
}

Result<Problem> LoadMigProblem(const InputFlags& flags, const Scenario& scenario,
                               const LatencyRule& rule) {
  TESSERA_ASSIGN_OR_RETURN(std::vector<GpuOffer> pool, ChoosePool(flags, scenario));
  ProfileTable profiles;
  if (flags.profiles.empty()) {
    std::vector<const GpuModel*> gpus;
    for (const GpuOffer& offer : pool) gpus.push_back(offer.gpu);
    TESSERA_ASSIGN_OR_RETURN(profiles, EmbeddedProfiles(gpus));
  } else {
    TESSERA_ASSIGN_OR_RETURN(profiles, LoadProfiles(flags.profiles));
  }
  return Problem::BuildPool(scenario, std::move(pool), profiles, rule);
}

// The GPU an MPS plan uses: --gpu, the scenario's (or its pool's one entry),
// or the coefficients' hardware.gpu.
Result<const GpuModel*> ChooseMpsGpu(const InputFlags& flags, const Scenario& scenario,
                                     const MpsCoefficients& coefficients) {
  if (!flags.gpu.empty()) {
    Result<const GpuModel*> gpu = FindGpu(flags.gpu);
    return gpu.ok() ? gpu : gpu.status().WithContext("--gpu");
  }
  std::string name = scenario.gpu;
  if (name.empty() && scenario.pool.size() == 1) name = scenario.pool.front().gpu;
  if (!scenario.pool.empty() && name.empty()) {
    return Status::InvalidArgument(scenario.source +
                                   ": MPS planners plan one GPU type; list one in `pool` or "
                                   "give --gpu");
  }
  const std::string& from = name.empty() ? flags.coefficients : scenario.source;
  if (name.empty()) name = coefficients.hardware.gpu;
  if (name.empty()) {
    return Status::InvalidArgument(
        "name the GPU the plan uses: --gpu NAME, `gpu:` in the scenario, or \"gpu\" in the "
        "coefficients' hardware (" +
        GpuNames() + ")");
  }
  Result<const GpuModel*> gpu = FindGpu(name);
  return gpu.ok() ? gpu : gpu.status().WithContext(from);
}

// --price, else the scenario pool's price of `gpu`, else its cloud instance's.
double ChoosePrice(const InputFlags& flags, const Scenario& scenario, const GpuModel& gpu) {
  if (flags.price_per_hour) return *flags.price_per_hour;
  for (const PoolEntry& entry : scenario.pool) {
    if (entry.gpu == gpu.name) return entry.price_per_hour;
  }
  return gpu.cloud.price_per_hour;
}

// The scenario pool's max_count of `gpu`; 0 (no cap) when it has none.
int ChooseMaxCount(const Scenario& scenario, const GpuModel& gpu) {
  for (const PoolEntry& entry : scenario.pool) {
    if (entry.gpu == gpu.name) return entry.max_count;
  }
  return 0;
}

Result<Problem> LoadMpsProblem(const InputFlags& flags, const Scenario& scenario,
                               const LatencyRule& rule) {
  if (flags.coefficients.empty()) {
    return Status::InvalidArgument(
        "MPS planners need the GPU's iGniter coefficients: --coeffs FILE (e.g. "
        "../shared/data/igniter/derived/fitted_coefficients_v100.json)");
  }
  TESSERA_ASSIGN_OR_RETURN(MpsCoefficients coefficients, LoadMpsCoefficients(flags.coefficients));
  TESSERA_ASSIGN_OR_RETURN(const GpuModel* gpu, ChooseMpsGpu(flags, scenario, coefficients));
  std::shared_ptr<const GpuletTables> gpulet;
  if (!flags.gpulet_tables.empty()) {
    TESSERA_ASSIGN_OR_RETURN(GpuletTables tables, LoadGpuletTables(flags.gpulet_tables));
    gpulet = std::make_shared<const GpuletTables>(std::move(tables));
  }
  return Problem::BuildMps(
      scenario, {gpu, ChoosePrice(flags, scenario, *gpu), ChooseMaxCount(scenario, *gpu)},
      std::move(coefficients), rule, std::move(gpulet));
}

}  // namespace

Status CheckFlagsApply(const InputFlags& flags, bool mps, std::string_view planners) {
  struct Given {
    const char* flag;
    bool given;
    bool for_mps;
  };
  const Given all[] = {
      {"--profiles", !flags.profiles.empty(), false},
      {"--compat", !flags.compat.empty(), false},
      {"--capacity-rule", !flags.capacity_rule.empty(), false},
      {"--coeffs", !flags.coefficients.empty(), true},
      {"--gpulet-tables", !flags.gpulet_tables.empty(), true},
      {"--price", flags.price_per_hour.has_value(), true},
  };
  for (const Given& g : all) {
    if (!g.given || g.for_mps == mps) continue;
    return Status::InvalidArgument(fmt::format(
        "{} does not apply to {}: it is for the {} planners ({}); see `tessera compare --list`",
        g.flag, planners, g.for_mps ? "MPS" : "MIG",
        g.for_mps ? "whole GPUs shared through MPS" : "GPUs cut into MIG instances"));
  }
  return Status::Ok();
}

Result<Problem> LoadProblem(const InputFlags& flags, bool mps, const LatencyRule* recorded) {
  TESSERA_ASSIGN_OR_RETURN(Scenario scenario, LoadScenario(flags));
  TESSERA_ASSIGN_OR_RETURN(LatencyRule rule, RuleOf(flags, recorded));
  return mps ? LoadMpsProblem(flags, scenario, rule) : LoadMigProblem(flags, scenario, rule);
}

std::string InputsSource(const InputFlags& flags, bool mps) {
  if (mps) return "iGniter coefficients: " + flags.coefficients;
  return "profiles: " +
         (flags.profiles.empty() ? std::string("embedded (synthesized)") : flags.profiles);
}

void AdoptRule(Deployment& deployment, const std::string& path, const LatencyRule& rule) {
  if (deployment.rule_recorded) return;
  deployment.rule = rule;
  std::cerr << "tessera: note: " << path
            << " records no latency rule (it predates plans recording theirs); using "
            << DescribeRule(rule) << "\n";
}

Result<const GpuModel*> ChooseGpu(const std::string& gpu_flag, const Scenario& scenario) {
  const std::string name =
      !gpu_flag.empty() ? gpu_flag : (!scenario.gpu.empty() ? scenario.gpu : "a100-80gb");
  Result<const GpuModel*> gpu = FindMigGpu(name);
  if (gpu.ok()) return gpu;
  return gpu.status().WithContext(gpu_flag.empty() ? scenario.source : "--gpu");
}

Result<ProfileTable> EmbeddedProfiles(const std::vector<const GpuModel*>& gpus) {
  ProfileTable table;
  for (const GpuModel* gpu : gpus) TESSERA_RETURN_IF_ERROR(table.Merge(DefaultProfiles(*gpu)));
  return table;
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
