#include "planners/exact/exact_planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

#include "planners/exact/milp.h"
#include "planners/exact/service_covers.h"
#include "tessera/gpu/mig_layout.h"
#include "tessera/plan/metrics.h"

namespace tessera {
namespace {

long Round(double value) { return std::lround(value); }

// The distinct maximal mixes of one pool GPU model over the profiles the
// problem can use on it, each with its first layout.
struct PoolMixes {
  std::vector<std::vector<int>> mixes;  // counts per profile of the model
  std::vector<Layout> layouts;          // one per mix
};

PoolMixes MixesOf(const GpuModel& gpu, const std::vector<int>& profiles) {
  const std::vector<Layout> layouts = EnumerateMaximalLayouts(gpu, profiles);
  PoolMixes out{DistinctMixes(gpu, layouts), {}};
  for (const std::vector<int>& mix : out.mixes) {
    out.layouts.push_back(*std::find_if(layouts.begin(), layouts.end(), [&](const Layout& l) {
      return ProfileMix(gpu, l) == mix;
    }));
  }
  return out;
}

// The model and where each decision lives in it.
struct Model {
  Milp milp;
  std::vector<PoolMixes> pools;
  std::vector<int> gpu_columns;               // [pool]: GPUs of that model
  std::vector<std::vector<int>> mix_columns;  // [pool][mix]
  std::vector<int> first_cover_column;        // per class; -1 = per-service class
  std::vector<std::vector<std::vector<int>>>
      segment_columns;  // [class][member][resource], -1 = none
  bool integral_objective = true;
  // Hourly price of one unit of the objective: the pool's cheapest price when
  // priced (so the solver sees costs from 1 to the span of the prices, at
  // most 1e8 within limits::kPricePerHour), else 1 (GPUs).
  double cost_scale = 1;
  // [resource]: (column, instances of that resource it uses).
  std::vector<std::vector<std::pair<int, double>>> uses;
};

class ModelBuilder {
 public:
  ModelBuilder(const Problem& problem, const CoverSet& set) : problem_(problem), set_(set) {}

  // The whole model.
  Model Build() {
    AddMixColumns();
    resource_rows_.assign(set_.resources.size(), {});
    AddMixesToResourceRows();
    for (size_t c = 0; c < set_.classes.size(); ++c) AddClass(set_.classes[c]);
    model_.uses.resize(set_.resources.size());
    for (size_t r = 0; r < resource_rows_.size(); ++r) {
      for (const auto& [col, coeff] : resource_rows_[r]) {
        if (coeff < 0) model_.uses[r].push_back({col, -coeff});
      }
      model_.milp.AddRow(resource_rows_[r], 0, kMilpInfinity);
    }
    return std::move(model_);
  }

  // The GPUs alone, for `demand` instances of each resource. Its columns are
  // the first columns of Build()'s model, in the same order.
  Model BuildMixes(const std::vector<double>& demand) {
    AddMixColumns();
    resource_rows_.assign(set_.resources.size(), {});
    AddMixesToResourceRows();
    for (size_t r = 0; r < resource_rows_.size(); ++r) {
      model_.milp.AddRow(resource_rows_[r], demand[r], kMilpInfinity);
    }
    return std::move(model_);
  }

 private:
  void AddMixColumns() {
    const bool priced = problem_.priced();
    model_.integral_objective = !priced;
    // Prices in dollars can be any size; the LP solver is built for costs
    // near 1: Clp asserts on costs >= 1e25, reports a feasible model
    // infeasible from about 1e16, and ignores differences in costs far
    // below 1 (its tolerances are absolute). The cheapest model costs 1.
    if (priced) {
      model_.cost_scale = std::numeric_limits<double>::infinity();
      for (const GpuOffer& offer : problem_.pool()) {
        if (offer.price_per_hour > 0) {
          model_.cost_scale = std::min(model_.cost_scale, offer.price_per_hour);
        }
      }
    }
    for (size_t m = 0; m < problem_.pool().size(); ++m) {
      const GpuOffer& offer = problem_.pool()[m];
      std::vector<int> profiles;
      for (const Resource& r : set_.resources) {
        if (r.pool == static_cast<int>(m)) profiles.push_back(r.profile);
      }
      model_.pools.push_back(MixesOf(*offer.gpu, profiles));
      const double hi = offer.max_count > 0 ? offer.max_count : kMilpInfinity;
      // GPUs of this model: a column of its own, so that branching on it
      // splits plans by how many of each model they buy.
      const int total =
          model_.milp.AddColumn(priced ? offer.price_per_hour / model_.cost_scale : 1, 0, hi, true);
      std::vector<int> columns;
      std::vector<std::pair<int, double>> sum{{total, -1}};
      for (size_t k = 0; k < model_.pools.back().mixes.size(); ++k) {
        columns.push_back(model_.milp.AddColumn(0, 0, hi, true));
        sum.push_back({columns.back(), 1});
      }
      model_.milp.AddRow(sum, 0, 0);
      model_.gpu_columns.push_back(total);
      model_.mix_columns.push_back(std::move(columns));
    }
  }

  void AddMixesToResourceRows() {
    for (size_t r = 0; r < set_.resources.size(); ++r) {
      const Resource& res = set_.resources[r];
      const PoolMixes& pool = model_.pools[res.pool];
      for (size_t k = 0; k < pool.mixes.size(); ++k) {
        if (const int n = pool.mixes[k][res.profile]) {
          resource_rows_[r].push_back({model_.mix_columns[res.pool][k], n});
        }
      }
    }
  }

  void AddClass(const ServiceClass& c) {
    const int members = static_cast<int>(c.services.size());
    if (!c.covers.empty()) {
      model_.first_cover_column.push_back(model_.milp.columns());
      model_.segment_columns.push_back({});
      std::vector<std::pair<int, double>> choose;
      for (const std::vector<int>& cover : c.covers) {
        const int col = model_.milp.AddColumn(0, 0, members, true);
        choose.push_back({col, 1});
        for (size_t r = 0; r < cover.size(); ++r) {
          if (cover[r]) resource_rows_[r].push_back({col, -cover[r]});
        }
      }
      model_.milp.AddRow(choose, members, members);
      return;
    }
    model_.first_cover_column.push_back(-1);
    std::vector<std::vector<int>> per_member;
    for (int member = 0; member < members; ++member) {
      std::vector<int> columns(set_.resources.size(), -1);
      std::vector<std::pair<int, double>> rate_row;
      for (size_t r = 0; r < set_.resources.size(); ++r) {
        if (!c.best[r]) continue;
        columns[r] = model_.milp.AddColumn(0, 0, kMilpInfinity, true);
        resource_rows_[r].push_back({columns[r], -1});
        rate_row.push_back({columns[r], c.best[r]->capacity_rps});
      }
      model_.milp.AddRow(rate_row, c.rate_rps * (1 - kCapacityTolerance), kMilpInfinity);
      AddSliceCuts(c, columns);
      per_member.push_back(std::move(columns));
    }
    model_.segment_columns.push_back(std::move(per_member));
  }

  // Valid inequalities that tighten the relaxation of a per-service class:
  // its segments take at least the fewest compute (and memory) slices that
  // can cover its rate (metrics.h).
  void AddSliceCuts(const ServiceClass& c, const std::vector<int>& columns) {
    for (const bool compute : {true, false}) {
      std::map<int, double> best_by_size;
      std::vector<std::pair<int, double>> row;
      for (size_t r = 0; r < columns.size(); ++r) {
        if (columns[r] < 0) continue;
        const Resource& res = set_.resources[r];
        const MigProfile& p = problem_.pool()[res.pool].gpu->profiles[res.profile];
        const int size = compute ? p.compute_slices : p.memory_slices;
        best_by_size[size] = std::max(best_by_size[size], c.best[r]->capacity_rps);
        row.push_back({columns[r], size});
      }
      model_.milp.AddRow(row, MinCoveringSlices(best_by_size, c.rate_rps), kMilpInfinity);
    }
  }

  const Problem& problem_;
  const CoverSet& set_;
  Model model_;
  std::vector<std::vector<std::pair<int, double>>> resource_rows_;
};

// Segment counts per resource of every member of every class, read from a
// solution of the model.
using Counts = std::vector<std::vector<std::vector<int>>>;  // [class][member][resource]

Counts ReadCounts(const Model& model, const CoverSet& set, const std::vector<double>& values) {
  Counts counts(set.classes.size());
  for (size_t c = 0; c < set.classes.size(); ++c) {
    const ServiceClass& sc = set.classes[c];
    if (model.first_cover_column[c] < 0) {
      for (const std::vector<int>& columns : model.segment_columns[c]) {
        std::vector<int> n(set.resources.size(), 0);
        for (size_t r = 0; r < columns.size(); ++r) {
          if (columns[r] >= 0) n[r] = static_cast<int>(Round(values[columns[r]]));
        }
        counts[c].push_back(std::move(n));
      }
      continue;
    }
    for (size_t j = 0; j < sc.covers.size(); ++j) {
      const long times = Round(values[model.first_cover_column[c] + j]);
      for (long k = 0; k < times; ++k) counts[c].push_back(sc.covers[j]);
    }
  }
  return counts;
}

// Rounds the LP relaxation to integer cover choices (largest fractions
// first) and per-service segment counts (rounded down, then topped up with
// the highest-capacity segments), leaving the mix columns at 0.
std::vector<double> RoundRelaxation(const Model& model, const CoverSet& set,
                                    const std::vector<double>& lp) {
  std::vector<double> fixed(model.milp.columns(), 0.0);
  for (size_t c = 0; c < set.classes.size(); ++c) {
    const ServiceClass& sc = set.classes[c];
    if (model.first_cover_column[c] >= 0) {
      const int first = model.first_cover_column[c];
      const int covers = static_cast<int>(sc.covers.size());
      std::vector<double> value(covers);
      long left = static_cast<long>(sc.services.size());
      for (int j = 0; j < covers; ++j) {
        value[j] = std::floor(lp[first + j] + 1e-9);
        left -= static_cast<long>(value[j]);
      }
      std::vector<int> order(covers);
      for (int j = 0; j < covers; ++j) order[j] = j;
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return lp[first + a] - value[a] > lp[first + b] - value[b];
      });
      for (int k = 0; k < left; ++k) value[order[k % covers]] += 1;
      for (int j = 0; j < covers; ++j) fixed[first + j] = value[j];
      continue;
    }
    for (const std::vector<int>& columns : model.segment_columns[c]) {
      double capacity = 0;
      int largest = -1;
      for (size_t r = 0; r < columns.size(); ++r) {
        if (columns[r] < 0) continue;
        const double cap = sc.best[r]->capacity_rps;
        capacity += std::floor(lp[columns[r]] + 1e-9) * cap;
        if (largest < 0 || cap > sc.best[largest]->capacity_rps) largest = static_cast<int>(r);
      }
      const double cap = sc.best[largest]->capacity_rps;
      const double extra = std::max(0.0, std::ceil((sc.rate_rps - capacity) / cap));
      for (size_t r = 0; r < columns.size(); ++r) {
        if (columns[r] < 0) continue;
        const double n = std::floor(lp[columns[r]] + 1e-9);
        fixed[columns[r]] = n + (static_cast<int>(r) == largest ? extra : 0);
      }
    }
  }
  return fixed;
}

// `values` (its cover and segment columns set) completed with the cheapest
// GPUs for its segments: a small model of the mixes alone, solved to
// optimality unless `deadline` (`seconds_left` away) passes first. Values are empty when no GPUs
// were found (the pool's caps cannot hold the segments, or time ran out).
Result<MilpSolution> WithCheapestGpus(const Problem& problem, const Model& model,
                                      const CoverSet& set, std::vector<double> values,
                                      const Deadline& deadline, double seconds_left) {
  std::vector<double> demand(set.resources.size(), 0.0);
  for (size_t r = 0; r < demand.size(); ++r) {
    for (const auto& [col, count] : model.uses[r]) demand[r] += count * values[col];
  }
  MilpSolver gpus_solver(ModelBuilder(problem, set).BuildMixes(demand).milp);
  TESSERA_ASSIGN_OR_RETURN(MilpSolution gpus, gpus_solver.Solve(deadline, seconds_left));
  if (gpus.values.empty()) return MilpSolution{};
  std::copy(gpus.values.begin(), gpus.values.end(), values.begin());
  gpus.values = std::move(values);
  return gpus;
}

// `counts` (segments per resource of one member of `c`, covering its rate
// with best triplets) less segments until it is a minimal cover; false when
// it uses a resource `c` cannot or does not cover the rate.
bool ReduceToMinimalCover(const ServiceClass& c, std::vector<int>& counts) {
  double capacity = 0;
  for (size_t r = 0; r < counts.size(); ++r) {
    if (counts[r] == 0) continue;
    if (!c.best[r]) return false;
    capacity += counts[r] * c.best[r]->capacity_rps;
  }
  if (!CoversRate(capacity, c.rate_rps)) return false;
  // Once a resource keeps its segments, dropping one of them stays
  // uncovering as the others drop theirs: one pass leaves a minimal cover.
  for (size_t r = 0; r < counts.size(); ++r) {
    while (counts[r] > 0 && CoversRate(capacity - c.best[r]->capacity_rps, c.rate_rps)) {
      --counts[r];
      capacity -= c.best[r]->capacity_rps;
    }
  }
  return true;
}

// The point of `model` that `plan` (a warm-start planner's plan of a
// one-model problem) describes: each service's segments as a minimal cover
// (per-service classes: its segment counts) running best triplets, and
// each GPU as the first mix that holds its instances. nullopt when the plan
// leaves a service of a class uncovered or a GPU fits no mix.
std::optional<std::vector<double>> ValuesOf(const PlanResult& plan, const Problem& problem,
                                            const Model& model, const CoverSet& set) {
  std::map<Resource, int> resource_index;
  for (size_t r = 0; r < set.resources.size(); ++r) resource_index[set.resources[r]] = r;
  std::vector<double> values(model.milp.columns(), 0.0);
  std::vector<std::vector<int>> counts(problem.services().size());
  for (const std::vector<PlacedSegment>& gpu : plan.mig()) {
    if (gpu.empty()) continue;
    const int pool = gpu.front().triplet.pool;
    std::vector<int> mix(problem.pool()[pool].gpu->profiles.size(), 0);
    for (const PlacedSegment& seg : gpu) {
      const auto r = resource_index.find({seg.triplet.pool, seg.triplet.profile});
      if (seg.triplet.pool != pool || r == resource_index.end()) return std::nullopt;
      std::vector<int>& n = counts[seg.service];
      n.resize(set.resources.size(), 0);
      ++n[r->second];
      ++mix[seg.triplet.profile];
    }
    const std::vector<std::vector<int>>& mixes = model.pools[pool].mixes;
    const auto k = std::find_if(mixes.begin(), mixes.end(), [&](const std::vector<int>& m) {
      for (size_t p = 0; p < m.size(); ++p) {
        if (mix[p] > m[p]) return false;
      }
      return true;
    });
    if (k == mixes.end()) return std::nullopt;
    values[model.mix_columns[pool][k - mixes.begin()]] += 1;
    values[model.gpu_columns[pool]] += 1;
  }
  for (size_t c = 0; c < set.classes.size(); ++c) {
    const ServiceClass& sc = set.classes[c];
    std::map<std::vector<int>, int> cover_index;
    for (size_t j = 0; j < sc.covers.size(); ++j) cover_index[sc.covers[j]] = j;
    for (size_t m = 0; m < sc.services.size(); ++m) {
      std::vector<int>& n = counts[sc.services[m]];
      if (n.empty() || !ReduceToMinimalCover(sc, n)) return std::nullopt;
      if (model.first_cover_column[c] < 0) {
        for (size_t r = 0; r < n.size(); ++r) {
          if (n[r] > 0) values[model.segment_columns[c][m][r]] = n[r];
        }
        continue;
      }
      const auto j = cover_index.find(n);
      if (j == cover_index.end()) return std::nullopt;
      values[model.first_cover_column[c] + j->second] += 1;
    }
  }
  return values;
}

// The tie break's branch and bound re-solves its root LP on CBC's side,
// where no deadline reaches it: on 98,000 columns (3,000 services) that
// took 1.8 s past a 1 s budget. Larger models keep the optimum found.
constexpr int kTieBreakMaxColumns = 20000;

int GpusOf(const PlanResult& plan) {
  const MigGpus& gpus = plan.mig();
  return static_cast<int>(std::count_if(gpus.begin(), gpus.end(),
                                        [](const auto& segments) { return !segments.empty(); }));
}

Status NoPlan(double limit) {
  return Status::InvalidArgument(
      fmt::format("no plan found within the time limit ({:g} s); raise --time-limit", limit));
}

// The warm-start planners' plans, in their order, each with its name; they
// share `seconds` of `clock`, except that the first always runs, and runs to
// its end when `first_to_the_end` (a heuristic of milliseconds that must give
// a plan even when the time limit is shorter). None for a pool of several GPU
// models.
std::vector<std::pair<std::string, PlanResult>> WarmStartPlans(
    const Problem& problem, const PlanContext& context, const Clock& clock, double seconds,
    std::span<const std::unique_ptr<Planner>> planners, bool first_to_the_end = false) {
  std::vector<std::pair<std::string, PlanResult>> plans;
  if (problem.pool().size() != 1) return plans;
  const Deadline share(clock, seconds);
  // A planner given no time (0) would take all it needs.
  const double least = 1e-3;
  for (const std::unique_ptr<Planner>& planner : planners) {
    if (planner != planners.front() && share.Passed()) break;
    if (planner->Mode() != Sharing::kMigMps || !planner->Check(problem).ok()) continue;
    const bool to_the_end = first_to_the_end && planner == planners.front();
    const PlanContext quiet{
        .time_limit_s = to_the_end ? 0 : std::max(seconds - share.ElapsedS(), least),
        .seed = context.seed,
        .clock = &clock};
    Result<PlanResult> plan = planner->Plan(problem, quiet);
    // Heuristics ignore the pool's cap on GPUs.
    const int cap = problem.pool().front().max_count;
    if (plan.ok() && (cap == 0 || GpusOf(*plan) <= cap)) {
      plans.push_back({std::string(planner->Name()), std::move(plan).value()});
    }
  }
  return plans;
}

// Minimises compute slices, then segments, over the plans no dearer than
// `best` (a solution of the model loaded in `solver`), until `deadline`
// (`seconds_left` away). The
// solver's objective and rows are changed for good.
MilpSolution TieBreak(MilpSolver& solver, const Model& model, const Problem& problem,
                      const CoverSet& set, const MilpSolution& best, const Deadline& deadline,
                      double seconds_left) {
  std::vector<std::pair<int, double>> cost_row;
  for (int col : model.gpu_columns) {
    cost_row.push_back({col, model.milp.cost(col)});
    solver.SetCost(col, 0);
  }
  const double slack = model.integral_objective ? 1e-6 : 1e-6 * std::max(1.0, best.objective);
  solver.AddRow(cost_row, -kMilpInfinity, best.objective + slack);
  // Weight slices above any possible difference in segment counts.
  long most_segments = 1;
  for (const ServiceClass& c : set.classes) {
    for (const std::vector<int>& cover : c.covers) {
      most_segments += SegmentCount(cover) * static_cast<long>(c.services.size());
    }
  }
  const double weight = static_cast<double>(most_segments + 1);
  for (size_t c = 0; c < set.classes.size(); ++c) {
    const ServiceClass& sc = set.classes[c];
    if (model.first_cover_column[c] >= 0) {
      for (size_t j = 0; j < sc.covers.size(); ++j) {
        solver.SetCost(
            model.first_cover_column[c] + static_cast<int>(j),
            weight * ComputeSlices(problem, set, sc.covers[j]) + SegmentCount(sc.covers[j]));
      }
      continue;
    }
    for (const std::vector<int>& columns : model.segment_columns[c]) {
      for (size_t r = 0; r < columns.size(); ++r) {
        if (columns[r] < 0) continue;
        std::vector<int> one(set.resources.size(), 0);
        one[r] = 1;
        solver.SetCost(columns[r], weight * ComputeSlices(problem, set, one) + 1);
      }
    }
  }
  Result<MilpSolution> solved = solver.Solve(deadline, seconds_left, best.values);
  if (!solved.ok() || solved->values.empty()) return best;
  MilpSolution out = best;
  out.values = solved->values;
  return out;
}

// Counts of GPUs are whole: their bound rounds up.
double Bound(const Model& model, double bound) {
  return model.integral_objective ? std::ceil(bound - 1e-6) : bound;
}

// Queues each resource's segments in service order, then fills the layouts
// of the mixes bought, GPU by GPU and start by start.
Result<PlanResult> Place(const Model& model, const CoverSet& set,
                         const std::vector<double>& values) {
  const Counts counts = ReadCounts(model, set, values);
  std::vector<std::deque<PlacedSegment>> queues(set.resources.size());
  std::vector<std::tuple<int, size_t, size_t>> by_service;  // (service, class, member)
  for (size_t c = 0; c < set.classes.size(); ++c) {
    for (size_t m = 0; m < set.classes[c].services.size(); ++m) {
      by_service.push_back({set.classes[c].services[m], c, m});
    }
  }
  std::sort(by_service.begin(), by_service.end());
  for (const auto& [service, c, m] : by_service) {
    const std::vector<int>& n = counts[c][m];
    for (size_t r = 0; r < n.size(); ++r) {
      for (int k = 0; k < n[r]; ++k) queues[r].push_back({service, *set.classes[c].best[r], 0});
    }
  }
  std::map<Resource, int> resource_index;
  for (size_t r = 0; r < set.resources.size(); ++r) resource_index[set.resources[r]] = r;
  PlanResult result;
  for (size_t m = 0; m < model.pools.size(); ++m) {
    for (size_t k = 0; k < model.pools[m].mixes.size(); ++k) {
      const long gpus = Round(values[model.mix_columns[m][k]]);
      for (long g = 0; g < gpus; ++g) {
        std::vector<PlacedSegment> segments;
        for (const Placement& p : model.pools[m].layouts[k]) {
          auto it = resource_index.find({static_cast<int>(m), p.profile});
          if (it == resource_index.end() || queues[it->second].empty()) continue;
          PlacedSegment seg = queues[it->second].front();
          queues[it->second].pop_front();
          seg.start = p.start;
          segments.push_back(seg);
        }
        result.mig().push_back(std::move(segments));
      }
    }
  }
  for (const auto& q : queues) {
    if (!q.empty()) return Status::Internal("exact planner: segments left unplaced");
  }
  return result;
}

class ExactPlanner final : public Planner {
 public:
  ExactPlanner(const ExactOptions& options, std::string name,
               std::vector<std::unique_ptr<Planner>> warm_start)
      : options_(options), name_(std::move(name)), warm_start_(std::move(warm_start)) {}

  std::string_view Name() const override { return name_; }
  bool SupportsPools() const override { return true; }
  double CompareTimeLimitS() const override { return options_.default_time_limit_s; }

  Result<PlanResult> Plan(const Problem& problem, const PlanContext& context) const override {
    TESSERA_ASSIGN_OR_RETURN(ExactRun run, PlanExact(problem, context, options_, warm_start_));
    return std::move(run.plan);
  }

 private:
  ExactOptions options_;
  std::string name_;
  std::vector<std::unique_ptr<Planner>> warm_start_;
};

}  // namespace

Result<ExactRun> PlanExact(const Problem& problem, const PlanContext& context,
                           const ExactOptions& options,
                           std::span<const std::unique_ptr<Planner>> warm_start) {
  const Clock& clock = context.clock ? *context.clock : SystemClock();
  const double limit =
      context.time_limit_s > 0 ? context.time_limit_s : options.default_time_limit_s;
  // The searches stop 5% early: placing the plan found takes the rest.
  const double search_s = 0.95 * limit;
  const Deadline deadline(clock, search_s);
  auto left = [&] { return search_s - deadline.ElapsedS(); };
  ExactRun run;
  ExactStats& stats = run.stats;
  // True once the deadline has passed (or `phase`'s solver stopped on its
  // own clock); the first phase cut short is noted.
  auto passed = [&](const char* phase, bool stopped = false) {
    if (!deadline.Passed() && !stopped) return false;
    if (stats.stopped_in.empty()) stats.stopped_in = phase;
    return true;
  };
  // The first warm-start planner (a heuristic that takes milliseconds) runs
  // first, so that there is always a plan to return; the others only when
  // the rounded relaxation is not proven optimal.
  const auto first = warm_start.first(std::min<size_t>(1, warm_start.size()));
  std::vector<std::pair<std::string, PlanResult>> heuristics =
      WarmStartPlans(problem, context, clock, limit * options.warm_start_share, first,
                     /*first_to_the_end=*/true);
  // Out of time before the model: the best heuristic plan, with no bound
  // proven beyond 0 (the engine adds the bounds it knows).
  auto heuristic_plan = [&]() -> Result<ExactRun> {
    if (heuristics.empty()) return NoPlan(limit);
    stats.start = heuristics.front().first;
    run.plan = std::move(heuristics.front().second);
    const double scale = problem.priced() ? problem.pool().front().price_per_hour : 1;
    const int gpus = GpusOf(run.plan);
    run.plan.proof = SolverProof{gpus * scale, 0, gpus == 0};
    return std::move(run);
  };
  if (passed("warm start")) return heuristic_plan();
  const CoverSet set =
      BuildCoverSet(problem, {options.max_covers, options.max_total_covers}, deadline);
  if (passed("covers")) return heuristic_plan();
  if (set.classes.empty()) return run;
  const Model model = ModelBuilder(problem, set).Build();
  stats.classes = static_cast<int>(set.classes.size());
  for (const ServiceClass& c : set.classes) {
    stats.per_service_classes += c.covers.empty();
    stats.covers += static_cast<long>(c.covers.size());
  }
  stats.columns = model.milp.columns();
  stats.rows = model.milp.rows();
  stats.elements = static_cast<long>(model.milp.elements());

  // The best plan found (values empty: none yet) and the best bound proven.
  MilpSolution best;
  double bound = 0;
  // Takes the heuristic plans that are better than the best.
  auto adopt = [&](const std::vector<std::pair<std::string, PlanResult>>& plans) {
    for (const auto& [name, plan] : plans) {
      std::optional<std::vector<double>> values = ValuesOf(plan, problem, model, set);
      if (!values) continue;
      const double objective = model.milp.Objective(*values);
      if (best.values.empty() || objective < best.objective - 1e-9) {
        best.objective = objective;
        best.values = std::move(*values);
        stats.start = name;
      }
    }
  };
  adopt(heuristics);
  if (!passed("model")) {
    MilpSolver solver(model.milp);
    ++stats.model_loads;
    TESSERA_ASSIGN_OR_RETURN(const MilpSolution lp, solver.SolveRelaxation(deadline));
    if (!lp.stopped && lp.values.empty()) {
      return Status::InvalidArgument(
          "the pool's max_count caps leave too few GPUs to serve every service");
    }
    bool proven = false;
    if (!passed("relaxation", lp.stopped)) {
      bound = std::max(bound, Bound(model, lp.bound));
      // A heuristic plan that meets the relaxation's bound is optimal
      // already: the rounded relaxation (a MILP of its own, about 1 ms on
      // ParvaGPU's small rows) could only tie it, and the tie break below
      // picks among equals either way.
      if (best.values.empty() || best.objective > bound + 1e-9) {
        TESSERA_ASSIGN_OR_RETURN(
            MilpSolution rounded,
            WithCheapestGpus(problem, model, set, RoundRelaxation(model, set, lp.values), deadline,
                             left()));
        // On a tie the rounded plan, whose cover mix follows the relaxation.
        if (!rounded.values.empty() &&
            (best.values.empty() || rounded.objective <= best.objective + 1e-9)) {
          best = std::move(rounded);
          stats.start = "rounded";
        }
      }
      proven = !best.values.empty() && best.objective <= bound + 1e-9;
    }
    if (!proven && !passed("relaxation")) {
      adopt(WarmStartPlans(problem, context, clock,
                           std::min(limit * options.warm_start_share, left()),
                           warm_start.subspan(first.size())));
      proven = best.objective <= bound + 1e-9;
    }
    if (!proven && !passed("warm start")) {
      TESSERA_ASSIGN_OR_RETURN(MilpSolution searched, solver.Solve(deadline, left(), best.values));
      passed("branch and bound", searched.stopped);
      bound = std::max(bound, Bound(model, searched.bound));
      if (!searched.values.empty() &&
          (best.values.empty() || searched.objective < best.objective - 1e-9)) {
        best = std::move(searched);
      }
    }
    if (!best.values.empty() && options.tie_break && best.objective <= bound + 1e-9 &&
        model.milp.columns() <= kTieBreakMaxColumns) {
      // Ties matter less than the optimum: they get at most as long again
      // as finding it took (and a second), never past the deadline.
      const double seconds = std::min(left(), std::max(1.0, deadline.ElapsedS()));
      const Deadline tie(clock, seconds);
      if (!passed("tie break")) best = TieBreak(solver, model, problem, set, best, tie, seconds);
    }
  }
  if (best.values.empty()) return NoPlan(limit);
  SolverProof proof{best.objective, std::min(bound, best.objective), false};
  proof.optimal = best.objective <= proof.bound + 1e-6 * std::max(1.0, proof.bound);
  // Back from the solver's units to GPUs or dollars per hour.
  proof.objective *= model.cost_scale;
  proof.bound *= model.cost_scale;
  TESSERA_ASSIGN_OR_RETURN(run.plan, Place(model, set, best.values));
  run.plan.proof = proof;
  return run;
}

Status ExactOptions::Validate() const {
  if (!(default_time_limit_s > 0)) {
    return Status::InvalidArgument("exact planner: default time limit must be > 0 s");
  }
  if (max_covers < 1) return Status::InvalidArgument("exact planner: max_covers must be >= 1");
  if (max_total_covers < 0) {
    return Status::InvalidArgument("exact planner: max_total_covers must be >= 0");
  }
  if (!(warm_start_share >= 0 && warm_start_share <= 1)) {
    return Status::InvalidArgument("exact planner: warm_start_share must be in [0, 1]");
  }
  return Status::Ok();
}

std::unique_ptr<Planner> NewExactPlanner(const ExactOptions& options, std::string name,
                                         std::vector<std::unique_ptr<Planner>> warm_start) {
  return std::make_unique<ExactPlanner>(options, std::move(name), std::move(warm_start));
}

}  // namespace tessera
