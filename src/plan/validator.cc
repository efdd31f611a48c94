#include "tessera/validator.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "plan/mps_deployment.h"
#include "tessera/gpu/mig_layout.h"
#include "tessera/gpu_catalog.h"
#include "tessera/plan/metrics.h"

namespace tessera {
namespace {

// Deployments read back from JSON carry numbers rounded to 4 decimals.
bool SameMeasurement(double claimed, double table) {
  return std::fabs(claimed - table) <= 1e-4 + 1e-9 * std::fabs(table);
}

class Checker {
 public:
  Checker(const Deployment& d, const Scenario& scenario, const ProfileTable& profiles,
          const LatencyRule& rule)
      : d_(d), profiles_(profiles), rule_(rule) {
    for (const Service& s : scenario.services) services_.emplace(s.name, &s);
  }

  std::vector<Violation> Run() {
    Result<const GpuModel*> gpu = FindGpu(d_.gpu);
    if (!gpu.ok()) {
      Add("consistency", "deployment", gpu.status().message());
      return std::move(violations_);
    }
    gpu_ = *gpu;
    for (const GpuAssignment& g : d_.gpus) CheckGpu(g);
    CheckServices();
    CheckCounts();
    return std::move(violations_);
  }

 private:
  void Add(std::string rule, std::string where, std::string message) {
    violations_.push_back({std::move(rule), std::move(where), std::move(message)});
  }

  void CheckGpu(const GpuAssignment& g) {
    Result<const GpuModel*> found = FindGpu(GpuModelName(d_, g));
    if (!found.ok()) {
      Add("consistency", fmt::format("gpu {}", g.index), found.status().message());
      return;
    }
    const GpuModel& gpu = **found;
    std::vector<Placement> placements;
    for (const Instance& inst : g.instances()) {
      const std::string where = fmt::format("gpu {} {}@{}", g.index, inst.profile, inst.start);
      const int profile = gpu.ProfileIndex(inst.profile);
      if (profile < 0) {
        Add("geometry", where, fmt::format("{} has no profile {}", gpu.name, inst.profile));
        continue;
      }
      placements.push_back({profile, inst.start});
      CheckInstance(inst, gpu, where);
    }
    Status layout = CheckLayout(gpu, placements);
    if (!layout.ok()) Add("geometry", fmt::format("gpu {}", g.index), layout.message());
  }

  void CheckInstance(const Instance& inst, const GpuModel& gpu, const std::string& where) {
    auto it = services_.find(inst.service);
    if (it == services_.end()) {
      Add("consistency", where, "serves unknown service '" + inst.service + "'");
      return;
    }
    const Service& s = *it->second;
    if (inst.model != s.model) {
      Add("consistency", where,
          fmt::format("runs model {} but service {} is model {}", inst.model, s.name, s.model));
      return;
    }
    const ProfileEntry* e =
        profiles_.Find({inst.model, gpu.name, inst.profile, inst.batch, inst.procs});
    if (!e) {
      Add("latency", where,
          fmt::format("no profile for {} batch {} procs {}", inst.model, inst.batch, inst.procs));
      return;
    }
    // What the segment counts for under the rule (LatencyRule::CountedRps),
    // from the profile, not from what the plan claims.
    capacity_[s.name] += rule_.CountedRps(inst.batch, inst.procs, e->throughput_rps, e->latency_ms,
                                          s.slo_ms, s.rate_rps);
    if (!SameMeasurement(inst.throughput_rps, e->throughput_rps) ||
        !SameMeasurement(inst.latency_ms, e->latency_ms)) {
      Add("latency", where,
          fmt::format("claims {:.4f} req/s at {:.4f} ms; the profile says {:.4f} at {:.4f}",
                      inst.throughput_rps, inst.latency_ms, e->throughput_rps, e->latency_ms));
    }
    if (!rule_.Allows(e->latency_ms, inst.procs, s.slo_ms)) {
      Add("latency", where,
          fmt::format("latency {:.4g} ms with {} procs breaks the rule for SLO {:.4g} ms "
                      "(budget {:.4g} ms{})",
                      e->latency_ms, inst.procs, s.slo_ms, rule_.BudgetMs(s.slo_ms),
                      rule_.max_procs > 0 ? fmt::format(", at most {} procs", rule_.max_procs)
                                          : std::string()));
    }
    ++instances_[s.name];
  }

  void CheckServices() {
    std::map<std::string, int> seen;
    for (const ServiceOutcome& out : d_.services) {
      const std::string where = "service " + out.name;
      if (++seen[out.name] > 1) Add("consistency", where, "listed twice");
      auto it = services_.find(out.name);
      if (it == services_.end()) {
        Add("consistency", where, "is not in the scenario");
        continue;
      }
      CheckOutcome(out, *it->second, where);
    }
    for (const auto& [name, service] : services_) {
      if (!seen.count(name)) Add("consistency", "service " + name, "missing from the deployment");
    }
  }

  void CheckOutcome(const ServiceOutcome& out, const Service& s, const std::string& where) {
    const double capacity = capacity_[s.name];
    if (out.status == ServiceStatus::kInfeasible) {
      if (instances_[s.name] > 0) Add("consistency", where, "is infeasible but has instances");
      if (out.reason.empty()) Add("consistency", where, "is infeasible without a reason");
      return;
    }
    if (!CoversRate(capacity, s.rate_rps)) {
      Add("capacity", where,
          fmt::format("capacity {:.4f} req/s < rate {:.4f} req/s", capacity, s.rate_rps));
    }
    if (!SameMeasurement(out.capacity_rps, capacity)) {
      Add("consistency", where,
          fmt::format("claims capacity {:.4f} req/s; its instances give {:.4f}", out.capacity_rps,
                      capacity));
    }
  }

  void CheckCounts() {
    int gpus = 0, gpcs = 0;
    for (const GpuAssignment& g : d_.gpus) {
      if (!g.instances().empty()) ++gpus;
      gpcs += UsedSlices(g, ModelOf(d_, g, *gpu_)).compute;
    }
    if (gpus != d_.metrics.gpus || gpcs != d_.metrics.gpcs) {
      Add("consistency", "metrics",
          fmt::format("claims {} gpus / {} gpcs; the instances give {} / {}", d_.metrics.gpus,
                      d_.metrics.gpcs, gpus, gpcs));
    }
  }

  const Deployment& d_;
  const ProfileTable& profiles_;
  const LatencyRule& rule_;
  const GpuModel* gpu_ = nullptr;
  std::map<std::string, const Service*> services_;
  std::map<std::string, double> capacity_;
  std::map<std::string, int> instances_;
  std::vector<Violation> violations_;
};

// A plan records the rate and SLO it was made for; one that contradicts the
// scenario it is checked against was made for another load, and its capacity
// and latency checks would judge the wrong numbers.
void CheckRecordedInputs(const Deployment& d, const Scenario& scenario,
                         std::vector<Violation>& out) {
  std::map<std::string, const Service*> by_name;
  for (const Service& s : scenario.services) by_name.emplace(s.name, &s);
  for (const ServiceOutcome& o : d.services) {
    auto it = by_name.find(o.name);
    if (it == by_name.end()) continue;  // reported by the checks of its kind
    const Service& s = *it->second;
    if (o.rate_rps != s.rate_rps) {
      out.push_back({"consistency", "service " + o.name,
                     fmt::format("the plan records rate_rps {:g}, the scenario {} gives {:g}",
                                 o.rate_rps, ServiceLocation(scenario, s.line), s.rate_rps)});
    }
    if (o.slo_ms != s.slo_ms) {
      out.push_back({"consistency", "service " + o.name,
                     fmt::format("the plan records slo_ms {:g}, the scenario {} gives {:g}",
                                 o.slo_ms, ServiceLocation(scenario, s.line), s.slo_ms)});
    }
  }
}

}  // namespace

std::vector<Violation> ValidateDeployment(const Deployment& deployment, const Problem& problem) {
  if (!problem.mps()) {
    std::vector<Violation> violations =
        Checker(deployment, problem.scenario(), problem.profiles(), deployment.rule).Run();
    CheckRecordedInputs(deployment, problem.scenario(), violations);
    return violations;
  }
  std::vector<Violation> violations;
  CheckRecordedInputs(deployment, problem.scenario(), violations);
  if (deployment.sharing != Sharing::kMps) {
    violations.push_back({"consistency", "deployment",
                          fmt::format("a {} plan checked against MPS inputs (--coeffs)",
                                      SharingName(deployment.sharing))});
  }
  CheckMpsDeployment(deployment, problem, violations);
  return violations;
}

std::string FormatViolations(const std::vector<Violation>& violations) {
  std::string out;
  for (const Violation& v : violations) out += v.rule + " at " + v.where + ": " + v.message + "\n";
  return out;
}

}  // namespace tessera
