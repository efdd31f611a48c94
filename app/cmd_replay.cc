// `tessera replay`: online MIG placement of a recorded VM/pod trace, one
// policy or all of them side by side (GRMU paper, Table 6 and Fig. 10-12).
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli_flags.h"
#include "cli_output.h"
#include "commands.h"
#include "output_file.h"
#include "tessera/durations.h"
#include "tessera/online/online_placer.h"
#include "tessera/online/replay.h"
#include "tessera/online/replay_optimum.h"
#include "tessera/online/replay_report_format.h"
#include "tessera/online/replay_sweep.h"
#include "tessera/replay_request.h"
#include "tessera/util/input_limits.h"
#include "tessera/util/text_io.h"
#include "trace_flags.h"

namespace tessera::cli {
namespace {

// The command's flags: the request, and what only the command does with it.
struct ReplayFlags {
  ReplayRequest request;
  std::string format = "table";
  std::string svg;
  std::string output;
  std::string sweep;
  bool policy_given = false;  // --policy on the command line (a sweep runs every policy without)
  bool heavy_share_given = false;
};

// The policies a sweep replays: every one, unless --policy names one.
std::vector<std::string> SweepPolicies(const ReplayFlags& flags) {
  return flags.policy_given ? std::vector<std::string>{flags.request.policy}
                            : BuiltinPlacers().Names();
}

std::string Render(const std::vector<ReplayReport>& reports, const VmTrace& trace,
                   const std::string& format, const ReplayOptimum* optimum) {
  if (format == "json") return FormatReplayJson(reports, /*with_samples=*/false, optimum);
  if (format == "csv") return FormatReplayCsv(reports);
  return "Trace\n" + DescribeTrace(trace) + "\n" + FormatReplayTable(reports, optimum);
}

// --sweep: every knob value, every policy (or --policy), the optimum with
// --optimum; a CSV on -o or stdout, the chart on --svg, progress on stderr.
int RunSweep(const VmTrace& base, const ReplayFlags& flags, const PlacerOptions& options) {
  Result<SweepSpec> spec = ParseSweep(flags.sweep);
  if (!spec.ok()) return ReportError(spec.status());
  if (flags.format == "json") {
    return ReportError(Status::InvalidArgument("--format json: --sweep writes CSV"));
  }
  if (spec->knob == SweepKnob::kGpusPerHost && flags.request.trace.gpus_per_host) {
    return ReportError(
        Status::InvalidArgument("--gpus-per-host: --sweep gpus-per-host sets it; give one"));
  }
  if (spec->knob == SweepKnob::kLifetime && flags.request.trace.lifetime != "trace") {
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
    Result<std::vector<ReplayReport>> reports =
        ReplayPolicies(trace, SweepPolicies(flags), at_value);
    if (!reports.ok()) return ReportError(reports.status());
    point.reports = std::move(reports).value();
    if (flags.request.optimum) {
      Result<ReplayOptimum> optimum = SolveOptimumFor(trace, flags.request.optimum_time_limit_s);
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

int RunReplayCommand(ReplayFlags& flags) {
  // The trace's description goes to stderr, except in the table, which shows
  // it: machine formats keep stdout parseable.
  if (!flags.sweep.empty() || flags.format != "table") {
    flags.request.notes = [](std::string_view note) {
      PrintMessage("tessera: " + std::string(note) + "\n");
    };
  }
  if (!flags.sweep.empty()) {
    Result<ReplayInputs> in = LoadReplayInputs(flags.request);
    if (!in.ok()) return ReportError(in.status());
    return RunSweep(in->trace, flags, in->options);
  }
  Result<ReplayRun> run = RunReplay(flags.request);
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
    "is the NVIDIA driver's (the start that leaves the most placement options, GRMU Alg. 1),\n"
    "except for lfr, frag and steer, which choose it too.\n\n"
    "Policies: ff (first fit), bf (best fit), mcc (max configuration capability), mecc (CC\n"
    "weighted by the recent profile mix), grmu (dual baskets, defragmentation, optional\n"
    "consolidation), fair (grmu with a learned heavy cap), lfr (largest free run left, with\n"
    "a rearranging fallback, as HAMi), frag (fewest stranded slices, arXiv 2511.18906) and\n"
    "steer (Tessera's: frag's placements, lfr's fallback and fair's full-GPU reserve, which\n"
    "fades as VMs leave). Reported as the GRMU paper does: acceptance overall, per profile and\n"
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

// --consolidate-every: off, or a trace-time interval handed on in seconds.
CLI::Validator ConsolidationFlag() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text == "off") text = "0";
        Result<double> seconds = ParseDuration("", text, kConsolidation);
        if (!seconds.ok()) return seconds.status().message();
        text = fmt::format("{}", *seconds);
        return "";
      },
      "DURATION|off");
}

void AddPolicyFlags(CLI::App& cmd, ReplayFlags& flags) {
  ReplayRequest& r = flags.request;
  AddTraceFlags(cmd, r.trace);
  auto* policy =
      cmd.add_option("--policy", r.policy, "Placement policy: " + BuiltinPlacers().JoinedNames())
          ->capture_default_str();
  cmd.add_flag("--compare", r.every_policy, "Replay every policy, one row each")->excludes(policy);
  cmd.add_option("--heavy-share", r.heavy_share,
                 "grmu: share of all GPUs the heavy (full-GPU profile) basket may hold, 0..1")
      ->check(Within(InputRange{0.0, 1.0}))
      ->capture_default_str();
  cmd.add_option("--fair-factor", r.fair_factor,
                 "fair, steer: the full-GPU requests may hold this fraction of their share of "
                 "the GPU demand seen so far (steer: while no VM leaves)")
      ->check(Within(limits::kFairFactor))
      ->capture_default_str();
  cmd.add_option("--consolidate-every", r.consolidate_every_s,
                 "grmu, fair: interval of inter-GPU consolidation in trace time, e.g. 24h, " +
                     DescribeRange(kConsolidation) + "; off = never")
      ->transform(ConsolidationFlag())
      ->default_str("off");
  cmd.add_flag("--no-defragment{false}", r.defragment,
               "grmu, fair, lfr, steer: do not rearrange a GPU's instances to make room");
  cmd.add_option("--mecc-window", r.mecc_window_s,
                 "mecc: look-back window of arrivals estimating the profile mix, " +
                     DescribeRange(kMeccWindow))
      ->transform(DurationFlag(kMeccWindow))
      ->default_str("24h");
  cmd.add_flag("--optimum", r.optimum,
               "Also solve GRMU's ILP offline over the window (at most 40 VMs) and report each "
               "policy's distance to it");
  cmd.add_option("--optimum-time-limit", r.optimum_time_limit_s,
                 "Seconds per objective of --optimum (acceptance, hardware, migrations); an "
                 "objective cut short is reported as not proven")
      ->check(Within(InputRange{0.001, 3600.0}))
      ->capture_default_str();
}

}  // namespace

void AddReplayCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ReplayFlags>();
  CLI::App* cmd = app.add_subcommand(
      "replay", "Replay a VM/pod trace through online MIG placement policies (GRMU and rivals)");
  cmd->footer(kFooter);
  AddPolicyFlags(*cmd, *flags);
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
    flags->policy_given = cmd->count("--policy") > 0;
    flags->heavy_share_given = cmd->count("--heavy-share") > 0;
    exit_code = RunReplayCommand(*flags);
  });
}

}  // namespace tessera::cli
