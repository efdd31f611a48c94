#include "tessera/planners/shadow_guard.h"

#include <algorithm>
#include <unordered_map>

#include "tessera/plan/metrics.h"
#include "tessera/plan/plan.h"

namespace tessera {

double ShadowExtraPct(double free_pct) { return std::clamp(free_pct, 0.0, kShadowMaxExtraPct); }

Result<ShadowGuardResult> ApplyShadowGuard(const Deployment& plan, const Problem& problem) {
  if (!problem.mps() || plan.sharing != Sharing::kMps) {
    return Status::InvalidArgument(
        "the shadow guard applies to plans of GPUs shared whole through MPS");
  }
  std::unordered_map<std::string, int> service_index;
  const std::vector<Service>& services = problem.scenario().services;
  for (size_t i = 0; i < services.size(); ++i) {
    service_index.emplace(services[i].name, static_cast<int>(i));
  }
  ShadowGuardResult out;
  PlanResult guarded;
  MpsGpus& guarded_gpus = guarded.gpus.emplace<MpsGpus>();
  for (const GpuAssignment& gpu : plan.gpus) {
    double used = 0;
    for (const MpsProcess& p : gpu.processes()) used += p.resource_pct;
    const double standby = ShadowExtraPct(100 - used);
    double free = 100 - used;
    std::vector<MpsShare>& shares = guarded_gpus.emplace_back();
    for (size_t i = 0; i < gpu.processes().size(); ++i) {
      const MpsProcess& p = gpu.processes()[i];
      auto it = service_index.find(p.service);
      if (it == service_index.end()) {
        return Status::InvalidArgument("GPU " + std::to_string(gpu.index) + ": a process serves '" +
                                       p.service + "', which the scenario does not have");
      }
      ShadowProcess s;
      s.gpu = gpu.index;
      s.process = static_cast<int>(i);
      s.service = p.service;
      s.resource_pct = p.resource_pct;
      s.standby_extra_pct = standby;
      s.planned_latency_ms = p.latency_ms;
      s.activated = !p.meets_slo;
      if (s.activated) {
        s.extra_pct = ShadowExtraPct(free);
        free -= s.extra_pct;
        ++out.activated;
      }
      shares.push_back({it->second, p.batch, p.resource_pct + s.extra_pct, p.rate_rps});
      out.processes.push_back(std::move(s));
    }
  }
  out.deployment = BuildDeployment(problem, guarded, plan.planner,
                                   {plan.metrics.lower_bound, plan.metrics.lower_bound_kind},
                                   plan.metrics.plan_ms);
  // BuildDeployment keeps GPUs (it drops only empty ones) and their
  // processes in order.
  size_t k = 0;
  for (const GpuAssignment& gpu : out.deployment.gpus) {
    for (const MpsProcess& p : gpu.processes()) {
      if (k == out.processes.size()) {
        return Status::Internal("the guarded plan has more processes than the plan");
      }
      ShadowProcess& s = out.processes[k++];
      s.latency_ms = p.latency_ms;
      s.meets_slo = p.meets_slo;
      out.still_missing += !p.meets_slo;
    }
  }
  return out;
}

}  // namespace tessera
