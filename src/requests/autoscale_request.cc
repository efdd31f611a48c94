#include "tessera/autoscale_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <utility>

#include "tessera/durations.h"
#include "tessera/plan_request.h"
#include "tessera/planner.h"
#include "tessera/simulate/transition_simulation.h"
#include "tessera/simulator.h"
#include "tessera/transition.h"
#include "tessera/transition_request.h"
#include "tessera/util/text_io.h"

namespace tessera {
namespace {

constexpr DurationRange kStepTime{0, kHour, true};

// What the day is planned and simulated with.
struct Day {
  AutoscalePlanning planning;  // the scenario, the profiles in memory, the planner
  DayRates rates;
  DayRates season;  // the previous day
  // The scenario at the shape's 1: profiles and SLOs for the simulator.
  std::optional<Problem> problem;
};

// One steady plan, or a transition between two, as the simulator runs it.
struct Epoch {
  std::shared_ptr<const ServingModel> model;
  // A transition's instances: from when to when each serves, in seconds of
  // the day (-inf / +inf: before and after it); empty for a steady plan.
  std::vector<std::pair<double, double>> serves;
  // A transition's cluster GPUs: from when to when each holds an instance
  // (from the start of the phase creating its first to the end of the one
  // destroying its last).
  std::vector<std::pair<double, double>> held;
};

// The mean number of `epoch`'s GPUs held over minute m.
double MeanGpusHeld(const Epoch& epoch, int m) {
  const double from = m * kMinute;
  const double to = from + kMinute;
  double seconds = 0;
  for (const auto& [a, b] : epoch.held)
    seconds += std::max(0.0, std::min(b, to) - std::max(a, from));
  return seconds / kMinute;
}

// A minute to simulate: the epoch it runs on, and for how long.
struct MinuteRun {
  int epoch = 0;
  double seconds = 0;
};

struct Timeline {
  std::vector<Epoch> epochs;
  std::vector<MinuteRun> minutes;
};

Result<int> AddSteadyEpoch(const Day& day, const Deployment& d, Timeline& timeline) {
  TESSERA_ASSIGN_OR_RETURN(ServingModel model, BuildServingModel(d, *day.problem));
  timeline.epochs.push_back({std::make_shared<const ServingModel>(std::move(model)), {}, {}});
  return static_cast<int>(timeline.epochs.size()) - 1;
}

Result<int> AddTransitionEpoch(const Day& day, const Deployment& from, const Transition& t,
                               double start_s, const StepDurations& durations, Timeline& timeline) {
  TESSERA_ASSIGN_OR_RETURN(TransitionLives lives, BuildTransitionLives(from, t, *day.problem, 1.0));
  const std::vector<double> phases = PhaseSeconds(t, durations);
  std::vector<double> phase_start{start_s};
  for (double p : phases) phase_start.push_back(phase_start.back() + p);
  Epoch epoch;
  const double inf = std::numeric_limits<double>::infinity();
  std::map<int, std::pair<double, double>> held;  // cluster GPU -> held from, until
  size_t k = 0;
  for (const GpuAssignment& g : lives.deployment.gpus) {
    for (size_t i = 0; i < g.instances().size(); ++i, ++k) {
      const auto [starts_after, stops_at] = lives.phases[k];
      epoch.serves.emplace_back(starts_after == 0 ? -inf : phase_start[starts_after],
                                stops_at == 0 ? inf : phase_start[stops_at - 1]);
      const double from = starts_after == 0 ? -inf : phase_start[starts_after - 1];
      const double until = stops_at == 0 ? inf : phase_start[stops_at];
      auto [it, fresh] = held.try_emplace(g.index, from, until);
      if (!fresh)
        it->second = {std::min(it->second.first, from), std::max(it->second.second, until)};
    }
  }
  for (const auto& [gpu, span] : held) epoch.held.push_back(span);
  epoch.model = std::make_shared<const ServingModel>(std::move(lives.model));
  timeline.epochs.push_back(std::move(epoch));
  return static_cast<int>(timeline.epochs.size()) - 1;
}

// The per-minute bookkeeping of one strategy.
void StartStrategy(AutoscaleStrategy& s, std::string name, int minutes, int services) {
  s.name = std::move(name);
  s.gpus.assign(minutes, 0);
  s.capacity.assign(services, std::vector<double>(minutes, 0));
}

void SetMinute(AutoscaleStrategy& s, int minute, double gpus, const std::vector<double>& capacity) {
  s.gpus[minute] = gpus;
  for (size_t k = 0; k < capacity.size(); ++k) s.capacity[k][minute] = capacity[k];
}

std::vector<double> Lower(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> out(a.size());
  for (size_t k = 0; k < a.size(); ++k) out[k] = std::min(a[k], b[k]);
  return out;
}

// The autoscaling policy run over the day: each minute's rates fed as
// the minute ends, its moves laid on the timeline.
Status RunPolicy(const Day& day, const AutoscaleOptions& options, AutoscaleStrategy& out,
                 Timeline& timeline, const std::function<void(std::string_view)>& progress) {
  const int n = day.rates.minutes();
  const int services = static_cast<int>(day.rates.services.size());
  StartStrategy(out, "autoscale", n, services);
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<Autoscaler> policy,
                           Autoscaler::Create(day.planning, options, day.season.ByService()));
  // The plan the day starts on: the first lead window's need, as if seen.
  const int lead = std::max(1, MinutesCovering(options.lead_s));
  std::vector<double> need(services);
  for (int s = 0; s < services; ++s) {
    need[s] = (1 + options.margin) * day.rates.PeakOf(s, 0, lead);
  }
  TESSERA_ASSIGN_OR_RETURN(Deployment first, PlanForRates(day.planning, need, nullptr, 0));
  TESSERA_ASSIGN_OR_RETURN(int epoch, AddSteadyEpoch(day, first, timeline));
  policy->Rebase(std::move(first), need);
  int busy_until = 0;  // the first minute no transition runs in
  for (int m = 0; m < n; ++m) {
    if (m > 0) policy->Observe(day.rates.rps[m - 1]);
    if (m > 0 && m >= busy_until) {
      TESSERA_ASSIGN_OR_RETURN(std::optional<AutoscaleDecision> started, policy->Decide());
      if (started && started->move.steps == 0) {  // the running plan serves the need as it is
        policy->Adopt(*started, 0);
      } else if (started) {
        const int minutes = MoveMinutes(started->move);
        TESSERA_ASSIGN_OR_RETURN(const int moving,
                                 AddTransitionEpoch(day, policy->running(), started->transition,
                                                    m * kMinute, options.durations, timeline));
        const std::vector<double> before = policy->capacity();
        policy->Adopt(*started, minutes);
        for (int k = m; k < std::min(n, m + minutes); ++k) {
          // The part of the minute the move runs through (at least a sample).
          const double left = (m - k) * kMinute + started->move.seconds;
          timeline.minutes.push_back({moving, std::clamp(left, options.sample_s, kMinute)});
          SetMinute(out, k, MeanGpusHeld(timeline.epochs[moving], k),
                    Lower(before, policy->capacity()));
        }
        out.max_spare_gpus = std::max(out.max_spare_gpus, started->move.spare_gpus);
        out.peak_gpus = std::max(out.peak_gpus, started->move.peak_gpus);
        out.moves.push_back(started->move);
        TESSERA_ASSIGN_OR_RETURN(epoch, AddSteadyEpoch(day, policy->running(), timeline));
        // The minutes the move runs through are seen all the same.
        for (int k = m + 1; k < std::min(n, m + minutes); ++k)
          policy->Observe(day.rates.rps[k - 1]);
        busy_until = m + minutes;
        m = busy_until - 1;
        if (progress && out.moves.size() % 10 == 0) {
          progress(fmt::format("autoscale: minute {} of {}, {} moves", m + 1, n, out.moves.size()));
        }
        continue;
      }
    }
    timeline.minutes.push_back({epoch, options.sample_s});
    SetMinute(out, m, policy->running().metrics.gpus, policy->capacity());
  }
  out.declined = policy->declined();
  return Status::Ok();
}

Status RunStatic(const Day& day, AutoscaleStrategy& out, Timeline& timeline) {
  const int n = day.rates.minutes();
  const int services = static_cast<int>(day.planning.scenario.services.size());
  StartStrategy(out, "static-peak", n, services);
  std::vector<double> peak(services);
  for (int s = 0; s < services; ++s) peak[s] = day.rates.PeakOf(s, 0, n);
  TESSERA_ASSIGN_OR_RETURN(const Deployment d, PlanForRates(day.planning, peak, nullptr, 0));
  TESSERA_ASSIGN_OR_RETURN(const int epoch, AddSteadyEpoch(day, d, timeline));
  const std::vector<double> capacity = SloSafeCapacity(d, day.rates.services);
  for (int m = 0; m < n; ++m) SetMinute(out, m, d.metrics.gpus, capacity);
  timeline.minutes.assign(n, {epoch, 0});
  return Status::Ok();
}

Status RunOracle(const Day& day, const AutoscaleOptions& options, AutoscaleStrategy& out,
                 Timeline& timeline) {
  const int n = day.rates.minutes();
  const int services = static_cast<int>(day.planning.scenario.services.size());
  StartStrategy(out, "oracle", n, services);
  const int interval = std::max(1, MinutesCovering(options.oracle_interval_s));
  int previous_gpus = -1;
  for (int from = 0; from < n; from += interval) {
    const int to = std::min(n, from + interval);
    std::vector<double> peak(services);
    for (int s = 0; s < services; ++s) peak[s] = day.rates.PeakOf(s, from, to);
    TESSERA_ASSIGN_OR_RETURN(const Deployment d, PlanForRates(day.planning, peak, nullptr, from));
    TESSERA_ASSIGN_OR_RETURN(const int epoch, AddSteadyEpoch(day, d, timeline));
    const std::vector<double> capacity = SloSafeCapacity(d, day.rates.services);
    const int gpus = d.metrics.gpus;
    if (previous_gpus >= 0 && gpus != previous_gpus) {
      AutoscaleMove move;
      move.minute = from;
      move.from_gpus = previous_gpus;
      move.to_gpus = move.peak_gpus = gpus;
      move.up = gpus > previous_gpus;
      out.moves.push_back(move);
    }
    previous_gpus = gpus;
    for (int m = from; m < to; ++m) {
      SetMinute(out, m, gpus, capacity);
      timeline.minutes.push_back({epoch, 0});
    }
  }
  return Status::Ok();
}

// Simulates every minute of every strategy on `jobs` threads.
Status SimulateMinutes(const Day& day, const AutoscaleOptions& options,
                       std::vector<std::pair<AutoscaleStrategy*, const Timeline*>> strategies,
                       const std::function<void(std::string_view)>& progress) {
  const int n = day.rates.minutes();
  const int services = static_cast<int>(day.planning.scenario.services.size());
  for (auto& [strategy, timeline] : strategies) {
    strategy->compliance.assign(services, std::vector<double>(n, 1));
  }
  const int total = n * static_cast<int>(strategies.size());
  std::atomic<int> next{0};
  std::atomic<int> done{0};
  std::vector<Status> failures(total, Status::Ok());
  const auto work = [&] {
    for (int job = next++; job < total; job = next++) {
      const auto& [strategy, timeline] = strategies[job / n];
      const int m = job % n;
      const MinuteRun& run = timeline->minutes[m];
      const Epoch& epoch = timeline->epochs[run.epoch];
      ServingModel model = *epoch.model;
      for (int s = 0; s < services; ++s) model.services[s].rate_rps = day.rates.rps[m][s];
      for (size_t i = 0; i < epoch.serves.size(); ++i) {
        model.instances[i].accepts_from_s = epoch.serves[i].first - m * kMinute;
        model.instances[i].accepts_until_s = epoch.serves[i].second - m * kMinute;
      }
      SimOptions sim;
      sim.duration_s = run.seconds > 0 ? run.seconds : options.sample_s;
      sim.seed = AutoscaleMinuteSeed(options.seed, job, total);
      Result<SimReport> report = Simulate(model, sim);
      if (!report.ok()) {
        failures[job] = report.status();
        continue;
      }
      for (int s = 0; s < services; ++s) {
        const ServiceReport& r = report->services[s];
        strategy->compliance[s][m] = r.requests > 0 ? r.compliance : 1;
      }
      const int finished = ++done;
      if (progress && finished % 500 == 0) {
        progress(fmt::format("simulated {} of {} minutes", finished, total));
      }
    }
  };
  int jobs =
      options.jobs > 0 ? options.jobs : static_cast<int>(std::thread::hardware_concurrency());
  jobs = std::clamp(jobs, 1, 64);
  std::vector<std::thread> threads;
  for (int k = 1; k < jobs; ++k) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
  for (const Status& s : failures) {
    if (!s.ok()) return s;
  }
  for (auto& [strategy, timeline] : strategies) {
    strategy->lowest.assign(services, 1);
    strategy->lowest_minute.assign(services, 0);
    for (int s = 0; s < services; ++s) {
      for (int m = 0; m < n; ++m) {
        const double c = strategy->compliance[s][m];
        if (c < strategy->lowest[s]) {
          strategy->lowest[s] = c;
          strategy->lowest_minute[s] = m;
        }
        strategy->minutes_below_target += c < kComplianceTarget;
      }
    }
  }
  return Status::Ok();
}

void Summarise(AutoscaleStrategy& s) {
  double minutes = 0;
  for (double g : s.gpus) minutes += g;
  s.gpu_hours = minutes / 60;
  if (s.gpus.empty()) return;
  const auto [low, high] = std::minmax_element(s.gpus.begin(), s.gpus.end());
  s.peak_gpus = std::max(s.peak_gpus, static_cast<int>(std::ceil(*high - 1e-9)));
  s.min_gpus = static_cast<int>(std::floor(*low + 1e-9));
}

Status CheckOptions(const AutoscaleOptions& o) {
  TESSERA_RETURN_IF_ERROR(CheckAutoscalePolicy(o));
  TESSERA_RETURN_IF_ERROR(CheckDuration("--sample", o.sample_s, kAutoscaleSample).status());
  TESSERA_RETURN_IF_ERROR(
      CheckDuration("--oracle-interval", o.oracle_interval_s, kAutoscaleOracleInterval).status());
  const auto within = [](std::string_view flag, const InputRange& range, double value) {
    if (range.Contains(value)) return Status::Ok();
    return Status::InvalidArgument(std::string(flag) + ": " + OutOfRange(range, value));
  };
  TESSERA_RETURN_IF_ERROR(within("--jobs", kAutoscaleJobs, o.jobs));
  return Status::Ok();
}

}  // namespace

Result<StepDurations> ParseStepDurations(std::string_view flag, std::string_view text) {
  StepDurations d;
  const std::map<std::string, double StepDurations::*, std::less<>> keys = {
      {"mig-create", &StepDurations::mig_create_s},
      {"mig-destroy", &StepDurations::mig_destroy_s},
      {"mps-start", &StepDurations::mps_start_s},
      {"model-load", &StepDurations::model_load_s},
      {"drain", &StepDurations::drain_s}};
  for (std::string_view item : SplitCsvFields(text)) {
    const size_t eq = item.find('=');
    const auto key = keys.find(item.substr(0, eq));
    if (eq == std::string_view::npos || key == keys.end()) {
      return Status::InvalidArgument(fmt::format(
          "{}: expected KEY=DURATION with KEY one of mig-create, mig-destroy, mps-start, "
          "model-load, drain, got {}",
          flag, QuoteForMessage(item)));
    }
    TESSERA_ASSIGN_OR_RETURN(d.*(key->second), ParseDuration(fmt::format("{} {}", flag, key->first),
                                                             item.substr(eq + 1), kStepTime));
  }
  return d;
}

std::string FormatStepDurations(const StepDurations& d) {
  return fmt::format(
      "mig-create={:g}s,mig-destroy={:g}s,mps-start={:g}s,model-load={:g}s,drain={:g}s",
      d.mig_create_s, d.mig_destroy_s, d.mps_start_s, d.model_load_s, d.drain_s);
}

std::uint64_t AutoscaleMinuteSeed(std::uint64_t seed, int job, int jobs) {
  return (seed - 1) * (static_cast<std::uint64_t>(jobs) + 1) + 1 + static_cast<std::uint64_t>(job);
}

Result<AutoscaleReport> RunAutoscale(const AutoscaleRequest& request) {
  const AutoscaleOptions& options = request.options;
  TESSERA_RETURN_IF_ERROR(CheckOptions(options));
  // The day moves between MIG plans through transitions: MIG planners and
  // inputs only.
  TESSERA_RETURN_IF_ERROR(CheckInputsApply(request.inputs, false, "autoscale (MIG plans)"));
  if (!request.planner.empty()) {
    Result<std::unique_ptr<Planner>> planner = BuiltinPlanners().Create(request.planner);
    if (!planner.ok()) return planner.status().WithContext("--planner");
    if ((*planner)->Mode() == Sharing::kMps) {
      return Status::InvalidArgument(
          "--planner " + request.planner +
          ": autoscale moves MIG plans through transitions; this planner "
          "shares GPUs whole through MPS");
    }
  }
  Day day;
  if (request.scenario) {
    day.planning.scenario = *request.scenario;
  } else {
    TESSERA_ASSIGN_OR_RETURN(day.planning.scenario, LoadScenario(request.inputs));
  }
  if (request.rates) {
    day.rates = *request.rates;
  } else {
    TESSERA_ASSIGN_OR_RETURN(day.rates, LoadDayRates(request.rates_path, day.planning.scenario));
  }
  if (day.rates.services.size() != day.planning.scenario.services.size()) {
    return Status::InvalidArgument(day.rates.source + ": its services are not the scenario's");
  }
  day.planning.source = day.rates.source;
  if (request.season) {
    day.season = *request.season;
  } else if (!request.season_path.empty()) {
    TESSERA_ASSIGN_OR_RETURN(day.season, LoadDayRates(request.season_path, day.planning.scenario));
  } else {
    day.season = day.rates;
  }
  if (day.season.services.size() != day.planning.scenario.services.size()) {
    return Status::InvalidArgument(day.season.source + ": its services are not the scenario's");
  }
  day.planning.inputs = request.inputs;
  TESSERA_ASSIGN_OR_RETURN(day.problem, LoadProblem(request.inputs, day.planning.scenario, false,
                                                    nullptr, request.notes));
  day.planning.inputs.profile_table = std::make_shared<const ProfileTable>(day.problem->profiles());
  day.planning.inputs.profiles.clear();
  PlanRequest probe;
  probe.inputs = day.planning.inputs;
  probe.planner = request.planner;
  day.planning.planner = PlannerFor(probe);

  AutoscaleReport report;
  report.scenario = day.planning.scenario.name.empty() ? day.planning.scenario.source
                                                       : day.planning.scenario.name;
  report.rates = day.rates.source;
  report.season = day.season.source;
  report.planner = day.planning.planner;
  report.options = options;
  report.services = day.rates.services;
  report.minutes = day.rates.minutes();
  report.rps = day.rates.ByService();

  Timeline autoscaled, fixed, oracle;
  if (request.progress) request.progress("planning the static plan for the day's peak");
  TESSERA_RETURN_IF_ERROR(RunStatic(day, report.static_peak, fixed));
  if (request.progress) request.progress("planning the oracle's intervals");
  TESSERA_RETURN_IF_ERROR(RunOracle(day, options, report.oracle, oracle));
  if (request.progress) request.progress("autoscaling the day");
  TESSERA_RETURN_IF_ERROR(RunPolicy(day, options, report.autoscale, autoscaled, request.progress));
  TESSERA_RETURN_IF_ERROR(SimulateMinutes(
      day, options,
      {{&report.autoscale, &autoscaled}, {&report.static_peak, &fixed}, {&report.oracle, &oracle}},
      request.progress));
  for (AutoscaleStrategy* s : {&report.autoscale, &report.static_peak, &report.oracle})
    Summarise(*s);
  return report;
}

namespace {

std::string ClockOf(int minute) {
  return fmt::format("{:02d}:{:02d}", minute / 60 % 24, minute % 60);
}

double Lowest(const AutoscaleStrategy& s) {
  return s.lowest.empty() ? 1 : *std::min_element(s.lowest.begin(), s.lowest.end());
}

}  // namespace

std::string FormatAutoscaleText(const AutoscaleReport& r) {
  std::string out =
      fmt::format("Autoscale: {} over {} minutes of {} ({} planner, {} forecaster{}{})\n\n",
                  r.scenario, r.minutes, r.rates, r.planner, r.options.forecaster,
                  r.options.forecaster == "seasonal" ? ", previous day " + r.season : "",
                  r.options.consolidate ? ", consolidating re-plans" : "");
  out += fmt::format("  {:<12} {:>10} {:>8} {:>6} {:>6} {:>6} {:>9} {:>12}\n", "strategy",
                     "GPU-hours", "vs peak", "min", "max", "moves", "lowest %", "minutes<99%");
  const double base = r.static_peak.gpu_hours;
  for (const AutoscaleStrategy* s : {&r.autoscale, &r.static_peak, &r.oracle}) {
    out += fmt::format("  {:<12} {:>10.2f} {:>8.3f} {:>6} {:>6} {:>6} {:>9.2f} {:>12}\n", s->name,
                       s->gpu_hours, base > 0 ? s->gpu_hours / base : 0, s->min_gpus, s->peak_gpus,
                       s->moves.size(), 100 * Lowest(*s), s->minutes_below_target);
  }
  out += fmt::format("\n  autoscale / oracle: {:.3f}; most spare GPUs during a move: {}\n",
                     r.oracle.gpu_hours > 0 ? r.autoscale.gpu_hours / r.oracle.gpu_hours : 0,
                     r.autoscale.max_spare_gpus);
  out += "\nLowest minute per service (% within SLO, autoscale / static-peak / oracle)\n";
  for (size_t s = 0; s < r.services.size(); ++s) {
    out += fmt::format("  {:<24} {:>7.2f} at {}  {:>7.2f}  {:>7.2f}\n", r.services[s],
                       100 * r.autoscale.lowest[s], ClockOf(r.autoscale.lowest_minute[s]),
                       100 * r.static_peak.lowest[s], 100 * r.oracle.lowest[s]);
  }
  if (!r.autoscale.declined.empty()) {
    out += "\nMoves weighed and not started (minutes)\n";
    for (const auto& [why, count] : r.autoscale.declined)
      out += fmt::format("  {:>5}  {}\n", count, why);
  }
  out += "\nMoves (autoscale)\n";
  if (r.autoscale.moves.empty()) out += "  none\n";
  for (const AutoscaleMove& m : r.autoscale.moves) {
    out +=
        fmt::format("  {} {:<4} {:>3} -> {:<3} GPUs  {:>6.1f} s  {} phases, {} steps, peak {}{}\n",
                    ClockOf(m.minute), m.up ? "up" : "down", m.from_gpus, m.to_gpus, m.seconds,
                    m.phases, m.steps, m.peak_gpus, m.late ? "  (late)" : "");
  }
  return out;
}

std::string FormatAutoscaleJson(const AutoscaleReport& r) {
  using json = nlohmann::ordered_json;
  const auto strategy = [&](const AutoscaleStrategy& s) {
    json moves = json::array();
    for (const AutoscaleMove& m : s.moves) {
      moves.push_back({{"minute", m.minute},
                       {"seconds", m.seconds},
                       {"phases", m.phases},
                       {"steps", m.steps},
                       {"from_gpus", m.from_gpus},
                       {"to_gpus", m.to_gpus},
                       {"peak_gpus", m.peak_gpus},
                       {"spare_gpus", m.spare_gpus},
                       {"direction", m.up ? "up" : "down"},
                       {"late", m.late}});
    }
    json services = json::array();
    for (size_t k = 0; k < r.services.size(); ++k) {
      services.push_back({{"name", r.services[k]},
                          {"lowest_compliance", s.lowest[k]},
                          {"lowest_minute", s.lowest_minute[k]},
                          {"compliance", s.compliance[k]},
                          {"capacity_rps", s.capacity[k]}});
    }
    return json{{"name", s.name},
                {"gpu_hours", s.gpu_hours},
                {"min_gpus", s.min_gpus},
                {"peak_gpus", s.peak_gpus},
                {"max_spare_gpus", s.max_spare_gpus},
                {"service_minutes_below_target", s.minutes_below_target},
                {"gpus", s.gpus},
                {"moves", moves},
                {"declined", s.declined},
                {"services", services}};
  };
  json rates = json::array();
  for (size_t k = 0; k < r.services.size(); ++k)
    rates.push_back({{"name", r.services[k]}, {"rps", r.rps[k]}});
  const json out = {
      {"scenario", r.scenario},
      {"rates", r.rates},
      {"season", r.season},
      {"planner", r.planner},
      {"minutes", r.minutes},
      {"options",
       {{"forecaster", r.options.forecaster},
        {"lead_s", r.options.lead_s},
        {"margin", r.options.margin},
        {"hysteresis", r.options.hysteresis},
        {"down_hold_s", r.options.down_hold_s},
        {"spare_gpus", r.options.spare_gpus},
        {"plan_windows", r.options.plan_windows},
        {"hedge_turns", r.options.hedge_turns},
        {"consolidate", r.options.consolidate},
        {"step_durations", FormatStepDurations(r.options.durations)},
        {"sample_s", r.options.sample_s},
        {"oracle_interval_s", r.options.oracle_interval_s},
        {"seed", r.options.seed}}},
      {"service_rates", rates},
      {"strategies", {strategy(r.autoscale), strategy(r.static_peak), strategy(r.oracle)}}};
  return out.dump() + "\n";
}

}  // namespace tessera
