// MPS sharing plans: services packed onto whole GPUs, each GPU shared by
// several services' processes through MPS, each process limited to a share
// of the SMs (its resource %, MPS active-thread percentage) and running one
// batch size. This is how iGniter, gpu-lets and GSLICE share V100/T4-class
// GPUs (no MIG), and MIG GPUs run whole.
//
// The iGniter model (igniter_model.h) is the yardstick every MPS plan is
// described with: each process's latency and throughput are predicted with
// its co-located neighbours, so plans of interference-unaware planners show
// their predicted SLO violations.
//
// Thread-safety: values and pure functions; a registry is read-only once
// filled.
#ifndef TESSERA_MPS_PLAN_H_
#define TESSERA_MPS_PLAN_H_

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/clock.h"
#include "tessera/deployment.h"
#include "tessera/igniter_model.h"
#include "tessera/planner.h"
#include "tessera/registry.h"
#include "tessera/scenario.h"
#include "tessera/simulator.h"
#include "tessera/status.h"

namespace tessera {

// ---- GPU types --------------------------------------------------------------

// A GPU an MPS plan may use, with the cloud instance that rents one.
struct MpsGpu {
  std::string name;          // catalog-style key, e.g. "v100-16gb"
  std::string display_name;  // "NVIDIA V100 16GB (SXM2)"
  int sms = 0;
  std::string instance;       // one-GPU instance type, e.g. "p3.2xlarge"
  double price_per_hour = 0;  // its on-demand price, USD (AWS us-east-1)
};

// Every GPU MPS planners know: V100, T4, A10G, and the MIG GPUs run whole.
std::span<const MpsGpu> AllMpsGpus();
// Looks a GPU up by name, case-insensitively; NotFound listing the names.
Result<const MpsGpu*> FindMpsGpu(std::string_view name);
// Comma-separated names of AllMpsGpus(), for help texts and messages.
std::string MpsGpuNames();

// ---- Problem ------------------------------------------------------------------

struct GpuletTables;  // gpulet_tables.h

struct MpsProblem {
  Scenario scenario;
  MpsCoefficients coefficients;
  // Per service (scenario order): index into coefficients.workloads.
  std::vector<int> workload_of;
  std::string gpu;            // MpsGpu name
  double price_per_hour = 0;  // of one GPU instance
  // Share of the SLO a batch may take (the papers' half); the rest is left
  // for queueing and batching.
  double latency_factor = 0.5;
  // gpu-lets' profiling tables; only the gpulet planner needs them.
  std::shared_ptr<const GpuletTables> gpulet;

  const WorkloadCoefficients& Workload(int service) const {
    return coefficients.workloads[workload_of[service]];
  }
  double BudgetMs(int service) const { return latency_factor * scenario.services[service].slo_ms; }
};

// Binds a scenario to coefficients, a GPU and its price. NotFound
// "<file>:<line>: field 'model': no iGniter coefficients for '<m>' (have:
// ...)"; InvalidArgument for an invalid scenario, a price < 0 or a latency
// factor outside (0, 1].
Result<MpsProblem> BuildMpsProblem(Scenario scenario, MpsCoefficients coefficients,
                                   const MpsGpu& gpu, double price_per_hour,
                                   double latency_factor = 0.5);

// ---- Planner interface --------------------------------------------------------

// One process of a service on a GPU.
struct MpsShare {
  int service = 0;  // index into scenario.services
  int batch = 1;
  double resource_pct = 0;  // in (0, 100]
  double rate_rps = 0;      // the part of the service's rate it serves
};

struct MpsPlanResult {
  // GPUs in order; empty ones are dropped. A service may have several shares.
  std::vector<std::vector<MpsShare>> gpus;
};

class MpsPlanner {
 public:
  virtual ~MpsPlanner() = default;
  virtual std::string_view Name() const = 0;
  // Places every service that can meet its SLO on some GPU; services that
  // cannot are left out (the engine reports them infeasible). Errors only for
  // bugs, or for a problem that lacks what the planner needs.
  virtual Result<MpsPlanResult> Plan(const MpsProblem& problem,
                                     const PlanContext& context) const = 0;
};

using MpsPlannerRegistry = NamedRegistry<MpsPlanner>;
// "igniter", "ffd+", "gpulet", "gslice+".
const MpsPlannerRegistry& BuiltinMpsPlanners();

// ---- Report -------------------------------------------------------------------

struct MpsProcess {
  MpsShare share;
  std::string service;
  std::string model;
  Prediction predicted;   // with its GPU's other processes
  bool meets_slo = true;  // latency within the budget and throughput >= rate
};

struct MpsGpuPlan {
  int index = 0;
  std::vector<MpsProcess> processes;
  double resource_pct = 0;  // sum over processes
};

struct MpsServiceOutcome {
  std::string name;
  std::string model;
  double rate_rps = 0;
  double slo_ms = 0;
  double capacity_rps = 0;      // predicted throughput of its processes
  double worst_latency_ms = 0;  // largest predicted batch latency
  ServiceStatus status = ServiceStatus::kOk;
  bool predicted_violation = false;  // some process misses budget or rate
  std::string reason;                // infeasible: why, and what is achievable
};

struct MpsMetrics {
  int gpus = 0;
  double resource_pct = 0;  // sum of every process's share, in % of one GPU
  double cost_per_hour = 0;
  int predicted_violations = 0;  // services with a predicted violation
  // ceil(sum over services of Theorem 1's resource / 100), a service too
  // large for one GPU counting its rate over one whole GPU's most within its
  // budget: a plan of one process per service that meets every budget by
  // the model (co-location only slows a process) uses no fewer GPUs.
  int lower_bound = 0;
  double plan_ms = 0;
};

struct MpsDeployment {
  std::string gpu;
  std::string instance;
  double price_per_hour = 0;
  std::string planner;
  std::vector<MpsGpuPlan> gpus;
  std::vector<MpsServiceOutcome> services;  // scenario order
  MpsMetrics metrics;
};

// The Theorem 1 bound of MpsMetrics::lower_bound.
int MpsLowerBound(const MpsProblem& problem);

// Describes `result`: predictions per GPU, service outcomes, metrics.
MpsDeployment DescribeMpsPlan(const MpsProblem& problem, const MpsPlanResult& result,
                              std::string_view planner_name, double plan_ms);

// Times planner.Plan() with `clock` and describes the result.
Result<MpsDeployment> RunMpsPlanner(const MpsPlanner& planner, const MpsProblem& problem,
                                    const PlanContext& context, const Clock& clock = SystemClock());

// Independent checks of a described plan against its problem, one message
// per problem found (empty = valid): every resource in (0, 100] and a
// multiple of nothing in particular, each GPU's resources summing to at most
// 100%, batches >= 1, rates > 0, every feasible service's shares covering
// its rate, processes naming services of the scenario, predictions equal to
// the model's. Predicted SLO violations are metrics, not invalidity.
std::vector<std::string> ValidateMpsDeployment(const MpsDeployment& deployment,
                                               const MpsProblem& problem);

// The serving model of an MPS plan for the simulator (simulator.h): one
// instance per process, its batch times (b = 1..planned batch) predicted by
// the iGniter model with the GPU's other processes at their planned batches:
// 1000 b / throughput, GPU time plus the results' copy back (the input copy
// overlaps the previous batch, as the model's throughput assumes). InvalidArgument when the
// deployment's services are not the problem's.
Result<ServingModel> BuildMpsServingModel(const MpsDeployment& deployment,
                                          const MpsProblem& problem);

// JSON: {"gpu","instance","price_per_hour","planner","gpus":[{"index",
// "resource_pct","processes":[{"service","model","batch","resource_pct",
// "rate_rps","latency_ms","throughput_rps","meets_slo"}]}],"services":[...],
// "metrics":{...}}; measurements rounded to 4 decimals.
std::string FormatMpsDeploymentJson(const MpsDeployment& deployment);
// A table for people: one line per process, then the services and metrics.
std::string FormatMpsDeploymentTable(const MpsDeployment& deployment);

}  // namespace tessera

#endif  // TESSERA_MPS_PLAN_H_
