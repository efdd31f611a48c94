// `tessera gen`: writes a generated scenario, e.g. one of MIG-serving's
// simulation workloads (many services, rates drawn from a normal or a
// lognormal distribution, one SLO).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "cli_flags.h"
#include "cli_output.h"
#include "commands.h"
#include "output_file.h"
#include "tessera/profile/profile_synth.h"
#include "tessera/util/text_io.h"
#include "tessera/workload/workload_gen.h"

namespace tessera::cli {
namespace {

// Unset flags keep the preset's value (or WorkloadGenOptions' default).
struct GenFlags {
  std::string preset;
  std::optional<int> services;
  std::optional<std::string> rates;
  std::optional<double> slo_ms;
  std::optional<std::string> models;
  std::optional<std::string> gpu;
  std::optional<std::int64_t> seed;  // signed: CLI11 would read "-1" as 2^64 - 1
  std::string output;
};

// "normal:MEAN,SD" or "lognormal:MU,SIGMA"; the ranges are Validate's.
Result<RateDistribution> ParseRates(const std::string& text) {
  const Status bad = Status::InvalidArgument(
      "--rates: expected normal:MEAN,SD (rate_rps) or lognormal:MU,SIGMA (of ln rate_rps), "
      "e.g. normal:300,100, got " +
      QuoteForMessage(text));
  const size_t colon = text.find(':');
  if (colon == std::string::npos) return bad;
  std::vector<double> numbers;
  for (std::string_view field : SplitCsvFields(std::string_view(text).substr(colon + 1))) {
    const std::optional<double> v = ToDouble(field);
    if (!v) return bad;
    numbers.push_back(*v);
  }
  if (numbers.size() != 2) return bad;
  const std::string_view kind = std::string_view(text).substr(0, colon);
  if (kind == "normal") return RateDistribution(NormalRates{numbers[0], numbers[1]});
  if (kind == "lognormal") return RateDistribution(LognormalRates{numbers[0], numbers[1]});
  return bad;
}

// The --rates text of `rates`, numbers in their shortest exact form.
std::string FormatRates(const RateDistribution& rates) {
  if (const auto* n = std::get_if<NormalRates>(&rates)) {
    return fmt::format("normal:{},{}", n->mean_rps, n->sd_rps);
  }
  const auto& l = std::get<LognormalRates>(rates);
  return fmt::format("lognormal:{},{}", l.mu, l.sigma);
}

// WorkloadGenOptions::Validate names the field; the user typed a flag.
Status NameTheFlag(const Status& status) {
  constexpr std::pair<std::string_view, std::string_view> kFlags[] = {
      {"services", "--services"}, {"rates", "--rates"}, {"slo_ms", "--slo-ms"},
      {"models", "--models"},     {"gpu", "--gpu"},
  };
  for (const auto& [field, flag] : kFlags)
    if (status.message().starts_with(field)) return status.WithContext(flag);
  return status;
}

// The preset named `name` (the flag only accepts preset names).
WorkloadGenOptions PresetOptions(const std::string& name) {
  for (const WorkloadPreset& preset : WorkloadPresets())
    if (preset.name == name) return preset.options;
  return {};
}

Result<WorkloadGenOptions> OptionsFrom(const GenFlags& flags) {
  WorkloadGenOptions o = PresetOptions(flags.preset);
  if (flags.preset.empty() && (!flags.services || !flags.rates)) {
    return Status::InvalidArgument(fmt::format("{}: required unless --preset gives it",
                                               flags.services ? "--rates" : "--services"));
  }
  if (flags.services) o.services = *flags.services;
  if (flags.rates) {
    TESSERA_ASSIGN_OR_RETURN(o.rates, ParseRates(*flags.rates));
  }
  if (flags.slo_ms) o.slo_ms = *flags.slo_ms;
  if (flags.models) {
    o.models.clear();
    for (std::string_view m : SplitCsvFields(*flags.models)) o.models.emplace_back(m);
  }
  if (flags.gpu) o.gpu = *flags.gpu;
  if (flags.seed && *flags.seed < 0) {
    return Status::InvalidArgument(
        fmt::format("--seed: must be an integer >= 0, got {}", *flags.seed));
  }
  if (flags.seed) o.seed = static_cast<std::uint64_t>(*flags.seed);
  TESSERA_RETURN_IF_ERROR(NameTheFlag(o.Validate()));
  return o;
}

// `text` as one POSIX shell word: plain when every byte is safe, else single-quoted.
std::string ShellWord(std::string_view text) {
  constexpr std::string_view kSafe =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,:/+=@%";
  if (!text.empty() && text.find_first_not_of(kSafe) == std::string_view::npos) {
    return std::string(text);
  }
  std::string word = "'";
  for (char c : text) word += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return word + "'";
}

// A first line that regenerates the file: every option spelled out.
std::string ProvenanceComment(const std::string& preset, const WorkloadGenOptions& o) {
  std::string line = "# tessera gen";
  if (!preset.empty()) line += " --preset " + preset;
  line += fmt::format(" --services {} --rates {} --slo-ms {}", o.services, FormatRates(o.rates),
                      o.slo_ms);
  if (!o.models.empty()) {
    line += " --models " + ShellWord(fmt::format("{}", fmt::join(o.models, ",")));
  }
  line += fmt::format(" --gpu {} --seed {}\n", ShellWord(o.gpu), o.seed);
  return line;
}

// Not an error: the workload may be meant for --profiles.
void NoteModelsWithoutCards(const Scenario& scenario) {
  std::set<std::string> noted;
  for (const Service& s : scenario.services) {
    if (FindModelCard(s.model).ok() || !noted.insert(s.model).second) continue;
    PrintMessage(
        fmt::format("tessera: note: model {} has no builtin model card; plan this workload with "
                    "--profiles\n",
                    QuoteForMessage(s.model)));
  }
}

int RunGen(const GenFlags& flags) {
  Result<WorkloadGenOptions> options = OptionsFrom(flags);
  if (!options.ok()) return ReportError(options.status());
  Result<Scenario> scenario = GenerateWorkload(*options);
  if (!scenario.ok()) return ReportError(scenario.status());
  const std::string text =
      ProvenanceComment(flags.preset, *options) + FormatScenarioYaml(*scenario);
  if (Status written = WriteOutput(flags.output, text); !written.ok()) return ReportError(written);
  NoteModelsWithoutCards(*scenario);
  return kExitOk;
}

// ---- Help -----------------------------------------------------------------

std::string Footer() {
  std::string presets;
  for (const WorkloadPreset& p : WorkloadPresets()) {
    presets += fmt::format("  {:<12} --services {} --rates {}\n", p.name, p.options.services,
                           FormatRates(p.options.rates));
  }
  return fmt::format(
      "Writes a scenario of many services whose request rates are drawn from a normal or a\n"
      "lognormal distribution, all with one latency SLO: the simulation workloads of\n"
      "MIG-serving (normal-1, normal-2, lognormal-1, lognormal-2). The paper gives no\n"
      "parameters; the presets are Tessera's, each needing a few hundred A100-80GB GPUs\n"
      "under the parva planner, with seed 1, slo-ms 100 and every builtin model:\n"
      "{}\n"
      "Flags given with --preset override its values. Service k (from 1) is named\n"
      "<model>-NNN and runs the k-th model of --models in turn; rates are rounded to whole\n"
      "requests per second and draws below 1 rps (a normal draw can be negative) become\n"
      "1 rps. Same flags and seed, same file, on every platform. The file's first line is\n"
      "a comment with the command that regenerates it.\n\n"
      "Examples:\n"
      "  tessera gen --preset normal-1 -o normal-1.yaml\n"
      "  tessera compare --scenario normal-1.yaml\n"
      "  tessera gen --services 100 --rates lognormal:5,1 --slo-ms 200 --seed 7 -o big.yaml\n"
      "  tessera gen --preset lognormal-2 --models resnet50,bert-large --gpu h100-80gb",
      presets);
}

}  // namespace

void AddGenCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<GenFlags>();
  CLI::App* cmd = app.add_subcommand(
      "gen", "Generate a scenario: many services, rates from a normal or lognormal distribution");
  cmd->footer(Footer());
  std::vector<std::string> presets;
  for (const WorkloadPreset& p : WorkloadPresets()) presets.push_back(p.name);
  cmd->add_option("--preset", flags->preset, "A named workload (see below)")
      ->check(CLI::IsMember(presets));
  cmd->add_option("--services", flags->services, "How many services (required without --preset)");
  cmd->add_option("--rates", flags->rates,
                  "normal:MEAN,SD of rate_rps, or lognormal:MU,SIGMA of ln(rate_rps) (required "
                  "without --preset)");
  cmd->add_option("--slo-ms", flags->slo_ms, "Every service's latency SLO in ms (default 100)");
  cmd->add_option("--models", flags->models,
                  "Comma-separated models the services take in turn (default: every builtin "
                  "model, see `tessera profiles cards`)");
  cmd->add_option("--gpu", flags->gpu, "The scenario's GPU model (default a100-80gb)");
  cmd->add_option("--seed", flags->seed, "Seed of the rates; same seed, same file (default 1)");
  cmd->add_option("-o,--output", flags->output, "Write the scenario to FILE (default stdout)");
  cmd->callback([flags, &exit_code] { exit_code = RunGen(*flags); });
}

}  // namespace tessera::cli
