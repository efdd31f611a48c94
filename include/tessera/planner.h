// Planner: one small pure interface for every offline placement policy, MIG
// and MPS alike, and one name-keyed registry of them.
//
// A planner reads only the immutable Problem and returns what it places on
// each GPU: MIG segments, or MPS shares of GPUs shared whole; it never reads
// files and never fills metrics. It says which way of sharing it plans
// (Sharing()) and whether a problem has what it needs (Check()). The engine
// (plan.h) turns a PlanResult into a Deployment, so every planner's output
// is described, measured and validated the same way.
//
// Thread-safety: Plan() is const and must be safe to call concurrently.
#ifndef TESSERA_PLANNER_H_
#define TESSERA_PLANNER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "tessera/problem.h"
#include "tessera/registry.h"
#include "tessera/status.h"
#include "tessera/util/clock.h"

namespace tessera {

// The heuristic score MIG-serving's planners (migserving-*) rank GPU
// configurations by (docs/migserving-planner.md, "The score"): the sum over
// the services not yet satisfied of (1 - completion) x utility.
enum class MigServingScore {
  // Each service's utility counted up to what it still needs, so capacity
  // beyond a service's need counts for nothing. Tessera's default.
  kCapped,
  // The paper's formula as written (section 5.3): each unsatisfied service's
  // whole utility.
  kPaper,
};

// Per-run settings every planner may read.
struct PlanContext {
  // Wall-clock budget in seconds; 0 = none. Every planner honours it
  // (time_limit.h): one holding a plan that covers every service when it
  // passes returns that plan (exact with its bound and gap), the others
  // TimeLimitPassed. RunPlanner notes any planner that overruns it by more
  // than 10%.
  double time_limit_s = 0;
  // Seed of any randomness, so a run is reproducible. Default: 1.
  std::uint64_t seed = 1;
  // The clock time limits are measured on; null = SystemClock().
  const Clock* clock = nullptr;
  // Where planners that search for long report progress, one line (no
  // newline) at a time, at most about once a second; unset = silent.
  std::function<void(std::string_view)> progress = nullptr;
  // Read by the planners whose UsesMigServingScore() is true; the others
  // ignore it. Default: kCapped.
  MigServingScore migserving_score = MigServingScore::kCapped;
};

// One segment placed on a GPU.
struct PlacedSegment {
  int service = 0;  // index into Problem::services()
  Triplet triplet;
  int start = 0;  // first memory slice of the MIG instance
};

// What a planner that searches to optimality proves about its plan. The
// objective is the number of GPUs, or the hourly cost when the pool is priced.
struct SolverProof {
  double objective = 0;  // the plan's objective value
  double bound = 0;      // proven lower bound on the best objective value
  bool optimal = false;  // objective == bound, proven
};

// One MPS process of a service on a GPU shared whole.
struct MpsShare {
  int service = 0;  // index into Problem::services()
  int batch = 1;
  double resource_pct = 0;  // in (0, 100]
  double rate_rps = 0;      // the part of the service's rate it serves
};

// A plan as a planner returns it: per GPU, in index order, the MIG segments
// it holds or (Sharing::kMps planners) the MPS shares of a GPU shared whole
// (a service may have several). A planner may leave some GPUs empty; they
// are dropped. A MIG GPU's model is the pool entry of its segments'
// triplets.
using MigGpus = std::vector<std::vector<PlacedSegment>>;
using MpsGpus = std::vector<std::vector<MpsShare>>;

struct PlanResult {
  std::variant<MigGpus, MpsGpus> gpus;  // MIG unless a planner sets MpsGpus
  // Set by planners that prove bounds (e.g. "exact").
  std::optional<SolverProof> proof;

  // The MIG GPUs. REQUIRES: a MIG plan (the default alternative).
  MigGpus& mig() { return std::get<MigGpus>(gpus); }
  const MigGpus& mig() const { return std::get<MigGpus>(gpus); }
};

class Planner {
 public:
  virtual ~Planner() = default;
  // The registry name, e.g. "parva".
  virtual std::string_view Name() const = 0;
  // The way of sharing its plans use: kMps planners need a Problem built by
  // Problem::BuildMps, the others a MIG problem.
  virtual Sharing Mode() const { return Sharing::kMigMps; }
  // True iff Plan() accepts a problem whose pool has several GPU models.
  virtual bool SupportsPools() const { return false; }
  // Ok iff Plan() can plan `problem`; otherwise InvalidArgument saying what
  // is missing (e.g. gpu-lets' tables). The engine checks the sharing mode
  // and pools; this checks the rest. Default: Ok.
  virtual Status Check(const Problem& problem) const;
  // The wall-clock budget (seconds) a caller that runs every planner on a
  // scenario of any size (`tessera compare`) gives this one when the user
  // sets none; 0 = none, for a planner whose work grows about linearly with
  // the services. The searching planners (exact, migserving-ga) name their
  // own default; MIG-serving's fast algorithm, which scores every pair of
  // services, names one too. Default: 0.
  virtual double CompareTimeLimitS() const { return 0; }
  // True iff Plan() reads PlanContext::migserving_score (MIG-serving's
  // planners). Default: false.
  virtual bool UsesMigServingScore() const { return false; }
  // Places every service that can meet its SLO (for MIG planners: that has a
  // feasible triplet). Services left out are reported infeasible by the
  // engine. Unless SupportsPools(), the problem has one GPU model.
  // Errors only for bugs or an invalid context; never for a hard scenario.
  virtual Result<PlanResult> Plan(const Problem& problem, const PlanContext& context) const = 0;
};

// Planners by name ("parva", "exact", ...); factories take no arguments.
using PlannerRegistry = NamedRegistry<Planner>;
using PlannerFactory = PlannerRegistry::Factory;

// Every built-in planner, registered once.
const PlannerRegistry& BuiltinPlanners();

}  // namespace tessera

#endif  // TESSERA_PLANNER_H_
