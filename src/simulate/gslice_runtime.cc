// The GSLICE runtime of gslice_runtime.h: policies, options and the
// discrete-event run (GPU% tuning itself is gslice_tuning.h's).
//
// Events are arrivals (one pending per service), batch completions, switch-
// overs and their resumes, and tuning ticks, in a binary heap ordered by
// (time, kind, sequence) so runs are deterministic. Time is the simulated
// clock in seconds.
#include "tessera/simulate/gslice_runtime.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>

#include "simulate/gslice_contention.h"
#include "simulate/sampling.h"
#include "tessera/util/text_io.h"
#include "util/quantile_histogram.h"

namespace tessera {
namespace {

constexpr double kMsPerS = 1000.0;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Slack for comparing simulated times and shares that went through sums.
constexpr double kEpsilon = 1e-9;
// Weight of the newest period in Algorithm 1's avgL and avgT (an EWMA over
// tuning periods; restarted when a new GPU% takes effect, since older periods
// measured another process).
constexpr double kTuningEwmaWeight = 0.5;
// Weight of the newest batch in SLAB's latency average.
constexpr double kSlabEwmaWeight = 0.3;
// Clipper's AIMD (Crankshaw et al., NSDI'17, section 4.3.1): "additively
// increase the batch size by a fixed amount until the latency to process a
// batch exceeds the latency objective, at which point we perform a small
// multiplicative backoff, reducing the batch size by 10%".
constexpr int kAimdIncrease = 1;
constexpr double kAimdBackoff = 0.9;

constexpr GslicePolicy kPolicies[] = {GslicePolicy::kGslice,       GslicePolicy::kStatic,
                                      GslicePolicy::kIgniterGuard, GslicePolicy::kDefaultMps,
                                      GslicePolicy::kMpsSlab,      GslicePolicy::kStaticSlab,
                                      GslicePolicy::kClipper};

// How a policy sizes batches.
enum class Batching { kFixed, kOne, kSlab, kAimd };

Batching BatchingOf(GslicePolicy p) {
  switch (p) {
    case GslicePolicy::kGslice:
    case GslicePolicy::kMpsSlab:
    case GslicePolicy::kStaticSlab:
      return Batching::kSlab;
    case GslicePolicy::kDefaultMps:
      return Batching::kOne;
    case GslicePolicy::kClipper:
      return Batching::kAimd;
    case GslicePolicy::kStatic:
    case GslicePolicy::kIgniterGuard:
      break;
  }
  return Batching::kFixed;
}

// Policies whose processes have no GPU% limit (100% each).
bool WholeGpu(GslicePolicy p) {
  return p == GslicePolicy::kDefaultMps || p == GslicePolicy::kMpsSlab ||
         p == GslicePolicy::kClipper;
}

}  // namespace

// ---- Policies and options ---------------------------------------------------

std::string_view GslicePolicyName(GslicePolicy policy) {
  switch (policy) {
    case GslicePolicy::kStatic:
      return "static";
    case GslicePolicy::kGslice:
      return "gslice";
    case GslicePolicy::kIgniterGuard:
      return "igniter-guard";
    case GslicePolicy::kDefaultMps:
      return "default-mps";
    case GslicePolicy::kMpsSlab:
      return "mps-slab";
    case GslicePolicy::kStaticSlab:
      return "static-slab";
    case GslicePolicy::kClipper:
      return "clipper";
  }
  return "?";
}

Result<GslicePolicy> ParseGslicePolicy(std::string_view name) {
  std::string names;
  for (GslicePolicy p : kPolicies) {
    if (GslicePolicyName(p) == name) return p;
    names += names.empty() ? "" : ", ";
    names += GslicePolicyName(p);
  }
  return Status::InvalidArgument(
      fmt::format("policy: expected one of {}, got {}", names, QuoteForMessage(name)));
}

namespace {

// InvalidArgument "<field>: must be <rule>, got <value>" unless `ok`.
Status Check(bool ok, std::string_view field, std::string_view rule, double value) {
  if (ok) return Status::Ok();
  return Status::InvalidArgument(fmt::format("{}: must be {}, got {:g}", field, rule, value));
}

bool Finite(double v) { return std::isfinite(v); }

}  // namespace

Status GsliceOptions::Validate() const {
  TESSERA_RETURN_IF_ERROR(
      Check(Finite(duration_s) && duration_s > 0, "duration_s", "a time > 0 s", duration_s));
  TESSERA_RETURN_IF_ERROR(Check(Finite(period_s) && period_s > 0 && period_s <= duration_s,
                                "period_s", "> 0 s and at most the duration", period_s));
  if (initial_share) {
    TESSERA_RETURN_IF_ERROR(Check(*initial_share > 0 && *initial_share <= 1, "initial_share",
                                  "in (0, 1]", *initial_share));
  }
  TESSERA_RETURN_IF_ERROR(Check(max_batch >= 1 && max_batch <= 4096, "max_batch",
                                "an integer in [1, 4096]", max_batch));
  TESSERA_RETURN_IF_ERROR(Check(knee_batch >= 1 && knee_batch <= 4096, "knee_batch",
                                "an integer in [1, 4096]", knee_batch));
  TESSERA_RETURN_IF_ERROR(Check(tuning_threshold >= 0 && tuning_threshold < 1, "tuning_threshold",
                                "in [0, 1)", tuning_threshold));
  TESSERA_RETURN_IF_ERROR(Check(apply_threshold >= 0 && apply_threshold < 1, "apply_threshold",
                                "in [0, 1)", apply_threshold));
  TESSERA_RETURN_IF_ERROR(
      Check(min_share > 0 && min_share <= 1, "min_share", "in (0, 1]", min_share));
  TESSERA_RETURN_IF_ERROR(
      Check(max_decrease > 0 && max_decrease < 1, "max_decrease", "in (0, 1)", max_decrease));
  TESSERA_RETURN_IF_ERROR(Check(Finite(reload_delay_s) && reload_delay_s >= 0, "reload_delay_s",
                                "a time >= 0 s", reload_delay_s));
  TESSERA_RETURN_IF_ERROR(Check(Finite(switch_downtime_s) && switch_downtime_s >= 0,
                                "switch_downtime_s", "a time >= 0 s", switch_downtime_s));
  TESSERA_RETURN_IF_ERROR(
      Check(Finite(hold_down_s) && hold_down_s >= 0, "hold_down_s", "a time >= 0 s", hold_down_s));
  TESSERA_RETURN_IF_ERROR(Check(shadow_extra_share > 0 && shadow_extra_share <= 1,
                                "shadow_extra_share", "in (0, 1]", shadow_extra_share));
  TESSERA_RETURN_IF_ERROR(Check(underprovision_batches >= 1, "underprovision_batches",
                                "an integer >= 1", underprovision_batches));
  if (arrivals == ArrivalKind::kBursty) {
    TESSERA_RETURN_IF_ERROR(burst.Validate().WithContext("burst"));
  }
  return Status::Ok();
}

std::string_view GsliceEventKindName(GsliceEventKind kind) {
  switch (kind) {
    case GsliceEventKind::kShareRequested:
      return "share-requested";
    case GsliceEventKind::kSwitchOver:
      return "switch-over";
    case GsliceEventKind::kUnderprovisioned:
      return "underprovisioned";
  }
  return "?";
}

namespace {

// ---- The run ------------------------------------------------------------

// Ties at one time: a finished batch frees its process before anything else
// looks at it; ticks measure before new arrivals join.
enum EventKind : int { kCompletion = 0, kResume = 1, kSwitch = 2, kTick = 3, kArrival = 4 };

struct Event {
  double time;
  int kind;
  long seq;  // insertion order: the last tie-break
  int id;    // service
  bool operator>(const Event& o) const {
    if (time != o.time) return time > o.time;
    if (kind != o.kind) return kind > o.kind;
    return seq > o.seq;
  }
};

// Running totals of one service; a window is the difference of two.
struct Counters {
  long arrivals = 0, completed = 0, within = 0;
  double latency_ms = 0;  // sum over completed requests
  double busy_s = 0;
  Counters operator-(const Counters& o) const {
    return {arrivals - o.arrivals, completed - o.completed, within - o.within,
            latency_ms - o.latency_ms, busy_s - o.busy_s};
  }
};

struct ServiceState {
  explicit ServiceState(ArrivalStream s) : stream(std::move(s)) {}

  ArrivalStream stream;
  std::deque<double> queue;  // arrival times, oldest first
  double share = 0;
  int max_batch = 1;
  double knee = 0;         // the model's knee point
  double alpha_cache = 0;  // its iGniter L2 sensitivity
  // Contention as of the last refresh: the SM share the process gets, the
  // factor of its neighbours' L2 traffic, and (for its neighbours) the
  // fraction of the last period it was busy (1 before the first period: a
  // neighbour is assumed active until measured).
  double effective_share = 0;
  double interference = 1;
  double busy_fraction = 1;
  std::vector<double> latency_ms;  // batch b at index b - 1, at `share`, contended
  // The process.
  bool busy = false;
  double batch_start = 0;
  double prev_batch_start = -1;   // start of the batch before the running one
  std::vector<double> in_flight;  // arrival times of the running batch
  double batch_latency_ms = 0;    // the running batch's, as SLAB sees it
  double batch_exec_ms = 0;       // the running batch's execution time (AIMD's)
  double resume_at = 0;           // no batch starts before (switch-over)
  // Measurements.
  Counters total;
  long completed_by_end = 0;  // completed when the arrivals stopped
  QuantileHistogram all_latencies_ms;
  QuantileHistogram period_latencies_ms;
  Counters period_base;
  bool period_late = false;  // a request past its SLO queued at the period's start
  // Algorithm 1's EWMAs over the periods spent wholly at the current GPU%.
  bool have_avg = false;
  double avg_latency_ms = 0, avg_throughput_rps = 0, avg_arrival_rps = 0;
  bool have_slab = false;
  double slab_avg_ms = 0;
  int miss_streak = 0;  // successive one-request batches missing the SLO
  // GPU% changes.
  bool pending = false;    // a shadow is loading `target`
  bool switching = false;  // the shadow is ready; waiting for the batch to end
  double target = 0;
  long requested_in_round = -1;  // tuning round of the pending request
  double last_switch_s = -1;
  bool shadow_used = false;  // igniter-guard: switched once
  std::string pending_note;
  GsliceServiceSummary summary;
};

// Every service's GPU% at the start: the whole GPU without limits, the fixed
// initial share, or the knees, scaled down max-min fairly when they exceed
// the GPU (the knee is the paper's elastic demand; what no knee asks for is
// left for the tuner to hand out).
std::vector<double> InitialShares(const GsliceWorkload& w, const GsliceOptions& options,
                                  const std::vector<double>& knees) {
  if (WholeGpu(options.policy)) return std::vector<double>(w.services.size(), 1.0);
  if (options.initial_share) return std::vector<double>(w.services.size(), *options.initial_share);
  return MaxMinFairShares(knees, 1.0, /*distribute_spare=*/false);
}

class GsliceRun {
 public:
  GsliceRun(const GsliceWorkload& workload, const GsliceOptions& options)
      : workload_(workload), options_(options) {}

  Result<GsliceReport> Run() {
    TESSERA_RETURN_IF_ERROR(Setup());
    while (!events_.empty()) {
      const Event e = events_.top();
      events_.pop();
      Dispatch(e);
    }
    return Finish();
  }

 private:
  const GsliceService& Spec(int s) const { return workload_.services[s]; }

  void Push(double time, int kind, int id) { events_.push({time, kind, seq_++, id}); }

  Status Setup() {
    std::vector<double> knees;
    for (const GsliceService& spec : workload_.services)
      knees.push_back(spec.performance.KneeShare(options_.knee_batch));
    const std::vector<double> shares = InitialShares(workload_, options_, knees);
    const Batching batching = BatchingOf(options_.policy);
    for (size_t s = 0; s < workload_.services.size(); ++s) {
      TESSERA_ASSIGN_OR_RETURN(ArrivalStream stream, StreamFor(s));
      ServiceState st(std::move(stream));
      st.share = shares[s];
      st.knee = knees[s];
      st.alpha_cache = ContentionAlphaCache(Spec(s).model);
      st.max_batch =
          batching == Batching::kOne || batching == Batching::kAimd ? 1 : options_.max_batch;
      st.summary.initial_share = st.share;
      states_.push_back(std::move(st));
      ScheduleArrival(static_cast<int>(s));
    }
    RefreshAll();
    Push(NextTick(0), kTick, 0);
    return Status::Ok();
  }

  Result<ArrivalStream> StreamFor(size_t s) const {
    const GsliceService& spec = workload_.services[s];
    if (options_.arrivals != ArrivalKind::kTrace) {
      return ArrivalStream(options_.arrivals, spec.rate_rps, options_.burst,
                           StreamSeed(options_.seed, s));
    }
    auto it = options_.trace.find(spec.name);
    if (it == options_.trace.end())
      return Status::InvalidArgument("trace: no request of service " + QuoteForMessage(spec.name));
    return ArrivalStream(it->second);
  }

  // Ticks at every whole period and at the end of the arrivals.
  double NextTick(double now) const {
    const double next = (std::floor(now / options_.period_s + kEpsilon) + 1) * options_.period_s;
    return std::min(next, options_.duration_s);
  }

  // The other processes on service `s`'s GPU, as it feels them: none with
  // contention off, or under Clipper (each model has its GPU).
  std::vector<MpsNeighbour> Neighbours(int s) const {
    std::vector<MpsNeighbour> out;
    if (!options_.contention || options_.policy == GslicePolicy::kClipper) return out;
    for (size_t o = 0; o < states_.size(); ++o)
      if (static_cast<int>(o) != s) out.push_back({states_[o].share, states_[o].busy_fraction});
    return out;
  }

  // Batch latencies at every service's current GPU% and contention; a batch
  // already running keeps the time it started with.
  void RefreshAll() {
    for (size_t s = 0; s < states_.size(); ++s) {
      ServiceState& st = states_[s];
      const std::vector<MpsNeighbour> others = Neighbours(static_cast<int>(s));
      st.effective_share = EffectiveShare(st.share, others);
      st.interference = InterferenceFactor(st.alpha_cache, others);
      st.latency_ms.resize(options_.max_batch);
      for (int b = 1; b <= options_.max_batch; ++b) {
        st.latency_ms[b - 1] =
            Spec(static_cast<int>(s)).performance.LatencyMs(b, st.effective_share) *
            st.interference;
      }
    }
  }

  void ScheduleArrival(int s) {
    const double t = states_[s].stream.Next();
    if (t <= options_.duration_s) Push(t, kArrival, s);
  }

  void Dispatch(const Event& e) {
    switch (e.kind) {
      case kArrival:
        Arrive(e.id, e.time);
        break;
      case kCompletion:
        Complete(e.id, e.time);
        break;
      case kSwitch:
        states_[e.id].switching = true;
        if (!states_[e.id].busy) SwitchOver(e.id, e.time);
        break;
      case kResume:
        TryStart(e.id, e.time);
        break;
      case kTick:
        Tick(e.time);
        break;
    }
  }

  void Arrive(int s, double now) {
    ScheduleArrival(s);
    ServiceState& st = states_[s];
    ++st.total.arrivals;
    st.queue.push_back(now);
    TryStart(s, now);
  }

  // GSLICE batches what is queued, at once, capped by the current maximum.
  void TryStart(int s, double now) {
    ServiceState& st = states_[s];
    if (st.busy || st.switching || st.queue.empty() || now < st.resume_at) return;
    const int size = std::min(static_cast<int>(st.queue.size()), st.max_batch);
    st.in_flight.assign(st.queue.begin(), st.queue.begin() + size);
    st.queue.erase(st.queue.begin(), st.queue.begin() + size);
    st.batch_exec_ms = st.latency_ms[size - 1];
    const double done = now + st.batch_exec_ms / kMsPerS;
    // The batch latency SLAB reads: from the oldest request's arrival, but
    // not before the previous batch started. A backlog older than that is no
    // batch size's doing (it is the GPU%'s); counted, it would pin SLAB at
    // batch 1 while the queue grows, and slow the drain once it may shrink.
    st.batch_latency_ms = (done - std::max(st.in_flight.front(), st.prev_batch_start)) * kMsPerS;
    st.prev_batch_start = now;
    st.busy = true;
    st.batch_start = now;
    Push(done, kCompletion, s);
  }

  void Complete(int s, double now) {
    ServiceState& st = states_[s];
    st.busy = false;
    st.total.busy_s += now - st.batch_start;
    const double slo = Spec(s).slo_ms;
    for (double arrived : st.in_flight) {
      const double ms = (now - arrived) * kMsPerS;
      ++st.total.completed;
      st.total.within += ms <= slo;
      st.total.latency_ms += ms;
      st.all_latencies_ms.Add(ms);
      st.period_latencies_ms.Add(ms);
    }
    WatchUnderprovisioning(s, now);
    const Batching batching = BatchingOf(options_.policy);
    if (batching == Batching::kSlab) Slab(st, slo);
    if (batching == Batching::kAimd) Aimd(st, slo);
    if (st.switching) return SwitchOver(s, now);
    TryStart(s, now);
  }

  // The paper: an IF that misses its SLO even with a batch of one, for that
  // many successive batches, is underprovisioned.
  void WatchUnderprovisioning(int s, double now) {
    ServiceState& st = states_[s];
    if (st.in_flight.size() != 1) return;
    const bool missed = (now - st.in_flight.front()) * kMsPerS > Spec(s).slo_ms;
    st.miss_streak = missed ? st.miss_streak + 1 : 0;
    if (st.miss_streak < options_.underprovision_batches) return;
    st.miss_streak = 0;
    ++st.summary.underprovisioned;
    events_out_.push_back({now, s, GsliceEventKind::kUnderprovisioned, st.share, st.share,
                           fmt::format("{} successive batches of one missed the SLO",
                                       options_.underprovision_batches)});
  }

  // SLAB: the next maximum batch in proportion to the latency headroom.
  void Slab(ServiceState& st, double slo_ms) {
    st.slab_avg_ms = st.have_slab ? kSlabEwmaWeight * st.batch_latency_ms +
                                        (1 - kSlabEwmaWeight) * st.slab_avg_ms
                                  : st.batch_latency_ms;
    st.have_slab = true;
    const double next = std::round(st.max_batch * (1 + (slo_ms - st.slab_avg_ms) / slo_ms));
    st.max_batch = static_cast<int>(std::clamp(next, 1.0, static_cast<double>(options_.max_batch)));
  }

  // Clipper's AIMD on the batch's execution time against the SLO.
  void Aimd(ServiceState& st, double slo_ms) const {
    const double next = st.batch_exec_ms > slo_ms ? std::floor(st.max_batch * kAimdBackoff)
                                                  : st.max_batch + kAimdIncrease;
    st.max_batch = static_cast<int>(std::clamp(next, 1.0, static_cast<double>(options_.max_batch)));
  }

  // The shadow takes over once the old process is idle; after the downtime
  // the service serves at its new GPU%.
  void SwitchOver(int s, double now) {
    ServiceState& st = states_[s];
    const double from = st.share;
    st.share = st.target;
    st.pending = st.switching = false;
    st.resume_at = now + options_.switch_downtime_s;
    st.last_switch_s = now;
    RefreshAll();  // its neighbours feel the new GPU% too
    // Measurements of the old process do not describe the new one.
    st.have_avg = false;
    ++st.summary.switch_overs;
    events_out_.push_back(
        {now, s, GsliceEventKind::kSwitchOver, from, st.share, std::move(st.pending_note)});
    Push(st.resume_at, kResume, s);
  }

  // Totals at `now`, with the running batch's busy time so far.
  static Counters CountersAt(const ServiceState& st, double now) {
    Counters c = st.total;
    if (st.busy) c.busy_s += now - st.batch_start;
    return c;
  }

  void Tick(double now) {
    RecordPeriod(now);
    for (ServiceState& st : states_) Measure(st, now);
    const bool last = now >= options_.duration_s - kEpsilon;
    if (!last && options_.policy == GslicePolicy::kGslice) Tune(now);
    if (!last && options_.policy == GslicePolicy::kIgniterGuard) Guard(now);
    for (size_t s = 0; s < states_.size(); ++s) {
      ServiceState& st = states_[s];
      const Counters now_counters = CountersAt(st, now);
      if (now > last_tick_)
        st.busy_fraction = (now_counters - st.period_base).busy_s / (now - last_tick_);
      if (last) st.completed_by_end = st.total.completed;
      st.period_base = now_counters;
      st.period_latencies_ms = QuantileHistogram();
      st.period_late = !st.queue.empty() &&
                       (now - st.queue.front()) * kMsPerS > Spec(static_cast<int>(s)).slo_ms;
    }
    last_tick_ = now;
    RefreshAll();  // the busy fractions moved
    if (!last) Push(NextTick(now), kTick, 0);
  }

  void RecordPeriod(double now) {
    GslicePeriod period{last_tick_, now, {}};
    const double span = now - last_tick_;
    for (size_t s = 0; s < states_.size(); ++s) {
      const ServiceState& st = states_[s];
      const Counters w = CountersAt(st, now) - st.period_base;
      GsliceWindow row;
      row.share = st.share;
      row.effective_share = st.effective_share;
      row.interference = st.interference;
      row.busy = span > 0 ? w.busy_s / span : 0;
      row.max_batch = st.max_batch;
      row.arrivals = w.arrivals;
      row.completed = w.completed;
      row.arrival_rps = span > 0 ? w.arrivals / span : 0;
      row.throughput_rps = span > 0 ? w.completed / span : 0;
      const bool any = w.completed > 0;
      row.mean_ms = any ? w.latency_ms / w.completed : kNaN;
      row.p99_ms = any ? st.period_latencies_ms.Quantile(0.99) : kNaN;
      row.compliance = any ? static_cast<double>(w.within) / w.completed : kNaN;
      period.services.push_back(row);
    }
    periods_.push_back(std::move(period));
  }

  // ---- gslice: Algorithm 1, the allocation, shadow reloads -------------

  // Folds the period ending `now` into Algorithm 1's EWMAs, if the service
  // ran at its current GPU% all along (a period with a switch-over, or with
  // no request served, says nothing about the new GPU%).
  void Measure(ServiceState& st, double now) const {
    if (st.last_switch_s > last_tick_ - kEpsilon) return;
    const Counters w = CountersAt(st, now) - st.period_base;
    if (w.arrivals == 0 || w.completed == 0 || w.busy_s <= 0) return;
    // Working off a backlog (typically just after an increase took effect)
    // fast enough to be gone before another GPU% could take effect: its
    // latency is history. A slower drain counts, so that a barely
    // sufficient GPU% still gets more.
    const double drain_rps = (w.completed - w.arrivals) / (now - last_tick_);
    if (st.period_late && drain_rps > 0 && st.queue.size() <= drain_rps * options_.reload_delay_s) {
      return;
    }
    const double weight = st.have_avg ? kTuningEwmaWeight : 1.0;
    auto fold = [weight](double& avg, double sample) {
      avg = weight * sample + (1 - weight) * avg;
    };
    fold(st.avg_latency_ms, w.latency_ms / w.completed);
    fold(st.avg_throughput_rps, w.completed / w.busy_s);
    fold(st.avg_arrival_rps, w.arrivals / (now - last_tick_));
    st.have_avg = true;
  }

  // Whether a service may be retuned now: no shadow loading or waiting, a
  // measurement at its current GPU%, and past the hold-down.
  bool Tunable(const ServiceState& st, double now) const {
    if (st.pending || st.switching || !st.have_avg) return false;
    return st.last_switch_s < 0 || now - st.last_switch_s >= options_.hold_down_s - kEpsilon;
  }

  // Algorithm 1's newGPU% for service `s` from its EWMAs.
  double Demand(int s) {
    ServiceState& st = states_[s];
    const TuningDecision d = ComputeNewShare(
        {st.share, Spec(s).slo_ms, st.avg_arrival_rps, st.avg_latency_ms, st.avg_throughput_rps},
        options_.Tuning());
    const char* action = d.action == TuningAction::kIncrease   ? "increase"
                         : d.action == TuningAction::kDecrease ? "decrease"
                                                               : "keep";
    st.pending_note =
        fmt::format("avgL {:.1f} ms, avgT {:.0f}/s, arrivals {:.0f}/s: {} x {:.2f}, demand {:.1f}%",
                    st.avg_latency_ms, st.avg_throughput_rps, st.avg_arrival_rps, action,
                    d.change_factor, 100 * d.new_share);
    return d.new_share;
  }

  void Tune(double now) {
    ++round_;
    std::vector<int> free;
    std::vector<double> demands;
    double reserved = 0;  // GPU% of services that cannot change now, once switched
    for (size_t s = 0; s < states_.size(); ++s) {
      const ServiceState& st = states_[s];
      if (!Tunable(st, now)) {
        reserved += st.pending ? st.target : st.share;
        continue;
      }
      free.push_back(static_cast<int>(s));
      demands.push_back(Demand(static_cast<int>(s)));
    }
    if (free.empty()) return;
    const std::vector<double> alloc =
        MaxMinFairShares(demands, 1 - reserved, options_.distribute_spare);
    // Decreases first, so that increases may count on what they free.
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t k = 0; k < free.size(); ++k) {
        const bool decrease = alloc[k] < states_[free[k]].share;
        if (decrease == (pass == 0)) Request(free[k], alloc[k], now);
      }
    }
  }

  // The GPU% others hold or will hold: the larger of old and new while a
  // shadow loads (both moments must fit), the new one when it was asked for
  // in this round (its switch-over comes with this one's, decreases first).
  double HeldByOthers(int s) const {
    double held = 0;
    for (size_t o = 0; o < states_.size(); ++o) {
      if (static_cast<int>(o) == s) continue;
      const ServiceState& st = states_[o];
      if (!st.pending)
        held += st.share;
      else if (st.requested_in_round == round_)
        held += st.target;
      else
        held += std::max(st.share, st.target);
    }
    return held;
  }

  // Asks for `share` for service `s` if it moves by more than the threshold;
  // the shadow loads for the reload delay while the old process serves.
  void Request(int s, double share, double now) {
    ServiceState& st = states_[s];
    // An increase waits for what others still hold; it never becomes a cut.
    if (share > st.share) share = std::max(st.share, std::min(share, 1 - HeldByOthers(s)));
    if (std::fabs(share - st.share) <= options_.apply_threshold + kEpsilon) return;
    st.pending = true;
    st.target = share;
    st.requested_in_round = round_;
    events_out_.push_back(
        {now, s, GsliceEventKind::kShareRequested, st.share, share, st.pending_note});
    Push(now + options_.reload_delay_s, kSwitch, s);
  }

  // ---- igniter-guard: the pre-launched shadow -------------------------

  void Guard(double now) {
    for (size_t s = 0; s < states_.size(); ++s) {
      ServiceState& st = states_[s];
      if (st.shadow_used || st.period_latencies_ms.Count() == 0) continue;
      const double p99 = st.period_latencies_ms.Quantile(0.99);
      if (p99 <= Spec(s).slo_ms) continue;
      st.shadow_used = true;
      const double extra = std::min(options_.shadow_extra_share, 1 - HeldByOthers(s) - st.share);
      if (extra <= kEpsilon) continue;  // the GPU has nothing left to give
      st.pending = true;
      st.target = st.share + extra;
      st.pending_note = fmt::format("iGniter shadow (+{:.0f}%): p99 {:.1f} ms > SLO {:g} ms",
                                    100 * extra, p99, Spec(s).slo_ms);
      Push(now, kSwitch, static_cast<int>(s));
    }
  }

  // ---- The report -------------------------------------------------------

  Result<GsliceReport> Finish() {
    GsliceReport r;
    r.policy = options_.policy;
    r.gpu = workload_.gpu;
    r.duration_s = options_.duration_s;
    r.period_s = options_.period_s;
    r.seed = options_.seed;
    r.contention = options_.contention;
    r.initial_shares = WholeGpu(options_.policy) ? "whole-gpu"
                       : options_.initial_share  ? "fixed"
                                                 : "knee";
    r.gpus = options_.policy == GslicePolicy::kClipper ? static_cast<int>(states_.size()) : 1;
    for (size_t s = 0; s < states_.size(); ++s) {
      r.services.push_back(Summary(static_cast<int>(s)));
      r.throughput_rps += r.services.back().throughput_rps;
      r.violations += r.services.back().violations;
    }
    r.periods = std::move(periods_);
    std::stable_sort(
        events_out_.begin(), events_out_.end(),
        [](const GsliceEvent& a, const GsliceEvent& b) { return a.time_s < b.time_s; });
    for (const GsliceEvent& e : events_out_)
      if (e.kind == GsliceEventKind::kSwitchOver) r.last_switch_s = e.time_s;
    r.events = std::move(events_out_);
    return r;
  }

  GsliceServiceSummary Summary(int s) {
    ServiceState& st = states_[s];
    GsliceServiceSummary out = st.summary;
    const GsliceService& spec = Spec(s);
    out.name = spec.name;
    out.model = spec.model;
    out.rate_rps = spec.rate_rps;
    out.slo_ms = spec.slo_ms;
    out.requests = st.total.arrivals;
    out.violations = st.total.arrivals - st.total.within;
    out.throughput_rps = st.completed_by_end / options_.duration_s;
    out.knee_share = st.knee;
    out.compliance =
        st.total.arrivals > 0 ? static_cast<double>(st.total.within) / st.total.arrivals : kNaN;
    const bool any = st.total.completed > 0;
    out.mean_ms = any ? st.total.latency_ms / st.total.completed : kNaN;
    out.p99_ms = any ? st.all_latencies_ms.Quantile(0.99) : kNaN;
    out.final_share = st.share;
    out.final_max_batch = st.max_batch;
    return out;
  }

  const GsliceWorkload& workload_;
  const GsliceOptions& options_;
  std::vector<ServiceState> states_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  long seq_ = 0;
  long round_ = 0;  // tuning rounds so far
  double last_tick_ = 0;
  std::vector<GslicePeriod> periods_;
  std::vector<GsliceEvent> events_out_;
};

// The services must fit in the GPU at a fixed initial GPU%.
Status CheckWorkload(const GsliceWorkload& w, const GsliceOptions& options) {
  if (w.services.empty()) return Status::InvalidArgument("workload: no service to run");
  const double total = options.initial_share.value_or(0) * w.services.size();
  if (!WholeGpu(options.policy) && total > 1 + kEpsilon) {
    return Status::InvalidArgument(fmt::format(
        "initial_share: {} services x {:g} need {:g}% of the GPU; at most {:g} each fits",
        w.services.size(), *options.initial_share, 100 * total, 1.0 / w.services.size()));
  }
  for (const GsliceService& s : w.services) {
    if (!(s.rate_rps > 0 && s.slo_ms > 0)) {
      return Status::InvalidArgument("service " + s.name + ": rate and SLO must be > 0");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<GsliceReport> RunGslice(const GsliceWorkload& workload, const GsliceOptions& options) {
  TESSERA_RETURN_IF_ERROR(options.Validate());
  TESSERA_RETURN_IF_ERROR(CheckWorkload(workload, options));
  return GsliceRun(workload, options).Run();
}

}  // namespace tessera
