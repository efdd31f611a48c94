// `tessera profiles`: synthesize profiles for any catalog GPU, list model
// cards, import measurements of Triton's perf_analyzer and Model Analyzer.
#include <fmt/format.h>

#include <charconv>
#include <iostream>
#include <memory>
#include <string_view>

#include "cli_flags.h"
#include "cli_output.h"
#include "commands.h"
#include "output_file.h"
#include "tessera/profile/profile_synth.h"
#include "tessera/profile/triton_import.h"
#include "tessera/profile_io.h"
#include "tessera/util/text_io.h"

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

struct ImportFlags {
  std::string from;
  std::string gpu = "a100-80gb";
  std::string mig_profile;
  std::string model;
  int batch = 0;
  std::string latency = "mean";
  std::vector<std::string> files;
  std::string output;
};

// A FILE argument: PATH, or SETTINGS:PATH where SETTINGS is
// `key=value[,key=value...]` with keys profile, batch and model, overriding
// the flags for that file. It is SETTINGS:PATH iff the text before the first
// ':' holds a '=' and no '/'.
Status ApplyFileSettings(std::string_view arg, TritonImportOptions& options, std::string& path) {
  const size_t colon = arg.find(':');
  const std::string_view head = arg.substr(0, colon == std::string_view::npos ? 0 : colon);
  if (colon == std::string_view::npos || head.find('=') == std::string_view::npos ||
      head.find('/') != std::string_view::npos) {
    path = std::string(arg);
    return Status::Ok();
  }
  path = std::string(arg.substr(colon + 1));
  const auto bad = [&](std::string_view what) {
    return Status::InvalidArgument(
        fmt::format("FILE {}: {}; expected "
                    "[profile=P,batch=B,model=M:]PATH",
                    QuoteForMessage(arg), what));
  };
  for (std::string_view setting : SplitCsvFields(head)) {
    const size_t eq = setting.find('=');
    if (eq == std::string_view::npos) return bad(fmt::format("{} is not key=value", setting));
    const std::string_view key = Trim(setting.substr(0, eq));
    const std::string_view value = Trim(setting.substr(eq + 1));
    if (key == "profile") {
      options.mig_profile = std::string(value);
    } else if (key == "model") {
      options.model = std::string(value);
    } else if (key == "batch") {
      const auto [end, ec] =
          std::from_chars(value.data(), value.data() + value.size(), options.batch);
      if (value.empty() || ec != std::errc() || end != value.data() + value.size()) {
        return bad(fmt::format("batch {} is not an integer", QuoteForMessage(value)));
      }
    } else {
      return bad(fmt::format("unknown key {}", QuoteForMessage(key)));
    }
  }
  if (path.empty()) return bad("no path after the settings");
  return Status::Ok();
}

int RunImport(const ImportFlags& flags) {
  TritonImportOptions base;
  Result<TritonFormat> format = ParseTritonFormat(flags.from);
  if (!format.ok()) return ReportError(format.status().WithContext("--from"));
  base.format = *format;
  Result<LatencyStat> latency = ParseLatencyStat(flags.latency);
  if (!latency.ok()) return ReportError(latency.status().WithContext("--latency"));
  base.latency = *latency;
  base.gpu = flags.gpu;
  base.mig_profile = flags.mig_profile;
  base.model = flags.model;
  base.batch = flags.batch;
  TritonImporter importer;
  for (const std::string& arg : flags.files) {
    TritonImportOptions options = base;
    std::string path;
    Status parsed = ApplyFileSettings(arg, options, path);
    if (!parsed.ok()) return ReportError(parsed);
    // Validated per file, where a file's settings may complete the flags.
    Status valid = options.Validate();
    if (!valid.ok()) return ReportError(valid.WithContext(path));
    Result<std::string> text = ReadTextFile(path);
    if (!text.ok()) return ReportError(text.status());
    Status added = importer.Add(*text, path, options);
    if (!added.ok()) return ReportError(added);
  }
  const ProfileTable& table = importer.table();
  if (table.empty()) {
    return ReportError(Status::InvalidArgument(
        fmt::format("no profile row imported: all {} Model Analyzer rows were set aside (their "
                    "concurrency differs from their instance count)",
                    importer.set_aside())));
  }
  Status written = WriteOutput(flags.output, FormatTesseraProfileCsv(table));
  if (!written.ok()) return ReportError(written);
  PrintMessage(fmt::format(
      "tessera: imported {} profile rows ({} models) from {} files{}\n", table.size(),
      table.Models().size(), flags.files.size(),
      importer.set_aside() > 0
          ? fmt::format("; set aside {} Model Analyzer rows whose concurrency differs from "
                        "their instance count",
                        importer.set_aside())
          : std::string()));
  return kExitOk;
}

void AddImportCommand(CLI::App& profiles, int& exit_code) {
  auto flags = std::make_shared<ImportFlags>();
  CLI::App* cmd = profiles.add_subcommand(
      "import", "Turn Triton perf_analyzer or Model Analyzer CSVs into a Tessera profile CSV");
  cmd->footer(
      "Turn your own measurements into profiles that `tessera plan --profiles` reads\n"
      "(docs/profile-import.md). Measure each MIG profile on its own MIG device, one\n"
      "Triton server per device, and say what the CSV does not: the GPU, the MIG\n"
      "profile and (perf_analyzer) the model and the -b batch of the run.\n\n"
      "  perf_analyzer   one file per run (`perf_analyzer -m M -b B --concurrency-range\n"
      "                  1:5 --verbose-csv -f F`); a row at concurrency C is the\n"
      "                  segment of C processes (C batches in flight: serve with an\n"
      "                  instance_group count >= C); latencies in microseconds.\n"
      "  model-analyzer  results/metrics-model-inference.csv; the model, batch and\n"
      "                  instance count (processes) are read from each row; a row is\n"
      "                  taken when its Concurrency equals its instance count.\n\n"
      "Throughput is the tool's infer/sec (the whole segment's); latency_ms is the mean\n"
      "request (batch) latency unless --latency picks a percentile, and p99_ms is the\n"
      "p99 column. Several FILEs (one per MIG profile or batch) merge into one table;\n"
      "a key imported twice is an error. A FILE may carry its own settings:\n"
      "profile=P,batch=B,model=M:PATH.\n\n"
      "Examples:\n"
      "  tessera profiles import --from perf-analyzer --gpu a100-80gb --model resnet50 \\\n"
      "      profile=1g.10gb,batch=8:rn50-1g-b8.csv profile=3g.40gb,batch=8:rn50-3g-b8.csv \\\n"
      "      -o profiles.csv\n"
      "  tessera profiles import --from model-analyzer --gpu a100-80gb --mig-profile 3g.40gb \\\n"
      "      export/results/metrics-model-inference.csv -o profiles.csv\n"
      "  tessera plan --scenario s.yaml --profiles profiles.csv");
  cmd->add_option("--from", flags->from, "perf-analyzer or model-analyzer")->required();
  cmd->add_option("--gpu", flags->gpu, "GPU model with MIG (" + GpuNames(/*mig_only=*/true) + ")")
      ->capture_default_str();
  cmd->add_option("--mig-profile", flags->mig_profile,
                  "MIG profile the files were measured on (per file: profile=P:PATH)");
  cmd->add_option(
      "--model", flags->model,
      "Model name (perf_analyzer: required; Model Analyzer: replaces its Model column)");
  cmd->add_option("--batch", flags->batch,
                  "perf_analyzer: the run's -b batch (per file: batch=B:PATH)");
  cmd->add_option("--latency", flags->latency,
                  "Latency taken as latency_ms: mean, p50, p90, p95 or p99")
      ->capture_default_str();
  cmd->add_option("files", flags->files, "The CSV files, each PATH or SETTINGS:PATH")->required();
  cmd->add_option("-o,--output", flags->output, "Write the profile CSV to FILE (default stdout)");
  cmd->callback([flags, &exit_code] { exit_code = RunImport(*flags); });
}

}  // namespace

void AddProfilesCommand(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "profiles",
      "Profiles: synthesize them for any GPU (synth), list the model cards (cards), import "
      "Triton measurements (import)");
  cmd->alias("profile");
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

  AddImportCommand(*cmd, exit_code);
}

}  // namespace tessera::cli
