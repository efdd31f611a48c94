// `tessera replay`: online MIG placement of a recorded VM/pod trace, one
// policy or all of them side by side (GRMU paper, Table 6 and Fig. 10-12).
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "durations.h"
#include "output_file.h"
#include "replay_run.h"
#include "tessera/input_limits.h"
#include "tessera/online_placer.h"
#include "tessera/replay.h"
#include "tessera/replay_optimum.h"
#include "tessera/replay_report_format.h"
#include "tessera/replay_sweep.h"
#include "tessera/text_io.h"

namespace tessera::cli {
namespace {

// "off" or 0 turn consolidation off; anything else is a duration.
Result<double> ParseInterval(const std::string& text) {
  if (text == "off") return 0.0;
  return ParseDuration("--consolidate-every", text, kConsolidation);
}

Result<PlacerOptions> PlacerOptionsFrom(const ReplayFlags& flags) {
  PlacerOptions o;
  if (!(flags.heavy_share >= 0 && flags.heavy_share <= 1)) {
    return Status::InvalidArgument("--heavy-share: must be a number in [0, 1], got " +
                                   QuoteForMessage(fmt::format("{}", flags.heavy_share)));
  }
  o.heavy_share = flags.heavy_share;
  o.fair_factor = flags.fair_factor;
  TESSERA_ASSIGN_OR_RETURN(o.consolidate_every_s, ParseInterval(flags.consolidate_every));
  TESSERA_ASSIGN_OR_RETURN(o.mecc_window_s,
                           ParseDuration("--mecc-window", flags.mecc_window, kMeccWindow));
  o.defragment = !flags.no_defragment;
  TESSERA_RETURN_IF_ERROR(o.Validate());
  return o;
}

// Consolidation runs every interval from the first arrival to the last event
// (arrival or departure): on a trace spanning centuries a minute would be
// billions of rounds.
Status CheckConsolidationRounds(const VmTrace& trace, double interval_s) {
  if (interval_s <= 0 || trace.vms.empty()) return Status::Ok();
  double last = 0;
  for (const VmRequest& vm : trace.vms) {
    last = std::max(last, vm.arrival_s);
    if (vm.departure_s != kNeverDeparts) last = std::max(last, vm.departure_s);
  }
  const double span = last - trace.vms.front().arrival_s;
  const double rounds = span / interval_s;
  if (rounds <= kMaxConsolidationRounds) return Status::Ok();
  return Status::InvalidArgument(fmt::format(
      "--consolidate-every: {} over the trace's {:.4g} days makes {:.3g} consolidation rounds; "
      "at most {:.3g}: give a longer interval or off",
      FormatDuration(interval_s), span / kDay, rounds, kMaxConsolidationRounds));
}

// The trace as replayed: what the loader and the stress knobs did, and the
// requests per profile.
std::string DescribeTrace(const VmTrace& trace) {
  std::string out;
  for (const std::string& note : trace.notes) out += "  " + note + "\n";
  out += fmt::format("  replaying {} VMs on {} hosts with {} {} GPUs:", trace.vms.size(),
                     trace.hosts.size(), trace.TotalGpus(), trace.gpu->name);
  const std::vector<int> per_profile = RequestsPerProfile(trace);
  for (size_t p = 0; p < per_profile.size(); ++p) {
    if (per_profile[p] > 0)
      out += fmt::format(" {} {}", trace.gpu->profiles[p].name, per_profile[p]);
  }
  return out + "\n";
}

Result<std::vector<ReplayReport>> ReplayAll(const VmTrace& trace, const ReplayFlags& flags,
                                            const PlacerOptions& options) {
  const bool every = flags.compare || (!flags.sweep.empty() && !flags.policy_given);
  const std::vector<std::string> policies =
      every ? BuiltinPlacers().Names() : std::vector<std::string>{flags.policy};
  std::vector<ReplayReport> reports;
  for (const std::string& name : policies) {
    Result<std::unique_ptr<OnlinePlacer>> placer = BuiltinPlacers().Create(name, options);
    if (!placer.ok()) return placer.status().WithContext("--policy");
    TESSERA_ASSIGN_OR_RETURN(ReplayReport report, Replay(trace, **placer));
    reports.push_back(std::move(report));
  }
  return reports;
}

std::string Render(const std::vector<ReplayReport>& reports, const VmTrace& trace,
                   const std::string& format, const ReplayOptimum* optimum) {
  if (format == "json") return FormatReplayJson(reports, /*with_samples=*/false, optimum);
  if (format == "csv") return FormatReplayCsv(reports);
  return "Trace\n" + DescribeTrace(trace) + "\n" + FormatReplayTable(reports, optimum);
}

Result<ReplayOptimum> SolveOptimum(const VmTrace& trace, const ReplayFlags& flags) {
  OptimumOptions o;
  o.time_limit_s = flags.optimum_time_limit;
  Result<ReplayOptimum> optimum = SolveReplayOptimum(trace, o);
  if (!optimum.ok()) return optimum.status().WithContext("--optimum");
  return optimum;
}

// The placement options and the trace of the flags, loaded and shaped,
// its consolidation rounds checked; with `describe_trace`, what the loader
// did goes to stderr.
struct ReplayInputs {
  PlacerOptions options;
  VmTrace trace;
};
Result<ReplayInputs> LoadReplayInputs(const ReplayFlags& flags, bool describe_trace) {
  TESSERA_ASSIGN_OR_RETURN(PlacerOptions options, PlacerOptionsFrom(flags));
  // An unknown policy is reported before the trace is read.
  if (!flags.compare) {
    if (auto placer = BuiltinPlacers().Create(flags.policy, options); !placer.ok()) {
      return placer.status().WithContext("--policy");
    }
  }
  TESSERA_ASSIGN_OR_RETURN(VmTrace trace, LoadShapedTrace(flags.trace));
  TESSERA_RETURN_IF_ERROR(CheckConsolidationRounds(trace, options.consolidate_every_s));
  if (describe_trace) PrintMessage("tessera: trace\n" + DescribeTrace(trace));
  return ReplayInputs{options, std::move(trace)};
}

// --sweep: every knob value, every policy (or --policy), the optimum with
// --optimum; a CSV on -o or stdout, the chart on --svg, progress on stderr.
int RunSweep(const VmTrace& base, const ReplayFlags& flags, const PlacerOptions& options) {
  Result<SweepSpec> spec = ParseSweep(flags.sweep);
  if (!spec.ok()) return ReportError(spec.status());
  if (flags.format == "json") {
    return ReportError(Status::InvalidArgument("--format json: --sweep writes CSV"));
  }
  if (spec->knob == SweepKnob::kGpusPerHost && flags.trace.gpus_per_host) {
    return ReportError(
        Status::InvalidArgument("--gpus-per-host: --sweep gpus-per-host sets it; give one"));
  }
  if (spec->knob == SweepKnob::kLifetime && flags.trace.lifetime != "trace") {
    return ReportError(Status::InvalidArgument("--lifetime: --sweep lifetime sets it; give one"));
  }
  if (spec->knob == SweepKnob::kHeavyShare && flags.heavy_share_given) {
    return ReportError(
        Status::InvalidArgument("--heavy-share: --sweep heavy-share sets it; give one"));
  }
  ReplaySweep sweep;
  sweep.knob = spec->name;
  for (size_t v = 0; v < spec->values.size(); ++v) {
    const std::string& value = spec->values[v];
    PrintMessage(fmt::format("tessera: sweep {}={} ({}/{})\n", spec->name, value, v + 1,
                             spec->values.size()));
    VmTrace trace = base;
    PlacerOptions at_value = options;
    if (Status s = ApplySweepValue(spec->knob, value, trace, at_value); !s.ok()) {
      return ReportError(s.WithContext("--sweep " + spec->name));
    }
    if (Status s = CheckConsolidationRounds(trace, at_value.consolidate_every_s); !s.ok()) {
      return ReportError(s);
    }
    SweepPoint point;
    point.value = value;
    Result<std::vector<ReplayReport>> reports = ReplayAll(trace, flags, at_value);
    if (!reports.ok()) return ReportError(reports.status());
    point.reports = std::move(reports).value();
    if (flags.optimum) {
      Result<ReplayOptimum> optimum = SolveOptimum(trace, flags);
      if (!optimum.ok()) return ReportError(optimum.status());
      point.optimum = std::move(optimum).value();
    }
    sweep.points.push_back(std::move(point));
  }
  if (!flags.svg.empty()) {
    if (Status s = WriteOutput(flags.svg, FormatSweepSvg(sweep)); !s.ok()) return ReportError(s);
  }
  if (Status s = WriteOutput(flags.output, FormatSweepCsv(sweep)); !s.ok()) return ReportError(s);
  return kExitOk;
}

int RunReplay(const ReplayFlags& flags) {
  if (!flags.sweep.empty()) {
    Result<ReplayInputs> in = LoadReplayInputs(flags, /*describe_trace=*/true);
    if (!in.ok()) return ReportError(in.status());
    return RunSweep(in->trace, flags, in->options);
  }
  // Machine formats keep stdout parseable: the trace summary goes to stderr.
  Result<ReplayRun> run = RunReplayFlags(flags, flags.format != "table");
  if (!run.ok()) return ReportError(run.status());
  if (!flags.svg.empty()) {
    if (Status s = WriteOutput(flags.svg, FormatReplaySvg(run->reports)); !s.ok()) {
      return ReportError(s);
    }
  }
  const ReplayOptimum* best = run->optimum ? &*run->optimum : nullptr;
  if (Status s = WriteOutput(flags.output, Render(run->reports, run->trace, flags.format, best));
      !s.ok()) {
    return ReportError(s);
  }
  return kExitOk;
}

constexpr const char* kFooter =
    "Replays a VM/pod trace through an online MIG placement policy: each request asks for\n"
    "one MIG instance of a profile plus CPU and RAM, arrives, is placed or rejected at once,\n"
    "and leaves at its recorded time. The policy picks the GPU; inside a GPU the start slice\n"
    "is the NVIDIA driver's (the start that leaves the most placement options, GRMU Alg. 1).\n\n"
    "Policies: ff (first fit), bf (best fit), mcc (max configuration capability), mecc (CC\n"
    "weighted by the recent profile mix), grmu (dual baskets, defragmentation, optional\n"
    "consolidation). Reported as the GRMU paper does: acceptance overall, per profile and\n"
    "per hour; active hardware rate (hosts plus their GPUs, counted while a host runs any\n"
    "VM) and its area under the hourly curve in percent-hours; migrations.\n\n"
    "The trace is the Alibaba GPU cluster trace 2023 format (node list + pod list), mapped\n"
    "to MIG profiles as GRMU section 8.1 does. As recorded it barely loads its 6,212 GPUs;\n"
    "the stress knobs replay it against a smaller or busier cluster: --gpus-per-host 1\n"
    "--lifetime none brings out the paper's regime (see docs/online-placement.md).\n\n"
    "Examples:\n"
    "  D=/path/to/data/alibaba-gpu-2023/csv   # docs/data-sources.md\n"
    "  tessera replay --nodes $D/openb_node_list_gpu_node.csv --pods "
    "$D/openb_pod_list_default.csv\n"
    "  tessera replay --nodes $D/openb_node_list_gpu_node.csv \\\n"
    "      --pods $D/openb_pod_list_default.csv --compare --gpus-per-host 1 --lifetime none \\\n"
    "      --svg replay.svg\n"
    "  tessera replay ... --compare --format json     # one row per policy\n"
    "  tessera replay ... --format csv -o hourly.csv  # the hourly series\n"
    "  tessera replay ... --compare --max-pods 30 --hosts 4 --optimum  # distance to the ILP\n"
    "  tessera replay ... --sweep gpus-per-host=1,2,4,8 --svg sweep.svg -o sweep.csv\n"
    "  tessera replay ... --sweep lifetime=scale:1,scale:10,scale:100,none -o sweep.csv\n"
    "  tessera replay ... --sweep arrival-rate=0.5,1,2,4 --max-pods 30 --hosts 4 --optimum\n"
    "  tessera replay ... --gpus-per-host 1 --lifetime none --policy grmu --no-defragment \\\n"
    "      --sweep heavy-share=0.2,0.3,0.4,0.5,0.6,0.7,0.8 --svg fig6.svg\n\n"
    "--optimum solves GRMU's own ILP (section 6) offline over the whole window (at most 40 VMs):\n"
    "the most accepted VMs, then the least active hardware, then the fewest migrations, and\n"
    "prints every policy's distance to it. --sweep replays the trace at every value of one\n"
    "stress knob (gpus-per-host, lifetime, arrival-rate, or GRMU's heavy-share as in its\n"
    "Fig. 6-8) with every policy (or --policy)\n"
    "and writes one CSV row per value x policy; --svg draws acceptance and active hardware\n"
    "against the knob (GRMU Fig. 6 and 8).";

void AddPolicyFlags(CLI::App& cmd, ReplayFlags& flags) {
  auto* policy = cmd.add_option("--policy", flags.policy,
                                "Placement policy: " + BuiltinPlacers().JoinedNames())
                     ->capture_default_str();
  cmd.add_flag("--compare", flags.compare, "Replay every policy, one row each")->excludes(policy);
  cmd.add_option("--heavy-share", flags.heavy_share,
                 "grmu: share of all GPUs the heavy (full-GPU profile) basket may hold, 0..1")
      ->check(Within(InputRange{0.0, 1.0}))
      ->capture_default_str();
  cmd.add_option("--fair-factor", flags.fair_factor,
                 "fair: the full-GPU basket may hold this fraction of the full-GPU requests' "
                 "share of the GPU demand seen so far")
      ->check(Within(limits::kFairFactor))
      ->capture_default_str();
  cmd.add_option("--consolidate-every", flags.consolidate_every,
                 "grmu, fair: interval of inter-GPU consolidation in trace time, e.g. 24h, " +
                     DescribeRange(kConsolidation) + "; off = never")
      ->capture_default_str();
  cmd.add_flag("--no-defragment", flags.no_defragment,
               "grmu, fair: do not rearrange a fragmented GPU after a rejection");
  cmd.add_option("--mecc-window", flags.mecc_window,
                 "mecc: look-back window of arrivals estimating the profile mix, " +
                     DescribeRange(kMeccWindow))
      ->capture_default_str();
}

}  // namespace

Result<ReplayRun> RunReplayFlags(const ReplayFlags& flags, bool describe_trace) {
  TESSERA_ASSIGN_OR_RETURN(ReplayInputs in, LoadReplayInputs(flags, describe_trace));
  std::optional<ReplayOptimum> optimum;
  if (flags.optimum) {
    TESSERA_ASSIGN_OR_RETURN(optimum, SolveOptimum(in.trace, flags));
  }
  TESSERA_ASSIGN_OR_RETURN(std::vector<ReplayReport> reports,
                           ReplayAll(in.trace, flags, in.options));
  return ReplayRun{std::move(in.trace), std::move(reports), std::move(optimum)};
}

void AddReplayFlags(CLI::App& cmd, ReplayFlags& flags) {
  AddTraceFlags(cmd, flags.trace);
  AddPolicyFlags(cmd, flags);
  cmd.add_flag("--optimum", flags.optimum,
               "Also solve GRMU's ILP offline over the window (at most 40 VMs) and report each "
               "policy's distance to it");
  cmd.add_option("--optimum-time-limit", flags.optimum_time_limit,
                 "Seconds per objective of --optimum (acceptance, hardware, migrations); an "
                 "objective cut short is reported as not proven")
      ->check(Within(InputRange{0.001, 3600.0}))
      ->capture_default_str();
}

void NoteReplayFlagsGiven(const CLI::App& cmd, ReplayFlags& flags) {
  flags.policy_given = cmd.count("--policy") > 0;
  flags.heavy_share_given = cmd.count("--heavy-share") > 0;
}

void AddReplayCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ReplayFlags>();
  CLI::App* cmd = app.add_subcommand(
      "replay", "Replay a VM/pod trace through online MIG placement policies (GRMU and rivals)");
  cmd->footer(kFooter);
  AddReplayFlags(*cmd, *flags);
  cmd->add_option("--format", flags->format,
                  "table (for people), json (one row per policy) or csv (hourly series)")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  cmd->add_option("--svg", flags->svg,
                  "Also draw the hourly series of every policy (with --sweep: the sweep) to FILE");
  cmd->add_option("-o,--output", flags->output, "Write the report to FILE (default stdout)");
  cmd->add_option("--sweep", flags->sweep,
                  "KNOB=V1,V2,...: replay at every value of gpus-per-host, lifetime (trace, none, "
                  "scale:K), arrival-rate (K x as dense) or heavy-share (grmu, 0..1); CSV out, "
                  "chart on --svg");
  cmd->callback([flags, cmd, &exit_code] {
    NoteReplayFlagsGiven(*cmd, *flags);
    exit_code = RunReplay(*flags);
  });
}

}  // namespace tessera::cli
