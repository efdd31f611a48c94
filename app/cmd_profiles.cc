// `tessera profiles`: synthesize profiles for any catalog GPU, list model cards.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli_common.h"
#include "commands.h"
#include "tessera/profile_io.h"
#include "tessera/profile_synth.h"

namespace tessera::cli {
namespace {

struct SynthFlags {
  std::string gpu = "a100-80gb";
  std::vector<std::string> models;
  int max_procs = 5;
  std::string output;
};

Result<std::vector<ModelCard>> SelectCards(const std::vector<std::string>& names) {
  std::vector<ModelCard> cards;
  if (names.empty()) {
    for (const ModelCard& c : BuiltinModelCards()) cards.push_back(c);
    return cards;
  }
  for (const std::string& name : names) {
    Result<const ModelCard*> card = FindModelCard(name);
    if (!card.ok()) return card.status().WithContext("--models");
    cards.push_back(**card);
  }
  return cards;
}

int RunSynth(const SynthFlags& flags) {
  Result<const GpuModel*> gpu = FindMigGpu(flags.gpu);
  if (!gpu.ok()) return ReportError(gpu.status().WithContext("--gpu"));
  Result<std::vector<ModelCard>> cards = SelectCards(flags.models);
  if (!cards.ok()) return ReportError(cards.status());
  SynthOptions options;
  options.max_procs = flags.max_procs;
  Status valid = options.Validate();
  if (!valid.ok()) return ReportError(valid);
  Result<ProfileTable> table = SynthesizeProfiles(**gpu, *cards, options);
  if (!table.ok()) return ReportError(table.status());
  Status written = WriteOutput(flags.output, FormatTesseraProfileCsv(*table));
  return written.ok() ? kExitOk : ReportError(written);
}

int RunCards() {
  std::cout << fmt::format("{:<12} {:>8} {:>9} {:>7} {:>10}  {}\n", "model", "GFLOPs", "params(M)",
                           "layers", "act.MiB/s", "description");
  for (const ModelCard& c : BuiltinModelCards()) {
    std::cout << fmt::format("{:<12} {:>8.2f} {:>9.1f} {:>7} {:>10.1f}  {}\n", c.name, c.gflops,
                             c.params_millions, c.layers, c.activation_mib, c.description);
  }
  return kExitOk;
}

}  // namespace

void AddProfilesCommand(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "profiles", "Profiles: synthesize them for any GPU (synth), list the model cards (cards)");
  cmd->require_subcommand(1);

  auto flags = std::make_shared<SynthFlags>();
  CLI::App* synth =
      cmd->add_subcommand("synth", "Predict a profile table for any catalog GPU (analytic model)");
  synth->footer(
      "Predict a profile table for a GPU with the analytic performance model\n"
      "(docs/profile-synthesizer.md) and print it as Tessera profile CSV: what would\n"
      "I need on GPUs I do not own yet?\n\n"
      "Examples:\n"
      "  tessera profiles synth --gpu h100-80gb -o h100.csv\n"
      "  tessera plan --scenario examples/scenarios/s6.yaml --profiles h100.csv --gpu h100-80gb");
  synth->add_option("--gpu", flags->gpu, "GPU model with MIG (" + GpuNames(/*mig_only=*/true) + ")")
      ->capture_default_str();
  synth
      ->add_option("--models", flags->models,
                   "Only these models (default: every built-in model card)")
      ->delimiter(',');
  synth->add_option("--max-procs", flags->max_procs, "MPS processes per segment, 1..N")
      ->capture_default_str();
  synth->add_option("-o,--output", flags->output, "Write the CSV to FILE (default stdout)");
  synth->callback([flags, &exit_code] { exit_code = RunSynth(*flags); });

  CLI::App* cards =
      cmd->add_subcommand("cards", "List the built-in model cards the synthesizer works from.");
  cards->callback([&exit_code] { exit_code = RunCards(); });
}

}  // namespace tessera::cli
