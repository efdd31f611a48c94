// `tessera gslice`: the GSLICE runtime (gslice_runtime.h) on one whole GPU shared by
// the scenario's services through MPS, each with a GPU% that GSLICE tunes.
#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "cli_common.h"
#include "commands.h"
#include "durations.h"
#include "tessera/gslice_report_format.h"
#include "tessera/gslice_runtime.h"
#include "tessera/gslice_workload.h"
#include "tessera/profile_io.h"
#include "tessera/profile_synth.h"

namespace tessera::cli {
namespace {

struct GsliceFlags {
  std::string scenario;
  std::string gpu;
  std::string profiles;
  std::string policy = "gslice";
  std::string duration = "30s";
  double initial_share = 0.3;
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
  o.initial_share = flags.initial_share;
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
    "Policies:\n"
    "  gslice         SLAB adapts each maximum batch to the SLO headroom after every batch;\n"
    "                 every --period, Algorithm 1 computes each service's GPU% from its\n"
    "                 latency, throughput and arrivals, a max-min fair allocation shares\n"
    "                 out the GPU, and a change of more than 5 points is applied by a\n"
    "                 shadow process that loads for --reload-delay while the old one keeps\n"
    "                 serving, then takes over after a 100 us switch-over.\n"
    "  static         --initial-share and --max-batch, unchanged.\n"
    "  igniter-guard  static, plus iGniter's pre-launched shadow with --shadow-extra more\n"
    "                 GPU%, switched to at once (once) when a period's p99 misses the SLO.\n\n"
    "Performance at a GPU% is read off the MIG profiles (one process): an instance with\n"
    "c of C compute slices stands for c/C of the SMs, interpolated between (an\n"
    "approximation; see docs/gslice-runtime.md).\n\n"
    "Output: per service its share of requests within the SLO, p99, first and last GPU%;\n"
    "per period and service GPU%, maximum batch, arrivals/s, throughput/s, mean and p99\n"
    "latency, share within SLO; the events (share requested, switch-over,\n"
    "underprovisioned). Same seed, same report.\n\n"
    "Examples:\n"
    "  tessera gslice --scenario examples/scenarios/gslice-fig16.yaml\n"
    "  tessera gslice --scenario examples/scenarios/gslice-fig16.yaml --policy static\n"
    "  tessera gslice --scenario examples/scenarios/gslice-fig16.yaml --policy igniter-guard\n"
    "  tessera gslice --scenario examples/scenarios/gslice-fig16.yaml --reload-delay 12s \\\n"
    "      --duration 60s --format json -o fig16.json";

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
  cmd.add_option("--policy", f.policy, "gslice, static or igniter-guard")
      ->check(CLI::IsMember({"gslice", "static", "igniter-guard"}))
      ->capture_default_str();
  cmd.add_option("--duration", f.duration,
                 "How long requests arrive, " + DescribeRange(kSimulatedTime) + ": 30, 30s, 2m")
      ->capture_default_str();
  cmd.add_option("--initial-share", f.initial_share,
                 "Every service's GPU% at the start, as a fraction (GSLICE's default 30%)")
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
                 "Largest batch: SLAB's ceiling, the fixed maximum of static and igniter-guard")
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
