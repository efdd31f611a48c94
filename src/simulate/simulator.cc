// Simulate: the discrete-event serving simulation of simulator.h.
//
// Events are arrivals (one pending per service), batch completions (one per
// busy process) and batch timeouts (one per idle process holding a partial
// batch), in a binary heap ordered by (time, kind, id) so runs are
// deterministic. Time is the simulated clock in seconds.
#include "tessera/simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <queue>
#include <random>

#include "simulate/sampling.h"
#include "simulate/windowed_simulation.h"
#include "tessera/util/input_limits.h"
#include "util/quantile_histogram.h"

namespace tessera {
namespace {

constexpr double kMsPerS = 1000.0;

enum EventKind : int { kCompletion = 0, kTimeout = 1, kArrival = 2 };

struct Event {
  double time;
  int kind;
  int id;  // process (completion, timeout) or service (arrival)
  bool operator>(const Event& o) const {
    if (time != o.time) return time > o.time;
    if (kind != o.kind) return kind > o.kind;
    return id > o.id;
  }
};

struct Process {
  int instance = 0;
  int service = 0;
  int batch = 1;
  const std::vector<double>* latency_ms = nullptr;
  double max_delay_s = 0;
  double weight = 0;          // RouterCapacity: the weighted router's odds
  int proxy_weight = 1;       // leastconn's: ProxyWeights of the service's weights
  double accepts_from_s = 0;  // its instance's acceptance window, copied
  double accepts_until_s = 0;
  std::deque<double> queue;  // arrival times, oldest first
  int running = 0;           // requests in the running batch
  long changed = 0;          // leastconn's: when its outstanding count last changed
  // leastconn's order (LeastConnOrder: its count's key, then `changed`, in
  // one integer: one comparison, no branch, where routing compares every
  // process), kept as the count changes.
  unsigned __int128 least_conn = 0;
  bool busy = false;
  double busy_until = 0;
  double busy_s = 0;  // within [0, duration]
  double timeout_at = -1;
};

// A service's requests, counted as they go: no request is kept.
struct ServiceStats {
  long requests = 0, dropped = 0, served_in_time = 0, within_slo = 0;
  double wait_s = 0;
  QuantileHistogram latency_ms;  // served requests
};

// The processes of one service that take requests (their instance's
// acceptance window holds), over the interval [from, until) in which no
// window of theirs opens or closes.
struct AcceptingSet {
  double from = 0, until = 0;  // empty: computed at the first arrival
  // The weighted router's: running sum of the accepting processes' weights,
  // parallel to the service's route (a process not accepting adds 0).
  std::vector<double> cumulative;
  int last = -1;               // position in the route of the last accepting process; -1: none
  std::vector<int> processes;  // the accepting processes, in the route's order (every router's)
};

// Requests sent to a process and not yet answered: what a proxy counts.
int Outstanding(const Process& proc) { return static_cast<int>(proc.queue.size()) + proc.running; }

// leastconn's order of a process: by the key of its outstanding count (the
// count after one more request, over its weight; 0 for an idle process),
// then by when the count last changed.
unsigned __int128 LeastConnOrder(const Process& proc) {
  const long outstanding = Outstanding(proc);
  const auto load = static_cast<std::uint64_t>(
      outstanding ? (outstanding + 1) * kProxyWeightMax / proc.proxy_weight : 0);
  return (static_cast<unsigned __int128>(load) << 64) | static_cast<std::uint64_t>(proc.changed);
}

class Simulation {
 public:
  Simulation(const ServingModel& model, const SimOptions& options,
             const std::vector<double>& bounds)
      : model_(model),
        options_(options),
        bounds_(bounds),
        variability_rng_(StreamSeed(options.seed, ~0ULL)) {}

  Result<WindowedSimReport> Run() {
    TESSERA_RETURN_IF_ERROR(Setup());
    while (!events_.empty()) {
      const Event e = events_.top();
      events_.pop();
      switch (e.kind) {
        case kArrival:
          Arrive(e.id, e.time);
          break;
        case kCompletion:
          Complete(e.id, e.time);
          break;
        case kTimeout:
          if (processes_[e.id].timeout_at == e.time && !processes_[e.id].busy)
            TryStart(e.id, e.time);
          break;
      }
    }
    return Report();
  }

 private:
  Status Setup() {
    const size_t n = model_.services.size();
    stats_.resize(n);
    window_stats_.assign(bounds_.size() < 2 ? 0 : bounds_.size() - 1, std::vector<ServiceStats>(n));
    routes_.resize(n);
    accepting_.resize(n);
    backlogs_.resize(n);
    for (size_t s = 0; s < n; ++s) {
      const ServingService& service = model_.services[s];
      TESSERA_RETURN_IF_ERROR(AddStream(service, s));
      for (int i : service.instances) AddProcesses(i, service);
      SetProxyWeights(routes_[s]);
      router_rngs_.emplace_back(StreamSeed(options_.seed, 2 * s + 1));
    }
    return Status::Ok();
  }

  Status AddStream(const ServingService& service, size_t s) {
    if (options_.arrivals == ArrivalKind::kTrace) {
      auto it = options_.trace.find(service.name);
      if (it == options_.trace.end()) {
        return Status::InvalidArgument("the arrival trace has no requests of service " +
                                       service.name);
      }
      streams_.emplace_back(it->second);
    } else {
      streams_.emplace_back(options_.arrivals, service.rate_rps, options_.burst,
                            StreamSeed(options_.seed, 2 * s));
    }
    ScheduleArrival(s);
    return Status::Ok();
  }

  void AddProcesses(int i, const ServingService& service) {
    const ServingInstance& inst = model_.instances[i];
    const double planned_ms = inst.latency_ms[inst.batch - 1];
    const double delay_ms = options_.max_queue_delay_ms >= 0
                                ? options_.max_queue_delay_ms
                                : QueueDelayMs(model_.rule, planned_ms, service.slo_ms);
    for (int k = 0; k < inst.procs; ++k) {
      Process p;
      p.instance = i;
      p.service = inst.service_index;
      p.batch = inst.batch;
      p.latency_ms = &inst.latency_ms;
      p.accepts_from_s = inst.accepts_from_s;
      p.accepts_until_s = inst.accepts_until_s;
      p.max_delay_s = delay_ms / kMsPerS;
      // The weighted router sends each process the share of its rate that
      // the plan's rule lets it carry within the SLO, as planners count
      // capacity: processes whose batches leave less slack get less.
      p.weight =
          RouterCapacity(model_.rule, inst.batch, planned_ms, service.slo_ms, service.rate_rps);
      routes_[inst.service_index].push_back(static_cast<int>(processes_.size()));
      processes_.push_back(std::move(p));
    }
  }

  void SetProxyWeights(const std::vector<int>& route) {
    std::vector<double> capacities;
    for (int p : route) capacities.push_back(processes_[p].weight);
    const std::vector<int> weights = ProxyWeights(capacities);
    for (size_t k = 0; k < route.size(); ++k) processes_[route[k]].proxy_weight = weights[k];
  }

  void ScheduleArrival(size_t s) {
    const double t = streams_[s].Next();
    if (t <= options_.duration_s) events_.push({t, kArrival, static_cast<int>(s)});
  }

  // Applies `record` to service `s`'s stats over the whole run and over the
  // window a request arriving at `arrived` falls in, with the end of each.
  template <typename Record>
  void Count(int s, double arrived, Record record) {
    record(stats_[s], options_.duration_s);
    if (window_stats_.empty() || arrived < bounds_.front() || arrived > bounds_.back()) return;
    const size_t after =
        std::upper_bound(bounds_.begin(), bounds_.end(), arrived) - bounds_.begin();
    const size_t w = std::min(after - 1, window_stats_.size() - 1);  // the last includes its end
    record(window_stats_[w][s], bounds_[w + 1]);
  }

  static bool Accepts(const Process& proc, double now) {
    return now >= proc.accepts_from_s && now < proc.accepts_until_s;
  }

  // Process `proc`'s outstanding count changed: leastconn's stamp and key.
  // Routing a request compares every accepting process of its service, so
  // the key (a division) is kept, not computed there: a day of S6 spent
  // most of its time in that division.
  void Changed(Process& proc) {
    proc.changed = ++changes_;
    proc.least_conn = LeastConnOrder(proc);
  }

  // Service `s`'s processes taking requests at `now`, recomputed when `now`
  // leaves the interval the last computation holds for.
  const AcceptingSet& Accepting(int s, double now) {
    AcceptingSet& set = accepting_[s];
    if (now >= set.from && now < set.until) return set;
    set = {0, std::numeric_limits<double>::infinity(), {}, -1, {}};
    double total = 0;
    for (int p : routes_[s]) {
      const Process& proc = processes_[p];
      for (const double edge : {proc.accepts_from_s, proc.accepts_until_s}) {
        if (edge <= now) {
          set.from = std::max(set.from, edge);
        } else {
          set.until = std::min(set.until, edge);
        }
      }
      if (Accepts(proc, now)) {
        total += proc.weight;
        set.last = static_cast<int>(set.cumulative.size());
        set.processes.push_back(p);
      }
      set.cumulative.push_back(total);
    }
    return set;
  }

  void Arrive(int s, double now) {
    ScheduleArrival(s);
    const bool routed = Accepting(s, now).last >= 0;
    Count(s, now, [&](ServiceStats& stats, double) {
      ++stats.requests;
      stats.dropped += !routed;
    });
    if (!routed) return;
    const int p = Route(s, now);
    if (p < 0) {  // every process full: the proxy's backend queue
      backlogs_[s].push_back(now);
      return;
    }
    Send(p, now, now);
  }

  // Process `p` receives a request that arrived at `arrived`.
  void Send(int p, double arrived, double now) {
    Process& proc = processes_[p];
    proc.queue.push_back(arrived);
    Changed(proc);
    if (!proc.busy) TryStart(p, now);
  }

  // A batch of `p` ended. Its batcher looks at its queue first (Triton's
  // does the moment the batch ends); under kFirst it then takes the oldest
  // requests of its service's backlog into its free slots (FirstMaxconn):
  // the proxy sends them only once the batch's answers are through.
  void Complete(int p, double now) {
    Process& proc = processes_[p];
    proc.busy = false;
    proc.running = 0;
    Changed(proc);
    TryStart(p, now);
    std::deque<double>& backlog = backlogs_[proc.service];
    const int slots = FirstMaxconn(proc.batch);
    bool sent = false;
    while (!backlog.empty() && Outstanding(proc) < slots && Accepts(proc, now)) {
      proc.queue.push_back(backlog.front());
      backlog.pop_front();
      sent = true;
    }
    if (!sent) return;
    proc.least_conn = LeastConnOrder(proc);  // kFirst's backlog: the count changed, not the stamp
    if (!proc.busy) TryStart(p, now);
  }

  // The process `s`'s request goes to; -1: kFirst found every process full.
  // REQUIRES: some process of `s` accepts at `now`.
  int Route(int s, double now) {
    const std::vector<int>& route = routes_[s];
    const AcceptingSet& set = accepting_[s];
    switch (options_.router.value_or(model_.rule.router)) {
      case Router::kShortestQueue:
        return Best(set, [&](const Process& proc) { return ExpectedDone(proc, now); });
      case Router::kLeastConn:
        return Best(set, [](const Process& proc) { return proc.least_conn; });
      case Router::kFirst:
        for (int p : set.processes) {
          if (Outstanding(processes_[p]) < FirstMaxconn(processes_[p].batch)) return p;
        }
        return -1;
      case Router::kEqual: {
        const long last = static_cast<long>(set.processes.size()) - 1;
        const long k = std::uniform_int_distribution<long>(0, last)(router_rngs_[s]);
        return set.processes[k];
      }
      case Router::kWeighted:
        break;
    }
    // Only an accepting process raises the running sum, so the first entry
    // above x is one; a draw of exactly the total takes the last of them.
    const std::vector<double>& cumulative = set.cumulative;
    const double x = std::uniform_real_distribution<double>(0, cumulative.back())(router_rngs_[s]);
    const size_t k = std::upper_bound(cumulative.begin(), cumulative.end(), x) - cumulative.begin();
    return route[std::min(k, static_cast<size_t>(set.last))];
  }

  // The process of `set` with the smallest `rank`; the first of equals.
  // Every request scans its service's accepting processes (a day of S6
  // routes 6 x 10^8 requests), so the set lists them: no process that does
  // not accept is visited.
  template <typename Rank>
  int Best(const AcceptingSet& set, Rank rank) const {
    if (set.processes.empty()) return -1;
    int best = set.processes.front();
    auto best_rank = rank(processes_[best]);
    for (int p : set.processes) {
      const auto r = rank(processes_[p]);
      if (r < best_rank) best_rank = r, best = p;
    }
    return best;
  }

  // When a request sent to `proc` at `now` would be served if every batch
  // ran full: its batch starts once the running batch and the full batches
  // queued ahead of it are done, and takes the planned batch's latency.
  // Ranking processes by it fills the batch that starts first before another
  // is opened, so a pool of batching processes runs full batches, as one
  // queue would. Ranked by a fluid drain time (queued over rate), requests
  // joined a busy process whose next batch they would miss; ranked by a
  // partial batch's own shorter latency, they spread over many small batches
  // and the pool lost capacity when it needed it most.
  double ExpectedDone(const Process& proc, double now) const {
    const double planned_s = (*proc.latency_ms)[proc.batch - 1] / kMsPerS;
    const double free_at = proc.busy ? std::max(now, proc.busy_until) : now;
    const size_t full_ahead = proc.queue.size() / proc.batch;
    return free_at + static_cast<double>(full_ahead + 1) * planned_s;
  }

  // Starts a batch on idle process `p` if one is due, else arms its timeout.
  void TryStart(int p, double now) {
    Process& proc = processes_[p];
    DropExpired(proc, now);
    if (proc.queue.empty()) return;
    const int queued = static_cast<int>(proc.queue.size());
    if (queued >= proc.batch) return StartBatch(p, proc.batch, now);
    const double due = proc.queue.front() + proc.max_delay_s;
    if (due <= now) return StartBatch(p, queued, now);
    if (proc.timeout_at != due) {
      proc.timeout_at = due;
      events_.push({due, kTimeout, p});
    }
  }

  void DropExpired(Process& proc, double now) {
    if (options_.drop_after_ms <= 0) return;
    const double limit = options_.drop_after_ms / kMsPerS;
    while (!proc.queue.empty() && now - proc.queue.front() > limit) {
      Count(proc.service, proc.queue.front(), [](ServiceStats& stats, double) { ++stats.dropped; });
      proc.queue.pop_front();
      Changed(proc);
    }
  }

  void StartBatch(int p, int size, double now) {
    Process& proc = processes_[p];
    const double exec_s = (*proc.latency_ms)[size - 1] * Factor() / kMsPerS;
    const double done = now + exec_s;
    const double slo_s = model_.services[proc.service].slo_ms / kMsPerS;
    for (int k = 0; k < size; ++k) {
      const double arrived = proc.queue.front();
      proc.queue.pop_front();
      const double latency = done - arrived;
      Count(proc.service, arrived, [&](ServiceStats& stats, double end_s) {
        stats.wait_s += now - arrived;
        stats.latency_ms.Add(latency * kMsPerS);
        stats.within_slo += latency <= slo_s;
        stats.served_in_time += done <= end_s;
      });
    }
    proc.busy = true;
    proc.running = size;
    proc.busy_until = done;
    proc.timeout_at = -1;
    proc.busy_s += std::max(0.0, std::min(done, options_.duration_s) - now);
    events_.push({done, kCompletion, p});
  }

  // The execution-time factor of one batch: mean 1.
  double Factor() {
    switch (options_.variability) {
      case Variability::kNone:
        return 1;
      case Variability::kExponential:
        return std::exponential_distribution<double>(1.0)(variability_rng_);
      case Variability::kLognormal: {
        const double sigma2 = std::log1p(options_.cv * options_.cv);
        return std::lognormal_distribution<double>(-sigma2 / 2,
                                                   std::sqrt(sigma2))(variability_rng_);
      }
    }
    return 1;
  }

  ServiceReport Summarize(size_t s, const ServiceStats& st, double length_s) const;
  WindowedSimReport Report();

  const ServingModel& model_;
  const SimOptions& options_;
  const std::vector<double>& bounds_;
  std::vector<ArrivalStream> streams_;
  std::vector<std::mt19937_64> router_rngs_;
  std::mt19937_64 variability_rng_;
  std::vector<Process> processes_;
  std::vector<std::vector<int>> routes_;                 // per service: its processes
  std::vector<AcceptingSet> accepting_;                  // per service
  std::vector<std::deque<double>> backlogs_;             // per service: kFirst's queue
  long changes_ = 0;                                     // counts outstanding-count changes
  std::vector<ServiceStats> stats_;                      // per service, the whole run
  std::vector<std::vector<ServiceStats>> window_stats_;  // per window, per service
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
};

// Service `s`'s report from its stats over `length_s` seconds of arrivals.
ServiceReport Simulation::Summarize(size_t s, const ServiceStats& st, double length_s) const {
  const ServingService& service = model_.services[s];
  ServiceReport out;
  out.name = service.name;
  out.rate_rps = service.rate_rps;
  out.slo_ms = service.slo_ms;
  out.requests = st.requests;
  out.dropped = st.dropped;
  out.offered_rps = st.requests / length_s;
  out.achieved_rps = st.served_in_time / length_s;
  out.compliance = st.requests > 0 ? static_cast<double>(st.within_slo) / st.requests : 1;
  if (st.latency_ms.Count() > 0) {
    out.mean_wait_ms = st.wait_s * kMsPerS / st.latency_ms.Count();
    out.max_ms = st.latency_ms.Max();
    out.p99_ms = st.latency_ms.Quantile(0.99);
    out.p95_ms = st.latency_ms.Quantile(0.95);
    out.p50_ms = st.latency_ms.Quantile(0.50);
  }
  return out;
}

WindowedSimReport Simulation::Report() {
  WindowedSimReport windowed;
  for (size_t w = 0; w < window_stats_.size(); ++w) {
    std::vector<ServiceReport>& services = windowed.windows.emplace_back();
    for (size_t s = 0; s < model_.services.size(); ++s) {
      services.push_back(Summarize(s, window_stats_[w][s], bounds_[w + 1] - bounds_[w]));
    }
  }
  SimReport& r = windowed.overall;
  r.duration_s = options_.duration_s;
  for (size_t s = 0; s < model_.services.size(); ++s) {
    r.requests += stats_[s].requests;
    r.services.push_back(Summarize(s, stats_[s], options_.duration_s));
  }
  std::vector<double> busy(model_.instances.size(), 0.0);
  for (const Process& p : processes_) busy[p.instance] += p.busy_s;
  std::map<int, std::pair<double, double>> gpu_busy;  // gpu -> (weighted busy, slices)
  for (size_t i = 0; i < model_.instances.size(); ++i) {
    const ServingInstance& inst = model_.instances[i];
    const double share = busy[i] / (inst.procs * options_.duration_s);
    r.instances.push_back({inst.gpu, inst.profile, inst.start, inst.service, share});
    auto& [weighted, slices] = gpu_busy[inst.gpu];
    weighted += share * inst.compute_slices;
    slices += inst.compute_slices;
  }
  for (const auto& [gpu, acc] : gpu_busy) {
    r.gpus.push_back({gpu, acc.second > 0 ? acc.first / acc.second : 0});
  }
  return windowed;
}

}  // namespace

Status SimOptions::Validate() const {
  if (!(duration_s > 0 && std::isfinite(duration_s))) {
    return Status::InvalidArgument(
        fmt::format("duration: must be a finite number of seconds > 0, got {:g}", duration_s));
  }
  if (arrivals == ArrivalKind::kBursty) TESSERA_RETURN_IF_ERROR(burst.Validate());
  if (!std::isfinite(max_queue_delay_ms)) {
    return Status::InvalidArgument("max queue delay: must be finite (< 0: the default)");
  }
  if (variability == Variability::kLognormal && !limits::kVariabilityCv.Contains(cv)) {
    return Status::InvalidArgument("cv: lognormal variability's coefficient of variation " +
                                   OutOfRange(limits::kVariabilityCv, cv));
  }
  if (!(drop_after_ms >= 0 && std::isfinite(drop_after_ms))) {
    return Status::InvalidArgument(
        fmt::format("drop after: must be >= 0 ms (0 = never), got {:g}", drop_after_ms));
  }
  return Status::Ok();
}

Result<WindowedSimReport> SimulateWindows(const ServingModel& model, const SimOptions& options,
                                          const std::vector<double>& bounds) {
  TESSERA_RETURN_IF_ERROR(options.Validate());
  return Simulation(model, options, bounds).Run();
}

Result<SimReport> Simulate(const ServingModel& model, const SimOptions& options) {
  TESSERA_ASSIGN_OR_RETURN(WindowedSimReport report, SimulateWindows(model, options, {}));
  return std::move(report.overall);
}

}  // namespace tessera
