#include "tessera/plan/plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "plan/mps_deployment.h"
#include "tessera/util/overloaded.h"

namespace tessera {
namespace {

std::string InfeasibleReason(const ServiceSpec& spec, const Problem& problem) {
  const LatencyRule& rule = problem.rule();
  const Service& s = spec.service;
  std::vector<std::string> gpus;
  for (const GpuOffer& offer : problem.pool()) gpus.push_back(offer.gpu->name);
  std::string reason =
      fmt::format("no (profile, batch, procs) on {} has latency < {:g} x SLO = {:.4g} ms",
                  fmt::join(gpus, " or "), rule.factor, rule.BudgetMs(s.slo_ms));
  if (!spec.fastest) return reason;
  const Triplet& t = *spec.fastest;
  const GpuModel& gpu = *problem.pool()[t.pool].gpu;
  return reason + fmt::format(
                      "; best achievable is {:.4g} ms ({} batch {} x {} proc, {:.4g} req/s), "
                      "which needs an SLO above {:.4g} ms",
                      t.latency_ms, gpu.profiles[t.profile].name, t.batch, t.procs,
                      t.throughput_rps, t.latency_ms / rule.factor);
}

Instance ToInstance(const Problem& problem, const PlacedSegment& seg) {
  const Service& s = problem.services()[seg.service].service;
  return Instance{problem.pool()[seg.triplet.pool].gpu->profiles[seg.triplet.profile].name,
                  seg.start,
                  s.name,
                  s.model,
                  seg.triplet.batch,
                  seg.triplet.procs,
                  seg.triplet.throughput_rps,
                  seg.triplet.latency_ms};
}

std::vector<PoolUse> PoolUses(const Problem& problem, const Deployment& d) {
  std::vector<PoolUse> uses;
  for (const GpuOffer& offer : problem.pool()) {
    const int used =
        static_cast<int>(std::count_if(d.gpus.begin(), d.gpus.end(), [&](const GpuAssignment& g) {
          return GpuModelName(d, g) == offer.gpu->name;
        }));
    uses.push_back({offer.gpu->name, offer.price_per_hour, offer.max_count, used});
  }
  return uses;
}

// How `d`'s GPUs are shared: kMig when every instance runs one process.
Sharing MigSharingOf(const Deployment& d) {
  for (const GpuAssignment& g : d.gpus) {
    for (const Instance& inst : g.instances()) {
      if (inst.procs > 1) return Sharing::kMigMps;
    }
  }
  return Sharing::kMig;
}

// The MIG half of BuildDeployment: segments to instances, service outcomes.
void DescribeMigPlan(const Problem& problem, const MigGpus& gpus, Deployment& d) {
  std::vector<double> capacity(problem.services().size(), 0.0);
  for (const std::vector<PlacedSegment>& segments : gpus) {
    if (segments.empty()) continue;
    GpuAssignment g;
    g.index = static_cast<int>(d.gpus.size());
    g.node = g.index / problem.gpus_per_node();
    const GpuModel* model = problem.pool()[segments.front().triplet.pool].gpu;
    if (model != &problem.gpu()) g.gpu = model->name;
    for (const PlacedSegment& seg : segments) {
      g.mig().push_back(ToInstance(problem, seg));
      capacity[seg.service] += seg.triplet.capacity_rps;
    }
    std::stable_sort(g.instances().begin(), g.instances().end(),
                     [](const Instance& a, const Instance& b) { return a.start < b.start; });
    d.gpus.push_back(std::move(g));
  }
  for (size_t i = 0; i < problem.services().size(); ++i) {
    const ServiceSpec& spec = problem.services()[i];
    ServiceOutcome out{spec.service.name,
                       spec.service.model,
                       spec.service.rate_rps,
                       spec.service.slo_ms,
                       capacity[i],
                       ServiceStatus::kOk,
                       ""};
    if (spec.feasible.empty()) {
      out.status = ServiceStatus::kInfeasible;
      out.reason = InfeasibleReason(spec, problem);
    }
    d.services.push_back(std::move(out));
  }
  d.sharing = MigSharingOf(d);
}

// Where the pool entry of `gpu` was read ("pool.yaml:5"), or the scenario.
std::string PoolEntryLocation(const Scenario& scenario, std::string_view gpu) {
  for (const PoolEntry& entry : scenario.pool) {
    if (entry.gpu == gpu) return ServiceLocation(scenario, entry.line);
  }
  return ServiceLocation(scenario, 0);
}

// A plan with more GPUs of a model than its pool entry's max_count is no plan
// of the problem. Planners that support pools plan within the caps; the
// others ignore them, so the engine checks every plan here.
Status CheckCaps(const Problem& problem, const Deployment& d, std::string_view planner,
                 bool supports_pools) {
  for (const PoolUse& use : PoolUses(problem, d)) {
    if (use.max_count <= 0 || use.used <= use.max_count) continue;
    return Status::InvalidArgument(fmt::format(
        "{}: field 'max_count': planner {}'s plan needs {} {} GPUs, more than the pool's "
        "max_count {}; raise max_count{}",
        PoolEntryLocation(problem.scenario(), use.gpu), planner, use.used, use.gpu, use.max_count,
        supports_pools ? "" : ", or plan with the exact planner, which keeps within the caps"));
  }
  return Status::Ok();
}

// A planner's proven bound counts GPUs unless the pool is priced (then it
// bounds the cost, and GPUs keep the bounds of metrics.h).
LowerBound BoundWithProof(const Problem& problem, const std::optional<SolverProof>& proof) {
  LowerBound bound = StrongestBound(problem);
  if (proof && !problem.priced()) {
    const int proven = static_cast<int>(std::ceil(proof->bound - 1e-6));
    if (proven >= bound.gpus) bound = {proven, "solver"};
  }
  return bound;
}

}  // namespace

Deployment BuildDeployment(const Problem& problem, const PlanResult& result,
                           std::string_view planner_name, const LowerBound& bound, double plan_ms) {
  Deployment d;
  d.gpu = problem.gpu().name;
  d.planner = std::string(planner_name);
  d.rule = problem.rule();
  // What the planner returned decides the half (RunPlanner checks that it
  // is the problem's).
  std::visit(Overloaded{[&](const MigGpus& gpus) { DescribeMigPlan(problem, gpus, d); },
                        [&](const MpsGpus& gpus) {
                          d.sharing = Sharing::kMps;
                          DescribeMpsPlan(problem, gpus, d);
                        }},
             result.gpus);
  const Metrics mps = d.metrics;  // the MPS half's sums
  d.metrics = ComputeMetrics(d, problem.gpu(), bound, plan_ms);
  d.metrics.resource_pct = mps.resource_pct;
  d.metrics.predicted_violations = mps.predicted_violations;
  // The hourly cost follows from the GPUs used of each model; the cost table
  // is shown for priced pools only.
  std::vector<PoolUse> uses = PoolUses(problem, d);
  for (const PoolUse& use : uses) d.metrics.cost_per_hour += use.used * use.price_per_hour;
  if (problem.priced()) d.pool = std::move(uses);
  return d;
}

Status Planner::Check(const Problem&) const { return Status::Ok(); }

Status CheckPlannerFits(const Planner& planner, const Problem& problem) {
  const bool mps_planner = planner.Mode() == Sharing::kMps;
  if (mps_planner && !problem.mps()) {
    return Status::InvalidArgument(
        "shares whole GPUs through MPS and predicts latencies with the iGniter model: give the "
        "GPU's coefficients (--coeffs FILE)");
  }
  if (!mps_planner && problem.mps()) {
    return Status::InvalidArgument(
        "cuts GPUs into MIG instances from profiles; the iGniter coefficients (--coeffs) are "
        "for the MPS planners");
  }
  if (problem.pool().size() > 1 && !planner.SupportsPools()) {
    return Status::InvalidArgument(
        "plans one GPU model; a pool of several models needs a planner that supports pools "
        "(exact)");
  }
  return planner.Check(problem);
}

Result<PlanReport> RunPlanner(const Planner& planner, const Problem& problem,
                              const PlanContext& context, const Clock& clock) {
  TESSERA_RETURN_IF_ERROR(
      CheckPlannerFits(planner, problem).WithContext("planner " + std::string(planner.Name())));
  const double start = clock.NowMs();
  Result<PlanResult> result = planner.Plan(problem, context);
  const double plan_ms = clock.NowMs() - start;
  // Planners that search stop at the limit; one that cannot stop before its
  // plan is complete says so rather than overrun silently.
  if (context.time_limit_s > 0 && plan_ms > 1.1 * context.time_limit_s * 1000 && context.progress) {
    context.progress(fmt::format(
        "note: {} took {:.3g} s, more than its time limit of {:g} s: it cannot stop before its "
        "plan is complete",
        planner.Name(), plan_ms / 1000, context.time_limit_s));
  }
  if (!result.ok()) return result.status().WithContext(std::string(planner.Name()));
  if (std::holds_alternative<MpsGpus>(result->gpus) != (problem.mps() != nullptr)) {
    return Status::Internal(fmt::format("planner {} returned {} GPUs for a {} problem",
                                        planner.Name(), problem.mps() ? "MIG" : "MPS",
                                        problem.mps() ? "MPS" : "MIG"));
  }
  PlanReport report;
  report.deployment = BuildDeployment(problem, *result, planner.Name(),
                                      BoundWithProof(problem, result->proof), plan_ms);
  TESSERA_RETURN_IF_ERROR(
      CheckCaps(problem, report.deployment, planner.Name(), planner.SupportsPools()));
  if (const std::optional<SolverProof>& proof = result->proof) {
    report.deployment.metrics.proven_optimal = proof->optimal;
    if (problem.priced()) report.deployment.metrics.cost_lower_bound = proof->bound;
  }
  const std::vector<ServiceOutcome>& services = report.deployment.services;
  const bool all_ok = std::all_of(services.begin(), services.end(), [](const ServiceOutcome& s) {
    return s.status == ServiceStatus::kOk;
  });
  report.outcome = all_ok ? PlanOutcome::kFeasible : PlanOutcome::kInfeasible;
  return report;
}

Result<PlanReport> RunDefaultPlanner(const PlannerRegistry& planners, const Problem& problem,
                                     const PlanContext& context, std::string& note,
                                     const Clock& clock) {
  note.clear();
  const size_t services = problem.services().size();
  if (services > kDefaultExactMaxServices && problem.pool().size() == 1) {
    note = fmt::format("{} services: more than {} keeps within its time limit; planned by {}",
                       services, kDefaultPlanner, kFallbackPlanner);
    TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<Planner> fallback, planners.Create(kFallbackPlanner));
    return RunPlanner(*fallback, problem, context, clock);
  }
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<Planner> exact, planners.Create(kDefaultPlanner));
  Result<PlanReport> report = RunPlanner(*exact, problem, context, clock);
  // A plan at its lower bound is optimal whether or not the solver said so
  // (e.g. every service infeasible: nothing to place).
  const bool proven =
      report.ok() && (report->deployment.metrics.proven_optimal.value_or(false) ||
                      report->deployment.metrics.gpus <= report->deployment.metrics.lower_bound);
  if (proven || problem.pool().size() > 1) return report;
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<Planner> fallback, planners.Create(kFallbackPlanner));
  TESSERA_ASSIGN_OR_RETURN(PlanReport heuristic, RunPlanner(*fallback, problem, context, clock));
  if (!report.ok()) {
    note = fmt::format("{} found no plan in time ({}); {}'s plan is used", kDefaultPlanner,
                       report.status().message(), kFallbackPlanner);
    return heuristic;
  }
  const int exact_gpus = report->deployment.metrics.gpus;
  const int heuristic_gpus = heuristic.deployment.metrics.gpus;
  note = fmt::format(
      "{} proved no optimum within its time limit (best {} GPUs, bound {}); {} found {} GPUs; "
      "the {} plan is used",
      kDefaultPlanner, exact_gpus, report->deployment.metrics.lower_bound, kFallbackPlanner,
      heuristic_gpus, heuristic_gpus < exact_gpus ? kFallbackPlanner : kDefaultPlanner);
  return heuristic_gpus < exact_gpus ? heuristic : std::move(report).value();
}

}  // namespace tessera
