#include "plan/mps_deployment.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "tessera/util/text_io.h"

namespace tessera {
namespace {

// Predictions are compared after a JSON round trip at 4 decimals.
constexpr double kPredictionTolerance = 1e-3;

// GPUs (fractional) a service too large for one GPU needs at least: its rate
// over the most one whole GPU sustains within its budget (0 when none can).
double WholeGpusNeeded(const Problem& problem, int service) {
  const MpsHardware& hw = problem.mps()->coefficients.hardware;
  const WorkloadCoefficients& w = problem.Workload(service);
  const std::optional<int> batch = LargestSoloBatch(hw, w, problem.BudgetMs(service));
  if (!batch) return 0;
  const double most = PredictAlone(hw, w, *batch, 100).throughput_rps;
  return std::max(1.0, problem.scenario().services[service].rate_rps / most);
}

// The model's predictions for `processes` sharing one GPU.
std::vector<Prediction> Predict(const Problem& problem, std::span<const MpsProcess> processes,
                                const std::vector<int>& service_of) {
  std::vector<Colocated> colocated;
  for (size_t k = 0; k < processes.size(); ++k) {
    colocated.push_back(
        {&problem.Workload(service_of[k]), processes[k].batch, processes[k].resource_pct});
  }
  return PredictColocated(problem.mps()->coefficients.hardware, colocated);
}

GpuAssignment DescribeGpu(const Problem& problem, const std::vector<MpsShare>& shares, int index) {
  GpuAssignment gpu;
  gpu.index = index;
  gpu.node = index / problem.gpus_per_node();
  MpsProcesses& processes = gpu.holds.emplace<MpsProcesses>();
  std::vector<int> service_of;
  for (const MpsShare& s : shares) {
    const Service& service = problem.scenario().services[s.service];
    processes.push_back(
        {service.name, service.model, s.batch, s.resource_pct, s.rate_rps, 0, 0, true});
    service_of.push_back(s.service);
  }
  const std::vector<Prediction> predicted = Predict(problem, processes, service_of);
  for (size_t k = 0; k < shares.size(); ++k) {
    MpsProcess& p = processes[k];
    p.throughput_rps = predicted[k].throughput_rps;
    p.latency_ms = predicted[k].latency_ms;
    p.meets_slo = p.latency_ms <= problem.BudgetMs(shares[k].service) &&
                  CoversRate(p.throughput_rps, p.rate_rps);
  }
  return gpu;
}

// What a service that no planner could place can achieve at best.
std::string InfeasibleReason(const Problem& problem, int service) {
  const double best =
      PredictAlone(problem.mps()->coefficients.hardware, problem.Workload(service), 1, 100)
          .latency_ms;
  return fmt::format(
      "not placed: alone on a whole GPU at batch 1 a request takes {:.3f} ms, the budget is "
      "{:.3f} ms ({} x SLO)",
      best, problem.BudgetMs(service), problem.rule().factor);
}

}  // namespace

int MpsLowerBound(const Problem& problem) {
  const MpsHardware& hw = problem.mps()->coefficients.hardware;
  double total = 0;
  for (size_t i = 0; i < problem.scenario().services.size(); ++i) {
    const int s = static_cast<int>(i);
    const ResourceLowerBound b = LowerBoundOf(hw, problem.Workload(s), problem.BudgetMs(s),
                                              problem.scenario().services[i].rate_rps);
    total += b.fits ? b.resource_pct : WholeGpusNeeded(problem, s) * 100;
  }
  return static_cast<int>(std::ceil(total / 100 - 1e-9));
}

void DescribeMpsPlan(const Problem& problem, const MpsGpus& gpus, Deployment& d) {
  const std::vector<Service>& services = problem.scenario().services;
  for (const std::vector<MpsShare>& shares : gpus) {
    if (shares.empty()) continue;
    d.gpus.push_back(DescribeGpu(problem, shares, static_cast<int>(d.gpus.size())));
  }
  std::vector<double> carried(services.size(), 0);
  std::map<std::string, int> index_of;
  for (size_t i = 0; i < services.size(); ++i) {
    const Service& s = services[i];
    index_of[s.name] = static_cast<int>(i);
    d.services.push_back(
        {s.name, s.model, s.rate_rps, s.slo_ms, 0, ServiceStatus::kOk, "", 0, false});
  }
  for (const GpuAssignment& gpu : d.gpus) {
    for (const MpsProcess& p : gpu.processes()) {
      const int i = index_of.at(p.service);
      ServiceOutcome& o = d.services[i];
      o.capacity_rps += p.throughput_rps;
      o.worst_latency_ms = std::max(o.worst_latency_ms, p.latency_ms);
      o.predicted_violation = o.predicted_violation || !p.meets_slo;
      carried[i] += p.rate_rps;
      d.metrics.resource_pct += p.resource_pct;
    }
  }
  for (size_t i = 0; i < d.services.size(); ++i) {
    ServiceOutcome& o = d.services[i];
    if (carried[i] == 0) {
      o.status = ServiceStatus::kInfeasible;
      o.reason = InfeasibleReason(problem, static_cast<int>(i));
    } else if (!CoversRate(carried[i], o.rate_rps)) {
      o.predicted_violation = true;
    }
    d.metrics.predicted_violations += o.predicted_violation ? 1 : 0;
  }
}

namespace {

void Add(std::vector<Violation>& out, std::string rule, std::string where, std::string message) {
  out.push_back({std::move(rule), std::move(where), std::move(message)});
}

void CheckProcess(const GpuAssignment& gpu, const MpsProcess& p, std::vector<Violation>& out) {
  const std::string where = fmt::format("gpu {} {}", gpu.index, p.service);
  if (!(p.resource_pct > 0 && p.resource_pct <= 100)) {
    Add(out, "geometry", where, fmt::format("resource {}% is not in (0, 100]", p.resource_pct));
  }
  if (p.batch < 1) Add(out, "consistency", where, fmt::format("batch {} < 1", p.batch));
  if (!(p.rate_rps > 0)) {
    Add(out, "consistency", where, fmt::format("rate {} is not > 0", p.rate_rps));
  }
}

// Re-derives every prediction from the model, so a plan that was edited or
// came from another model is caught.
void CheckPredictions(const Problem& problem, const GpuAssignment& gpu,
                      const std::vector<int>& service_of, std::vector<Violation>& out) {
  const std::vector<Prediction> expected = Predict(problem, gpu.processes(), service_of);
  for (size_t k = 0; k < expected.size(); ++k) {
    const MpsProcess& got = gpu.processes()[k];
    const bool same =
        std::fabs(got.latency_ms - expected[k].latency_ms) <= kPredictionTolerance &&
        std::fabs(got.throughput_rps - expected[k].throughput_rps) <= kPredictionTolerance;
    if (!same) {
      Add(out, "latency", fmt::format("gpu {} {}", gpu.index, got.service),
          fmt::format("predicted {:.4f} ms / {:.4f} rps, the model says {:.4f} ms / {:.4f} rps",
                      got.latency_ms, got.throughput_rps, expected[k].latency_ms,
                      expected[k].throughput_rps));
    }
  }
}

}  // namespace

void CheckMpsDeployment(const Deployment& d, const Problem& problem, std::vector<Violation>& out) {
  const std::vector<Service>& services = problem.scenario().services;
  std::map<std::string, int> index_of;
  for (size_t i = 0; i < services.size(); ++i) index_of[services[i].name] = static_cast<int>(i);
  std::vector<double> carried(services.size(), 0);
  for (const GpuAssignment& gpu : d.gpus) {
    if (!gpu.shared_whole()) {
      Add(out, "consistency", fmt::format("gpu {}", gpu.index),
          "an MPS plan shares GPUs whole: MIG instances are not part of it");
    }
    double used = 0;
    std::vector<int> service_of;
    for (const MpsProcess& p : gpu.processes()) {
      auto it = index_of.find(p.service);
      if (it == index_of.end()) {
        Add(out, "consistency", fmt::format("gpu {}", gpu.index),
            fmt::format("process of {} names no service of the scenario",
                        QuoteForMessage(p.service)));
        continue;
      }
      if (p.model != services[it->second].model) {
        Add(out, "consistency", fmt::format("gpu {} {}", gpu.index, p.service),
            fmt::format("runs model {} but the service is model {}", p.model,
                        services[it->second].model));
        continue;
      }
      CheckProcess(gpu, p, out);
      used += p.resource_pct;
      carried[it->second] += p.rate_rps;
      service_of.push_back(it->second);
    }
    if (used > 100 + 1e-9) {
      Add(out, "geometry", fmt::format("gpu {}", gpu.index),
          fmt::format("resources sum to {}% > 100%", used));
    }
    if (service_of.size() == gpu.processes().size()) {
      CheckPredictions(problem, gpu, service_of, out);
    }
  }
  for (size_t i = 0; i < services.size(); ++i) {
    const bool infeasible =
        i < d.services.size() && d.services[i].status == ServiceStatus::kInfeasible;
    if (infeasible) {
      if (carried[i] > 0) {
        Add(out, "consistency", "service " + services[i].name, "reported infeasible but placed");
      }
      continue;
    }
    if (!CoversRate(carried[i], services[i].rate_rps)) {
      Add(out, "capacity", "service " + services[i].name,
          fmt::format("processes carry {} of {} rps", carried[i], services[i].rate_rps));
    }
  }
}

}  // namespace tessera
