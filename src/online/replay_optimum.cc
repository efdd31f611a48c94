// SolveReplayOptimum: GRMU's ILP (section 6) over the event times of a small
// window, solved lexicographically with CBC. The placement variables are
// GRMU's y_ijk with its start z_ijk enumerated: one binary per (VM, event
// time, GPU, allowed start), the assignment form of Eq. 12-16 (same integer
// points, no big-M), so non-overlap is one row per memory slice.
#include "tessera/online/replay_optimum.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <tuple>
#include <utility>

#include "planners/exact/milp.h"

namespace tessera {
namespace {

// The cluster state at one time: the VMs that must be placed together.
struct State {
  double duration_h = 0;  // until the next event time (0: an instant)
  std::vector<int> vms;   // trace indices, ascending
  bool chained = false;   // part of the sequence of event times (migrations count)
};

// One state per distinct event time: the VMs resident once its events are
// done (arrived at or before it, departing after it). A VM that departs at
// its arrival time is resident only for an instant, beside the VMs before it
// in trace order (replay: departures first, then arrivals in order, and its
// own departure before the next arrival): an instant state of its own.
// With only Eq. 3 to solve, a state whose VMs are a subset of another's adds
// nothing (`maximal_only`).
std::vector<State> BuildStates(const VmTrace& trace, bool maximal_only) {
  std::vector<double> times;
  for (const VmRequest& vm : trace.vms) {
    times.push_back(vm.arrival_s);
    if (vm.departure_s != kNeverDeparts) times.push_back(vm.departure_s);
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  std::vector<State> states;
  for (size_t m = 0; m < times.size(); ++m) {
    const double t = times[m];
    State s;
    s.duration_h = m + 1 < times.size() ? (times[m + 1] - t) / 3600 : 0;
    s.chained = true;
    for (const VmRequest& vm : trace.vms) {
      if (vm.arrival_s <= t && vm.departure_s > t) s.vms.push_back(vm.id);
    }
    for (const VmRequest& vm : trace.vms) {
      if (vm.arrival_s != t || vm.departure_s != t) continue;
      State instant;
      for (int i : s.vms) {
        if (i < vm.id) instant.vms.push_back(i);
      }
      instant.vms.push_back(vm.id);
      states.push_back(std::move(instant));
    }
    if (!s.vms.empty()) states.push_back(std::move(s));
  }
  if (!maximal_only) return states;
  std::vector<State> maximal;
  for (size_t a = 0; a < states.size(); ++a) {
    bool covered = false;
    for (size_t b = 0; b < states.size() && !covered; ++b) {
      const std::vector<int>& va = states[a].vms;
      const std::vector<int>& vb = states[b].vms;
      // Covered by a strict superset, or by an equal set earlier.
      covered = b != a && std::includes(vb.begin(), vb.end(), va.begin(), va.end()) &&
                (vb.size() > va.size() || b < a);
    }
    if (!covered) {
      maximal.push_back(std::move(states[a]));
      maximal.back().chained = false;
      maximal.back().duration_h = 0;
    }
  }
  return maximal;
}

struct Gpu {
  int host = 0;  // index into Model::hosts
};

struct Host {
  const HostSpec* spec = nullptr;
  std::vector<int> gpus;  // indices into Model::gpus
};

// Hosts identical in CPU, RAM and GPUs are interchangeable at every event
// time, and no state uses more hosts than it has VMs: of each class the
// first `peak` hosts in trace order are kept.
std::vector<Host> KeptHosts(const VmTrace& trace, size_t peak, std::vector<Gpu>& gpus) {
  std::map<std::tuple<double, double, int>, size_t> kept_per_class;
  std::vector<Host> hosts;
  for (const HostSpec& spec : trace.hosts) {
    if (spec.gpus <= 0) continue;
    size_t& kept = kept_per_class[{spec.cpu_milli, spec.memory_mib, spec.gpus}];
    if (kept == peak) continue;
    ++kept;
    Host h{&spec, {}};
    for (int k = 0; k < spec.gpus; ++k) {
      h.gpus.push_back(static_cast<int>(gpus.size()));
      gpus.push_back({static_cast<int>(hosts.size())});
    }
    hosts.push_back(std::move(h));
  }
  return hosts;
}

struct Placement {
  int gpu = -1;
  int start = -1;
};

class Model {
 public:
  Model(const VmTrace& trace, std::vector<State> states)
      : trace_(trace), states_(std::move(states)), gi_(GiEncodings(*trace.gpu)) {
    size_t peak = 0;
    for (const State& s : states_) peak = std::max(peak, s.vms.size());
    hosts_ = KeptHosts(trace, peak, gpus_);
  }

  // Columns the model would have, counted before building it.
  long long CountColumns() const {
    long long columns = static_cast<long long>(trace_.vms.size());
    for (size_t m = 0; m < states_.size(); ++m) {
      for (int i : states_[m].vms) {
        for (const Host& h : hosts_) {
          if (Fits(i, h)) columns += static_cast<long long>(h.gpus.size()) * Starts(i).size();
        }
      }
      if (states_[m].duration_h > 0) columns += static_cast<long long>(hosts_.size());
      if (const int next = NextChained(m); next >= 0) {
        columns += static_cast<long long>(Common(m, next).size());
      }
    }
    return columns;
  }

  void Build() {
    const int n = static_cast<int>(trace_.vms.size());
    for (int i = 0; i < n; ++i) x_.push_back(milp_.AddColumn(-1, 0, 1, true));  // Eq. 3
    y_.resize(states_.size());
    phi_.resize(states_.size());
    load_.assign(states_.size(), std::vector<std::vector<std::pair<int, double>>>(gpus_.size()));
    for (size_t m = 0; m < states_.size(); ++m) BuildState(m);
    for (size_t m = 0; m < states_.size(); ++m) {
      const int next = NextChained(m);
      if (next < 0) continue;
      for (int i : Common(m, next))
        moves_.push_back({m, static_cast<size_t>(next), i, milp_.AddColumn(0, 0, 1, true)});
    }
  }

  // Stage 1 runs on `maximal` (this window's maximal states only, same
  // hosts), whose plan every state here inherits from a state holding all
  // its VMs; stages 2 and 3 run here.
  Result<ReplayOptimum> Solve(const OptimumOptions& options, const Model& maximal) {
    ReplayOptimum r;
    r.requests = static_cast<int>(trace_.vms.size());
    r.event_times = static_cast<int>(states_.size());
    r.columns = milp_.columns();
    const double started_ms = options.clock->NowMs();
    // Stages 1 and 2 break the symmetry of interchangeable GPUs and hosts at
    // each event time, from starts relabelled to match; stage 3 cannot (a
    // relabelling must then hold across event times).
    // Stage 1, Eq. 3: the most accepted VMs, from a first fit that never
    // migrates (a plan as good as an online first fit's).
    MilpSolver first(maximal.SymmetryBroken());
    const auto greedy = maximal.Canonical(maximal.Greedy());
    TESSERA_ASSIGN_OR_RETURN(MilpSolution accept, RunStage(first, options, maximal.Point(greedy)));
    r.rows = first.rows();
    r.accepted_bound = static_cast<int>(std::floor(-accept.bound + 1e-6));
    r.acceptance_proven = accept.optimal;
    std::vector<double> best =
        Point(Inherit(maximal, accept.values.empty() ? greedy : maximal.Placements(accept.values)));
    const int accepted = CountAccepted(best);
    if (r.acceptance_proven && options.objectives >= 2) {
      // Stage 2, Eq. 4: the least active hardware over time, the acceptance held.
      MilpSolver solver(SymmetryBroken());
      for (int col : x_) solver.SetCost(col, 0);
      std::vector<std::pair<int, double>> all_x;
      for (int col : x_) all_x.push_back({col, 1});
      solver.AddRow(all_x, accepted, kMilpInfinity);
      std::vector<std::pair<int, double>> hardware;
      for (const auto& per_host : phi_) {
        for (const auto& [col, weight] : per_host) {
          solver.SetCost(col, weight);
          hardware.push_back({col, weight});
        }
      }
      TESSERA_ASSIGN_OR_RETURN(MilpSolution hw,
                               RunStage(solver, options, Point(Canonical(Placements(best)))));
      r.rows = std::max(r.rows, solver.rows());
      if (!hw.values.empty()) best = hw.values;
      r.active_hw_proven = hw.optimal;
      if (r.active_hw_proven && options.objectives >= 3) {
        // Stage 3, Eq. 5: the fewest migrations, acceptance and hardware held.
        MilpSolver moves(milp_);
        for (int col : x_) moves.SetCost(col, 0);
        moves.AddRow(all_x, accepted, kMilpInfinity);
        const double held = hw.objective + 1e-6 * std::max(1.0, std::abs(hw.objective));
        moves.AddRow(hardware, -kMilpInfinity, held);
        AddMoveRows(moves);
        TESSERA_ASSIGN_OR_RETURN(MilpSolution mig,
                                 RunStage(moves, options, Point(Placements(best))));
        r.rows = std::max(r.rows, moves.rows());
        if (!mig.values.empty()) best = mig.values;
        r.migrations_proven = mig.optimal;
      }
    }
    Decode(best, r);
    if (r.acceptance_proven) r.accepted_bound = r.accepted;
    r.solve_ms = options.clock->NowMs() - started_ms;
    return r;
  }

  using Plan = std::vector<std::vector<Placement>>;  // [state][vm]

  // The better of two first fits (in trace order, and smallest GI first,
  // which favours the count Eq. 3 maximises), each VM at one (GPU, start)
  // for its whole life: free in every state it is in, with room on the host.
  Plan Greedy() const {
    std::vector<int> order(trace_.vms.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    Plan in_order = FirstFit(order);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return gi_[trace_.vms[a].profile].g < gi_[trace_.vms[b].profile].g;
    });
    Plan smallest_first = FirstFit(order);
    return CountPlaced(smallest_first) > CountPlaced(in_order) ? smallest_first : in_order;
  }

  int CountPlaced(const Plan& where) const {
    std::vector<char> placed(trace_.vms.size(), 0);
    for (const auto& state : where) {
      for (size_t i = 0; i < state.size(); ++i) placed[i] |= state[i].gpu >= 0;
    }
    return static_cast<int>(std::count(placed.begin(), placed.end(), 1));
  }

  Plan FirstFit(const std::vector<int>& order) const {
    const size_t n = trace_.vms.size();
    Plan where(states_.size(), std::vector<Placement>(n));
    std::vector<std::vector<unsigned>> used(states_.size(), std::vector<unsigned>(gpus_.size(), 0));
    std::vector<std::vector<std::pair<double, double>>> host_use(
        states_.size(), std::vector<std::pair<double, double>>(hosts_.size(), {0, 0}));
    for (const int vm_index : order) {
      const size_t i = static_cast<size_t>(vm_index);
      std::vector<size_t> in;
      for (size_t m = 0; m < states_.size(); ++m) {
        if (std::binary_search(states_[m].vms.begin(), states_[m].vms.end(), static_cast<int>(i)))
          in.push_back(m);
      }
      const VmRequest& vm = trace_.vms[i];
      const int size = gi_[vm.profile].g;
      bool placed = false;
      for (size_t j = 0; j < hosts_.size() && !placed; ++j) {
        const HostSpec& h = *hosts_[j].spec;
        bool room = true;
        for (size_t m : in) {
          room &= host_use[m][j].first + vm.cpu_milli <= h.cpu_milli &&
                  host_use[m][j].second + vm.memory_mib <= h.memory_mib;
        }
        if (!room) continue;
        for (int g : hosts_[j].gpus) {
          for (int start : Starts(static_cast<int>(i))) {
            const unsigned mask = ((1u << size) - 1) << start;
            bool free = true;
            for (size_t m : in) free &= (used[m][g] & mask) == 0;
            if (!free) continue;
            for (size_t m : in) {
              used[m][g] |= mask;
              host_use[m][j].first += vm.cpu_milli;
              host_use[m][j].second += vm.memory_mib;
              where[m][i] = {g, start};
            }
            placed = true;
            break;
          }
          if (placed) break;
        }
      }
    }
    return where;
  }

  // The same plan relabelled at each state so that it meets the symmetry
  // rows: a host's GPUs by decreasing memory slices used, then the hosts of
  // a class by decreasing slices used (each keeping its GPUs' order).
  Plan Canonical(Plan where) const {
    std::map<std::tuple<double, double, int>, std::vector<size_t>> classes;
    for (size_t j = 0; j < hosts_.size(); ++j) {
      const HostSpec& h = *hosts_[j].spec;
      classes[{h.cpu_milli, h.memory_mib, h.gpus}].push_back(j);
    }
    for (size_t m = 0; m < states_.size(); ++m) {
      std::vector<int> load(gpus_.size(), 0);
      for (int i : states_[m].vms) {
        if (where[m][i].gpu >= 0) load[where[m][i].gpu] += gi_[trace_.vms[i].profile].g;
      }
      // rank[g]: g's position among its host's GPUs once sorted.
      std::vector<size_t> rank(gpus_.size(), 0);
      std::vector<int> host_load(hosts_.size(), 0);
      for (size_t j = 0; j < hosts_.size(); ++j) {
        std::vector<int> order = hosts_[j].gpus;
        std::stable_sort(order.begin(), order.end(),
                         [&](int a, int b) { return load[a] > load[b]; });
        for (size_t k = 0; k < order.size(); ++k) {
          rank[order[k]] = k;
          host_load[j] += load[order[k]];
        }
      }
      std::vector<size_t> new_host(hosts_.size());
      for (const auto& [key, members] : classes) {
        std::vector<size_t> order = members;
        std::stable_sort(order.begin(), order.end(),
                         [&](size_t a, size_t b) { return host_load[a] > host_load[b]; });
        for (size_t k = 0; k < order.size(); ++k) new_host[order[k]] = members[k];
      }
      for (int i : states_[m].vms) {
        Placement& p = where[m][i];
        if (p.gpu >= 0) p.gpu = hosts_[new_host[gpus_[p.gpu].host]].gpus[rank[p.gpu]];
      }
    }
    return where;
  }

  // Each state's placements from a state of `maximal` holding all its VMs.
  Plan Inherit(const Model& maximal, const Plan& from) const {
    Plan where(states_.size(), std::vector<Placement>(trace_.vms.size()));
    for (size_t m = 0; m < states_.size(); ++m) {
      const std::vector<int>& vms = states_[m].vms;
      for (size_t k = 0; k < maximal.states_.size(); ++k) {
        const std::vector<int>& big = maximal.states_[k].vms;
        if (!std::includes(big.begin(), big.end(), vms.begin(), vms.end())) continue;
        for (int i : vms) where[m][i] = from[k][i];
        break;
      }
    }
    return where;
  }

  // The model's columns for a plan: x, y, active hosts, moves.
  std::vector<double> Point(const Plan& where) const {
    std::vector<double> values(milp_.columns(), 0);
    for (size_t m = 0; m < states_.size(); ++m) {
      std::vector<char> active(hosts_.size(), 0);
      for (const Var& v : y_[m]) {
        const Placement& p = where[m][v.vm];
        if (p.gpu != v.gpu || p.start != v.start) continue;
        values[v.col] = 1;
        values[x_[v.vm]] = 1;
        active[gpus_[v.gpu].host] = 1;
      }
      for (size_t j = 0; j < phi_[m].size(); ++j) values[phi_[m][j].first] = active[j];
    }
    for (const Move& mv : moves_) {
      const Placement& a = where[mv.from][mv.vm];
      const Placement& b = where[mv.to][mv.vm];
      values[mv.col] = (a.gpu != b.gpu || a.start != b.start) ? 1 : 0;
    }
    return values;
  }

 private:
  struct Move {
    size_t from = 0, to = 0;  // states
    int vm = 0;
    int col = 0;
  };
  struct Var {
    int vm = 0;
    int gpu = 0;
    int start = 0;
    int col = 0;
  };

  const std::vector<int>& Starts(int vm) const { return gi_[trace_.vms[vm].profile].starts; }
  bool Fits(int vm, const Host& h) const {
    const VmRequest& r = trace_.vms[vm];
    return r.cpu_milli <= h.spec->cpu_milli && r.memory_mib <= h.spec->memory_mib;
  }
  int NextChained(size_t m) const {
    if (!states_[m].chained) return -1;
    for (size_t k = m + 1; k < states_.size(); ++k) {
      if (states_[k].chained) return static_cast<int>(k);
    }
    return -1;
  }
  std::vector<int> Common(size_t a, size_t b) const {
    std::vector<int> both;
    std::set_intersection(states_[a].vms.begin(), states_[a].vms.end(), states_[b].vms.begin(),
                          states_[b].vms.end(), std::back_inserter(both));
    return both;
  }

  void BuildState(size_t m) {
    const State& state = states_[m];
    const int slices = trace_.gpu->memory_slices;
    // covering[gpu][slice]: the placements that use that memory slice (Eq. 12-13).
    std::vector<std::vector<std::vector<std::pair<int, double>>>> covering(
        gpus_.size(), std::vector<std::vector<std::pair<int, double>>>(slices));
    std::vector<std::vector<std::pair<int, double>>> cpu(hosts_.size()), ram(hosts_.size());
    std::vector<std::vector<std::vector<std::pair<int, double>>>> on_host(
        hosts_.size(), std::vector<std::vector<std::pair<int, double>>>(state.vms.size()));
    for (size_t v = 0; v < state.vms.size(); ++v) {
      const int i = state.vms[v];
      const VmRequest& vm = trace_.vms[i];
      const int size = gi_[vm.profile].g;
      std::vector<std::pair<int, double>> link{{x_[i], -1}};  // Eq. 8-11: placed once iff accepted
      for (size_t j = 0; j < hosts_.size(); ++j) {
        if (!Fits(i, hosts_[j])) continue;  // Eq. 6-7 for a VM alone
        for (int g : hosts_[j].gpus) {
          for (int start : Starts(i)) {  // Eq. 14-16
            const int col = milp_.AddColumn(0, 0, 1, true);
            y_[m].push_back({i, g, start, col});
            link.push_back({col, 1});
            for (int b = start; b < start + size; ++b) covering[g][b].push_back({col, 1});
            load_[m][g].push_back({col, static_cast<double>(size)});
            cpu[j].push_back({col, vm.cpu_milli});
            ram[j].push_back({col, vm.memory_mib});
            on_host[j][v].push_back({col, 1});
          }
        }
      }
      milp_.AddRow(link, 0, 0);
    }
    for (const auto& per_gpu : covering) {
      for (const auto& slice : per_gpu) {
        if (slice.size() > 1) milp_.AddRow(slice, -kMilpInfinity, 1);
      }
    }
    for (size_t j = 0; j < hosts_.size(); ++j) {  // Eq. 6-7
      AddCapacityRow(cpu[j], hosts_[j].spec->cpu_milli);
      AddCapacityRow(ram[j], hosts_[j].spec->memory_mib);
    }
    if (state.duration_h <= 0) return;
    // Eq. 19-21 with the strict definition: a host and all its GPUs are
    // active while any VM runs on it.
    for (size_t j = 0; j < hosts_.size(); ++j) {
      const double weight = state.duration_h * (1 + static_cast<double>(hosts_[j].gpus.size()));
      const int phi = milp_.AddColumn(0, 0, 1, true);
      phi_[m].push_back({phi, weight});
      for (auto& row : on_host[j]) {
        if (row.empty()) continue;
        row.push_back({phi, -1});
        milp_.AddRow(row, -kMilpInfinity, 0);
      }
    }
  }

  // The model with, at each event time, the GPUs of a host in decreasing
  // order of memory slices used, and hosts of one class (identical CPU, RAM
  // and GPUs) likewise: any plan can be relabelled to satisfy both, so the
  // optimum of Eq. 3 and 4 (both blind to labels within an event time) stays.
  Milp SymmetryBroken() const {
    Milp milp = milp_;
    std::map<std::tuple<double, double, int>, std::vector<size_t>> classes;
    for (size_t j = 0; j < hosts_.size(); ++j) {
      const HostSpec& h = *hosts_[j].spec;
      classes[{h.cpu_milli, h.memory_mib, h.gpus}].push_back(j);
    }
    auto at_least = [&milp](std::vector<std::pair<int, double>> more,
                            const std::vector<std::pair<int, double>>& less) {
      for (const auto& [col, w] : less) more.push_back({col, -w});
      if (!more.empty()) milp.AddRow(more, 0, kMilpInfinity);
    };
    for (size_t m = 0; m < states_.size(); ++m) {
      std::vector<std::vector<std::pair<int, double>>> host_load(hosts_.size());
      for (size_t j = 0; j < hosts_.size(); ++j) {
        const std::vector<int>& g = hosts_[j].gpus;
        for (size_t k = 0; k < g.size(); ++k) {
          const auto& load = load_[m][g[k]];
          host_load[j].insert(host_load[j].end(), load.begin(), load.end());
          if (k + 1 < g.size()) at_least(load, load_[m][g[k + 1]]);
        }
      }
      for (const auto& [key, members] : classes) {
        for (size_t k = 0; k + 1 < members.size(); ++k) {
          at_least(host_load[members[k]], host_load[members[k + 1]]);
        }
      }
    }
    return milp;
  }

  void AddCapacityRow(const std::vector<std::pair<int, double>>& row, double capacity) {
    double most = 0;  // the row binds only if every VM on it could exceed it
    for (const auto& [col, need] : row) most += need;
    if (most > capacity) milp_.AddRow(row, -kMilpInfinity, capacity);
  }

  // Eq. 22-25: a move of VM i between consecutive event times is 1 when it
  // takes a (GPU, start) it did not hold.
  void AddMoveRows(MilpSolver& solver) const {
    for (const Move& mv : moves_) {
      std::map<std::pair<int, int>, int> before;
      for (const Var& v : y_[mv.from]) {
        if (v.vm == mv.vm) before[{v.gpu, v.start}] = v.col;
      }
      for (const Var& v : y_[mv.to]) {
        if (v.vm != mv.vm) continue;
        std::vector<std::pair<int, double>> row{{v.col, 1}, {mv.col, -1}};
        if (auto it = before.find({v.gpu, v.start}); it != before.end())
          row.push_back({it->second, -1});
        solver.AddRow(row, -kMilpInfinity, 0);
      }
      solver.SetCost(mv.col, 1);
    }
  }

  Result<MilpSolution> RunStage(MilpSolver& solver, const OptimumOptions& options,
                                const std::vector<double>& start) const {
    const Deadline deadline(*options.clock, options.time_limit_s);
    return solver.Solve(deadline, options.time_limit_s, start);
  }

  int CountAccepted(const std::vector<double>& values) const {
    int accepted = 0;
    if (values.empty()) return 0;
    for (int col : x_) accepted += values[col] > 0.5;
    return accepted;
  }

  std::vector<std::vector<Placement>> Placements(const std::vector<double>& values) const {
    std::vector<std::vector<Placement>> where(states_.size(),
                                              std::vector<Placement>(trace_.vms.size()));
    if (values.empty()) return where;
    for (size_t m = 0; m < states_.size(); ++m) {
      for (const Var& v : y_[m]) {
        if (values[v.col] > 0.5) where[m][v.vm] = {v.gpu, v.start};
      }
    }
    return where;
  }

  void Decode(const std::vector<double>& values, ReplayOptimum& r) const {
    std::vector<int> requests = RequestsPerProfile(trace_), accepted(requests.size(), 0);
    if (!values.empty()) {
      for (size_t i = 0; i < x_.size(); ++i) accepted[trace_.vms[i].profile] += values[x_[i]] > 0.5;
    }
    for (size_t p = 0; p < requests.size(); ++p) {
      if (requests[p] == 0) continue;
      r.per_profile.push_back({static_cast<int>(p), requests[p], accepted[p]});
      r.accepted += accepted[p];
    }
    r.acceptance = r.requests > 0 ? static_cast<double>(r.accepted) / r.requests : 0;
    const auto where = Placements(values);
    const double hardware = static_cast<double>(trace_.hosts.size() + trace_.TotalGpus());
    double area = 0;  // hardware-hours
    for (size_t m = 0; m < states_.size(); ++m) {
      std::vector<char> active(hosts_.size(), 0);
      for (int i : states_[m].vms) {
        if (where[m][i].gpu >= 0) active[gpus_[where[m][i].gpu].host] = 1;
      }
      for (size_t j = 0; j < hosts_.size(); ++j) {
        if (active[j])
          area += states_[m].duration_h * (1 + static_cast<double>(hosts_[j].gpus.size()));
      }
    }
    r.active_hw_auc = 100 * area / hardware;
    for (const Move& mv : moves_) {
      const Placement& a = where[mv.from][mv.vm];
      const Placement& b = where[mv.to][mv.vm];
      if (a.gpu < 0 || b.gpu < 0) continue;
      if (a.gpu != b.gpu) {
        ++r.inter_migrations;
      } else if (a.start != b.start) {
        ++r.intra_migrations;
      }
    }
  }

  const VmTrace& trace_;
  std::vector<State> states_;
  std::vector<GiEncoding> gi_;
  std::vector<Gpu> gpus_;
  std::vector<Host> hosts_;
  Milp milp_;
  std::vector<int> x_;                                    // per VM
  std::vector<std::vector<Var>> y_;                       // per state
  std::vector<std::vector<std::pair<int, double>>> phi_;  // per state: (column, weight)
  std::vector<Move> moves_;
  // load_[state][gpu]: the memory slices its placements take, as a row.
  std::vector<std::vector<std::vector<std::pair<int, double>>>> load_;
};

}  // namespace

std::vector<GiEncoding> GiEncodings(const GpuModel& gpu) {
  std::vector<GiEncoding> out;
  for (const MigProfile& p : gpu.profiles) {
    GiEncoding e;
    e.g = p.memory_slices;
    e.starts = p.starts;
    e.s = p.starts.empty() ? 0 : *std::max_element(p.starts.begin(), p.starts.end());
    out.push_back(std::move(e));
  }
  return out;
}

Result<ReplayOptimum> SolveReplayOptimum(const VmTrace& trace, const OptimumOptions& options) {
  if (trace.gpu == nullptr) return Status::InvalidArgument("optimum: the trace has no GPU model");
  if (trace.gpu->memory_slices <= 0) {
    return Status::InvalidArgument("optimum: " + trace.gpu->name + " has no MIG");
  }
  if (!(options.time_limit_s > 0) || options.clock == nullptr) {
    return Status::InvalidArgument("optimum: the time limit must be > 0 s, with a clock");
  }
  if (options.objectives < 1 || options.objectives > 3) {
    return Status::InvalidArgument("optimum: objectives must be 1, 2 or 3");
  }
  if (trace.vms.size() > static_cast<size_t>(kOptimumMaxVms)) {
    return Status::InvalidArgument(fmt::format(
        "optimum: the window holds {} VMs; the exact ILP takes at most {} (narrow the window, "
        "e.g. with --max-pods {})",
        trace.vms.size(), kOptimumMaxVms, kOptimumMaxVms));
  }
  Model model(trace, BuildStates(trace, /*maximal_only=*/false));
  if (const long long columns = model.CountColumns(); columns > kOptimumMaxColumns) {
    return Status::InvalidArgument(fmt::format(
        "optimum: the ILP of this window would have {} columns; at most {} (fewer hosts, GPUs "
        "per host or VMs resident at once)",
        columns, kOptimumMaxColumns));
  }
  Model maximal(trace, BuildStates(trace, /*maximal_only=*/true));
  model.Build();
  maximal.Build();
  return model.Solve(options, maximal);
}

}  // namespace tessera
