// `tessera gpus`: the GPU catalog, its MIG profiles and maximal layouts.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli_flags.h"
#include "cli_output.h"
#include "commands.h"
#include "tessera/gpu/mig_layout.h"

namespace tessera::cli {
namespace {

struct GpusFlags {
  std::string gpu;
  bool layouts = false;
  bool all_profiles = false;
  std::string format = "table";
};

// The profiles --layouts enumerates: primary ones, or every non-media one.
std::vector<int> LayoutProfiles(const GpuModel& gpu, bool all_profiles) {
  return all_profiles ? gpu.NonMediaProfiles() : gpu.PrimaryProfiles();
}

nlohmann::ordered_json GpuJson(const GpuModel& gpu, const GpusFlags& flags) {
  nlohmann::ordered_json out = {{"name", gpu.name},
                                {"display_name", gpu.display_name},
                                {"compute_slices", gpu.compute_slices},
                                {"memory_slices", gpu.memory_slices},
                                {"memory_gib", gpu.memory_gib},
                                {"sms", gpu.sms},
                                {"mig", gpu.HasMig()},
                                {"mps_max_clients", gpu.mps_max_clients},
                                {"cloud_instance", gpu.cloud.instance},
                                {"price_per_hour", gpu.cloud.price_per_hour},
                                {"profiles", nlohmann::ordered_json::array()}};
  for (const MigProfile& p : gpu.profiles) {
    out["profiles"].push_back({{"name", p.name},
                               {"id", p.id},
                               {"compute_slices", p.compute_slices},
                               {"memory_slices", p.memory_slices},
                               {"memory_gib", p.memory_gib},
                               {"sms", p.sms},
                               {"max_instances", p.max_instances},
                               {"starts", p.starts},
                               {"media_extensions", p.media_extensions},
                               {"inferred", p.inferred}});
  }
  if (!flags.layouts || !gpu.HasMig()) return out;
  out["layouts"] = nlohmann::ordered_json::array();
  for (const Layout& layout :
       EnumerateMaximalLayouts(gpu, LayoutProfiles(gpu, flags.all_profiles))) {
    nlohmann::ordered_json placements = nlohmann::ordered_json::array();
    for (const Placement& p : layout) {
      placements.push_back({{"profile", gpu.profiles[p.profile].name}, {"start", p.start}});
    }
    out["layouts"].push_back(std::move(placements));
  }
  return out;
}

std::string Starts(const MigProfile& p) {
  return fmt::format("{{{}}}:{}", fmt::join(p.starts, ","), p.memory_slices);
}

std::string DescribeGpu(const GpuModel& gpu) {
  const std::string cloud =
      gpu.cloud.instance.empty()
          ? ""
          : fmt::format("; {} ${:.4g}/h", gpu.cloud.instance, gpu.cloud.price_per_hour);
  if (!gpu.HasMig()) {
    return fmt::format(
        "{} - {}: no MIG (shared whole through MPS, up to {} clients), {:g} GB, {} SMs{}\n",
        gpu.name, gpu.display_name, gpu.mps_max_clients, gpu.memory_gib, gpu.sms, cloud);
  }
  std::string out = fmt::format(
      "{} - {}: {} compute slices, {} memory slices, {:g} GB, {} SMs ({} under MIG), MPS up to "
      "{} clients{}\n",
      gpu.name, gpu.display_name, gpu.compute_slices, gpu.memory_slices, gpu.memory_gib, gpu.sms,
      gpu.MigSms(), gpu.mps_max_clients, cloud);
  out += fmt::format("  {:<12} {:>3} {:>3} {:>7} {:>8} {:>4} {:>4}  {}\n", "profile", "id", "g",
                     "mem.sl", "GiB", "SMs", "max", "placements (-lgipp)");
  for (const MigProfile& p : gpu.profiles) {
    out += fmt::format("  {:<12} {:>3} {:>3} {:>7} {:>8.2f} {:>4} {:>4}  {}{}\n", p.name, p.id,
                       p.compute_slices, p.memory_slices, p.memory_gib, p.sms, p.max_instances,
                       Starts(p), p.inferred ? "  (some figures inferred)" : "");
  }
  return out;
}

std::string DescribeLayouts(const GpuModel& gpu, bool all_profiles) {
  const std::vector<Layout> layouts =
      EnumerateMaximalLayouts(gpu, LayoutProfiles(gpu, all_profiles));
  std::string out = fmt::format("  {} maximal layouts, {} distinct profile mixes ({} profiles):\n",
                                layouts.size(), DistinctMixes(gpu, layouts).size(),
                                all_profiles ? "all non-media" : "primary");
  for (size_t i = 0; i < layouts.size(); ++i) {
    int g = 0;
    for (const Placement& p : layouts[i]) g += gpu.profiles[p.profile].compute_slices;
    out += fmt::format("  {:>3}. {:<60} g={}\n", i + 1, FormatLayout(gpu, layouts[i]), g);
  }
  return out;
}

int RunGpus(const GpusFlags& flags) {
  std::vector<const GpuModel*> gpus;
  if (!flags.gpu.empty()) {
    Result<const GpuModel*> gpu = FindGpu(flags.gpu);
    if (!gpu.ok()) return ReportError(gpu.status().WithContext("--gpu"));
    gpus.push_back(*gpu);
  } else {
    for (const GpuModel& gpu : AllGpus()) gpus.push_back(&gpu);
  }
  if (flags.format == "json") {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const GpuModel* gpu : gpus) out.push_back(GpuJson(*gpu, flags));
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  for (const GpuModel* gpu : gpus) {
    std::cout << DescribeGpu(*gpu);
    if (flags.layouts && gpu->HasMig()) std::cout << DescribeLayouts(*gpu, flags.all_profiles);
    std::cout << "\n";
  }
  return kExitOk;
}

}  // namespace

void AddGpusCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<GpusFlags>();
  CLI::App* cmd = app.add_subcommand(
      "gpus", "Print the GPU catalog: MIG profiles, placements, maximal layouts, prices");
  cmd->footer(
      "Print the GPU catalog, the one table of GPUs every planner reads: each GPU's\n"
      "SMs, memory, MPS client limit and one-GPU cloud instance with its price; for\n"
      "GPUs with MIG every MIG profile with its nvidia-smi ID, compute and memory\n"
      "slices, memory, SMs and allowed placements; with --layouts, every maximal MIG\n"
      "layout (an A100 has 19, in 14 distinct profile mixes). GPUs without MIG (V100,\n"
      "T4, A10G) are shared whole through MPS by the MPS planners.\n\n"
      "Examples:\n"
      "  tessera gpus\n"
      "  tessera gpus --gpu a100-80gb --layouts");
  cmd->add_option("--gpu", flags->gpu, "Only this GPU (" + GpuNames() + ")");
  cmd->add_flag("--layouts", flags->layouts, "List the maximal layouts of each GPU");
  cmd->add_option("--format", flags->format, "table (for people) or json (for programs)")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  cmd->add_flag("--all-profiles", flags->all_profiles,
                "Layouts over every non-media profile (adds the 1g with two memory slices)");
  cmd->callback([flags, &exit_code] { exit_code = RunGpus(*flags); });
}

}  // namespace tessera::cli
