// The autoscaling policy's decisions on synthetic days: a step up, a step
// down, a spike shorter than a transition and a slow ramp; the report's
// bookkeeping; bad options named by their flag.
#include "tessera/autoscale_request.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "tessera/autoscaler.h"
#include "tessera/plan_request.h"
#include "tessera/transition_request.h"
#include "tessera/util/text_io.h"
#include "tessera/workload/day_rates.h"
#include "tessera/workload/workload_gen.h"

namespace tessera {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

Scenario Small() {
  Scenario s;
  s.name = "small";
  s.source = "small.yaml";
  s.gpu = "a100-80gb";
  s.services = {{"resnet50", "resnet50", 2000, 204.5, 0}, {"vgg19", "vgg19", 600, 396.5, 0}};
  return s;
}

// Every service's rate in `s` x f (scenario order).
std::vector<double> RatesAt(const Scenario& s, double f) {
  std::vector<double> rates;
  for (const Service& service : s.services) rates.push_back(f * service.rate_rps);
  return rates;
}

// A day of `minutes` minutes at the scenario's rates x shape(minute).
DayRates Shaped(int minutes, const std::function<double(int)>& shape) {
  DayRates day;
  day.source = "synthetic.csv";
  day.shape = true;
  const Scenario s = Small();
  for (const Service& service : s.services) day.services.push_back(service.name);
  for (int m = 0; m < minutes; ++m) day.rps.push_back(RatesAt(s, shape(m)));
  return day;
}

AutoscaleReport Autoscaled(const DayRates& day, AutoscaleOptions options = {}) {
  AutoscaleRequest request;
  request.scenario = Small();
  request.rates = day;
  options.sample_s = 0.5;
  options.jobs = 2;
  request.options = options;
  Result<AutoscaleReport> report = RunAutoscale(request);
  EXPECT_TRUE(report.ok()) << report.status().message();
  return report.ok() ? *report : AutoscaleReport{};
}

TEST(Autoscale, AStepUpIsFollowedTheMinuteAfterItIsSeenAndCountedLate) {
  const AutoscaleReport r = Autoscaled(Shaped(120, [](int m) { return m < 60 ? 1.0 : 2.0; }));
  ASSERT_FALSE(r.autoscale.moves.empty());
  const AutoscaleMove& first = r.autoscale.moves.front();
  EXPECT_EQ(first.minute, 61);  // minute 60's rates are seen when it ends
  EXPECT_TRUE(first.up);
  EXPECT_TRUE(first.late);
  EXPECT_GT(first.to_gpus, first.from_gpus);
  for (const AutoscaleMove& m : r.autoscale.moves) EXPECT_GT(m.minute, 60);
  for (size_t s = 0; s < r.services.size(); ++s) {
    EXPECT_GE(r.autoscale.capacity[s][119], r.rps[s][119]) << r.services[s];
  }
}

TEST(Autoscale, AStepDownWaitsForTheHoldThenMovesToFewerGpus) {
  AutoscaleOptions options;
  options.down_hold_s = 10 * 60;
  const AutoscaleReport r =
      Autoscaled(Shaped(120, [](int m) { return m < 60 ? 2.0 : 1.0; }), options);
  ASSERT_EQ(r.autoscale.moves.size(), 1u);
  const AutoscaleMove& move = r.autoscale.moves.front();
  EXPECT_FALSE(move.up);
  EXPECT_GE(move.minute, 71);  // seen at 61, held for ten minutes
  EXPECT_LE(move.minute, 72);
  EXPECT_LT(move.to_gpus, move.from_gpus);
  EXPECT_LT(r.autoscale.gpus[119], r.autoscale.gpus[0]);
  EXPECT_LT(r.autoscale.gpu_hours, r.static_peak.gpu_hours);
}

TEST(Autoscale, ASpikeShorterThanATransitionMovesNothing) {
  AutoscaleOptions options;
  options.forecaster = "seasonal";       // it knows the spike ends
  options.durations.model_load_s = 600;  // every move takes over ten minutes
  const AutoscaleReport r =
      Autoscaled(Shaped(120, [](int m) { return m == 60 || m == 61 ? 3.0 : 1.0; }), options);
  EXPECT_TRUE(r.autoscale.moves.empty());
  // The same spike with moves of seconds is met by a move before it.
  options.durations.model_load_s = 5;
  const AutoscaleReport quick =
      Autoscaled(Shaped(120, [](int m) { return m == 60 || m == 61 ? 3.0 : 1.0; }), options);
  ASSERT_FALSE(quick.autoscale.moves.empty());
  EXPECT_LT(quick.autoscale.moves.front().minute, 60);
  EXPECT_FALSE(quick.autoscale.moves.front().late);
}

TEST(Autoscale, ASlowRampIsMetAheadEveryMinute) {
  const AutoscaleReport r = Autoscaled(Shaped(300, [](int m) { return 1.0 + m / 300.0; }));
  EXPECT_GE(r.autoscale.moves.size(), 2u);
  for (const AutoscaleMove& m : r.autoscale.moves) {
    EXPECT_TRUE(m.up);
    EXPECT_FALSE(m.late) << "minute " << m.minute << " seconds " << m.seconds << " " << m.from_gpus
                         << "->" << m.to_gpus;
    EXPECT_LE(m.spare_gpus, 2);
  }
  for (size_t s = 0; s < r.services.size(); ++s) {
    for (int m = 0; m < r.minutes; ++m) {
      EXPECT_GE(r.autoscale.capacity[s][m], r.rps[s][m]) << r.services[s] << " minute " << m;
    }
  }
}

// The rates a policy on Small() plans its move for: running the plan for
// the scenario's rates x `from`, after the moves `took` (minutes each, up
// when positive, down when negative; their plan the running one), having
// seen the rates x shape(m) for each minute m < `seen`. Empty, the test
// failing, when it starts no move.
std::vector<double> PlannedFor(const AutoscalePolicyOptions& options, double from,
                               const std::vector<int>& took, int seen,
                               const std::function<double(int)>& shape) {
  const Scenario small = Small();
  const AutoscalePlanning planning{small, {}, "", "synthetic.csv"};
  Result<Deployment> start = PlanForRates(planning, RatesAt(small, from), nullptr, 0);
  EXPECT_TRUE(start.ok()) << start.status().message();
  Result<std::unique_ptr<Autoscaler>> policy = Autoscaler::Create(planning, options);
  EXPECT_TRUE(policy.ok()) << policy.status().message();
  if (!start.ok() || !policy.ok()) return {};
  (*policy)->Rebase(*start, RatesAt(small, from));
  for (const int minutes : took) {
    AutoscaleDecision move;
    move.move.steps = 1;
    move.move.up = minutes > 0;
    move.to = *start;
    move.rates = RatesAt(small, from);
    (*policy)->Adopt(move, std::abs(minutes));
  }
  for (int m = 0; m < seen; ++m) (*policy)->Observe(RatesAt(small, shape(m)));
  Result<std::optional<AutoscaleDecision>> decided = (*policy)->Decide();
  EXPECT_TRUE(decided.ok() && decided->has_value());
  return decided.ok() && decided->has_value() ? (*decided)->rates : std::vector<double>();
}

// A move plans for the forecast peak over plan_windows lead windows: on a
// ramp holt follows exactly, one window plans for the rate a lead ahead,
// two for the rate two leads ahead.
TEST(Autoscaler, AMovePlansAsManyLeadWindowsAheadAsItsOption) {
  const Scenario small = Small();
  const auto ramp = [](int minute) { return 1.0 + minute / 100.0; };
  const auto planned_for = [&](int windows) {
    AutoscalePolicyOptions options;
    options.plan_windows = windows;
    return PlannedFor(options, 1.0, {}, 60, ramp);
  };
  const std::vector<double> one = planned_for(1);
  const std::vector<double> two = planned_for(2);
  ASSERT_EQ(one.size(), small.services.size());
  ASSERT_EQ(two.size(), small.services.size());
  const double margin = AutoscalePolicyOptions{}.margin;
  for (size_t s = 0; s < small.services.size(); ++s) {
    // Minute 59 seen last, the lead 10 minutes.
    EXPECT_NEAR(one[s], (1 + margin) * RatesAt(small, ramp(69))[s], 0.01 * one[s]) << s;
    EXPECT_NEAR(two[s], (1 + margin) * RatesAt(small, ramp(79))[s], 0.01 * two[s]) << s;
  }
}

// After a move up of 15 minutes, a move plans 32 minutes ahead at least:
// the next move up could start only as it ends and take as long again (and
// a minute to see the need of each), beyond one lead window (the last
// move's length and two minutes: 17).
TEST(Autoscaler, AMovePlansUntilAMoveUpAfterItCouldEnd) {
  const Scenario small = Small();
  const auto ramp = [](int minute) { return 1.0 + minute / 100.0; };
  AutoscalePolicyOptions options;
  options.forecaster = "holt-fast";
  options.plan_windows = 1;
  const std::vector<double> planned = PlannedFor(options, 1.0, {15}, 60, ramp);
  ASSERT_EQ(planned.size(), small.services.size());
  for (size_t s = 0; s < small.services.size(); ++s) {
    // Minute 59 seen last.
    const double expected = (1 + options.margin) * RatesAt(small, ramp(59 + 32))[s];
    EXPECT_NEAR(planned[s], expected, 0.01 * expected) << s;
  }
}

// With hedge_turns, a service falling by a third of its rate an hour keeps
// room for the load to turn and rise as fast while a move down and a move
// up as long as the last ones (3 and 5 minutes) run; without, its plan
// holds the last minute seen.
TEST(Autoscaler, HedgingTurnsKeepsAFallingServiceRoomToRise) {
  const Scenario small = Small();
  const auto fall = [](int minute) { return 3.0 - minute / 30.0; };
  const auto planned_for = [&](bool hedge) {
    AutoscalePolicyOptions options;
    options.forecaster = "holt-fast";
    options.down_hold_s = 0;
    options.hedge_turns = hedge;
    return PlannedFor(options, 3.0, {5, -3}, 60, fall);
  };
  const std::vector<double> hedged = planned_for(true);
  const std::vector<double> plain = planned_for(false);
  ASSERT_EQ(hedged.size(), small.services.size());
  ASSERT_EQ(plain.size(), small.services.size());
  const double margin = AutoscalePolicyOptions{}.margin;
  for (size_t s = 0; s < small.services.size(); ++s) {
    // Minute 59 seen last; the rate rising from there as fast as it fell.
    const double last = RatesAt(small, fall(59))[s];
    const double risen = RatesAt(small, 2 * fall(59) - fall(59 + 8))[s];
    EXPECT_NEAR(plain[s], (1 + margin) * last, 0.01 * plain[s]) << s;
    EXPECT_NEAR(hedged[s], (1 + margin) * risen, 0.01 * hedged[s]) << s;
  }
}

// 60 generated services and the plan for 0.8 of their rates.
struct SixtyServices {
  SixtyServices() {
    WorkloadGenOptions gen;
    gen.services = 60;
    gen.rates = LognormalRates{6, 0.5};
    gen.slo_ms = 200;
    Result<Scenario> scenario = GenerateWorkload(gen);
    EXPECT_TRUE(scenario.ok()) << scenario.status().message();
    if (!scenario.ok()) return;
    planning = {*scenario, {}, "", "generated"};
    Result<Deployment> planned = PlanForRates(planning, At(0.8), nullptr, 0);
    EXPECT_TRUE(planned.ok()) << planned.status().message();
    if (planned.ok()) busy = *planned;
  }
  // The policy's move from `running` (planned for `planned`) once it has
  // seen one minute at `seen`; an empty one, the test failing, when none.
  AutoscaleDecision Decide(const AutoscalePolicyOptions& options, const Deployment& running,
                           const std::vector<double>& planned,
                           const std::vector<double>& seen) const {
    Result<std::unique_ptr<Autoscaler>> policy = Autoscaler::Create(planning, options);
    EXPECT_TRUE(policy.ok()) << policy.status().message();
    if (!policy.ok()) return AutoscaleDecision{};
    (*policy)->Rebase(running, planned);
    (*policy)->Observe(seen);
    Result<std::optional<AutoscaleDecision>> decided = (*policy)->Decide();
    EXPECT_TRUE(decided.ok() && decided->has_value());
    return decided.ok() && decided->has_value() ? **decided : AutoscaleDecision{};
  }
  // How an incremental plan is asked for (PlanRequest's fields).
  struct Replanning {
    int max_extra_gpus = 0;
    int repack_gpus = 0;
    bool consolidate = false;
  };
  // The incremental plan from `running` for At(f), as `how` asks.
  Result<Deployment> Replan(double f, const Deployment& running, const Replanning& how) const {
    PlanRequest request;
    request.scenario = WithRates(planning.scenario, At(f));
    request.current = running;
    request.max_extra_gpus = how.max_extra_gpus;
    request.repack_gpus = how.repack_gpus;
    request.consolidate = how.consolidate;
    TESSERA_ASSIGN_OR_RETURN(PlanRun run, Plan(request));
    return std::move(run.deployment);
  }
  std::vector<double> At(double f) const { return RatesAt(planning.scenario, f); }
  AutoscalePlanning planning;
  Deployment busy;
};

// Many services: a plan moved down to is often the plan from scratch mapped
// onto the running one, and the fewest GPUs for a little more load then
// repack the cluster again, where a GPU more keeps every instance. A move up
// takes the fewest GPUs when their transition ends within the lead, else the
// shortest transition within the spare GPUs, or the plan that keeps every
// instance.
TEST(Autoscaler, AMoveUpOutlastingTheLeadOrItsSpareGpusTakesAShorterOne) {
  const SixtyServices sixty;
  const AutoscalePlanning& planning = sixty.planning;
  const auto at = [&](double f) { return sixty.At(f); };
  const Deployment* busy = &sixty.busy;
  Result<Deployment> quiet = PlanForRates(planning, at(0.6), &*busy, 0);
  ASSERT_TRUE(quiet.ok()) << quiet.status().message();

  AutoscalePolicyOptions options;
  options.forecaster = "last";  // the need: (1 + margin) x the last minute, flat
  const double seen = 0.66 / (1 + options.margin);
  Result<Deployment> fewest = PlanForRates(planning, at(0.66), &*quiet, 1);
  ASSERT_TRUE(fewest.ok()) << fewest.status().message();
  Result<TransitionRun> repack = RunTransition(*quiet, *fewest, options.spare_gpus);
  ASSERT_TRUE(repack.ok() && repack->transition);
  // Seconds here are the transitions' modelled lengths (their steps at the
  // default step durations), not time measured.
  const double repack_s = TransitionSeconds(*repack->transition, options.durations);
  ASSERT_GT(repack_s, 5 * 60);  // 421 s: 59 steps in 12 phases
  ASSERT_LT(repack_s, 10 * 60);

  const auto decide = [&](double lead_s) {
    options.lead_s = lead_s;
    return sixty.Decide(options, *quiet, at(0.6), at(seen));
  };
  // Within a lead of 10 minutes: the fewest GPUs.
  const AutoscaleDecision within = decide(10 * 60);
  EXPECT_TRUE(within.move.up);
  EXPECT_EQ(within.to.metrics.gpus, fewest->metrics.gpus);
  EXPECT_EQ(within.move.seconds, repack_s);
  // Beyond a lead of 5 minutes: a GPU or two more, and a move of a few steps.
  const AutoscaleDecision beyond = decide(5 * 60);
  EXPECT_TRUE(beyond.move.up);
  EXPECT_LT(beyond.move.seconds, repack_s / 2);
  EXPECT_GT(beyond.to.metrics.gpus, fewest->metrics.gpus);
  EXPECT_LE(beyond.to.metrics.gpus, fewest->metrics.gpus + options.spare_gpus);
  EXPECT_LE(beyond.move.spare_gpus, options.spare_gpus);
  // No spare GPU: the repack cannot run at all, and the move keeps every
  // running instance and adds what the need lacks (its transition only
  // creates), on as many GPUs as that takes.
  options.spare_gpus = 0;
  Result<TransitionRun> cramped = RunTransition(*quiet, *fewest, 0);
  ASSERT_TRUE(cramped.ok());
  ASSERT_FALSE(cramped->transition);
  const AutoscaleDecision kept = decide(10 * 60);
  EXPECT_TRUE(kept.move.up);
  EXPECT_EQ(kept.move.spare_gpus, 0);
  EXPECT_GE(kept.to.metrics.gpus, quiet->metrics.gpus);
  EXPECT_GT(kept.move.steps, 0);
  for (const TransitionPhase& phase : kept.transition.phases) {
    for (const TransitionStep& step : phase.steps) EXPECT_EQ(step.action, StepAction::kCreate);
  }
}

// Rates fallen to 0.6: every running instance is still needed, so the
// plan that keeps them all frees no GPU; repacking the 8 least-filled GPUs
// (their instances planned afresh, the others kept) frees some.
TEST(PlanForRates, RepackingTheLeastFilledGpusFreesGpusTheKeptInstancesFill) {
  const SixtyServices sixty;
  ASSERT_GT(sixty.busy.metrics.gpus, 8);
  const int running = sixty.busy.metrics.gpus;
  Result<Deployment> kept = sixty.Replan(0.6, sixty.busy, {.max_extra_gpus = running});
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  Result<Deployment> repacked =
      sixty.Replan(0.6, sixty.busy, {.max_extra_gpus = running, .repack_gpus = 8});
  ASSERT_TRUE(repacked.ok()) << repacked.status().message();
  EXPECT_EQ(kept->metrics.gpus, running);
  EXPECT_LT(repacked->metrics.gpus, running);
  // The GPUs not repacked are kept as they were.
  std::map<int, const GpuAssignment*> before;
  for (const GpuAssignment& g : sixty.busy.gpus) before[g.index] = &g;
  const auto same = [](const GpuAssignment& a, const GpuAssignment& b) {
    const auto key = [](const Instance& i) {
      return std::tie(i.service, i.profile, i.start, i.batch, i.procs);
    };
    return std::equal(a.instances().begin(), a.instances().end(), b.instances().begin(),
                      b.instances().end(),
                      [&](const Instance& x, const Instance& y) { return key(x) == key(y); });
  };
  int unchanged = 0;
  for (const GpuAssignment& g : repacked->gpus) {
    auto it = before.find(g.index);
    unchanged += it != before.end() && same(*it->second, g);
  }
  EXPECT_GE(unchanged, running - 8 - 2);  // at most what DropSurplus touched
}

// Rates rising from 0.55 to 1.00 of sixty services' in four steps, each
// planned incrementally from the last step's plan with GPUs to spare:
// keeping every instance adds small ones, consolidating replaces several of
// a service's by one larger and ends on fewer GPUs; each consolidated step
// is a move within the policy's two spare GPUs.
TEST(PlanForRates, ConsolidatingARiseEndsOnFewerGpusThanKeepingEveryInstance) {
  const SixtyServices sixty;
  Result<Deployment> start = PlanForRates(sixty.planning, sixty.At(0.55), nullptr, 0);
  ASSERT_TRUE(start.ok()) << start.status().message();
  const auto rise = [&](bool consolidate) {
    Deployment d = *start;
    for (double f : {0.7, 0.85, 1.0}) {
      Result<Deployment> next =
          sixty.Replan(f, d, {.max_extra_gpus = 1000, .consolidate = consolidate});
      EXPECT_TRUE(next.ok()) << next.status().message();
      if (!next.ok()) return Deployment{};
      if (consolidate) {
        Result<TransitionRun> move = RunTransition(d, *next, 2);
        EXPECT_TRUE(move.ok() && move->transition) << "at " << f;
      }
      d = std::move(*next);
    }
    return d;
  };
  const Deployment kept = rise(false);
  const Deployment consolidated = rise(true);
  EXPECT_LT(consolidated.metrics.gpus, kept.metrics.gpus);
  Result<Deployment> scratch = PlanForRates(sixty.planning, sixty.At(1.0), nullptr, 0);
  ASSERT_TRUE(scratch.ok());
  EXPECT_GE(consolidated.metrics.gpus, scratch->metrics.gpus);
}

// Demand falling to 0.6: the plan on the fewest GPUs is the plan from
// scratch mapped onto the running one, a repack of the cluster that holds
// every running GPU and the spare ones while it runs. A move down weighs it
// beside plans that keep the running instances and repack a few GPUs, and
// takes the one holding the fewest GPU-seconds until the longest has ended
// and held two lead windows: with a long lead the repack, with a short one
// a shorter move that frees fewer GPUs.
TEST(Autoscaler, AMoveDownWeighsRepackingAFewGpusAgainstTheWholeCluster) {
  const SixtyServices sixty;
  Result<Deployment> fewest = PlanForRates(sixty.planning, sixty.At(0.6), &sixty.busy, 1);
  ASSERT_TRUE(fewest.ok()) << fewest.status().message();
  AutoscalePolicyOptions options;
  options.forecaster = "last";
  options.down_hold_s = 0;
  Result<TransitionRun> repack = RunTransition(sixty.busy, *fewest, options.spare_gpus);
  ASSERT_TRUE(repack.ok() && repack->transition);
  // Seconds here are the transitions' modelled lengths, not time measured.
  const double repack_s = TransitionSeconds(*repack->transition, options.durations);
  const auto decide = [&](double lead_s) {
    options.lead_s = lead_s;
    return sixty.Decide(options, sixty.busy, sixty.At(0.8), sixty.At(0.6 / (1 + options.margin)));
  };
  const AutoscaleDecision long_lead = decide(30 * 60);
  EXPECT_FALSE(long_lead.move.up);
  EXPECT_EQ(long_lead.to.metrics.gpus, fewest->metrics.gpus);
  EXPECT_EQ(long_lead.move.seconds, repack_s);
  const AutoscaleDecision short_lead = decide(2 * 60);
  EXPECT_FALSE(short_lead.move.up);
  EXPECT_LT(short_lead.move.seconds, repack_s / 2);
  EXPECT_LT(short_lead.to.metrics.gpus, sixty.busy.metrics.gpus);
  EXPECT_GT(short_lead.to.metrics.gpus, fewest->metrics.gpus);
  // With the lead a minute shorter than the repack it is still taken, but
  // not with hedge_turns: no move down outlasts the lead.
  const double under_repack_s = (std::ceil(repack_s / 60) - 1) * 60;
  ASSERT_GE(under_repack_s, 60);
  EXPECT_EQ(decide(under_repack_s).move.seconds, repack_s);
  options.hedge_turns = true;
  const AutoscaleDecision hedged = decide(under_repack_s);
  EXPECT_FALSE(hedged.move.up);
  EXPECT_GT(hedged.move.seconds, 0);
  EXPECT_LE(hedged.move.seconds, under_repack_s);
  EXPECT_LT(hedged.to.metrics.gpus, sixty.busy.metrics.gpus);
}

TEST(Autoscale, TheBaselinesAreThePeakPlanAndPerIntervalPlans) {
  const AutoscaleReport r = Autoscaled(Shaped(60, [](int m) { return m < 30 ? 0.5 : 1.0; }));
  ASSERT_EQ(r.static_peak.gpus.size(), 60u);
  EXPECT_DOUBLE_EQ(r.static_peak.gpu_hours, r.static_peak.gpus[0]);  // 60 minutes of one plan
  EXPECT_EQ(r.static_peak.gpus[0], r.static_peak.gpus[59]);
  EXPECT_LE(r.oracle.gpus[0], r.oracle.gpus[59]);
  EXPECT_EQ(r.oracle.gpus[59], r.static_peak.gpus[59]);
  EXPECT_LE(r.oracle.gpu_hours, r.static_peak.gpu_hours);
  for (const AutoscaleStrategy* s : {&r.autoscale, &r.static_peak, &r.oracle}) {
    ASSERT_EQ(s->compliance.size(), 2u);
    ASSERT_EQ(s->compliance[0].size(), 60u);
  }
  const std::string json = FormatAutoscaleJson(r);
  EXPECT_THAT(json, HasSubstr("\"name\":\"static-peak\""));
  EXPECT_THAT(FormatAutoscaleText(r), HasSubstr("autoscale / oracle"));
}

TEST(Autoscale, BadOptionsNameTheirFlag) {
  const DayRates day = Shaped(10, [](int) { return 1.0; });
  const auto error = [&](const std::function<void(AutoscaleOptions&)>& set) {
    AutoscaleRequest request;
    request.scenario = Small();
    request.rates = day;
    set(request.options);
    Result<AutoscaleReport> r = RunAutoscale(request);
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_THAT(error([](AutoscaleOptions& o) { o.forecaster = "arima"; }), HasSubstr("arima"));
  EXPECT_THAT(error([](AutoscaleOptions& o) { o.lead_s = 1; }), HasSubstr("--lead"));
  EXPECT_THAT(error([](AutoscaleOptions& o) { o.margin = -1; }), HasSubstr("--margin"));
  EXPECT_THAT(error([](AutoscaleOptions& o) { o.hysteresis = 0.95; }), HasSubstr("--hysteresis"));
  EXPECT_THAT(error([](AutoscaleOptions& o) { o.sample_s = 0; }), HasSubstr("--sample"));
  EXPECT_THAT(error([](AutoscaleOptions& o) { o.spare_gpus = -1; }), HasSubstr("--spare-gpus"));
  EXPECT_THAT(error([](AutoscaleOptions& o) { o.plan_windows = 0; }), HasSubstr("--plan-windows"));
  EXPECT_THAT(error([](AutoscaleOptions& o) { o.plan_windows = 11; }), HasSubstr("--plan-windows"));
}

// Seed 1's minutes keep the seeds every figure was measured with, and no two
// seeds share a minute's seed: --seed 2 is an independent day, not seed 1's
// arrivals a minute later.
TEST(Autoscale, EverySeedDrawsItsOwnMinuteSeeds) {
  constexpr int kJobs = 3 * 1440;
  for (int job : {0, 1, kJobs - 1}) {
    EXPECT_EQ(AutoscaleMinuteSeed(1, job, kJobs), 1u + static_cast<std::uint64_t>(job));
  }
  std::set<std::uint64_t> seeds;
  for (std::uint64_t seed : {0, 1, 2, 3, 1000}) {
    for (int job = 0; job < kJobs; ++job) seeds.insert(AutoscaleMinuteSeed(seed, job, kJobs));
  }
  EXPECT_EQ(seeds.size(), 5u * kJobs);
}

TEST(Autoscale, StepDurationsParseOverTheDefaults) {
  Result<StepDurations> d = ParseStepDurations("--step-durations", "model-load=30s,drain=500ms");
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_DOUBLE_EQ(d->model_load_s, 30);
  EXPECT_DOUBLE_EQ(d->drain_s, 0.5);
  EXPECT_DOUBLE_EQ(d->mig_create_s, 2);
  EXPECT_EQ(FormatStepDurations(*d),
            "mig-create=2s,mig-destroy=1s,mps-start=1s,model-load=30s,drain=0.5s");
  EXPECT_THAT(ParseStepDurations("--step-durations", "load=3s").status().message(),
              HasSubstr("KEY one of mig-create"));
  EXPECT_THAT(ParseStepDurations("--step-durations", "drain=2h").status().message(),
              HasSubstr("--step-durations drain"));
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// A report built by hand: four minutes, two services, one move up.
AutoscaleReport Handmade() {
  AutoscaleReport r;
  r.scenario = "small";
  r.rates = "day.csv";
  r.season = "day.csv";
  r.planner = "exact";
  r.services = {"resnet50", "vgg19"};
  r.minutes = 4;
  r.rps = {{100, 120, 200, 210}, {50, 50, 60, 55}};
  AutoscaleStrategy* strategies[] = {&r.autoscale, &r.static_peak, &r.oracle};
  const char* names[] = {"autoscale", "static-peak", "oracle"};
  for (int k = 0; k < 3; ++k) {
    AutoscaleStrategy& s = *strategies[k];
    s.name = names[k];
    s.gpus = k == 1 ? std::vector<double>{3, 3, 3, 3} : std::vector<double>{2, 2.5, 3, 3};
    s.gpu_hours = (k == 1 ? 12 : 10.5) / 60;
    s.peak_gpus = k == 0 ? 4 : 3;
    s.min_gpus = 2;
    s.compliance = {{1, 0.995, 0.98, 1}, {1, 1, 1, 1}};
    s.capacity = {{150, 150, 250, 250}, {70, 70, 70, 70}};
    s.lowest = {k == 1 ? 1 : 0.98, 1};
    s.lowest_minute = {k == 1 ? 0 : 2, 0};
    s.minutes_below_target = k == 1 ? 0 : 1;
  }
  AutoscaleMove move;
  move.minute = 1;
  move.seconds = 42;
  move.phases = 2;
  move.steps = 3;
  move.from_gpus = 2;
  move.to_gpus = 3;
  move.peak_gpus = 4;
  move.spare_gpus = 1;
  move.up = true;
  move.late = true;
  r.autoscale.moves = {move};
  r.autoscale.max_spare_gpus = 1;
  r.autoscale.declined = {{"the transition needs more spare GPUs", 2}};
  return r;
}

TEST(AutoscaleFormat, TextJsonAndSvgMatchGoldenFiles) {
  const AutoscaleReport r = Handmade();
  const std::map<std::string, std::string> files = {{"report.txt", FormatAutoscaleText(r)},
                                                    {"report.json", FormatAutoscaleJson(r)},
                                                    {"day.svg", FormatAutoscaleSvg(r)}};
  const std::filesystem::path root =
      std::filesystem::path(TESSERA_SOURCE_DIR) / "tests/golden/autoscale_small";
  const char* update = std::getenv("TESSERA_UPDATE_GOLDEN");
  for (const auto& [name, text] : files) {
    if (update != nullptr && std::string_view(update) == "1") {
      std::ofstream(root / name, std::ios::binary) << text;
      continue;
    }
    Result<std::string> golden = ReadTextFile((root / name).string());
    ASSERT_TRUE(golden.ok()) << golden.status().message();
    EXPECT_TRUE(*golden == text) << (root / name)
                                 << " differs; if the change is intended, rerun with "
                                    "TESSERA_UPDATE_GOLDEN=1 and review the diff";
  }
}

// The report says the policy consolidated its re-plans, for people and
// programs.
TEST(AutoscaleFormat, ConsolidatingIsReported) {
  AutoscaleReport r = Handmade();
  EXPECT_THAT(FormatAutoscaleText(r), Not(HasSubstr("consolidating")));
  r.options.consolidate = true;
  EXPECT_THAT(FormatAutoscaleText(r), HasSubstr("holt forecaster, consolidating re-plans)"));
  const nlohmann::json j = nlohmann::json::parse(FormatAutoscaleJson(r));
  EXPECT_EQ(j["options"]["consolidate"], true);
}

}  // namespace
}  // namespace tessera
