#include "tessera/mps_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "tessera/problem.h"
#include "tessera/text_io.h"
#include "util/json_numbers.h"

namespace tessera {
namespace {

// Predictions are compared after a JSON round trip at 4 decimals.
constexpr double kPredictionTolerance = 1e-3;

}  // namespace

std::span<const MpsGpu> AllMpsGpus() {
  // On-demand prices of the one-GPU instance, USD per hour, AWS us-east-1;
  // for 8-GPU instances, an eighth. p3.2xlarge and g4dn.xlarge are the
  // prices of the iGniter paper (section 5.3: $18.36/h for 6 p3.2xlarge,
  // $7.89/h for 15 g4dn.xlarge).
  static const std::vector<MpsGpu> kGpus = {
      {"v100-16gb", "NVIDIA V100 16GB (SXM2)", 80, "p3.2xlarge", 3.06},
      {"t4-16gb", "NVIDIA T4 16GB", 40, "g4dn.xlarge", 0.526},
      {"a10g-24gb", "NVIDIA A10G 24GB", 80, "g5.xlarge", 1.006},
      {"a100-40gb", "NVIDIA A100 40GB, run whole", 108, "p4d.24xlarge / 8", 4.0966},
      {"a100-80gb", "NVIDIA A100 80GB, run whole", 108, "p4de.24xlarge / 8", 5.1208},
      {"h100-80gb", "NVIDIA H100 80GB, run whole", 132, "p5.48xlarge / 8", 12.2900},
  };
  return kGpus;
}

std::string MpsGpuNames() {
  std::vector<std::string> names;
  for (const MpsGpu& gpu : AllMpsGpus()) names.push_back(gpu.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

Result<const MpsGpu*> FindMpsGpu(std::string_view name) {
  const std::string key = AsciiLower(name);
  for (const MpsGpu& gpu : AllMpsGpus()) {
    if (gpu.name == key) return &gpu;
  }
  return Status::NotFound(fmt::format("unknown MPS GPU '{}' (known: {})", name, MpsGpuNames()));
}

Result<MpsProblem> BuildMpsProblem(Scenario scenario, MpsCoefficients coefficients,
                                   const MpsGpu& gpu, double price_per_hour,
                                   double latency_factor) {
  TESSERA_RETURN_IF_ERROR(ValidateScenario(scenario));
  if (!(price_per_hour >= 0) || !std::isfinite(price_per_hour)) {
    return Status::InvalidArgument(
        fmt::format("price per hour must be >= 0, got {}", price_per_hour));
  }
  if (!(latency_factor > 0 && latency_factor <= 1)) {
    return Status::InvalidArgument(
        fmt::format("latency factor must be in (0, 1], got {}", latency_factor));
  }
  MpsProblem p;
  for (const Service& s : scenario.services) {
    const WorkloadCoefficients* w = coefficients.Find(s.model);
    if (w == nullptr) {
      std::vector<std::string> have;
      for (const WorkloadCoefficients& c : coefficients.workloads) have.push_back(c.model);
      return Status::NotFound(
          fmt::format("{}: field 'model': no iGniter coefficients for '{}' (have: {})",
                      ServiceLocation(scenario, s.line), s.model, fmt::join(have, ", ")));
    }
    p.workload_of.push_back(static_cast<int>(w - coefficients.workloads.data()));
  }
  p.scenario = std::move(scenario);
  p.coefficients = std::move(coefficients);
  p.gpu = gpu.name;
  p.price_per_hour = price_per_hour;
  p.latency_factor = latency_factor;
  return p;
}

namespace {

// GPUs (fractional) a service too large for one GPU needs at least: its rate
// over the most one whole GPU sustains within its budget (0 when none can).
double WholeGpusNeeded(const MpsProblem& problem, int service) {
  const MpsHardware& hw = problem.coefficients.hardware;
  const WorkloadCoefficients& w = problem.Workload(service);
  const std::optional<int> batch = LargestSoloBatch(hw, w, problem.BudgetMs(service));
  if (!batch) return 0;
  const double most = PredictAlone(hw, w, *batch, 100).throughput_rps;
  return std::max(1.0, problem.scenario.services[service].rate_rps / most);
}

}  // namespace

int MpsLowerBound(const MpsProblem& problem) {
  const MpsHardware& hw = problem.coefficients.hardware;
  double total = 0;
  for (size_t i = 0; i < problem.scenario.services.size(); ++i) {
    const int s = static_cast<int>(i);
    const ResourceLowerBound b = LowerBoundOf(hw, problem.Workload(s), problem.BudgetMs(s),
                                              problem.scenario.services[i].rate_rps);
    total += b.fits ? b.resource_pct : WholeGpusNeeded(problem, s) * 100;
  }
  return static_cast<int>(std::ceil(total / 100 - 1e-9));
}

namespace {

MpsGpuPlan DescribeGpu(const MpsProblem& problem, const std::vector<MpsShare>& shares, int index) {
  std::vector<Colocated> colocated;
  for (const MpsShare& s : shares) {
    colocated.push_back({&problem.Workload(s.service), s.batch, s.resource_pct});
  }
  const std::vector<Prediction> predicted =
      PredictColocated(problem.coefficients.hardware, colocated);
  MpsGpuPlan gpu;
  gpu.index = index;
  for (size_t k = 0; k < shares.size(); ++k) {
    const MpsShare& s = shares[k];
    const Service& service = problem.scenario.services[s.service];
    MpsProcess p{s, service.name, service.model, predicted[k], true};
    p.meets_slo = predicted[k].latency_ms <= problem.BudgetMs(s.service) &&
                  CoversRate(predicted[k].throughput_rps, s.rate_rps);
    gpu.resource_pct += s.resource_pct;
    gpu.processes.push_back(std::move(p));
  }
  return gpu;
}

// What a service that no planner could place can achieve at best.
std::string InfeasibleReason(const MpsProblem& problem, int service) {
  const double best =
      PredictAlone(problem.coefficients.hardware, problem.Workload(service), 1, 100).latency_ms;
  return fmt::format(
      "not placed: alone on a whole GPU at batch 1 a request takes {:.3f} ms, the budget is "
      "{:.3f} ms ({} x SLO)",
      best, problem.BudgetMs(service), problem.latency_factor);
}

void DescribeServices(const MpsProblem& problem, MpsDeployment& d) {
  for (const Service& s : problem.scenario.services) {
    d.services.push_back(
        {s.name, s.model, s.rate_rps, s.slo_ms, 0, 0, ServiceStatus::kOk, false, ""});
  }
  std::vector<double> carried(d.services.size(), 0);
  for (const MpsGpuPlan& gpu : d.gpus) {
    for (const MpsProcess& p : gpu.processes) {
      MpsServiceOutcome& o = d.services[p.share.service];
      o.capacity_rps += p.predicted.throughput_rps;
      o.worst_latency_ms = std::max(o.worst_latency_ms, p.predicted.latency_ms);
      o.predicted_violation = o.predicted_violation || !p.meets_slo;
      carried[p.share.service] += p.share.rate_rps;
    }
  }
  for (size_t i = 0; i < d.services.size(); ++i) {
    MpsServiceOutcome& o = d.services[i];
    if (carried[i] == 0) {
      o.status = ServiceStatus::kInfeasible;
      o.reason = InfeasibleReason(problem, static_cast<int>(i));
    } else if (!CoversRate(carried[i], o.rate_rps)) {
      o.predicted_violation = true;
    }
    d.metrics.predicted_violations += o.predicted_violation ? 1 : 0;
  }
}

}  // namespace

MpsDeployment DescribeMpsPlan(const MpsProblem& problem, const MpsPlanResult& result,
                              std::string_view planner_name, double plan_ms) {
  MpsDeployment d;
  d.gpu = problem.gpu;
  if (Result<const MpsGpu*> gpu = FindMpsGpu(problem.gpu); gpu.ok()) {
    d.instance = (*gpu)->instance;
  }
  d.price_per_hour = problem.price_per_hour;
  d.planner = std::string(planner_name);
  for (const std::vector<MpsShare>& shares : result.gpus) {
    if (shares.empty()) continue;
    d.gpus.push_back(DescribeGpu(problem, shares, static_cast<int>(d.gpus.size())));
    d.metrics.resource_pct += d.gpus.back().resource_pct;
  }
  d.metrics.gpus = static_cast<int>(d.gpus.size());
  d.metrics.cost_per_hour = d.metrics.gpus * problem.price_per_hour;
  d.metrics.lower_bound = MpsLowerBound(problem);
  d.metrics.plan_ms = plan_ms;
  DescribeServices(problem, d);
  return d;
}

Result<MpsDeployment> RunMpsPlanner(const MpsPlanner& planner, const MpsProblem& problem,
                                    const PlanContext& context, const Clock& clock) {
  const double start = clock.NowMs();
  TESSERA_ASSIGN_OR_RETURN(MpsPlanResult result, planner.Plan(problem, context));
  const double plan_ms = clock.NowMs() - start;
  return DescribeMpsPlan(problem, result, planner.Name(), plan_ms);
}

namespace {

void CheckProcess(const MpsGpuPlan& gpu, const MpsProcess& p, std::vector<std::string>& issues) {
  const std::string where = fmt::format("gpu {}: {}", gpu.index, p.service);
  const MpsShare& s = p.share;
  if (!(s.resource_pct > 0 && s.resource_pct <= 100)) {
    issues.push_back(fmt::format("{}: resource {}% is not in (0, 100]", where, s.resource_pct));
  }
  if (s.batch < 1) issues.push_back(fmt::format("{}: batch {} < 1", where, s.batch));
  if (!(s.rate_rps > 0)) issues.push_back(fmt::format("{}: rate {} is not > 0", where, s.rate_rps));
}

// Re-derives every prediction from the model, so a report that was edited
// or came from another model is caught.
void CheckPredictions(const MpsProblem& problem, const MpsGpuPlan& gpu,
                      std::vector<std::string>& issues) {
  std::vector<Colocated> colocated;
  for (const MpsProcess& p : gpu.processes) {
    colocated.push_back({&problem.Workload(p.share.service), p.share.batch, p.share.resource_pct});
  }
  const std::vector<Prediction> expected =
      PredictColocated(problem.coefficients.hardware, colocated);
  for (size_t k = 0; k < expected.size(); ++k) {
    const Prediction& got = gpu.processes[k].predicted;
    const bool same =
        std::fabs(got.latency_ms - expected[k].latency_ms) <= kPredictionTolerance &&
        std::fabs(got.throughput_rps - expected[k].throughput_rps) <= kPredictionTolerance;
    if (!same) {
      issues.push_back(fmt::format(
          "gpu {}: {}: predicted {:.4f} ms / {:.4f} rps, the model says {:.4f} ms / {:.4f} rps",
          gpu.index, gpu.processes[k].service, got.latency_ms, got.throughput_rps,
          expected[k].latency_ms, expected[k].throughput_rps));
    }
  }
}

}  // namespace

std::vector<std::string> ValidateMpsDeployment(const MpsDeployment& d, const MpsProblem& problem) {
  std::vector<std::string> issues;
  const auto& services = problem.scenario.services;
  std::vector<double> carried(services.size(), 0);
  for (const MpsGpuPlan& gpu : d.gpus) {
    double used = 0;
    bool names_ok = true;
    for (const MpsProcess& p : gpu.processes) {
      const int s = p.share.service;
      if (s < 0 || s >= static_cast<int>(services.size()) || services[s].name != p.service) {
        issues.push_back(fmt::format("gpu {}: process of '{}' names no service of the scenario",
                                     gpu.index, p.service));
        names_ok = false;
        continue;
      }
      CheckProcess(gpu, p, issues);
      used += p.share.resource_pct;
      carried[s] += p.share.rate_rps;
    }
    if (used > 100 + 1e-9) {
      issues.push_back(fmt::format("gpu {}: resources sum to {}% > 100%", gpu.index, used));
    }
    if (names_ok) CheckPredictions(problem, gpu, issues);
  }
  for (size_t i = 0; i < services.size(); ++i) {
    const bool infeasible =
        i < d.services.size() && d.services[i].status == ServiceStatus::kInfeasible;
    if (infeasible) {
      if (carried[i] > 0) {
        issues.push_back(fmt::format("{}: reported infeasible but placed", services[i].name));
      }
      continue;
    }
    if (!CoversRate(carried[i], services[i].rate_rps)) {
      issues.push_back(fmt::format("{}: processes carry {} of {} rps", services[i].name, carried[i],
                                   services[i].rate_rps));
    }
  }
  return issues;
}

std::string FormatMpsDeploymentJson(const MpsDeployment& d) {
  using Json = nlohmann::ordered_json;
  Json out;
  out["gpu"] = d.gpu;
  out["instance"] = d.instance;
  out["price_per_hour"] = JsonMeasurement(d.price_per_hour);
  out["planner"] = d.planner;
  out["gpus"] = Json::array();
  for (const MpsGpuPlan& gpu : d.gpus) {
    Json g{{"index", gpu.index}, {"resource_pct", JsonMeasurement(gpu.resource_pct)}};
    g["processes"] = Json::array();
    for (const MpsProcess& p : gpu.processes) {
      g["processes"].push_back({{"service", p.service},
                                {"model", p.model},
                                {"batch", p.share.batch},
                                {"resource_pct", JsonMeasurement(p.share.resource_pct)},
                                {"rate_rps", JsonMeasurement(p.share.rate_rps)},
                                {"latency_ms", JsonMeasurement(p.predicted.latency_ms)},
                                {"throughput_rps", JsonMeasurement(p.predicted.throughput_rps)},
                                {"meets_slo", p.meets_slo}});
    }
    out["gpus"].push_back(std::move(g));
  }
  out["services"] = Json::array();
  for (const MpsServiceOutcome& s : d.services) {
    Json j{{"name", s.name},
           {"model", s.model},
           {"rate_rps", JsonMeasurement(s.rate_rps)},
           {"slo_ms", JsonMeasurement(s.slo_ms)},
           {"capacity_rps", JsonMeasurement(s.capacity_rps)},
           {"worst_latency_ms", JsonMeasurement(s.worst_latency_ms)},
           {"status", s.status == ServiceStatus::kOk ? "ok" : "infeasible"},
           {"predicted_violation", s.predicted_violation}};
    if (!s.reason.empty()) j["reason"] = s.reason;
    out["services"].push_back(std::move(j));
  }
  const MpsMetrics& m = d.metrics;
  out["metrics"] = {{"gpus", m.gpus},
                    {"resource_pct", JsonMeasurement(m.resource_pct)},
                    {"cost_per_hour", JsonMeasurement(m.cost_per_hour)},
                    {"predicted_violations", m.predicted_violations},
                    {"lower_bound", m.lower_bound},
                    {"plan_ms", JsonMeasurement(m.plan_ms)}};
  return out.dump(2) + "\n";
}

std::string FormatMpsDeploymentTable(const MpsDeployment& d) {
  std::string out = fmt::format("{} plan on {} x {} ({}, ${:.3f}/h each), MPS sharing\n", d.planner,
                                d.metrics.gpus, d.gpu, d.instance, d.price_per_hour);
  out += fmt::format("{:>4}  {:<20} {:<10} {:>5} {:>9} {:>9} {:>11} {:>11}  {}\n", "gpu", "service",
                     "model", "batch", "resource", "rate", "latency_ms", "throughput", "slo");
  for (const MpsGpuPlan& gpu : d.gpus) {
    for (const MpsProcess& p : gpu.processes) {
      out += fmt::format("{:>4}  {:<20} {:<10} {:>5} {:>8.1f}% {:>9.1f} {:>11.3f} {:>11.1f}  {}\n",
                         gpu.index, p.service, p.model, p.share.batch, p.share.resource_pct,
                         p.share.rate_rps, p.predicted.latency_ms, p.predicted.throughput_rps,
                         p.meets_slo ? "ok" : "MISS");
    }
  }
  for (const MpsServiceOutcome& s : d.services) {
    if (s.status == ServiceStatus::kInfeasible) {
      out += fmt::format("infeasible: {}: {}\n", s.name, s.reason);
    }
  }
  const MpsMetrics& m = d.metrics;
  out += fmt::format(
      "gpus {} (lower bound {}), resources {:.1f}% of one GPU, cost ${:.2f}/h, predicted SLO "
      "violations {}, plan {:.3f} ms\n",
      m.gpus, m.lower_bound, m.resource_pct, m.cost_per_hour, m.predicted_violations, m.plan_ms);
  return out;
}

}  // namespace tessera
