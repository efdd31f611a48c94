#include "tessera/autoscaler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <utility>

#include "tessera/plan_request.h"
#include "tessera/transition_request.h"
#include "tessera/workload/day_rates.h"
#include "tessera/workload/forecaster.h"

namespace tessera {
namespace {

// The lowest rate a plan is asked for: a scenario's rates are > 0.
constexpr double kMinPlannedRps = 1e-3;

// The highest of forecast[from, to) (clipped), or 0.
double Peak(const std::vector<double>& forecast, int from, int to) {
  double peak = 0;
  for (int k = std::max(from, 0); k < std::min<int>(to, forecast.size()); ++k) {
    peak = std::max(peak, forecast[k]);
  }
  return peak;
}

// What a transition sees of a MIG plan: every instance with its GPU and
// place, in order.
using Layout = std::vector<std::tuple<int, int, std::string, std::string, int, int>>;

Layout LayoutOf(const Deployment& d) {
  Layout layout;
  for (const GpuAssignment& g : d.gpus) {
    for (const Instance& i : g.instances()) {
      layout.emplace_back(g.index, i.start, i.profile, i.service, i.batch, i.procs);
    }
  }
  std::sort(layout.begin(), layout.end());
  return layout;
}

}  // namespace

Status CheckAutoscalePolicy(const AutoscalePolicyOptions& o) {
  TESSERA_RETURN_IF_ERROR(BuiltinForecasters().Check(o.forecaster));
  TESSERA_RETURN_IF_ERROR(CheckDuration("--lead", o.lead_s, kAutoscaleLead).status());
  TESSERA_RETURN_IF_ERROR(CheckDuration("--down-hold", o.down_hold_s, kAutoscaleDownHold).status());
  const auto within = [](std::string_view flag, const InputRange& range, double value) {
    if (range.Contains(value)) return Status::Ok();
    return Status::InvalidArgument(std::string(flag) + ": " + OutOfRange(range, value));
  };
  TESSERA_RETURN_IF_ERROR(within("--margin", kAutoscaleMargin, o.margin));
  TESSERA_RETURN_IF_ERROR(within("--hysteresis", kAutoscaleHysteresis, o.hysteresis));
  TESSERA_RETURN_IF_ERROR(within("--spare-gpus", kAutoscaleSpareGpus, o.spare_gpus));
  TESSERA_RETURN_IF_ERROR(within("--plan-windows", kAutoscalePlanWindows, o.plan_windows));
  return Status::Ok();
}

Result<Deployment> PlanForRates(const AutoscalePlanning& planning, const std::vector<double>& rates,
                                const Deployment* current, int minute, int extra_gpus,
                                int repack_gpus, bool consolidate) {
  PlanRequest request;
  request.inputs = planning.inputs;
  std::vector<double> clamped = rates;
  for (double& r : clamped) r = std::max(r, kMinPlannedRps);
  request.scenario = WithRates(planning.scenario, clamped);
  request.planner = planning.planner;
  if (current) {
    request.current = *current;
    request.max_extra_gpus = extra_gpus;
    request.repack_gpus = repack_gpus;
    request.consolidate = consolidate;
  }
  Result<PlanRun> run = Plan(request);
  if (!run.ok()) {
    return run.status().WithContext(
        fmt::format("minute {}: planning {}", minute, planning.scenario.name));
  }
  if (run->outcome != PlanOutcome::kFeasible) {
    for (const ServiceOutcome& s : run->deployment.services) {
      if (s.status != ServiceStatus::kOk) {
        return Status::InvalidArgument(
            fmt::format("{}: minute {}: service '{}' at {:.6g} req/s: {}", planning.source, minute,
                        s.name, s.rate_rps, s.reason));
      }
    }
  }
  return std::move(run->deployment);
}

std::vector<double> SloSafeCapacity(const Deployment& d, const std::vector<std::string>& services) {
  const TransitionCapacity counted(d, d);
  std::map<std::string, double> by_name;
  for (const GpuAssignment& g : d.gpus) {
    if (g.shared_whole()) continue;
    for (const Instance& i : g.instances()) by_name[i.service] += counted.Of(i);
  }
  std::vector<double> out;
  for (const std::string& s : services) out.push_back(by_name[s]);
  return out;
}

int MinutesCovering(double seconds) {
  return static_cast<int>(std::ceil(seconds / kMinute - 1e-9));
}

int MoveMinutes(const AutoscaleMove& move) { return std::max(1, MinutesCovering(move.seconds)); }

class Autoscaler::Impl {
 public:
  Impl(AutoscalePlanning planning, AutoscalePolicyOptions options,
       std::vector<std::vector<double>> season, std::unique_ptr<Forecaster> forecaster)
      : planning_(std::move(planning)),
        options_(std::move(options)),
        forecaster_(std::move(forecaster)),
        season_(std::move(season)) {
    lead_ = std::max(1, MinutesCovering(options_.lead_s));
    for (const Service& s : planning_.scenario.services) names_.push_back(s.name);
    series_.resize(names_.size());
    season_.resize(names_.size());
  }

  void Rebase(Deployment running, std::vector<double> planned) {
    current_ = std::move(running);
    planned_ = std::move(planned);
    planned_.resize(names_.size(), kMinPlannedRps);
    capacity_ = SloSafeCapacity(current_, names_);
  }

  void Observe(const std::vector<double>& minute) {
    for (size_t s = 0; s < series_.size(); ++s) {
      series_[s].push_back(s < minute.size() ? std::max(0.0, minute[s]) : 0.0);
    }
  }

  int minutes_seen() const { return series_.empty() ? 0 : static_cast<int>(series_[0].size()); }

  Result<std::optional<AutoscaleDecision>> Decide() {
    const int m = minutes_seen();
    if (m == 0) return std::optional<AutoscaleDecision>();
    const int services = static_cast<int>(series_.size());
    // The lead covers the last move's length too: a move that takes longer
    // than the lead would end after the load it was made for arrived.
    const int lead = std::max(lead_, last_move_minutes_ + 2);
    // Two windows at least (and an hour): a move's floors are checked over
    // its whole length, which may pass one window.
    const int horizon = std::max(options_.plan_windows, 2) * lead + 60;
    std::vector<std::vector<double>> forecast(services);
    std::vector<double> need(services);
    bool up = false;
    bool down = false;
    for (int s = 0; s < services; ++s) {
      const std::span<const double> seen(series_[s].data(), m);
      forecast[s] = forecaster_->Forecast(seen, season_[s], horizon);
      // The last minute seen is part of every forecast window.
      forecast[s].insert(forecast[s].begin(), seen.back());
      need[s] = std::max((1 + options_.margin) * Peak(forecast[s], 0, lead + 1), kMinPlannedRps);
      up = up || need[s] > Held(s) * (1 + 1e-9);
      down = down || need[s] < (1 - options_.hysteresis) * planned_[s];
    }
    // A move plans for the need over plan_windows lead windows (a ramp is
    // not followed step by step, and a plan moved down to holds a while),
    // and at least until a move up started as it ends could end: moves up
    // as long as the last one, and a minute to see the need of each.
    const int planned_ahead = std::max(options_.plan_windows * lead, 2 * last_up_minutes_ + 2);
    // With hedge_turns, a falling service keeps room for the load to turn
    // now and rise as fast as it falls until a move down as long as the
    // last one and a move up after it could have ended.
    const int turn_minutes = last_down_minutes_ + last_up_minutes_;
    std::vector<double> target(services);
    for (int s = 0; s < services; ++s) {
      double peak = Peak(forecast[s], 0, planned_ahead + 1);
      if (options_.hedge_turns) {
        const double fall = std::max(0.0, (forecast[s][1] - forecast[s][lead + 1]) / lead);
        peak = std::max(peak, forecast[s][0] + fall * turn_minutes);
      }
      target[s] = std::max((1 + options_.margin) * peak, kMinPlannedRps);
    }
    if (up) {
      down_since_ = -1;
      return TryMove(m, target, forecast, true, lead);
    }
    if (!down) {
      down_since_ = -1;
      // Moves keep what they can, so GPUs pile up over a day: every hold,
      // compact when a plan from scratch for the need takes fewer GPUs.
      if ((m - last_compaction_) * kMinute < std::max(options_.down_hold_s, kMinute)) {
        return std::optional<AutoscaleDecision>();
      }
      last_compaction_ = m;
      TESSERA_ASSIGN_OR_RETURN(const Deployment scratch,
                               PlanForRates(planning_, target, nullptr, m));
      if (scratch.metrics.gpus >= current_.metrics.gpus) return std::optional<AutoscaleDecision>();
      return TryMove(m, target, forecast, false, lead);
    }
    if (down_since_ < 0) down_since_ = m;
    if ((m - down_since_) * kMinute < options_.down_hold_s) {
      return std::optional<AutoscaleDecision>();
    }
    TESSERA_ASSIGN_OR_RETURN(std::optional<AutoscaleDecision> started,
                             TryMove(m, target, forecast, false, lead));
    if (!started) down_since_ = m;  // no move that pays: wait another hold
    return started;
  }

  void Adopt(const AutoscaleDecision& decision, int minutes) {
    if (decision.move.steps > 0) {
      last_move_minutes_ = minutes;
      (decision.move.up ? last_up_minutes_ : last_down_minutes_) = minutes;
    }
    current_ = decision.to;
    planned_ = decision.rates;
    capacity_ = SloSafeCapacity(current_, names_);
  }

  const Deployment& running() const { return current_; }
  const std::vector<double>& planned() const { return planned_; }
  const std::vector<double>& capacity() const { return capacity_; }
  const std::map<std::string, int>& declined() const { return declined_; }

 private:
  // A plan to move to and the transition there.
  struct Candidate {
    Deployment plan;
    Transition transition;
    double seconds = 0;
  };

  // The plan for `target` from the running plan (PlanForRates).
  Result<Deployment> Replan(int m, const std::vector<double>& target, int extra_gpus = 0,
                            int repack_gpus = 0) const {
    return PlanForRates(planning_, target, &current_, m, extra_gpus, repack_gpus,
                        options_.consolidate);
  }

  // `plan` and the transition from the running plan to it; none when that
  // needs more than the spare GPUs.
  Result<std::optional<Candidate>> Weigh(Deployment plan) const {
    TESSERA_ASSIGN_OR_RETURN(TransitionRun run, RunTransition(current_, plan, options_.spare_gpus));
    if (!run.transition) return std::optional<Candidate>();
    const double seconds = TransitionSeconds(*run.transition, options_.durations);
    return std::optional<Candidate>(
        Candidate{std::move(plan), std::move(*run.transition), seconds});
  }

  // The plans a move down weighs, none when the fewest GPUs for `target` are
  // not fewer than the running plan's: the plan on the fewest GPUs (on many
  // services often the plan from scratch mapped onto the running one, a
  // repack of the cluster), then incremental plans that keep the running
  // instances but repack the 0, 1, 2, 4, ... least-filled running GPUs: for
  // each, the plans on one GPU fewer than the running one and on the fewest
  // GPUs it empties. A plan already listed (two repack counts often give
  // the same one) is listed once, so its transition is planned once.
  Result<std::vector<Deployment>> PlansDown(int m, const std::vector<double>& target) const {
    std::vector<Deployment> plans;
    std::set<Layout> listed;
    const auto list = [&](Deployment plan) {
      if (listed.insert(LayoutOf(plan)).second) plans.push_back(std::move(plan));
    };
    TESSERA_ASSIGN_OR_RETURN(Deployment fewest, Replan(m, target));
    const int scratch = fewest.metrics.gpus;
    const int running = current_.metrics.gpus;
    if (scratch >= running) return plans;
    list(std::move(fewest));
    for (int repack = 0; repack < running; repack = std::max(1, 2 * repack)) {
      std::optional<Deployment> first;
      std::optional<Deployment> last;
      for (int allowed = running - 1; allowed > scratch;) {
        TESSERA_ASSIGN_OR_RETURN(Deployment plan, Replan(m, target, allowed - scratch, repack));
        // On as few GPUs as the fewest: the plan from scratch, as the plan
        // that keeps the rest did not fit on `allowed` GPUs.
        if (plan.metrics.gpus <= scratch) break;
        allowed = plan.metrics.gpus - 1;
        (first ? last : first) = std::move(plan);
      }
      if (first) list(std::move(*first));
      if (last) list(std::move(*last));
    }
    return plans;
  }

  Result<std::optional<AutoscaleDecision>> TryMove(int m, std::vector<double> target,
                                                   const std::vector<std::vector<double>>& forecast,
                                                   bool up, int lead) {
    const int services = static_cast<int>(target.size());
    for (int attempt = 0; attempt < 2; ++attempt) {
      const int from_gpus = current_.metrics.gpus;
      std::optional<Candidate> found;
      if (up) {
        // The fewest GPUs first. A move whose transition outlasts the lead
        // takes the shortest of the plans on up to spare_gpus more GPUs: with
        // many services the fewest GPUs are often the plan from scratch
        // mapped onto the running one (a repack of every GPU), where one GPU
        // more keeps every instance and adds a few. The lead here is the one
        // configured: a long last move lengthens what the forecast looks
        // ahead, not how long a move up may run (measured on 200 generated
        // services: a 20-minute repack up taken within such a lead left the
        // next rise late).
        const auto take_shorter = [&](std::optional<Candidate> c) {
          if (c && (!found || c->seconds < found->seconds)) found = std::move(c);
        };
        for (int extra = 0; extra <= options_.spare_gpus; ++extra) {
          if (found && found->seconds <= lead_ * kMinute) break;
          TESSERA_ASSIGN_OR_RETURN(Deployment plan, Replan(m, target, extra));
          TESSERA_ASSIGN_OR_RETURN(std::optional<Candidate> c, Weigh(std::move(plan)));
          take_shorter(std::move(c));
        }
        if (!found || found->seconds > lead_ * kMinute) {
          // Still none within the lead, or none at all within the spare
          // GPUs: the plan that keeps every running instance and adds what
          // the need lacks, on as many GPUs as that takes (its transition
          // only creates).
          TESSERA_ASSIGN_OR_RETURN(Deployment plan, Replan(m, target, from_gpus));
          TESSERA_ASSIGN_OR_RETURN(std::optional<Candidate> c, Weigh(std::move(plan)));
          take_shorter(std::move(c));
        }
      } else {
        TESSERA_ASSIGN_OR_RETURN(std::vector<Deployment> plans, PlansDown(m, target));
        if (plans.empty()) return Decline("the plan for the need has no fewer GPUs");
        std::vector<Candidate> moves;
        double longest = 0;
        bool outlasting = false;
        for (Deployment& plan : plans) {
          TESSERA_ASSIGN_OR_RETURN(std::optional<Candidate> c, Weigh(std::move(plan)));
          if (!c) continue;
          // With hedge_turns, no move down outlasts the lead: while it ran no
          // move up could start, past what the forecast sees, and the room
          // its falling services keep for a turn is sized for the last move
          // down's length (measured on 200 generated services: repacks of
          // 17-29 minutes that freed a GPU ran into the 14:30 rise).
          if (options_.hedge_turns && c->seconds > lead_ * kMinute) {
            outlasting = true;
            continue;
          }
          longest = std::max(longest, c->seconds);
          moves.push_back(std::move(*c));
        }
        // The move holding the fewest GPU-seconds until the longest of them
        // has ended and its plan held two lead windows: a repack onto the
        // fewest GPUs holds the running GPUs and the spare ones while it
        // runs, a move that empties a GPU or two ends soon.
        const double window = longest + 2 * lead * kMinute;
        const auto held = [&](const Candidate& c) {
          const int during = std::max(c.transition.summary.peak_gpus, from_gpus);
          return during * c.seconds + c.plan.metrics.gpus * (window - c.seconds);
        };
        for (Candidate& c : moves) {
          if (!found || held(c) < held(*found)) found = std::move(c);
        }
        if (!found && outlasting) return Decline("every move down would outlast the lead");
      }
      if (!found) return Decline("the transition needs more spare GPUs");
      const double seconds = found->seconds;
      const int to_gpus = found->plan.metrics.gpus;
      const int ends =
          std::max(1, MinutesCovering(seconds));  // forecast index of the first minute after
      bool lowered_crossed = false;
      bool late = false;
      bool still_needed = !up;
      for (int s = 0; s < services; ++s) {
        const double floor = std::min(planned_[s], target[s]);
        const double during = Peak(forecast[s], 0, ends + 1);
        if (target[s] > planned_[s]) {
          late = late || during > Held(s);
          still_needed =
              still_needed ||
              (1 + options_.margin) * Peak(forecast[s], ends + 1, std::max(ends + 2, lead_ + 1)) >
                  Held(s) * (1 + 1e-9);
        } else if (during > floor) {
          lowered_crossed = true;
          target[s] = planned_[s];  // keep what it had: its floor stays where it was
        }
      }
      if (up && !still_needed) return Decline("the need is gone before the move would end");
      if (lowered_crossed) {
        if (!up) return Decline("the forecast crosses a floor before the move would end");
        continue;  // the move up without lowering anyone the forecast still needs
      }
      AutoscaleDecision started;
      started.move.minute = m;
      started.move.seconds = seconds;
      started.move.phases = static_cast<int>(found->transition.phases.size());
      started.move.steps = found->transition.summary.steps;
      started.move.from_gpus = from_gpus;
      started.move.to_gpus = to_gpus;
      started.move.peak_gpus =
          std::max(found->transition.summary.peak_gpus, std::max(from_gpus, to_gpus));
      started.move.spare_gpus = started.move.peak_gpus - std::max(from_gpus, to_gpus);
      started.move.up = up;
      started.move.late = late;
      started.transition = std::move(found->transition);
      started.to = std::move(found->plan);
      started.rates = std::move(target);
      return std::optional<AutoscaleDecision>(std::move(started));
    }
    return std::optional<AutoscaleDecision>();
  }

  // The rate the running plan holds for service s: what it was planned for,
  // unless its SLO-safe capacity is less (a re-plan that kept every instance).
  double Held(int s) const { return std::min(planned_[s], capacity_[s]); }

  std::optional<AutoscaleDecision> Decline(const std::string& why) {
    ++declined_[why];
    return std::nullopt;
  }

  AutoscalePlanning planning_;
  AutoscalePolicyOptions options_;
  std::unique_ptr<Forecaster> forecaster_;
  std::vector<std::string> names_;
  std::map<std::string, int> declined_;
  int lead_ = 1;
  int down_since_ = -1;        // the minute the need first fell below the hysteresis; -1: not
  int last_compaction_ = 0;    // the minute a compaction was last weighed
  int last_move_minutes_ = 0;  // how long the last move took, rounded up
  int last_up_minutes_ = 0;    // ... the last move up
  int last_down_minutes_ = 0;  // ... the last move down
  std::vector<std::vector<double>> series_;  // per service, per minute seen
  std::vector<std::vector<double>> season_;  // the previous day's, the same way
  Deployment current_;
  std::vector<double> planned_;   // the rates current_ was planned for
  std::vector<double> capacity_;  // its SLO-safe capacity
};

Result<std::unique_ptr<Autoscaler>> Autoscaler::Create(AutoscalePlanning planning,
                                                       AutoscalePolicyOptions options,
                                                       std::vector<std::vector<double>> season) {
  TESSERA_RETURN_IF_ERROR(CheckAutoscalePolicy(options));
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<Forecaster> forecaster,
                           BuiltinForecasters().Create(options.forecaster));
  return std::unique_ptr<Autoscaler>(new Autoscaler(std::make_unique<Impl>(
      std::move(planning), std::move(options), std::move(season), std::move(forecaster))));
}

Autoscaler::Autoscaler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Autoscaler::~Autoscaler() = default;

void Autoscaler::Rebase(Deployment running, std::vector<double> planned) {
  impl_->Rebase(std::move(running), std::move(planned));
}
void Autoscaler::Observe(const std::vector<double>& minute) { impl_->Observe(minute); }
int Autoscaler::minutes_seen() const { return impl_->minutes_seen(); }
Result<std::optional<AutoscaleDecision>> Autoscaler::Decide() { return impl_->Decide(); }
void Autoscaler::Adopt(const AutoscaleDecision& decision, int minutes) {
  impl_->Adopt(decision, minutes);
}
const Deployment& Autoscaler::running() const { return impl_->running(); }
const std::vector<double>& Autoscaler::planned() const { return impl_->planned(); }
const std::vector<double>& Autoscaler::capacity() const { return impl_->capacity(); }
const std::map<std::string, int>& Autoscaler::declined() const { return impl_->declined(); }

}  // namespace tessera
