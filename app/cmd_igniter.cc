// `tessera igniter fit`: fits the iGniter model's coefficients from a GPU's
// profiling samples, so that the MPS planners (--coeffs) can plan on GPUs
// the bundled V100 coefficients do not describe.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <string>

#include "cli_common.h"
#include "commands.h"
#include "tessera/igniter_fit.h"
#include "tessera/igniter_model.h"
#include "tessera/text_io.h"

namespace tessera::cli {
namespace {

struct FitFlags {
  std::string samples;
  std::string output;
  std::string base;
  std::string gpu;
};

constexpr char kFitFooter[] =
    "Fits the iGniter performance model of each model in SAMPLES.csv and writes the\n"
    "coefficients JSON that `tessera plan --coeffs` reads. For a batch b at resource r\n"
    "(MPS active-thread %):\n"
    "  t_act(b, r) = (k1 b^2 + k2 b + k3) / (r + k4) + k5     solo active time, ms\n"
    "  power_w     = power_coef . [x, 1],  x = 1000 b / t_act  power above idle, W\n"
    "  l2_pct      = cache_coef . [x, 1]                       L2 utilisation, %\n"
    "k1..k5 minimise the squared relative error of t_act (k4 > -min r); the pairs are\n"
    "linear least squares against the fitted x. One model needs at least 6 active_ms\n"
    "samples over 3 batches and 3 resources, and 2 power_w and 2 l2_pct samples of\n"
    "different x (a curve the CSV lacks is kept from --base).\n\n"
    "SAMPLES.csv has one measurement per row, header model,quantity,batch,resource_pct,value;\n"
    "'#' lines and blank lines are skipped. Quantities:\n"
    "  curves (batch >= 1, 0 < resource_pct <= 100): active_ms, power_w, l2_pct\n"
    "  constants (batch and resource_pct empty): kernels (n_k), sched_ms (k_sch),\n"
    "    load_bytes, feedback_bytes (per request), alpha_cache\n"
    "  hardware (model 'hardware'): F, P, p_idle, unit, B_pcie (bytes/ms), alpha_f,\n"
    "    alpha_sch, beta_sch\n"
    "Constants and hardware the CSV lacks come from --base (e.g. the V100 file, for\n"
    "what you cannot measure); models of --base the CSV does not name are kept. Example:\n"
    "  model,quantity,batch,resource_pct,value\n"
    "  resnet50,active_ms,1,10,7.53896\n"
    "  resnet50,power_w,1,10,26.1597\n"
    "  resnet50,l2_pct,1,10,2.72286\n"
    "  resnet50,kernels,,,80\n"
    "  hardware,F,,,1530\n\n"
    "Prints one line per model: its samples and the fit's RMS relative error.\n\n"
    "Examples:\n"
    "  tessera igniter fit examples/igniter/samples-example.csv -o my-gpu.json\n"
    "  tessera igniter fit samples.csv -o my-gpu.json --gpu v100-16gb \\\n"
    "      --base ../shared/data/igniter/derived/fitted_coefficients_v100.json\n"
    "  tessera plan --scenario examples/scenarios/igniter-12.yaml --coeffs my-gpu.json";

// The summary line of one fitted model.
std::string SummaryLine(const ModelSamples& m, const WorkloadCoefficients& w) {
  const std::optional<double> rms = ActiveFitRmsRelativeError(m, w);
  const std::string quality =
      rms ? fmt::format("active-time RMS relative error {:.3f}%", *rms * 100)
          : std::string("k1..k5 kept from --base");
  return fmt::format("{}: {} samples ({} active_ms, {} power_w, {} l2_pct), {}", m.model,
                     m.CurveSampleCount(), m.active_ms.size(), m.power_w.size(), m.l2_pct.size(),
                     quality);
}

// --gpu as written into the output: the catalog's name when it is one.
Result<std::string> GpuName(const std::string& flag) {
  for (char c : flag) {
    if (c <= 0x20 || c > 0x7e) {
      return Status::InvalidArgument("--gpu: must be printable ASCII without spaces, got " +
                                     QuoteForMessage(flag));
    }
  }
  Result<const GpuModel*> gpu = FindGpu(flag);
  if (gpu.ok()) return (*gpu)->name;
  PrintMessage("tessera: note: --gpu " + QuoteForMessage(flag) +
               " is not in the GPU catalog; plan with --gpu NAME (" + GpuNames() + ")\n");
  return flag;
}

Result<MpsCoefficients> Fit(const FitFlags& flags, FitSamples& samples) {
  TESSERA_ASSIGN_OR_RETURN(const std::string text, ReadTextFile(flags.samples));
  TESSERA_ASSIGN_OR_RETURN(samples, ParseFitSamplesCsv(text, flags.samples));
  std::optional<MpsCoefficients> base;
  if (!flags.base.empty()) {
    Result<MpsCoefficients> loaded = LoadMpsCoefficients(flags.base);
    if (!loaded.ok()) return loaded.status().WithContext("--base");
    base = std::move(loaded).value();
  }
  TESSERA_ASSIGN_OR_RETURN(MpsCoefficients fitted,
                           FitMpsCoefficients(samples, base ? &*base : nullptr));
  if (!flags.gpu.empty()) {
    TESSERA_ASSIGN_OR_RETURN(fitted.hardware.gpu, GpuName(flags.gpu));
  }
  return fitted;
}

int RunFit(const FitFlags& flags) {
  FitSamples samples;
  Result<MpsCoefficients> fitted = Fit(flags, samples);
  if (!fitted.ok()) return ReportError(fitted.status());
  Status written = WriteOutput(flags.output, FormatMpsCoefficientsJson(*fitted));
  if (!written.ok()) return ReportError(written);
  // With -o - the JSON is stdout, so the summary goes to stderr.
  std::ostream& summary = flags.output == "-" ? std::cerr : std::cout;
  for (const ModelSamples& m : samples.models) {
    summary << SummaryLine(m, *fitted->Find(m.model)) << "\n";
  }
  return kExitOk;
}

}  // namespace

void AddIgniterCommand(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "igniter", "iGniter's MPS performance model: fit its coefficients for your GPU (fit)");
  cmd->require_subcommand(1);
  auto flags = std::make_shared<FitFlags>();
  CLI::App* fit = cmd->add_subcommand(
      "fit", "Fit iGniter coefficients (JSON for --coeffs) from profiling samples (CSV)");
  fit->footer(kFitFooter);
  fit->add_option("SAMPLES", flags->samples,
                  "Samples CSV: model,quantity,batch,resource_pct,value (see below)")
      ->required();
  fit->add_option("-o,--output", flags->output,
                  "Write the coefficients JSON to FILE (atomically; '-' for stdout)")
      ->required();
  fit->add_option("--base", flags->base,
                  "Coefficients JSON supplying what the CSV lacks, and models it keeps");
  fit->add_option("--gpu", flags->gpu,
                  "GPU profiled, written as hardware.gpu (" + GpuNames() + ")");
  fit->callback([flags, &exit_code] { exit_code = RunFit(*flags); });
}

}  // namespace tessera::cli
