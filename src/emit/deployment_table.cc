// The fixed-width text table of a Deployment: for people at a terminal (at
// most 100 columns, no colour codes) and easy for scripts to cut apart.

#include <algorithm>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "fmt/format.h"
#include "tessera/deployment_format.h"
#include "tessera/plan/metrics.h"

namespace tessera {
namespace {

constexpr size_t kLineWidth = 100;

using Out = std::back_insert_iterator<std::string>;

// Cuts `s` to `width` characters, marking the cut with "..." so columns stay
// aligned and a reader still sees that the name goes on.
std::string Fit(std::string_view s, size_t width) {
  if (s.size() <= width) return std::string(s);
  if (width <= 3) return std::string(s.substr(0, width));
  return std::string(s.substr(0, width - 3)) + "...";
}

// Writes `text` word-wrapped to kLineWidth: the first line starts with
// `lead`, the next ones with as many spaces, so the text reads as one block.
void AppendWrapped(std::string_view lead, std::string_view text, std::string& out) {
  const std::string indent(lead.size(), ' ');
  std::string line(lead);
  bool empty = true;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = std::min(text.find(' ', pos), text.size());
    std::string_view word = text.substr(pos, end - pos);
    pos = end + 1;
    if (word.empty()) continue;
    if (!empty && line.size() + 1 + word.size() > kLineWidth) {
      out += line + "\n";
      line = indent;
      empty = true;
    }
    if (!empty) line += ' ';
    line += word;
    empty = false;
  }
  out += line + "\n";
}

int CountInstances(const Deployment& d) {
  int n = 0;
  for (const GpuAssignment& g : d.gpus) n += static_cast<int>(g.instances().size());
  return n;
}

int CountInfeasible(const Deployment& d) {
  return static_cast<int>(std::count_if(d.services.begin(), d.services.end(), [](const auto& s) {
    return s.status == ServiceStatus::kInfeasible;
  }));
}

// The GPU models a deployment uses, in order of first use ("a100-80gb");
// Deployment::gpu when it uses none.
std::vector<std::string> ModelsUsed(const Deployment& d) {
  if (d.gpus.empty()) return {d.gpu};
  std::vector<std::string> models;
  for (const GpuAssignment& g : d.gpus) {
    const std::string& name = GpuModelName(d, g);
    if (std::find(models.begin(), models.end(), name) == models.end()) models.push_back(name);
  }
  return models;
}

void AppendHeader(const Deployment& d, std::string& out) {
  if (d.sharing == Sharing::kMps) {
    size_t processes = 0;
    for (const GpuAssignment& g : d.gpus) processes += g.processes().size();
    fmt::format_to(Out(out),
                   "Deployment: {} on {} | {} GPUs shared whole through MPS, {} processes, {} "
                   "services ({} infeasible)\n",
                   d.planner, fmt::join(ModelsUsed(d), " + "), d.metrics.gpus, processes,
                   d.services.size(), CountInfeasible(d));
    return;
  }
  fmt::format_to(Out(out),
                 "Deployment: {} on {} | {} GPUs, {} GPCs, {} instances, {} services "
                 "({} infeasible)\n",
                 d.planner, fmt::join(ModelsUsed(d), " + "), d.metrics.gpus, d.metrics.gpcs,
                 CountInstances(d), d.services.size(), CountInfeasible(d));
}

// "GPU 3 (node 0)", plus slice usage when the GPU model is in the catalog,
// or the SMs its MPS processes share.
void AppendGpuTitle(const GpuAssignment& g, const GpuModel* model, bool mixed, std::string& out) {
  fmt::format_to(Out(out), "\nGPU {} (node {}{})", g.index, g.node,
                 mixed && model != nullptr ? ", " + model->name : "");
  if (g.shared_whole()) {
    double shares = 0;
    for (const MpsProcess& p : g.processes()) shares += p.resource_pct;
    fmt::format_to(Out(out), ": {:g}% of its SMs shared by {} MPS processes", shares,
                   g.processes().size());
  } else if (model != nullptr) {
    const SliceUsage used = UsedSlices(g, *model);
    fmt::format_to(Out(out), ": {}/{} compute slices, {}/{} memory slices", used.compute,
                   model->compute_slices, used.memory, model->memory_slices);
  }
  out += '\n';
}

void AppendGpuBlock(const GpuAssignment& g, const GpuModel* model, bool mixed, std::string& out) {
  AppendGpuTitle(g, model, mixed, out);
  if (g.shared_whole()) {
    fmt::format_to(Out(out), "  {:<24}  {:>5}  {:>8}  {:>10}  {:>14}  {:>10}  {}\n", "service",
                   "batch", "SMs %", "rate rps", "throughput rps", "latency ms", "predicted");
    for (const MpsProcess& p : g.processes()) {
      fmt::format_to(Out(out), "  {:<24}  {:>5}  {:>8.1f}  {:>10.1f}  {:>14.1f}  {:>10.3f}  {}\n",
                     Fit(p.service, 24), p.batch, p.resource_pct, p.rate_rps, p.throughput_rps,
                     p.latency_ms, p.meets_slo ? "ok" : "MISS");
    }
    return;
  }
  if (g.instances().empty()) {
    out += "  (no instances)\n";
    return;
  }
  fmt::format_to(Out(out), "  {:<14}  {:<24}  {:>13}  {:>14}  {:>10}\n", "instance", "service",
                 "batch x procs", "throughput rps", "latency ms");
  for (const Instance& i : g.instances()) {
    fmt::format_to(Out(out), "  {:<14}  {:<24}  {:>13}  {:>14.1f}  {:>10.2f}\n",
                   Fit(fmt::format("{}@{}", i.profile, i.start), 14), Fit(i.service, 24),
                   fmt::format("{} x {}", i.batch, i.procs), i.throughput_rps, i.latency_ms);
  }
}

// Utilisation = rate / capacity, "-" when there is no capacity to divide by.
std::string Utilisation(const ServiceOutcome& s) {
  if (s.capacity_rps <= 0) return "-";
  return fmt::format("{:.1f}", 100.0 * s.rate_rps / s.capacity_rps);
}

void AppendServices(const Deployment& d, std::string& out) {
  out += "\nServices\n";
  fmt::format_to(Out(out), "  {:<22}  {:<14}  {:>10}  {:>12}  {:>6}  {:>8}  {}\n", "name", "model",
                 "rate rps", "capacity rps", "util %", "SLO ms", "status");
  for (const ServiceOutcome& s : d.services) {
    bool ok = s.status == ServiceStatus::kOk;
    const char* status = !ok                     ? "INFEASIBLE"
                         : s.predicted_violation ? "ok (predicted to miss its SLO)"
                                                 : "ok";
    fmt::format_to(Out(out), "  {:<22}  {:<14}  {:>10.1f}  {:>12.1f}  {:>6}  {:>8.1f}  {}\n",
                   Fit(s.name, 22), Fit(s.model, 14), s.rate_rps, s.capacity_rps, Utilisation(s),
                   s.slo_ms, status);
    if (!ok && !s.reason.empty()) AppendWrapped("    reason: ", s.reason, out);
  }
}

// The cost table of a priced pool: every model offered, its price, cap and use.
void AppendCosts(const Deployment& d, std::string& out) {
  if (d.pool.empty()) return;
  out += "\nCost\n";
  fmt::format_to(Out(out), "  {:<14}  {:>10}  {:>9}  {:>5}  {:>10}\n", "gpu", "price/h", "max",
                 "used", "cost/h");
  double total = 0;
  for (const PoolUse& use : d.pool) {
    const double cost = use.used * use.price_per_hour;
    total += cost;
    fmt::format_to(Out(out), "  {:<14}  {:>10.2f}  {:>9}  {:>5}  {:>10.2f}\n", Fit(use.gpu, 14),
                   use.price_per_hour, use.max_count > 0 ? std::to_string(use.max_count) : "-",
                   use.used, cost);
  }
  fmt::format_to(Out(out), "  {:<14}  {:>10}  {:>9}  {:>5}  {:>10.2f}\n", "total", "", "", "",
                 total);
}

void AppendMetrics(const Deployment& d, std::string& out) {
  const Metrics& m = d.metrics;
  out += "\nMetrics\n";
  auto row = [&out](std::string_view name, const std::string& value) {
    fmt::format_to(Out(out), "  {:<26} {}\n", name, value);
  };
  row("gpus", fmt::format("{}", m.gpus));
  if (d.sharing == Sharing::kMps) {
    row("SMs allocated %", fmt::format("{:.1f} (of one GPU)", m.resource_pct));
    row("predicted SLO violations", fmt::format("{}", m.predicted_violations));
  } else {
    row("gpcs", fmt::format("{}", m.gpcs));
    row("internal slack %", fmt::format("{:.2f}", 100.0 * m.internal_slack));
    row("external fragmentation %", fmt::format("{:.2f}", 100.0 * m.external_fragmentation));
  }
  row("lower bound", m.lower_bound_kind.empty()
                         ? fmt::format("{}", m.lower_bound)
                         : fmt::format("{} ({})", m.lower_bound, m.lower_bound_kind));
  row("gap %", fmt::format("{:.2f}", 100.0 * m.gap));
  if (m.proven_optimal) row("proven optimal", *m.proven_optimal ? "yes" : "no (time limit)");
  if (m.cost_per_hour > 0) {
    row("cost per hour", fmt::format("{:.2f}", m.cost_per_hour));
    row("cost lower bound",
        m.cost_lower_bound > 0 ? fmt::format("{:.2f}", m.cost_lower_bound) : std::string("-"));
  }
  row("plan ms", fmt::format("{:.3f}", m.plan_ms));
}

}  // namespace

std::string FormatDeploymentTable(const Deployment& deployment) {
  std::string out;
  AppendHeader(deployment, out);
  const bool mixed = ModelsUsed(deployment).size() > 1;
  for (const GpuAssignment& g : deployment.gpus) {
    Result<const GpuModel*> model = FindGpu(GpuModelName(deployment, g));
    AppendGpuBlock(g, model.ok() ? *model : nullptr, mixed, out);
  }
  AppendServices(deployment, out);
  AppendCosts(deployment, out);
  AppendMetrics(deployment, out);
  out += "  rule                       " + DescribeRule(deployment.rule) + "\n";
  return out;
}

}  // namespace tessera
