// `tessera gslice`: the GSLICE runtime (gslice_runtime.h) on one whole GPU shared by
// the scenario's services through MPS, each with a GPU% that GSLICE tunes.
#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "cli_flags.h"
#include "cli_output.h"
#include "commands.h"
#include "output_file.h"
#include "tessera/durations.h"
#include "tessera/profile/profile_synth.h"
#include "tessera/profile_io.h"
#include "tessera/simulate/gslice_report_format.h"
#include "tessera/simulate/gslice_runtime.h"
#include "tessera/simulate/gslice_workload.h"

namespace tessera::cli {
namespace {

struct GsliceFlags {
  std::string scenario;
  std::string gpu;
  std::string profiles;
  std::string policy = "gslice";
  std::string duration = "30s";
  std::optional<double> initial_share;  // none: the knee points
  int knee_batch = 1;
  bool no_contention = false;
  std::string hold_down = "0s";
  std::string reload_delay = "5s";
  std::string period = "1s";
  int max_batch = 32;
  double shadow_extra = 0.10;
  bool idle_spare = false;
  std::string arrivals = "poisson";
  std::uint64_t seed = 1;
  std::string format = "table";
  std::string output;
};

double TotalRate(const GsliceWorkload& workload) {
  double rate = 0;
  for (const GsliceService& s : workload.services) rate += s.rate_rps;
  return rate;
}

// GsliceOptions::Validate names the field; the user typed a flag.
Status NameTheFlag(const Status& status) {
  constexpr std::pair<std::string_view, std::string_view> kFlags[] = {
      {"duration_s", "--duration"},         {"period_s", "--period"},
      {"initial_share", "--initial-share"}, {"reload_delay_s", "--reload-delay"},
      {"max_batch", "--max-batch"},         {"shadow_extra_share", "--shadow-extra"},
      {"knee_batch", "--knee-batch"},       {"hold_down_s", "--hold-down"},
  };
  for (const auto& [field, flag] : kFlags)
    if (status.message().starts_with(field)) return status.WithContext(flag);
  return status;
}

Result<GsliceOptions> OptionsFrom(const GsliceFlags& flags) {
  GsliceOptions o;
  TESSERA_ASSIGN_OR_RETURN(o.policy, ParseGslicePolicy(flags.policy));
  TESSERA_ASSIGN_OR_RETURN(o.duration_s,
                           ParseDuration("--duration", flags.duration, kSimulatedTime));
  TESSERA_ASSIGN_OR_RETURN(o.period_s, ParseDuration("--period", flags.period, kTuningPeriod));
  if (o.duration_s / o.period_s > kMaxPeriods) {
    return Status::InvalidArgument(
        fmt::format("--period: {} over --duration {} makes {:.3g} tuning periods; at most {:.3g}",
                    FormatDuration(o.period_s), FormatDuration(o.duration_s),
                    o.duration_s / o.period_s, kMaxPeriods));
  }
  TESSERA_ASSIGN_OR_RETURN(o.reload_delay_s,
                           ParseDuration("--reload-delay", flags.reload_delay, kReloadDelay));
  TESSERA_ASSIGN_OR_RETURN(o.hold_down_s,
                           ParseDuration("--hold-down", flags.hold_down, kReloadDelay));
  o.initial_share = flags.initial_share;
  o.knee_batch = flags.knee_batch;
  o.contention = !flags.no_contention;
  o.max_batch = flags.max_batch;
  o.shadow_extra_share = flags.shadow_extra;
  o.distribute_spare = !flags.idle_spare;
  o.arrivals = flags.arrivals == "constant" ? ArrivalKind::kConstant
               : flags.arrivals == "bursty" ? ArrivalKind::kBursty
                                            : ArrivalKind::kPoisson;
  o.seed = flags.seed;
  TESSERA_RETURN_IF_ERROR(NameTheFlag(o.Validate()));
  return o;
}

// The scenario's services on one GPU model: --gpu, else the scenario's, else
// a100-80gb; the embedded profiles of that GPU unless --profiles.
Result<GsliceWorkload> LoadWorkload(const GsliceFlags& flags) {
  TESSERA_ASSIGN_OR_RETURN(Scenario scenario, LoadScenarioYaml(flags.scenario));
  if (!scenario.pool.empty()) {
    return Status::InvalidArgument(
        ServiceLocation(scenario, scenario.pool.front().line) +
        ": field 'pool': gslice shares one GPU; give the scenario a `gpu` instead of a pool");
  }
  Result<const GpuModel*> gpu = ChooseGpu(flags.gpu, scenario);
  if (!gpu.ok()) return gpu.status();
  ProfileTable profiles;
  if (flags.profiles.empty()) {
    profiles = DefaultProfiles(**gpu);
  } else {
    TESSERA_ASSIGN_OR_RETURN(profiles, LoadProfiles(flags.profiles, (*gpu)->name));
  }
  Result<GsliceWorkload> w = BuildGsliceWorkload(scenario, **gpu, profiles);
  if (!w.ok() && !flags.profiles.empty()) return w.status().WithContext(flags.profiles);
  return w;
}

int RunGsliceCommand(const GsliceFlags& flags) {
  Result<GsliceOptions> options = OptionsFrom(flags);
  if (!options.ok()) return ReportError(options.status());
  Result<GsliceWorkload> workload = LoadWorkload(flags);
  if (!workload.ok()) return ReportError(workload.status());
  if (Status fits = CheckSimulatedRequests("--duration", options->duration_s, TotalRate(*workload));
      !fits.ok()) {
    return ReportError(fits);
  }
  Result<GsliceReport> report = RunGslice(*workload, *options);
  if (!report.ok()) return ReportError(NameTheFlag(report.status()));
  const std::string text =
      flags.format == "json" ? FormatGsliceReportJson(*report) : FormatGsliceReportTable(*report);
  if (Status written = WriteOutput(flags.output, text); !written.ok()) return ReportError(written);
  return kExitOk;
}

constexpr const char* kFooter =
    "Runs GSLICE (SoCC'20) on a simulated clock: the scenario's services share ONE whole\n"
    "GPU through MPS (no MIG), each as one process limited to a GPU% of the SMs. Each\n"
    "service's requests arrive at its rate_rps into a FIFO queue; an idle process at once\n"
    "starts a batch of what is queued, up to its maximum batch size.\n\n"
    "Policies (GSLICE and the baselines of its evaluation, section 4):\n"
    "  gslice         SLAB adapts each maximum batch to the SLO headroom after every batch;\n"
    "                 every --period, Algorithm 1 computes each service's GPU% from its\n"
    "                 latency, throughput and arrivals, a max-min fair allocation shares\n"
    "                 out the GPU, and a change of more than 5 points is applied by a\n"
    "                 shadow process that loads for --reload-delay while the old one keeps\n"
    "                 serving, then takes over after a 100 us switch-over; the service is\n"
    "                 not retuned again for --hold-down.\n"
    "  static         the initial GPU% and --max-batch, unchanged.\n"
    "  igniter-guard  static, plus iGniter's pre-launched shadow with --shadow-extra more\n"
    "                 GPU%, switched to at once (once) when a period's p99 misses the SLO.\n"
    "  default-mps    the paper's 'default MPS': no GPU% limit (every process may use the\n"
    "                 whole GPU, so busy processes split the SMs), one request per batch.\n"
    "  mps-slab       the paper's 'MPS + SLAB' (M+S): no GPU% limit, SLAB batching.\n"
    "  static-slab    the initial GPU% as a fixed MPS limit per model, SLAB batching.\n"
    "  clipper        Clipper: each model alone on its own GPU (the report counts the\n"
    "                 GPUs), AIMD batching: +1 after a batch within the SLO, -10% after\n"
    "                 one beyond it, from 1 up to --max-batch.\n\n"
    "Initial GPU%: each model's knee point (where more GPU% stops paying: Kneedle on its\n"
    "throughput-vs-GPU% curve at --knee-batch), scaled down max-min fairly when the knees\n"
    "exceed the GPU; --initial-share gives every service one fixed GPU% instead (GSLICE's\n"
    "30% for unprofiled models, as in the paper's Fig. 16).\n\n"
    "Performance at a GPU% is read off the MIG profiles (one process): an instance with\n"
    "c of C compute slices stands for c/C of the SMs, interpolated between (an\n"
    "approximation; see docs/gslice-runtime.md). Contention between the processes on the\n"
    "GPU is modelled unless --no-contention: busy processes whose GPU% limits add up to\n"
    "more than 100% split the SMs, and each neighbour's L2 traffic slows a batch by\n"
    "iGniter's alpha_cache (V100 fit) times its L2 use, both weighted by how busy the\n"
    "neighbour was in the last period.\n\n"
    "Output: the GPUs used, aggregate throughput (requests served while they arrive, per\n"
    "second) and SLO violations; per service its throughput, share of requests within\n"
    "the SLO, misses, p99, knee, first and last GPU%; per period and service GPU%, the\n"
    "share of SMs it got (eff%), busy fraction, maximum batch, arrivals/s, throughput/s,\n"
    "mean and p99 latency, share within SLO; the events (share requested, switch-over,\n"
    "underprovisioned). Same seed, same report.\n\n"
    "Examples:\n"
    "  tessera gslice --scenario examples/scenarios/gslice-fig16.yaml --initial-share 0.3\n"
    "  tessera gslice --scenario examples/scenarios/gslice-fig16.yaml --initial-share 0.3 \\\n"
    "      --policy static\n"
    "  tessera gslice --scenario examples/scenarios/gslice-fig16.yaml --initial-share 0.3 \\\n"
    "      --hold-down 10s --reload-delay 12s --duration 60s --format json -o fig16.json\n"
    "  tessera gslice --scenario examples/scenarios/gslice-fig10-c3.yaml      # knee start\n"
    "  tessera gslice --scenario examples/scenarios/gslice-fig10-c3.yaml --policy default-mps\n"
    "  tessera gslice --scenario examples/scenarios/gslice-fig10-c3.yaml --policy mps-slab\n"
    "  tessera gslice --scenario examples/scenarios/gslice-fig10-c3.yaml --policy clipper\n"
    "  tessera gslice --scenario examples/scenarios/gslice-fig10-c3.yaml --no-contention";

void AddFlags(CLI::App& cmd, GsliceFlags& f) {
  cmd.add_option("--scenario", f.scenario,
                 "Scenario YAML: services {name, model, rate_rps, "
                 "slo_ms} sharing one GPU")
      ->required();
  cmd.add_option("--gpu", f.gpu,
                 "GPU model (" + GpuNames() +
                     "); default: the scenario's, else "
                     "a100-80gb");
  cmd.add_option("--profiles", f.profiles,
                 "Profile CSV or ParvaGPU prof_data directory; "
                 "default: the embedded synthesized profiles");
  cmd.add_option("--policy", f.policy,
                 "gslice, static, igniter-guard, default-mps, mps-slab, static-slab or clipper")
      ->check(CLI::IsMember({"gslice", "static", "igniter-guard", "default-mps", "mps-slab",
                             "static-slab", "clipper"}))
      ->capture_default_str();
  cmd.add_option("--duration", f.duration,
                 "How long requests arrive, " + DescribeRange(kSimulatedTime) + ": 30, 30s, 2m")
      ->capture_default_str();
  cmd.add_option("--initial-share", f.initial_share,
                 "Every service's GPU% at the start, as a fraction, e.g. 0.3 (GSLICE's value "
                 "for unprofiled models); default: each model's knee point");
  cmd.add_option("--knee-batch", f.knee_batch,
                 "Batch whose throughput-vs-GPU% curve gives the knee (the paper's Fig. 2: 1)")
      ->capture_default_str();
  cmd.add_flag("--no-contention", f.no_contention,
               "Each process runs at its GPU%'s solo latency: no SM split, no L2 interference "
               "(to compare with the contended run)");
  cmd.add_option("--hold-down", f.hold_down,
                 "gslice: no new GPU% for a service until this long after its last change took "
                 "effect (the paper's example: 10s), " +
                     DescribeRange(kReloadDelay))
      ->capture_default_str();
  cmd.add_option("--reload-delay", f.reload_delay,
                 "Time a shadow process takes to load with its new GPU% (paper: 2-15 s), " +
                     DescribeRange(kReloadDelay))
      ->capture_default_str();
  cmd.add_option(
         "--period", f.period,
         "Tuning and reporting period, " + DescribeRange(kTuningPeriod) + " and at most --duration")
      ->capture_default_str();
  cmd.add_option("--max-batch", f.max_batch,
                 "Largest batch: SLAB's ceiling, the fixed maximum of static and igniter-guard, "
                 "the ceiling of clipper's AIMD (default-mps always runs batches of one)")
      ->capture_default_str();
  cmd.add_option("--shadow-extra", f.shadow_extra,
                 "igniter-guard: the shadow's extra GPU%, as a fraction (iGniter: 10%)")
      ->capture_default_str();
  cmd.add_flag("--idle-spare", f.idle_spare,
               "gslice: leave the GPU% no demand asks for unallocated, instead of sharing it out "
               "in proportion to the demands (Algorithm 1 then oscillates; see the docs)");
  cmd.add_option("--arrivals", f.arrivals, "poisson, constant or bursty (on/off, same mean)")
      ->check(CLI::IsMember({"poisson", "constant", "bursty"}))
      ->capture_default_str();
  cmd.add_option("--seed", f.seed, "Seed of the arrivals; same seed, same report")
      ->check(NonNegative())
      ->capture_default_str();
  cmd.add_option("--format", f.format, "table (for people) or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  cmd.add_option("-o,--output", f.output, "Write the report to FILE (default stdout)");
}

}  // namespace

void AddGsliceCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<GsliceFlags>();
  CLI::App* cmd = app.add_subcommand(
      "gslice", "Share one GPU among services with MPS: GSLICE's self-tuning GPU% and batching");
  cmd->footer(kFooter);
  AddFlags(*cmd, *flags);
  cmd->callback([flags, &exit_code] { exit_code = RunGsliceCommand(*flags); });
}

}  // namespace tessera::cli
