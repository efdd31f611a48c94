// `tessera igniter`: the iGniter model's coefficients for your GPUs, and the
// cheapest GPU type for a scenario.
//  * fit: fits the coefficients from a GPU's profiling samples, so that the
//    MPS planners (--coeffs) can plan on GPUs the bundled V100 coefficients
//    do not describe;
//  * synth: carries coefficients fitted on one GPU to another from the
//    catalog's figures (tessera/profile/igniter_synth.h), for a GPU not profiled;
//  * choose: plans a scenario on every GPU type given (one coefficients file
//    each) and keeps the cheapest plan that meets every SLO (iGniter 5.3).
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli_flags.h"
#include "cli_output.h"
#include "commands.h"
#include "output_file.h"
#include "shadow_cli.h"
#include "tessera/deployment_format.h"
#include "tessera/plan/plan.h"
#include "tessera/profile/igniter_fit.h"
#include "tessera/profile/igniter_model.h"
#include "tessera/profile/igniter_synth.h"
#include "tessera/util/text_io.h"

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
    "      --base $D/igniter/derived/fitted_coefficients_v100.json   # docs/data-sources.md\n"
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

struct SynthFlags {
  std::string from;
  std::string from_gpu;
  std::string gpu;
  std::string output;
  double max_clock_mhz = 0;
  double power_cap_w = 0;
  std::optional<double> idle_power_w;
  std::optional<double> pcie_bytes_per_ms;
};

// The example both subcommands' help ends with: a T4 made from the V100's
// fit, then the cheaper of the two for iGniter's twelve workloads.
constexpr char kT4Example[] =
    "  D=/path/to/data   # the public data sets: docs/data-sources.md\n"
    "  tessera igniter synth --from $D/igniter/derived/fitted_coefficients_v100.json \\\n"
    "      --from-gpu v100-16gb --gpu t4-16gb --max-clock-mhz 1590 --power-cap-w 70 \\\n"
    "      --pcie-bytes-per-ms 5882000 -o t4.json\n"
    "  tessera igniter choose --scenario examples/scenarios/igniter-12.yaml \\\n"
    "      --coeffs $D/igniter/derived/fitted_coefficients_v100.json --coeffs t4.json";

constexpr char kSynthFooter[] =
    "Writes coefficients for GPU --gpu, which nobody profiled, from coefficients fitted on\n"
    "another GPU (--from) and the two GPUs' catalog figures (`tessera gpus`). With\n"
    "C = (SMs x F) of the source / (SMs x F) of the target and R = the ratio of their\n"
    "dynamic power ranges (P - p_idle):\n"
    "  k1, k2, k3, k5 x C (active time at the same SM share), k4 kept; power_coef\n"
    "  [slope x C x R, intercept x R]; cache_coef [slope x C, intercept]; n_k, k_sch_ms,\n"
    "  d_load, d_feedback, alpha_cache kept; unit = 200 / SMs; alpha_f x (F ratio) / R;\n"
    "  alpha_sch, beta_sch kept; F, P, p_idle (default scaled by P) and B_pcie (default\n"
    "  the source's) as given.\n"
    "The result is a stand-in until the GPU is profiled (`tessera igniter fit`): plans made\n"
    "with it are predictions of a model nobody measured on that GPU.\n\n"
    "Prints the ratios. Example (the T4 of iGniter's 5.3; its clock and PCIe bandwidth\n"
    "from the artifact's one T4 log, Profile/tools/PCIeInfo.txt: 1.59 GHz, 602112 B in\n"
    "0.102364 ms; its 70 W cap from NVIDIA's T4 datasheet):\n";

// A catalog GPU named by `flag` (its value `name`).
Result<const GpuModel*> CatalogGpu(const std::string& flag, const std::string& name) {
  Result<const GpuModel*> gpu = FindGpu(name);
  return gpu.ok() ? gpu : gpu.status().WithContext(flag);
}

int RunSynth(const SynthFlags& flags) {
  Result<MpsCoefficients> base = LoadMpsCoefficients(flags.from);
  if (!base.ok()) return ReportError(base.status().WithContext("--from"));
  const std::string from_name = flags.from_gpu.empty() ? base->hardware.gpu : flags.from_gpu;
  if (from_name.empty()) {
    return ReportError(Status::InvalidArgument(
        "--from-gpu: " + flags.from +
        " does not say which GPU it was fitted on (no hardware.gpu); name it: --from-gpu NAME (" +
        GpuNames() + ")"));
  }
  SynthTarget target;
  Result<const GpuModel*> from = CatalogGpu("--from-gpu", from_name);
  if (!from.ok()) return ReportError(from.status());
  Result<const GpuModel*> to = CatalogGpu("--gpu", flags.gpu);
  if (!to.ok()) return ReportError(to.status());
  target.from = *from;
  target.to = *to;
  target.max_frequency_mhz = flags.max_clock_mhz;
  target.power_cap_w = flags.power_cap_w;
  target.idle_power_w = flags.idle_power_w;
  target.pcie_bytes_per_ms = flags.pcie_bytes_per_ms;
  SynthRatios ratios;
  Result<MpsCoefficients> made = SynthesizeMpsCoefficients(*base, target, &ratios);
  if (!made.ok()) return ReportError(made.status());
  Status written = WriteOutput(flags.output, FormatMpsCoefficientsJson(*made));
  if (!written.ok()) return ReportError(written);
  std::ostream& summary = flags.output == "-" ? std::cerr : std::cout;
  summary << fmt::format(
      "{} -> {}: compute ratio C = {:.4f}, power ratio R = {:.4f}; "
      "unit {:g}%, F {:g} MHz, P {:g} W, p_idle {:g} W, B_pcie {:g} bytes/ms; {} model(s) "
      "synthesized\n",
      (*from)->name, (*to)->name, ratios.compute, ratios.power, made->hardware.unit_pct,
      made->hardware.max_frequency_mhz, made->hardware.power_cap_w, made->hardware.idle_power_w,
      made->hardware.pcie_bytes_per_ms, made->workloads.size());
  return kExitOk;
}

struct ChooseFlags {
  std::string scenario;
  std::vector<std::string> coefficients;
  std::string planner = "igniter";
  std::optional<bool> shadow;
  std::string format = "table";
  std::string output;
};

constexpr char kChooseFooter[] =
    "Plans the scenario on each GPU type, one --coeffs file per type (the GPU is the file's\n"
    "hardware.gpu, else the scenario's gpu; its price the scenario pool's entry for it, else\n"
    "the catalog's one-GPU cloud instance), and keeps the cheapest plan ($/h) in which the\n"
    "iGniter model predicts every service meets its SLO, as iGniter does across instance\n"
    "types (TPDS 2023, 5.3: 15 g4dn.xlarge T4s at $7.89/h against 6 p3.2xlarge V100s at\n"
    "$18.36/h for its twelve workloads; the T4 is kept). A tie keeps the type given first.\n"
    "The shadow guard applies to every type's plan as in `tessera plan`.\n\n"
    "Prints every type's GPUs and $/h side by side, then the chosen plan; --format json\n"
    "prints {types: [...], chosen} instead; -o writes the chosen plan's deployment JSON\n"
    "(for validate, simulate, deploy). Exit 3 when no type meets every SLO.\n\n"
    "Example:\n";

// One GPU type's plan.
struct TypePlan {
  std::string coefficients;  // the file
  std::string gpu;
  std::string instance;
  double price_per_hour = 0;
  Deployment deployment;
  std::optional<ShadowGuardResult> shadow;
  int infeasible = 0;
  bool meets_every_slo = false;
};

Result<TypePlan> PlanType(const ChooseFlags& flags, const Scenario& scenario,
                          const std::string& coefficients, const Planner& planner) {
  Result<MpsCoefficients> c = LoadMpsCoefficients(coefficients);
  if (!c.ok()) return c.status().WithContext("--coeffs");
  // A file that names no GPU describes the scenario's (e.g. the bundled V100's).
  const std::string gpu = c->hardware.gpu.empty() ? scenario.gpu : c->hardware.gpu;
  if (gpu.empty()) {
    return Status::InvalidArgument(
        "--coeffs " + coefficients +
        ": field 'hardware.gpu': missing, and the scenario names no gpu; choose needs the GPU "
        "each file describes (write it with `tessera igniter fit --gpu` or `tessera igniter "
        "synth`, or add \"gpu\" to hardware)");
  }
  PlanRequest request;
  request.inputs.scenario = flags.scenario;
  request.inputs.coefficients = coefficients;
  request.inputs.gpu = gpu;
  request.scenario = scenario;
  request.planner = planner.Name();
  request.shadow = flags.shadow;
  request.notes = CliNotes();
  TESSERA_ASSIGN_OR_RETURN(PlanRun run, Plan(request));
  TypePlan out;
  out.coefficients = coefficients;
  out.gpu = run.problem.gpu().name;
  out.instance = run.problem.gpu().cloud.instance;
  out.deployment = std::move(run.deployment);
  out.shadow = std::move(run.shadow);
  for (const ServiceOutcome& s : out.deployment.services) {
    out.infeasible += s.status == ServiceStatus::kInfeasible;
  }
  out.price_per_hour = out.deployment.metrics.gpus > 0
                           ? out.deployment.metrics.cost_per_hour / out.deployment.metrics.gpus
                           : 0;
  out.meets_every_slo = out.infeasible == 0 && out.deployment.metrics.predicted_violations == 0;
  return out;
}

// The cheapest plan meeting every SLO (the first on a tie), or -1.
int Cheapest(const std::vector<TypePlan>& plans) {
  int best = -1;
  for (size_t i = 0; i < plans.size(); ++i) {
    if (!plans[i].meets_every_slo) continue;
    if (best < 0 ||
        plans[i].deployment.metrics.cost_per_hour < plans[best].deployment.metrics.cost_per_hour) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

std::string ChoiceTable(const std::vector<TypePlan>& plans, int chosen) {
  std::string out =
      fmt::format("{:<12} {:<14} {:>8} {:>5} {:>8} {:>5} {:>10}  {}\n", "gpu", "instance",
                  "$/GPU/h", "gpus", "$/h", "miss", "infeasible", "coefficients");
  for (size_t i = 0; i < plans.size(); ++i) {
    const TypePlan& p = plans[i];
    out +=
        fmt::format("{:<12} {:<14} {:>8.3f} {:>5} {:>8.2f} {:>5} {:>10}  {}{}\n", p.gpu, p.instance,
                    p.price_per_hour, p.deployment.metrics.gpus, p.deployment.metrics.cost_per_hour,
                    p.deployment.metrics.predicted_violations, p.infeasible, p.coefficients,
                    static_cast<int>(i) == chosen ? "  <- chosen" : "");
  }
  return out;
}

std::string ChoiceJson(const std::vector<TypePlan>& plans, int chosen) {
  nlohmann::ordered_json types = nlohmann::ordered_json::array();
  for (const TypePlan& p : plans) {
    types.push_back({{"gpu", p.gpu},
                     {"instance", p.instance},
                     {"coefficients", p.coefficients},
                     {"price_per_hour", p.price_per_hour},
                     {"gpus", p.deployment.metrics.gpus},
                     {"cost_per_hour", p.deployment.metrics.cost_per_hour},
                     {"predicted_violations", p.deployment.metrics.predicted_violations},
                     {"infeasible", p.infeasible},
                     {"shadows_activated", p.shadow ? p.shadow->activated : 0},
                     {"meets_every_slo", p.meets_every_slo}});
  }
  nlohmann::ordered_json j = {{"types", std::move(types)}};
  j["chosen"] =
      chosen < 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(plans[chosen].gpu);
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

int RunChoose(const ChooseFlags& flags) {
  Result<std::unique_ptr<Planner>> planner = BuiltinPlanners().Create(flags.planner);
  if (!planner.ok()) return ReportError(planner.status().WithContext("--planner"));
  if ((*planner)->Mode() != Sharing::kMps) {
    return ReportError(Status::InvalidArgument(
        "--planner: " + flags.planner +
        " is a MIG planner; choose runs the MPS planners (igniter, ffd+, gslice+)"));
  }
  ProblemInputs input;
  input.scenario = flags.scenario;
  Result<Scenario> scenario = LoadScenario(input);
  if (!scenario.ok()) return ReportError(scenario.status());
  std::vector<TypePlan> plans;
  for (const std::string& file : flags.coefficients) {
    Result<TypePlan> plan = PlanType(flags, *scenario, file, **planner);
    if (!plan.ok()) return ReportError(plan.status());
    for (const TypePlan& earlier : plans) {
      if (earlier.gpu == plan->gpu) {
        return ReportError(Status::InvalidArgument("--coeffs " + file + ": describes " + plan->gpu +
                                                   " as " + earlier.coefficients +
                                                   " does; give one file per GPU type"));
      }
    }
    plans.push_back(std::move(plan).value());
  }
  const int chosen = Cheapest(plans);
  std::string rendered;
  if (flags.format == "json") {
    rendered = ChoiceJson(plans, chosen);
  } else {
    rendered = ChoiceTable(plans, chosen);
    if (chosen >= 0) {
      const TypePlan& p = plans[chosen];
      rendered += fmt::format("\nchosen: {} x {} ({}), ${:.2f}/h\n\n", p.deployment.metrics.gpus,
                              p.gpu, p.instance, p.deployment.metrics.cost_per_hour);
      rendered += FormatDeploymentTable(p.deployment);
      if (p.shadow) rendered += "\n" + FormatShadowTable(*p.shadow);
    }
  }
  std::cout << rendered;
  if (chosen < 0) {
    PrintMessage("tessera: no GPU type's plan meets every SLO by the iGniter model\n");
    return kExitInfeasible;
  }
  if (!flags.output.empty()) {
    const TypePlan& p = plans[chosen];
    const std::string json = FormatDeploymentJson(p.deployment);
    Status written = WriteOutput(flags.output, p.shadow ? WithShadowJson(json, *p.shadow) : json);
    if (!written.ok()) return ReportError(written);
  }
  return kExitOk;
}

}  // namespace

void AddIgniterCommand(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "igniter",
      "iGniter's MPS performance model: fit its coefficients for your GPU (fit), carry them "
      "to a GPU nobody profiled (synth), choose the cheapest GPU type (choose)");
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

  auto synth_flags = std::make_shared<SynthFlags>();
  CLI::App* synth = cmd->add_subcommand(
      "synth", "Synthesize iGniter coefficients for an unprofiled GPU from another GPU's");
  synth->footer(std::string(kSynthFooter) + kT4Example);
  synth->add_option("--from", synth_flags->from, "Coefficients JSON fitted on another GPU")
      ->required();
  synth->add_option("--from-gpu", synth_flags->from_gpu,
                    "GPU --from was fitted on (default: its hardware.gpu)");
  synth->add_option("--gpu", synth_flags->gpu, "GPU to synthesize for (" + GpuNames() + ")")
      ->required();
  synth
      ->add_option("--max-clock-mhz", synth_flags->max_clock_mhz,
                   "F: the target's maximum SM clock, MHz (T4: 1590)")
      ->required()
      ->check(Within(limits::kFrequencyMhz));
  synth
      ->add_option("--power-cap-w", synth_flags->power_cap_w,
                   "P: the target's power cap, W (T4: 70)")
      ->required()
      ->check(Within(limits::kPowerW));
  synth
      ->add_option("--idle-power-w", synth_flags->idle_power_w,
                   "p_idle: the target's idle power, W (default: the source's x P ratio)")
      ->check(Within(limits::kIdlePowerW));
  synth
      ->add_option("--pcie-bytes-per-ms", synth_flags->pcie_bytes_per_ms,
                   "B_pcie: host-to-device bytes per ms (default: the source's; T4 measured: "
                   "5882000)")
      ->check(Within(limits::kPcieBytesPerMs));
  synth
      ->add_option("-o,--output", synth_flags->output,
                   "Write the coefficients JSON to FILE (atomically; '-' for stdout)")
      ->required();
  synth->callback([synth_flags, &exit_code] { exit_code = RunSynth(*synth_flags); });

  auto choose_flags = std::make_shared<ChooseFlags>();
  CLI::App* choose = cmd->add_subcommand(
      "choose", "Plan a scenario on several GPU types; keep the cheapest meeting every SLO");
  choose->footer(std::string(kChooseFooter) + kT4Example);
  choose->add_option("--scenario", choose_flags->scenario, "Scenario YAML")->required();
  choose
      ->add_option("--coeffs", choose_flags->coefficients,
                   "iGniter coefficients of one GPU type (with hardware.gpu); repeat per type")
      ->required();
  choose->add_option("--planner", choose_flags->planner, "MPS planner (igniter, ffd+, gslice+)")
      ->capture_default_str();
  AddShadowFlag(*choose, choose_flags->shadow);
  choose->add_option("--format", choose_flags->format, "table (for people) or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  choose->add_option("-o,--output", choose_flags->output,
                     "Write the chosen plan's deployment JSON to FILE");
  choose->callback([choose_flags, &exit_code] { exit_code = RunChoose(*choose_flags); });
}

}  // namespace tessera::cli
