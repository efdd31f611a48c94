#include "tessera/problem_inputs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <memory>
#include <tuple>
#include <utility>

#include "tessera/deployment_format.h"
#include "tessera/profile/gpulet_tables.h"
#include "tessera/profile/igniter_model.h"
#include "tessera/profile/profile_synth.h"
#include "tessera/profile_io.h"
#include "tessera/util/input_limits.h"
#include "tessera/util/text_io.h"
#include "tessera/validator.h"

namespace tessera {

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

Result<Deployment> LoadDeployment(const std::string& path) {
  TESSERA_ASSIGN_OR_RETURN(const std::string text, ReadTextFile(path));
  return ParseDeploymentJson(text, path);
}

Result<Scenario> LoadScenario(const ProblemInputs& inputs) {
  Result<Scenario> scenario =
      Status::InvalidArgument("give a scenario: --scenario FILE or --parva-slo DIR --row N");
  if (!inputs.scenario.empty()) {
    scenario = LoadScenarioYaml(inputs.scenario);
  } else if (!inputs.parva_slo.empty()) {
    if (inputs.row <= 0) return Status::InvalidArgument("--parva-slo needs --row N (1-based)");
    scenario = ImportParvaSloRow(inputs.parva_slo, inputs.row);
  }
  if (!scenario.ok()) return scenario.status();
  return Replicated(*scenario, inputs.replicate);
}

namespace {

// The rule the planning commands start from: for MIG planners the pooled
// capacity rule behind the leastconn router, which `tessera deploy` ships as
// HAProxy's weighted leastconn (docs/capacity-rules.md, docs/routing.md); for MPS
// planners, which count whole throughputs (Problem::BuildMps), the
// library's default.
LatencyRule DefaultRule(bool mps) {
  LatencyRule rule;
  if (mps) return rule;
  rule.pooled = true;
  rule.router = Router::kLeastConn;
  return rule;
}

// The rule of the flags: --compat, --latency-factor, --capacity-rule,
// --capacity-quantile, --router and --rate-margin over the default.
Result<LatencyRule> RuleFrom(const ProblemInputs& inputs, bool mps) {
  LatencyRule rule = DefaultRule(mps);
  if (!inputs.compat.empty() && inputs.compat != "parva-artifact") {
    return Status::InvalidArgument("--compat: expected parva-artifact, got " +
                                   QuoteForMessage(inputs.compat));
  }
  if (!inputs.compat.empty() && inputs.latency_factor) {
    return Status::InvalidArgument(
        "--compat parva-artifact sets the latency rule (latency < 0.45 x the integer SLO): drop "
        "--latency-factor");
  }
  if (inputs.compat == "parva-artifact") rule = ParvaArtifactRule();
  for (const auto& [flag, value, range] :
       {std::tuple{"--latency-factor", inputs.latency_factor, limits::kLatencyFactor},
        std::tuple{"--rate-margin", inputs.rate_margin, limits::kRateMargin},
        std::tuple{"--capacity-quantile", inputs.capacity_quantile, limits::kCapacityQuantile}}) {
    if (value && !range.Contains(*value)) {
      return Status::InvalidArgument(std::string(flag) + ": " +
                                     OutOfRange(range, QuoteForMessage(fmt::format("{}", *value))));
    }
  }
  if (inputs.latency_factor) rule.factor = *inputs.latency_factor;
  TESSERA_RETURN_IF_ERROR(rule.Validate().WithContext("--latency-factor"));
  if (!inputs.capacity_rule.empty()) {
    TESSERA_RETURN_IF_ERROR(rule.SetCapacity(inputs.capacity_rule).WithContext("--capacity-rule"));
    // The pooled rule is made for the router that pools.
    if (rule.pooled && !RouterPools(rule.router)) rule.router = Router::kLeastConn;
  }
  if (inputs.capacity_quantile) {
    if (!rule.queueing_headroom) {
      return Status::InvalidArgument(
          "--capacity-quantile: the bare capacity rule (--capacity-rule bare, --compat "
          "parva-artifact) counts a segment's whole throughput and "
          "sizes no queue; give --capacity-rule pooled or queueing");
    }
    rule.headroom_quantile = *inputs.capacity_quantile;
  }
  if (!inputs.router.empty()) {
    TESSERA_ASSIGN_OR_RETURN(rule.router, ParseRouter(inputs.router));
    if (rule.pooled && !RouterPools(rule.router)) {
      if (!inputs.capacity_rule.empty()) {
        return Status::InvalidArgument(
            "--router: --capacity-rule pooled needs --router leastconn or jsq (processes behind " +
            std::string(RouterName(rule.router)) +
            " queue alone); give --capacity-rule queueing with --router " +
            std::string(RouterName(rule.router)));
      }
      // The default pooled rule does not hold for a random router.
      TESSERA_RETURN_IF_ERROR(rule.SetCapacity("queueing"));
    }
  }
  if (inputs.rate_margin) rule.rate_margin = *inputs.rate_margin;
  TESSERA_RETURN_IF_ERROR(rule.Validate().WithContext("--rate-margin"));
  return rule;
}

// A plan is checked under the rule it was made under; a rule flag that says
// otherwise is a contradiction, not an override.
Result<LatencyRule> RuleOf(const ProblemInputs& inputs, bool mps, const LatencyRule* recorded) {
  TESSERA_ASSIGN_OR_RETURN(LatencyRule from_flags, RuleFrom(inputs, mps));
  if (recorded == nullptr) return from_flags;
  const bool given = inputs.latency_factor || !inputs.compat.empty() ||
                     !inputs.capacity_rule.empty() || inputs.capacity_quantile.has_value() ||
                     !inputs.router.empty() || inputs.rate_margin.has_value();
  if (given && !(from_flags == *recorded)) {
    return Status::InvalidArgument(
        "the plan records the rule it was made under (" + DescribeRule(*recorded) +
        "); the rule flags give " + DescribeRule(from_flags) +
        ": drop --latency-factor, --compat, --capacity-rule, --capacity-quantile, --router and "
        "--rate-margin to check it under its own rule");
  }
  return *recorded;
}

// "<file>:<line>: field 'pool'" of the pool entry at `line`, for messages.
std::string PoolField(const Scenario& scenario, int line) {
  return ServiceLocation(scenario, line) + ": field 'pool'";
}

// "<file>:<line>: field 'gpu'" of the scenario's gpu (the file alone when
// the scenario does not name one).
std::string GpuField(const Scenario& scenario) {
  if (scenario.gpu.empty()) return ServiceLocation(scenario, 0);
  return ServiceLocation(scenario, scenario.gpu_line) + ": field 'gpu'";
}

// The scenario's pool as offers of catalog models with MIG, or the one model
// of `--gpu`, the scenario, or a100-80gb.
Result<std::vector<GpuOffer>> ChoosePool(const ProblemInputs& inputs, const Scenario& scenario) {
  std::vector<GpuOffer> pool;
  if (!scenario.pool.empty()) {
    if (!inputs.gpu.empty()) {
      return Status::InvalidArgument(
          "--gpu: the scenario lists a pool of GPU models; edit its pool instead of giving "
          "--gpu");
    }
    for (const PoolEntry& entry : scenario.pool) {
      Result<const GpuModel*> gpu = FindMigGpu(entry.gpu);
      if (!gpu.ok()) return gpu.status().WithContext(PoolField(scenario, entry.line));
      pool.push_back({*gpu, entry.price_per_hour, entry.max_count});
    }
    return pool;
  }
  TESSERA_ASSIGN_OR_RETURN(const GpuModel* gpu, ChooseGpu(inputs.gpu, scenario));
  return std::vector<GpuOffer>{{gpu, 0, 0}};
}

Result<Problem> LoadMigProblem(const ProblemInputs& inputs, const Scenario& scenario,
                               const LatencyRule& rule) {
  TESSERA_ASSIGN_OR_RETURN(std::vector<GpuOffer> pool, ChoosePool(inputs, scenario));
  ProfileTable profiles;
  if (inputs.profile_table) {
    profiles = *inputs.profile_table;
  } else if (inputs.profiles.empty()) {
    std::vector<const GpuModel*> gpus;
    for (const GpuOffer& offer : pool) gpus.push_back(offer.gpu);
    TESSERA_ASSIGN_OR_RETURN(profiles, EmbeddedProfiles(gpus));
  } else {
    TESSERA_ASSIGN_OR_RETURN(profiles, LoadProfiles(inputs.profiles));
  }
  return Problem::BuildPool(scenario, std::move(pool), profiles, rule);
}

// The GPU an MPS plan uses: --gpu, the scenario's (or its pool's one entry),
// or the coefficients' hardware.gpu.
Result<const GpuModel*> ChooseMpsGpu(const ProblemInputs& inputs, const Scenario& scenario,
                                     const MpsCoefficients& coefficients) {
  if (!inputs.gpu.empty()) {
    Result<const GpuModel*> gpu = FindGpu(inputs.gpu);
    return gpu.ok() ? gpu : gpu.status().WithContext("--gpu");
  }
  std::string name = scenario.gpu;
  std::string from = GpuField(scenario);
  if (name.empty() && scenario.pool.size() == 1) {
    name = scenario.pool.front().gpu;
    from = PoolField(scenario, scenario.pool.front().line);
  }
  if (!scenario.pool.empty() && name.empty()) {
    std::vector<std::string> models;
    for (const PoolEntry& entry : scenario.pool) models.push_back(entry.gpu);
    return Status::InvalidArgument(fmt::format(
        "{}: MPS planners plan one GPU type, the pool lists {} ({}); list one in `pool` or give "
        "--gpu",
        PoolField(scenario, scenario.pool[1].line), models.size(), fmt::join(models, ", ")));
  }
  if (name.empty()) from = inputs.coefficients;
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
double ChoosePrice(const ProblemInputs& inputs, const Scenario& scenario, const GpuModel& gpu) {
  if (inputs.price_per_hour) return *inputs.price_per_hour;
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

// Without --coeffs: the coefficients and gpu-lets' tables derived from the
// MIG profiles (--profiles, else the embedded ones) of the scenario's GPU
// run whole (mps_from_profiles.h), with a note saying so.
Result<DerivedMps> DeriveMps(const ProblemInputs& inputs, const Scenario& scenario,
                             const NoteSink& notes) {
  Result<const GpuModel*> gpu =
      scenario.pool.empty() ? ChooseGpu(inputs.gpu, scenario) : ChooseMpsGpu(inputs, scenario, {});
  if (!gpu.ok() || !(*gpu)->HasMig()) {
    return Status::InvalidArgument(
        "MPS planners need the GPU's iGniter coefficients: --coeffs FILE (e.g. "
        "fitted_coefficients_v100.json, docs/data-sources.md), or a GPU with MIG whose "
        "profiles they are derived from (" +
        (gpu.ok() ? (*gpu)->name + " has no MIG" : gpu.status().message()) + ")");
  }
  return DeriveMpsForGpu(inputs.profiles, **gpu, inputs.profile_table.get(), notes);
}

Result<Problem> LoadMpsProblem(const ProblemInputs& inputs, const Scenario& scenario,
                               const LatencyRule& rule, const NoteSink& notes) {
  MpsCoefficients coefficients;
  std::shared_ptr<const GpuletTables> gpulet;
  if (inputs.coefficients.empty()) {
    TESSERA_ASSIGN_OR_RETURN(DerivedMps derived, DeriveMps(inputs, scenario, notes));
    coefficients = std::move(derived.coefficients);
    gpulet = std::make_shared<const GpuletTables>(std::move(derived.gpulet));
  } else {
    TESSERA_ASSIGN_OR_RETURN(coefficients, LoadMpsCoefficients(inputs.coefficients));
  }
  TESSERA_ASSIGN_OR_RETURN(const GpuModel* gpu, ChooseMpsGpu(inputs, scenario, coefficients));
  if (!inputs.gpulet_tables.empty()) {
    TESSERA_ASSIGN_OR_RETURN(GpuletTables tables, LoadGpuletTables(inputs.gpulet_tables));
    gpulet = std::make_shared<const GpuletTables>(std::move(tables));
  }
  return Problem::BuildMps(
      scenario, {gpu, ChoosePrice(inputs, scenario, *gpu), ChooseMaxCount(scenario, *gpu)},
      std::move(coefficients), rule, std::move(gpulet));
}

}  // namespace

Result<DerivedMps> DeriveMpsForGpu(const std::string& profiles_path, const GpuModel& gpu,
                                   const ProfileTable* table, const NoteSink& notes) {
  TESSERA_ASSIGN_OR_RETURN(ProfileTable profiles, table != nullptr ? Result(*table)
                                                  : profiles_path.empty()
                                                      ? EmbeddedProfiles({&gpu})
                                                      : LoadProfiles(profiles_path));
  TESSERA_ASSIGN_OR_RETURN(DerivedMps derived, DeriveMpsFromProfiles(profiles, gpu));
  if (notes) {
    notes(fmt::format(
        "no --coeffs: the MPS planners use iGniter coefficients and gpu-lets' "
        "tables derived from the {} profiles of {} run whole ({}; docs/igniter-planner.md, \"On "
        "MIG workloads\")",
        table != nullptr        ? "given"
        : profiles_path.empty() ? "embedded"
                                : profiles_path,
        gpu.name, DescribeDerivedFits(derived)));
  }
  return derived;
}

Status CheckInputsApply(const ProblemInputs& inputs, bool mps, std::string_view planners) {
  struct Given {
    const char* flag;
    bool given;
    bool for_mps;
  };
  const Given all[] = {
      // Without --coeffs, the MPS planners' coefficients come from the profiles.
      {"--profiles",
       (!inputs.profiles.empty() || inputs.profile_table) && !(mps && inputs.coefficients.empty()),
       false},
      {"--compat", !inputs.compat.empty(), false},
      {"--capacity-rule", !inputs.capacity_rule.empty(), false},
      {"--capacity-quantile", inputs.capacity_quantile.has_value(), false},
      {"--rate-margin", inputs.rate_margin.has_value(), false},
      {"--coeffs", !inputs.coefficients.empty(), true},
      {"--gpulet-tables", !inputs.gpulet_tables.empty(), true},
      {"--price", inputs.price_per_hour.has_value(), true},
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

Result<Problem> LoadProblem(const ProblemInputs& inputs, bool mps, const LatencyRule* recorded,
                            const NoteSink& notes) {
  TESSERA_ASSIGN_OR_RETURN(Scenario scenario, LoadScenario(inputs));
  return LoadProblem(inputs, scenario, mps, recorded, notes);
}

Result<Problem> LoadProblem(const ProblemInputs& inputs, const Scenario& scenario, bool mps,
                            const LatencyRule* recorded, const NoteSink& notes) {
  TESSERA_ASSIGN_OR_RETURN(LatencyRule rule, RuleOf(inputs, mps, recorded));
  return mps ? LoadMpsProblem(inputs, scenario, rule, notes)
             : LoadMigProblem(inputs, scenario, rule);
}

std::string InputsSource(const ProblemInputs& inputs, bool mps) {
  if (mps && inputs.coefficients.empty()) {
    return "iGniter coefficients derived from profiles: " +
           (inputs.profiles.empty() ? std::string("embedded (synthesized)") : inputs.profiles);
  }
  if (mps) return "iGniter coefficients: " + inputs.coefficients;
  return "profiles: " +
         (inputs.profiles.empty() ? std::string("embedded (synthesized)") : inputs.profiles);
}

void AdoptRule(Deployment& deployment, const std::string& path, const LatencyRule& rule,
               const NoteSink& notes) {
  if (deployment.rule_recorded) return;
  deployment.rule = rule;
  if (notes)
    notes(path + " records no latency rule (it predates plans recording theirs); using " +
          DescribeRule(rule));
}

Result<Problem> CheckPlanServes(const ProblemInputs& input, const std::string& path,
                                Deployment& plan, std::string_view command, const NoteSink& notes) {
  TESSERA_RETURN_IF_ERROR(CheckInputsApply(input, false, command));
  TESSERA_ASSIGN_OR_RETURN(Problem problem,
                           LoadPlanProblem(input, plan, /*mps=*/false, nullptr, notes));
  AdoptRule(plan, path, problem.rule(), notes);
  TESSERA_RETURN_IF_ERROR(CheckServes(path, plan, problem));
  return problem;
}

Status CheckServes(const std::string& path, const Deployment& plan, const Problem& problem) {
  const std::vector<Violation> violations = ValidateDeployment(plan, problem);
  if (violations.empty()) return Status::Ok();
  std::string first = FormatViolations({violations.front()});
  first.pop_back();  // the line's newline: the message is one line
  return Status::InvalidArgument(
      fmt::format("{}: does not serve {}: {} violation(s), the first: {}", path,
                  ServiceLocation(problem.scenario(), 0), violations.size(), first));
}

Result<const GpuModel*> ChooseGpu(const std::string& gpu_name, const Scenario& scenario) {
  const std::string name =
      !gpu_name.empty() ? gpu_name : (!scenario.gpu.empty() ? scenario.gpu : "a100-80gb");
  Result<const GpuModel*> gpu = FindMigGpu(name);
  if (gpu.ok()) return gpu;
  return gpu.status().WithContext(gpu_name.empty() ? GpuField(scenario) : "--gpu");
}

std::string ProfilesHash(const ProfileTable& table) {
  uint64_t hash = 14695981039346656037ull;  // FNV-1a 64's offset basis
  for (const char c : FormatTesseraProfileCsv(table)) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;  // its prime
  }
  return fmt::format("{:016x}", hash);
}

namespace {

// ProfileSource::source of profiles given by none of the paths.
constexpr std::string_view kEmbeddedSource = "embedded";
constexpr std::string_view kInMemorySource = "in memory";

std::string SourceName(const ProblemInputs& inputs) {
  if (inputs.profile_table) return std::string(kInMemorySource);
  return inputs.profiles.empty() ? std::string(kEmbeddedSource) : inputs.profiles;
}

}  // namespace

ProfileSource SourceOf(const ProblemInputs& inputs, const Problem& problem) {
  return ProfileSource{SourceName(inputs), ProfilesHash(problem.profiles())};
}

ProblemInputs InputsForPlan(const ProblemInputs& given, const Deployment& plan,
                            const NoteSink& notes) {
  ProblemInputs inputs = given;
  if (!plan.profiles || !given.profiles.empty() || given.profile_table) return inputs;
  const std::string& source = plan.profiles->source;
  if (source == kEmbeddedSource || source == kInMemorySource) return inputs;
  inputs.profiles = source;
  if (notes) notes("profiles: " + source + ", which the plan records it was made on");
  return inputs;
}

void NoteOtherProfiles(const Deployment& plan, const ProblemInputs& inputs, const Problem& problem,
                       const NoteSink& notes) {
  if (!plan.profiles || !notes) return;
  const std::string hash = ProfilesHash(problem.profiles());
  if (hash == plan.profiles->fnv1a64) return;
  notes(fmt::format(
      "the plan was made on other profiles ({}, fnv1a64 {}) than these ({}, fnv1a64 {}): its "
      "capacities are judged by these",
      plan.profiles->source, plan.profiles->fnv1a64, SourceName(inputs), hash));
}

Result<Problem> LoadPlanProblem(const ProblemInputs& given, const Deployment& plan, bool mps,
                                const Scenario* scenario, const NoteSink& notes) {
  const ProblemInputs inputs = mps ? given : InputsForPlan(given, plan, notes);
  const LatencyRule* recorded = plan.rule_recorded ? &plan.rule : nullptr;
  TESSERA_ASSIGN_OR_RETURN(
      Problem problem, scenario != nullptr ? LoadProblem(inputs, *scenario, mps, recorded, notes)
                                           : LoadProblem(inputs, mps, recorded, notes));
  if (!mps) NoteOtherProfiles(plan, inputs, problem, notes);
  return problem;
}

Result<ProfileTable> EmbeddedProfiles(const std::vector<const GpuModel*>& gpus) {
  ProfileTable table;
  for (const GpuModel* gpu : gpus) TESSERA_RETURN_IF_ERROR(table.Merge(DefaultProfiles(*gpu)));
  return table;
}

}  // namespace tessera
