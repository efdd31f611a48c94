// PlanTransition and NaiveTransition (transition.h): input checks, the
// search for the fewest spare GPUs, the public form of the steps and the
// replay that measures a transition's summary. The matching of B's GPUs onto
// the cluster is transition_match.cc, the phase scheduler
// transition_schedule.cc; docs/transitions.md describes the algorithm.
#include "tessera/transition.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>

#include "tessera/util/input_limits.h"
#include "transition/transition_internal.h"

namespace tessera {
namespace transition_internal {

int Names::Id(const std::string& name) {
  auto [it, inserted] = ids_.try_emplace(name, static_cast<int>(names_.size()));
  if (inserted) names_.push_back(name);
  return it->second;
}

bool SameThroughput(double a, double b) {
  return std::abs(a - b) <= std::max(1e-6 * std::max(std::abs(a), std::abs(b)), 0.5e-4);
}

bool SameInstance(const Inst& a, const Inst& b) {
  return SamePlace(a, b) && a.service == b.service && a.model == b.model && a.batch == b.batch &&
         a.procs == b.procs && SameThroughput(a.tp, b.tp);
}

namespace {

Status Invalid(std::string_view side, std::string message) {
  return Status::InvalidArgument(fmt::format("{}: {}", side, message));
}

// The GPU model of `assignment`, checked when `validate`.
Result<const GpuModel*> ModelOf(const Deployment& d, const GpuAssignment& assignment,
                                std::string_view side, bool validate) {
  Result<const GpuModel*> model = FindMigGpu(GpuModelName(d, assignment));
  if (model.ok()) return model;
  if (!validate) {
    Result<const GpuModel*> any = FindGpu(d.gpu);
    if (any.ok()) return any;
    return &AllGpus().front();
  }
  return Invalid(side, fmt::format("GPU {}: {}", assignment.index, model.status().message()));
}

// Parses one deployment's GPUs into `out`, adding its instances' capacity to
// `cap`.
Status ParseSide(const Deployment& d, std::string_view side, bool validate,
                 const TransitionCapacity& shares, Parsed& parsed, Side& out,
                 std::vector<double>& cap) {
  if (validate && !UsesMig(d.sharing)) {
    return Invalid(side, "not a MIG plan (sharing mps); a transition moves MIG instances");
  }
  std::set<int> seen;
  for (const GpuAssignment& assignment : d.gpus) {
    if (validate) {
      if (assignment.shared_whole()) {
        return Invalid(side, fmt::format("GPU {} is shared whole through MPS, not a MIG plan",
                                         assignment.index));
      }
      if (!limits::kClusterGpuIndex.Contains(assignment.index)) {
        return Invalid(side, fmt::format("GPU index {}",
                                         OutOfRange(limits::kClusterGpuIndex, assignment.index)));
      }
      if (!seen.insert(assignment.index).second) {
        return Invalid(side, fmt::format("GPU index {} appears twice", assignment.index));
      }
    }
    TESSERA_ASSIGN_OR_RETURN(const GpuModel* model, ModelOf(d, assignment, side, validate));
    Gpu gpu;
    gpu.index = assignment.index;
    gpu.model = model;
    std::vector<Placement> placements;
    for (const Instance& in : assignment.instances()) {
      const int profile = model->ProfileIndex(in.profile);
      if (validate && profile < 0) {
        return Invalid(side, fmt::format("GPU {}: {} is not a MIG profile of {}", assignment.index,
                                         in.profile, model->name));
      }
      if (validate && !(std::isfinite(in.throughput_rps) && in.throughput_rps >= 0)) {
        return Invalid(side,
                       fmt::format("GPU {}: {}@{}: throughput_rps must be a finite number "
                                   ">= 0, got {}",
                                   assignment.index, in.profile, in.start, in.throughput_rps));
      }
      Inst inst;
      inst.profile = std::max(profile, 0);
      inst.start = in.start;
      inst.mask =
          profile >= 0 && in.start >= 0 && in.start < 32 ? MaskOf(*model, {profile, in.start}) : 0;
      inst.service = parsed.services.Id(in.service);
      inst.model = parsed.models.Id(in.model);
      inst.batch = in.batch;
      inst.procs = in.procs;
      inst.tp = std::isfinite(in.throughput_rps) ? in.throughput_rps : 0;
      inst.cap = inst.tp * shares.Share(in.service, in.model, in.profile, in.batch, in.procs);
      placements.push_back({inst.profile, inst.start});
      gpu.mask |= inst.mask;
      gpu.insts.push_back(inst);
      if (cap.size() <= static_cast<size_t>(inst.service)) cap.resize(inst.service + 1, 0);
      cap[inst.service] += inst.cap;
    }
    if (validate) {
      Status layout = CheckLayout(*model, placements);
      if (!layout.ok()) {
        return Invalid(side, fmt::format("GPU {}: illegal MIG layout: {}", assignment.index,
                                         layout.message()));
      }
    }
    std::sort(gpu.insts.begin(), gpu.insts.end(),
              [](const Inst& x, const Inst& y) { return x.start < y.start; });
    if (!gpu.insts.empty()) ++out.nonempty;
    out.gpus.push_back(std::move(gpu));
  }
  return Status::Ok();
}

// Each listed service's rate (the first entry of a name), checked.
Result<std::unordered_map<std::string, double>> Rates(const Deployment& d, std::string_view side,
                                                      bool validate) {
  std::unordered_map<std::string, double> rates;
  for (const ServiceOutcome& s : d.services) {
    if (validate && !(std::isfinite(s.rate_rps) && s.rate_rps >= 0)) {
      return Invalid(side, fmt::format("service {}: rate_rps must be a finite number >= 0, got {}",
                                       s.name, s.rate_rps));
    }
    rates.try_emplace(s.name, std::isfinite(s.rate_rps) ? std::max(s.rate_rps, 0.0) : 0.0);
  }
  return rates;
}

}  // namespace

Result<Parsed> Parse(const Deployment& from, const Deployment& to, bool validate) {
  Parsed parsed;
  if (validate) {
    Result<const GpuModel*> a = FindMigGpu(from.gpu);
    if (!a.ok()) return Invalid("from", a.status().message());
    Result<const GpuModel*> b = FindMigGpu(to.gpu);
    if (!b.ok()) return Invalid("to", b.status().message());
    if (*a != *b) {
      return Status::InvalidArgument(
          fmt::format("the two plans are for different GPU models: {} (from) and {} (to)",
                      (*a)->name, (*b)->name));
    }
  }
  TESSERA_ASSIGN_OR_RETURN(auto rates_a, Rates(from, "from", validate));
  TESSERA_ASSIGN_OR_RETURN(auto rates_b, Rates(to, "to", validate));
  const TransitionCapacity shares(from, to);
  TESSERA_RETURN_IF_ERROR(
      ParseSide(from, "from", validate, shares, parsed, parsed.a, parsed.cap_a));
  TESSERA_RETURN_IF_ERROR(ParseSide(to, "to", validate, shares, parsed, parsed.b, parsed.cap_b));
  for (const ServiceOutcome& s : from.services) {
    if (rates_b.count(s.name)) parsed.services.Id(s.name);
  }
  const size_t n = parsed.services.size();
  parsed.cap_a.resize(n, 0);
  parsed.cap_b.resize(n, 0);
  parsed.floor.assign(n, 0);
  parsed.keep.assign(n, 0);
  for (size_t s = 0; s < n; ++s) {
    const std::string& name = parsed.services.Name(static_cast<int>(s));
    auto a = rates_a.find(name);
    auto b = rates_b.find(name);
    if (a == rates_a.end() || b == rates_b.end()) continue;
    parsed.floor[s] = std::min(a->second, b->second);
    parsed.keep[s] = std::min({parsed.floor[s], parsed.cap_a[s], parsed.cap_b[s]});
  }
  return parsed;
}

std::map<int, int> GpuMapOf(const Parsed& parsed, const ClusterLayout& layout) {
  std::map<int, int> map;
  for (size_t b = 0; b < parsed.b.gpus.size(); ++b) {
    const int slot = layout.slot_of_b[b];
    if (slot >= 0) map[parsed.b.gpus[b].index] = layout.index[slot];
  }
  return map;
}

std::vector<TransitionPhase> EmitPhases(const Parsed& parsed, const ClusterLayout& layout,
                                        const std::vector<std::vector<Op>>& phases) {
  std::vector<TransitionPhase> out;
  int next_id = 1;
  for (const std::vector<Op>& ops : phases) {
    if (ops.empty()) continue;
    std::vector<const Op*> order;
    for (const Op& op : ops) order.push_back(&op);
    auto rank = [](StepAction a) {
      return a == StepAction::kDestroy ? 0 : a == StepAction::kReconfigure ? 1 : 2;
    };
    std::sort(order.begin(), order.end(), [&](const Op* x, const Op* y) {
      const int ix = layout.index[x->slot], iy = layout.index[y->slot];
      const int sx = x->action == StepAction::kCreate ? x->to.start : x->from.start;
      const int sy = y->action == StepAction::kCreate ? y->to.start : y->from.start;
      return std::tuple(rank(x->action), ix, sx) < std::tuple(rank(y->action), iy, sy);
    });
    TransitionPhase phase;
    for (const Op* op : order) {
      const GpuModel& model = *layout.model[op->slot];
      TransitionStep step;
      step.id = "s" + std::to_string(next_id++);
      step.action = op->action;
      step.gpu = layout.index[op->slot];
      const Inst& where = op->action == StepAction::kCreate ? op->to : op->from;
      step.profile = model.profiles[where.profile].name;
      step.start = where.start;
      if (op->action == StepAction::kDestroy) {
        step.service = parsed.services.Name(op->from.service);
      } else {
        step.service = parsed.services.Name(op->to.service);
        step.model = parsed.models.Name(op->to.model);
        step.batch = op->to.batch;
        step.procs = op->to.procs;
        step.throughput_rps = op->to.tp;
        if (op->action == StepAction::kReconfigure) {
          step.from_service = parsed.services.Name(op->from.service);
        }
      }
      phase.steps.push_back(std::move(step));
    }
    out.push_back(std::move(phase));
  }
  return out;
}

TransitionSummary MeasureTransition(const Deployment& from, const Deployment& to,
                                    const Transition& transition) {
  // Floors by service name.
  std::unordered_map<std::string, double> rate_a;
  for (const ServiceOutcome& s : from.services) rate_a.try_emplace(s.name, s.rate_rps);
  std::unordered_map<std::string, double> floors;
  for (const ServiceOutcome& s : to.services) {
    auto a = rate_a.find(s.name);
    if (a != rate_a.end() && !floors.count(s.name))
      floors[s.name] = std::min(a->second, s.rate_rps);
  }
  struct Live {
    std::string service;
    double tp = 0;
  };
  std::map<std::pair<int, int>, Live> live;  // (cluster GPU, start)
  std::unordered_map<int, int> count;        // instances per cluster GPU
  std::unordered_map<std::string, double> cap;
  const TransitionCapacity shares(from, to);
  for (const GpuAssignment& g : from.gpus) {
    for (const Instance& in : g.instances()) {
      const double capacity = shares.Of(in);
      live[{g.index, in.start}] = {in.service, capacity};
      ++count[g.index];
      cap[in.service] += capacity;
    }
  }
  int nonempty = static_cast<int>(
      std::count_if(count.begin(), count.end(), [](const auto& kv) { return kv.second > 0; }));
  TransitionSummary summary;
  bool any_floor = false;
  double ratio = std::numeric_limits<double>::infinity();
  auto observe = [&](const std::string& name) {
    auto f = floors.find(name);
    if (f == floors.end() || f->second <= 0) return;
    auto c = cap.find(name);
    const double capacity = c == cap.end() ? 0.0 : std::max(c->second, 0.0);  // no -1e-16
    ratio = std::min(ratio, capacity / f->second);
  };
  for (const auto& [name, floor] : floors) {
    any_floor = any_floor || floor > 0;
    observe(name);
  }
  summary.peak_gpus = nonempty;
  std::set<int> touched;
  for (const TransitionPhase& phase : transition.phases) {
    std::set<int> opened;
    std::vector<const std::string*> changed;  // services whose capacity the phase changes
    for (const TransitionStep& step : phase.steps) {
      ++summary.steps;
      touched.insert(step.gpu);
      auto it = live.find({step.gpu, step.start});
      if (step.action == StepAction::kCreate) {
        if (count[step.gpu] == 0) opened.insert(step.gpu);
      } else if (it != live.end()) {
        cap[it->second.service] -= it->second.tp;
        changed.push_back(&it->second.service);
      }
    }
    summary.peak_gpus = std::max(summary.peak_gpus, nonempty + static_cast<int>(opened.size()));
    // The worst state: destroys and reconfigures done, creates not yet.
    for (const std::string* name : changed) observe(*name);
    changed.clear();
    for (const TransitionStep& step : phase.steps) {
      if (step.action == StepAction::kDestroy) {
        if (live.erase({step.gpu, step.start}) && --count[step.gpu] == 0) --nonempty;
        continue;
      }
      if (step.action == StepAction::kCreate && count[step.gpu]++ == 0) ++nonempty;
      const double capacity = shares.Of(step);
      live[{step.gpu, step.start}] = {step.service, capacity};
      cap[step.service] += capacity;
      changed.push_back(&step.service);
    }
    for (const std::string* name : changed) observe(*name);
  }
  summary.phases = static_cast<int>(transition.phases.size());
  summary.gpus_touched = static_cast<int>(touched.size());
  summary.min_capacity_ratio = any_floor ? ratio : 1;
  return summary;
}

}  // namespace transition_internal

using namespace transition_internal;  // NOLINT: this file implements them

std::string_view StepActionName(StepAction action) {
  switch (action) {
    case StepAction::kCreate:
      return "create";
    case StepAction::kDestroy:
      return "destroy";
    case StepAction::kReconfigure:
      return "reconfigure";
  }
  return "create";
}

namespace {

Transition Finish(const Deployment& from, const Deployment& to, const Parsed& parsed,
                  ClusterLayout layout, const std::vector<std::vector<Op>>& phases,
                  int spare_gpus) {
  PlaceEmptyGpus(parsed, layout);
  Transition t;
  t.gpu = from.gpu;
  t.spare_gpus = spare_gpus;
  t.gpu_map = GpuMapOf(parsed, layout);
  t.phases = EmitPhases(parsed, layout, phases);
  t.summary = MeasureTransition(from, to, t);
  return t;
}

int StepsOf(const Schedule& schedule) {
  int steps = 0;
  for (const std::vector<Op>& ops : schedule.phases) steps += static_cast<int>(ops.size());
  return steps;
}

// Destroying what differs and creating what differs between A and B on
// `layout` (a reconfigure counting once).
int DiffSteps(const Parsed& parsed, const ClusterLayout& layout) {
  std::vector<const std::vector<Inst>*> target(layout.index.size(), nullptr);
  for (size_t b = 0; b < parsed.b.gpus.size(); ++b) {
    if (layout.slot_of_b[b] >= 0) target[layout.slot_of_b[b]] = &parsed.b.gpus[b].insts;
  }
  static const std::vector<Inst> kNone;
  int steps = 0;
  for (size_t slot = 0; slot < layout.index.size(); ++slot) {
    const std::vector<Inst>& now = slot < parsed.a.gpus.size() ? parsed.a.gpus[slot].insts : kNone;
    const Diff d = DiffOf(now, target[slot] ? *target[slot] : kNone);
    steps += static_cast<int>(d.destroy.size() + d.reconf.size() + d.create.size());
  }
  return steps;
}

// True when `x` is the better of two successful schedules: no more steps
// than its mapping's differences, then fewer phases, then fewer steps.
bool Better(const Parsed& parsed, const Schedule& x, const Schedule& y) {
  auto key = [&](const Schedule& s) {
    return std::tuple(StepsOf(s) > DiffSteps(parsed, s.layout), s.phases.size(), StepsOf(s));
  };
  return key(x) < key(y);
}

// The transition that always keeps the floors, given a spare GPU for every
// GPU of B: all of B created on new GPUs, then all of A destroyed. (The
// scheduler finds one whenever this one fits; this is its safety net.)
Schedule AllOfBFirst(const Parsed& parsed, ClusterLayout layout) {
  Schedule schedule;
  schedule.ok = true;
  schedule.phases.resize(2);
  for (size_t slot = 0; slot < parsed.a.gpus.size(); ++slot) {
    for (const Inst& in : parsed.a.gpus[slot].insts) {
      schedule.phases[1].push_back({StepAction::kDestroy, static_cast<int>(slot), in, {}});
    }
  }
  for (size_t b = 0; b < parsed.b.gpus.size(); ++b) {
    layout.slot_of_b[b] = -1;
    if (parsed.b.gpus[b].insts.empty()) continue;
    layout.slot_of_b[b] = layout.AddSlot(parsed.b.gpus[b].model);
    for (const Inst& in : parsed.b.gpus[b].insts) {
      schedule.phases[0].push_back({StepAction::kCreate, layout.slot_of_b[b], {}, in});
    }
  }
  std::erase_if(schedule.phases, [](const std::vector<Op>& ops) { return ops.empty(); });
  schedule.layout = std::move(layout);
  return schedule;
}

// ScheduleTransition, then MergeReplaced.
Schedule Scheduled(const Parsed& parsed, const ClusterLayout& layout, int budget,
                   const ScheduleHints& hints = {}) {
  Schedule schedule = ScheduleTransition(parsed, layout, budget, hints);
  MergeReplaced(parsed, schedule, budget);
  return schedule;
}

// A schedule that moved a B GPU after making some of its instances in place
// takes more steps than its final mapping needs. Up to three more passes
// leave the B GPUs moved so alone until they move (the frozen set growing
// with each pass's wasted moves), and one more schedules the final mapping
// from the start; the best schedule wins.
Schedule WithoutWaste(const Parsed& parsed, const ClusterLayout& layout, Schedule first,
                      int budget) {
  if (!first.ok || StepsOf(first) <= DiffSteps(parsed, first.layout)) return first;
  Schedule best = std::move(first);
  Schedule retry = Scheduled(parsed, best.layout, budget);
  std::vector<char> frozen(parsed.b.gpus.size(), 0);
  std::vector<int> wasted = best.wasted_b;
  if (retry.ok && Better(parsed, retry, best)) best = std::move(retry);
  for (int pass = 0; pass < 3 && !wasted.empty(); ++pass) {
    for (int b : wasted) frozen[b] = 1;
    Schedule again = Scheduled(parsed, layout, budget, {frozen, {}});
    if (!again.ok) break;
    wasted = again.wasted_b;
    if (Better(parsed, again, best)) best = std::move(again);
  }
  return best;
}

// The schedule PlanTransition returns within `budget`: the first one, then
// two passes that learn from the last successful one which B GPUs finished
// late (they wait longest for slices to free up): those go onto B's new
// GPUs, where B has more than A, and move first when a GPU is free.
Schedule BestSchedule(const Parsed& parsed, int budget) {
  const ClusterLayout layout = MatchGpus(parsed);
  Schedule best = WithoutWaste(parsed, layout, Scheduled(parsed, layout, budget), budget);
  if (!best.ok) {
    const int base = std::max(parsed.a.nonempty, parsed.b.nonempty);
    return budget >= base + parsed.b.nonempty ? AllOfBFirst(parsed, layout) : best;
  }
  std::vector<int> depth = best.finish;
  for (int pass = 0; pass < 2; ++pass) {
    const ClusterLayout deep = MatchGpus(parsed, depth);
    Schedule next = Scheduled(parsed, deep, budget, {{}, depth});
    if (!next.ok) break;
    depth = next.finish;
    if (Better(parsed, next, best)) best = std::move(next);
  }
  return best;
}

std::string ServiceList(const Parsed& parsed, const std::vector<int>& services) {
  std::string out;
  const size_t shown = std::min<size_t>(services.size(), 5);
  for (size_t i = 0; i < shown; ++i) {
    if (i > 0) out += ", ";
    out += parsed.services.Name(services[i]);
  }
  if (services.size() > shown) out += fmt::format(" and {} more", services.size() - shown);
  return out;
}

}  // namespace

Result<TransitionPlan> PlanTransition(const Deployment& from, const Deployment& to,
                                      const TransitionOptions& options) {
  if (!limits::kSpareGpus.Contains(options.spare_gpus)) {
    return Status::InvalidArgument(
        "spare GPUs: " + OutOfRange(limits::kSpareGpus, static_cast<double>(options.spare_gpus)));
  }
  TESSERA_ASSIGN_OR_RETURN(Parsed parsed, Parse(from, to, /*validate=*/true));
  const int base = std::max(parsed.a.nonempty, parsed.b.nonempty);
  Schedule schedule = BestSchedule(parsed, base + options.spare_gpus);
  TransitionPlan plan;
  if (schedule.ok) {
    plan.transition =
        Finish(from, to, parsed, std::move(schedule.layout), schedule.phases, options.spare_gpus);
    return plan;
  }
  // The fewest spare GPUs this planner needs: with as many spares as B has
  // GPUs every blocked B GPU can move onto a spare, so that run succeeds; a
  // run with the spares it used makes the same choices, and runs with fewer
  // are tried upward (binary search over a wide range).
  const int unlimited = parsed.b.nonempty;
  int needed = unlimited;
  const ClusterLayout layout = MatchGpus(parsed);
  Schedule wide = ScheduleTransition(parsed, layout, base + unlimited);
  if (wide.ok) {
    int hi = std::clamp(wide.peak_gpus - base, options.spare_gpus + 1, unlimited);
    int lo = options.spare_gpus;  // fails
    while (hi - lo > 1) {
      const int mid = hi - lo <= 8 ? lo + 1 : lo + (hi - lo) / 2;
      if (ScheduleTransition(parsed, layout, base + mid).ok) {
        hi = mid;
      } else {
        lo = mid;
      }
    }
    needed = hi;
  }
  plan.spare_gpus_needed = std::max(needed, options.spare_gpus + 1);
  const size_t blocked = schedule.blocked_services.size();
  const std::string who = blocked == 0
                              ? "the services"
                              : fmt::format("{} ({})", blocked == 1 ? "service" : "services",
                                            ServiceList(parsed, schedule.blocked_services));
  plan.reason = fmt::format(
      "with {} spare GPU{} the planner finds no order that keeps the floors (the lower of the old "
      "and new rate) of {}: "
      "{}; {} spare GPU{} make{} it possible",
      options.spare_gpus, options.spare_gpus == 1 ? "" : "s", who, schedule.reason,
      plan.spare_gpus_needed, plan.spare_gpus_needed == 1 ? "" : "s",
      plan.spare_gpus_needed == 1 ? "s" : "");
  return plan;
}

Deployment PlacedOnCluster(const Deployment& to, const Transition& transition) {
  Deployment d = to;
  for (GpuAssignment& g : d.gpus) {
    auto it = transition.gpu_map.find(g.index);
    if (it != transition.gpu_map.end()) g.index = it->second;
  }
  std::stable_sort(
      d.gpus.begin(), d.gpus.end(),
      [](const GpuAssignment& a, const GpuAssignment& b) { return a.index < b.index; });
  return d;
}

Transition NaiveTransition(const Deployment& from, const Deployment& to,
                           const std::map<int, int>& gpu_map) {
  Result<Parsed> parsed_or = Parse(from, to, /*validate=*/false);
  const Parsed& parsed = *parsed_or;  // never fails without validation
  ClusterLayout layout;
  int max_index = -1;
  std::unordered_map<int, int> slot_of_index;
  for (const Gpu& g : parsed.a.gpus) {
    max_index = std::max(max_index, g.index);
    if (slot_of_index.count(g.index)) continue;
    slot_of_index[g.index] = static_cast<int>(layout.index.size());
    layout.index.push_back(g.index);
    layout.model.push_back(g.model);
  }
  for (const auto& [b_index, cluster] : gpu_map) max_index = std::max(max_index, cluster);
  layout.next_index = max_index + 1;
  layout.slot_of_b.assign(parsed.b.gpus.size(), -1);
  std::vector<std::vector<Inst>> now(layout.index.size()), target(layout.index.size());
  for (const Gpu& g : parsed.a.gpus) {
    auto& insts = now[slot_of_index[g.index]];
    insts.insert(insts.end(), g.insts.begin(), g.insts.end());
  }
  std::set<int> used_slots;
  for (size_t b = 0; b < parsed.b.gpus.size(); ++b) {
    const Gpu& g = parsed.b.gpus[b];
    auto it = gpu_map.find(g.index);
    int slot = -1;
    if (it != gpu_map.end()) {
      auto s = slot_of_index.find(it->second);
      if (s == slot_of_index.end()) {
        slot = static_cast<int>(layout.index.size());
        layout.index.push_back(it->second);
        layout.model.push_back(g.model);
        slot_of_index[it->second] = slot;
        now.emplace_back();
        target.emplace_back();
      } else {
        slot = s->second;
      }
    }
    if (slot < 0 || !used_slots.insert(slot).second) {
      slot = layout.AddSlot(g.model);  // unmapped (or mapped twice): a GPU of its own
      now.emplace_back();
      target.emplace_back();
    }
    layout.slot_of_b[b] = slot;
    target[slot] = g.insts;
  }
  std::vector<std::vector<Op>> phases(2);
  for (size_t slot = 0; slot < now.size(); ++slot) {
    const Diff diff = DiffOf(now[slot], target[slot]);
    const int s = static_cast<int>(slot);
    for (int i : diff.destroy) phases[0].push_back({StepAction::kDestroy, s, now[slot][i], {}});
    for (auto [i, j] : diff.reconf) {
      phases[0].push_back({StepAction::kReconfigure, s, now[slot][i], target[slot][j]});
    }
    for (int j : diff.create) phases[1].push_back({StepAction::kCreate, s, {}, target[slot][j]});
  }
  Transition t;
  t.gpu = from.gpu;
  t.gpu_map = GpuMapOf(parsed, layout);
  t.phases = EmitPhases(parsed, layout, phases);
  t.summary = MeasureTransition(from, to, t);
  t.spare_gpus = std::max(0, t.summary.peak_gpus - std::max(parsed.a.nonempty, parsed.b.nonempty));
  return t;
}

Instance InstanceAfter(const TransitionStep& step) {
  Instance i;
  i.profile = step.profile;
  i.start = step.start;
  i.service = step.service;
  i.model = step.model;
  i.batch = step.batch;
  i.procs = step.procs;
  i.throughput_rps = step.throughput_rps;
  return i;
}

}  // namespace tessera
