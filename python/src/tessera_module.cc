// tessera._core: the C++ core for Python (nanobind), over the library's
// typed requests (tessera/plan_request.h, simulate_request.h,
// transition_request.h, replay_request.h): the package's keywords fill a
// request's fields, the library checks them and runs it, so that a plan, a
// report or an error message is the CLI's, word for word, without a command
// line in between. Objects hold C++ values; their JSON is the CLI's JSON.
// The GIL is released while a plan, a simulation, a transition or a replay
// runs. The Python package (python/tessera/__init__.py) is the public face.
#include <fmt/format.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "tessera/autoscale_request.h"
#include "tessera/deployment_format.h"
#include "tessera/durations.h"
#include "tessera/emit/transition_svg.h"
#include "tessera/gpu_catalog.h"
#include "tessera/online/online_placer.h"
#include "tessera/online/replay_report_format.h"
#include "tessera/plan_request.h"
#include "tessera/planner.h"
#include "tessera/profile_io.h"
#include "tessera/replay_request.h"
#include "tessera/simulate_request.h"
#include "tessera/simulator.h"
#include "tessera/transition/transition_check.h"
#include "tessera/transition/transition_format.h"
#include "tessera/transition_request.h"
#include "tessera/util/text_io.h"
#include "tessera/validator.h"
#include "tessera/workload/forecaster.h"

namespace nb = nanobind;

namespace tessera::python {
namespace {

// ---- Errors ----------------------------------------------------------------

// Raises the exception of tessera._errors that `status` maps to, with its
// message: InputError (bad input, the CLI's exit 2), NotFoundError and
// FileError (both InputErrors), InternalError (a bug, exit 1).
[[noreturn]] void Raise(const Status& status, const char* type = nullptr) {
  if (type == nullptr) {
    switch (status.code()) {
      case StatusCode::kNotFound:
        type = "NotFoundError";
        break;
      case StatusCode::kIoError:
        type = "FileError";
        break;
      case StatusCode::kInternal:
        type = "InternalError";
        break;
      default:
        type = "InputError";
        break;
    }
  }
  nb::object cls = nb::module_::import_("tessera._errors").attr(type);
  PyErr_SetObject(cls.ptr(), nb::str(status.message().c_str()).ptr());
  throw nb::python_error();
}

template <typename T>
T Unwrap(Result<T> result) {
  if (!result.ok()) Raise(result.status());
  return std::move(result).value();
}

void Check(const Status& status) {
  if (!status.ok()) Raise(status);
}

// ---- Values ------------------------------------------------------------------

struct PyScenario {
  Scenario scenario;
};

struct PyProfiles {
  std::shared_ptr<const ProfileTable> table;
};

struct PyPlan {
  PlanRun run;
  Scenario scenario;               // what it serves (rates and SLOs)
  ProblemInputs input;             // the profiles or coefficients it was made with
  std::string source;              // names it in messages: its file, or "plan(<planner>)"
  std::vector<std::string> notes;  // the run's notes (the CLI's "tessera: note:" lines)
};

// A result with the notes of its run.
template <typename T>
using WithNotes = std::tuple<T, std::vector<std::string>>;

struct PyTransition {
  Transition transition;
  Deployment from;
  Deployment to;
  TransitionCheck check;
  TransitionSummary naive;
};

// The notes of one run, collected from any thread the run uses.
class Notes {
 public:
  NoteSink Sink() {
    return [this](std::string_view note) {
      std::lock_guard<std::mutex> lock(mu_);
      notes_.emplace_back(note);
    };
  }
  std::vector<std::string> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::move(notes_);
  }

 private:
  std::mutex mu_;
  std::vector<std::string> notes_;
};

// `run` with the GIL released, its notes collected; an error raised with the GIL held.
template <typename T, typename F>
WithNotes<T> RunReleased(F&& run) {
  Notes notes;
  Result<T> result = Status::Internal("not run");
  {
    nb::gil_scoped_release release;
    result = run(notes.Sink());
  }
  return {Unwrap(std::move(result)), notes.Take()};
}

// ---- plan, validate ----------------------------------------------------------

PyPlan PlanOf(const PyScenario& scenario, const std::string& planner, const ProblemInputs& inputs,
              const SearchOptions& search, const PyPlan* current, const std::string& current_path,
              std::optional<int> max_extra_gpus, int repack_gpus, bool consolidate,
              std::optional<bool> shadow) {
  PlanRequest request;
  request.inputs = inputs;
  request.scenario = scenario.scenario;
  request.planner = planner;
  request.search = search;
  if (current != nullptr) request.current = current->run.deployment;
  request.current_path = current_path;
  request.max_extra_gpus = max_extra_gpus;
  request.repack_gpus = repack_gpus;
  request.consolidate = consolidate;
  request.shadow = shadow;
  auto [run, notes] = RunReleased<PlanRun>([&](NoteSink sink) {
    request.notes = std::move(sink);
    return Plan(request);
  });
  return PyPlan{std::move(run), scenario.scenario, inputs, "plan(" + PlannerFor(request) + ")",
                std::move(notes)};
}

// A plan read back from its JSON, with the problem of `scenario` under the
// rule it records (validate() checks it).
PyPlan PlanFromJson(const std::string& text, const std::string& source, const PyScenario& scenario,
                    const ProblemInputs& given) {
  Notes notes;
  Deployment d = Unwrap(ParseDeploymentJson(text, source));
  const bool mps = d.sharing == Sharing::kMps;
  Check(CheckInputsApply(given, mps, source));
  ProblemInputs input = mps ? given : InputsForPlan(given, d, notes.Sink());
  Problem problem = Unwrap(LoadProblem(input, scenario.scenario, mps,
                                       d.rule_recorded ? &d.rule : nullptr, notes.Sink()));
  if (!mps) NoteOtherProfiles(d, input, problem, notes.Sink());
  AdoptRule(d, source, problem.rule(), notes.Sink());
  bool infeasible = false;
  for (const ServiceOutcome& s : d.services) infeasible |= s.status != ServiceStatus::kOk;
  const PlanOutcome outcome = infeasible ? PlanOutcome::kInfeasible : PlanOutcome::kFeasible;
  return PyPlan{PlanRun{std::move(d), std::move(problem), mps, std::nullopt, outcome, std::nullopt},
                scenario.scenario, std::move(input), source, notes.Take()};
}

using ViolationRow = std::tuple<std::string, std::string, std::string>;

// Every violation of `plan` against `scenario` (its own when None), under
// the rule the plan records.
std::vector<ViolationRow> Validate(const PyPlan& plan, const PyScenario* scenario) {
  std::vector<Violation> violations;
  if (scenario == nullptr) {
    violations = ValidateDeployment(plan.run.deployment, plan.run.problem);
  } else {
    const Deployment& d = plan.run.deployment;
    Problem problem =
        Unwrap(LoadProblem(plan.input, scenario->scenario, plan.run.mps, &d.rule, NoteSink()));
    violations = ValidateDeployment(d, problem);
  }
  std::vector<ViolationRow> rows;
  for (const Violation& v : violations) rows.emplace_back(v.rule, v.where, v.message);
  return rows;
}

// ---- simulate ------------------------------------------------------------------

WithNotes<std::string> SimulateJson(const PyPlan& plan, const PyScenario* other,
                                    const SimulateRequest& options) {
  SimulateRequest request = options;
  request.inputs = plan.input;
  request.scenario = other != nullptr ? other->scenario : plan.scenario;
  request.deployment = plan.run.deployment;
  request.deployment_path = plan.source;
  auto [report, notes] = RunReleased<SimReport>([&](NoteSink sink) -> Result<SimReport> {
    request.notes = std::move(sink);
    TESSERA_ASSIGN_OR_RETURN(Simulation sim, LoadSimulation(request));
    Result<SimReport> out = SimulatePlan(sim);
    if (out.ok()) NoteTraceCut(sim.options, request.notes);
    return out;
  });
  return {FormatSimReportJson(report), std::move(notes)};
}

// ---- transition ------------------------------------------------------------------

PyTransition PlanTransitionBetween(const PyPlan& a, const PyPlan& b, int spare_gpus) {
  Check(CheckMigPlan(a.source, a.run.deployment));
  Check(CheckMigPlan(b.source, b.run.deployment));
  Check(CheckServes(b.source, b.run.deployment, b.run.problem));
  Result<TransitionRun> planned = Status::Internal("not run");
  {
    nb::gil_scoped_release release;
    planned = RunTransition(a.run.deployment, b.run.deployment, spare_gpus);
  }
  TransitionRun run = Unwrap(std::move(planned));
  if (!run.transition) Raise(Status::InvalidArgument(run.infeasible), "InfeasibleError");
  return PyTransition{std::move(*run.transition), a.run.deployment, b.run.deployment,
                      std::move(run.check), run.naive};
}

// ---- replay ------------------------------------------------------------------------

WithNotes<std::string> ReplayJson(const ReplayRequest& options) {
  ReplayRequest request = options;
  auto [run, notes] = RunReleased<ReplayRun>([&](NoteSink sink) {
    request.notes = std::move(sink);
    return RunReplay(request);
  });
  return {
      FormatReplayJson(run.reports, /*with_samples=*/false, run.optimum ? &*run.optimum : nullptr),
      std::move(notes)};
}

// ---- autoscale -------------------------------------------------------------------

WithNotes<std::string> AutoscaleJson(const PyScenario& scenario, const ProblemInputs& inputs,
                                     const std::string& rates, const std::string& season,
                                     const std::string& planner, const AutoscaleOptions& options,
                                     const std::string& step_durations) {
  AutoscaleRequest request;
  request.inputs = inputs;
  request.scenario = scenario.scenario;
  request.rates_path = rates;
  request.season_path = season;
  request.planner = planner;
  request.options = options;
  if (!step_durations.empty()) {
    request.options.durations = Unwrap(ParseStepDurations("step_durations", step_durations));
  }
  auto [report, notes] = RunReleased<AutoscaleReport>([&](NoteSink sink) {
    request.notes = std::move(sink);
    return RunAutoscale(request);
  });
  return {FormatAutoscaleJson(report), std::move(notes)};
}

// ---- durations --------------------------------------------------------------------

// The range of each duration keyword, by the name the package gives it.
Result<DurationRange> RangeNamed(std::string_view name) {
  if (name == "duration") return kSimulatedTime;
  if (name == "time_limit") return kTimeLimit;
  if (name == "burst_on_s") return kBurstOn;
  if (name == "max_queue_delay_ms" || name == "drop_after_ms") return kServingDelay;
  if (name == "consolidate_every") return kConsolidation;
  if (name == "mecc_window") return kMeccWindow;
  if (name == "lead") return kAutoscaleLead;
  if (name == "down_hold") return kAutoscaleDownHold;
  if (name == "sample") return kAutoscaleSample;
  if (name == "oracle_interval") return kAutoscaleOracleInterval;
  return Status::Internal("no duration keyword " + std::string(name));
}

// `text` ("30s", "500ms", "2m", a plain number in the keyword's unit) as a
// number in that unit: seconds, or milliseconds for keywords named *_ms.
// Errors name the option as the library's do, by its command-line spelling.
double ParseDurationKeyword(const std::string& name, const std::string& text) {
  const DurationRange range = Unwrap(RangeNamed(name));
  const double unit = name.ends_with("_ms") ? kMillisecond : 1;
  std::string flag = "--" + name;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return Unwrap(ParseDuration(flag, text, range, unit)) / unit;
}

// ---- the benchmark's reference -------------------------------------------------------

// Seconds of each of `repeats` plans of `scenario` by Plan() alone,
// with the GIL released: the C++ library call that plan() wraps, timed in
// C++ (python/bench/bench_plan.py sets the two side by side). With them,
// the JSON of the last plan (as Plan.to_json() writes it), formatted after
// the clock stopped, so that the benchmark can check both sides planned the
// same thing. Notes are collected, as plan() collects them.
std::tuple<std::vector<double>, std::string> TimeNativePlan(const PyScenario& scenario,
                                                            const std::string& planner,
                                                            int repeats) {
  PlanRequest request;
  request.planner = planner;
  request.scenario = scenario.scenario;
  std::vector<double> seconds;
  std::string json;
  nb::gil_scoped_release release;
  for (int i = 0; i < repeats; ++i) {
    Notes notes;  // as plan() does: notes kept
    request.notes = notes.Sink();
    const auto start = std::chrono::steady_clock::now();
    Result<PlanRun> run = Plan(request);
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (!run.ok()) {
      nb::gil_scoped_acquire acquire;
      Raise(run.status());
    }
    if (i + 1 == repeats) json = PlanRunJson(*run);
  }
  return {std::move(seconds), std::move(json)};
}

}  // namespace
}  // namespace tessera::python

NB_MODULE(_core, m) {
  using namespace tessera;
  using namespace tessera::python;
  m.doc() = "The C++ core of the tessera package (use the tessera module, not this one).";

  nb::class_<PyScenario>(m, "Scenario")
      .def_static(
          "load",
          [](const std::string& path) { return PyScenario{Unwrap(LoadScenarioYaml(path))}; },
          nb::arg("path"))
      .def_static(
          "parse",
          [](const std::string& text, const std::string& source) {
            return PyScenario{Unwrap(ParseScenarioYaml(text, source))};
          },
          nb::arg("text"), nb::arg("source"))
      .def("to_yaml", [](const PyScenario& s) { return FormatScenarioYaml(s.scenario); })
      .def("to_json", [](const PyScenario& s) { return FormatScenarioJson(s.scenario); })
      .def(
          "scaled",
          [](const PyScenario& s, double factor) {
            if (!(factor > 0 && factor < 1e6)) {
              Raise(Status::InvalidArgument(fmt::format(
                  "Scenario.scaled: factor must be a number in (0, 1e6), got {}", factor)));
            }
            PyScenario out = s;
            for (Service& v : out.scenario.services) v.rate_rps *= factor;
            Check(ValidateScenario(out.scenario));
            return out;
          },
          nb::arg("factor"))
      .def(
          "replicated",
          [](const PyScenario& s, int copies) {
            return PyScenario{Unwrap(Replicated(s.scenario, copies))};
          },
          nb::arg("copies"))
      .def_prop_ro("source", [](const PyScenario& s) { return s.scenario.source; });

  nb::class_<PyProfiles>(m, "Profiles")
      .def_static(
          "load",
          [](const std::string& path, const std::string& gpu) {
            return PyProfiles{
                std::make_shared<const ProfileTable>(Unwrap(LoadProfiles(path, gpu)))};
          },
          nb::arg("path"), nb::arg("gpu"))
      .def_static(
          "parse",
          [](const std::string& text, const std::string& source) {
            return PyProfiles{
                std::make_shared<const ProfileTable>(Unwrap(ParseTesseraProfileCsv(text, source)))};
          },
          nb::arg("text"), nb::arg("source"))
      .def("to_csv", [](const PyProfiles& p) { return FormatTesseraProfileCsv(*p.table); })
      .def("__len__", [](const PyProfiles& p) { return p.table->size(); });

  nb::class_<PyPlan>(m, "Plan")
      .def("to_json", [](const PyPlan& p) { return PlanRunJson(p.run); })
      .def("to_table", [](const PyPlan& p) { return FormatDeploymentTable(p.run.deployment); })
      .def("to_svg",
           [](const PyPlan& p) {
             return FormatDeploymentSvg(p.run.deployment, p.run.problem.gpu());
           })
      .def("to_csv",
           [](const PyPlan& p) {
             if (p.run.mps) {
               Raise(Status::InvalidArgument(
                   "--format csv is ParvaGPU's map of MIG instances; MPS plans print as table or "
                   "json"));
             }
             return FormatParvaCsv(p.run.deployment, p.run.problem.gpu());
           })
      .def_prop_ro("feasible",
                   [](const PyPlan& p) { return p.run.outcome == PlanOutcome::kFeasible; })
      .def_prop_ro("source", [](const PyPlan& p) { return p.source; })
      .def_prop_ro("notes", [](const PyPlan& p) { return p.notes; })
      .def_prop_ro("scenario", [](const PyPlan& p) { return PyScenario{p.scenario}; });

  nb::class_<PyTransition>(m, "Transition")
      .def("to_json", [](const PyTransition& t) { return FormatTransitionJson(t.transition); })
      .def("to_text", [](const PyTransition& t) { return FormatTransitionText(t.transition); })
      .def("to_svg",
           [](const PyTransition& t) {
             const GpuModel* gpu = Unwrap(FindMigGpu(t.from.gpu));
             return FormatTransitionSvg(t.from, t.to, t.transition, *gpu);
           })
      .def("summary",
           [](const PyTransition& t) { return FormatTransitionSummary(t.check.measured); })
      .def("naive_summary", [](const PyTransition& t) { return FormatTransitionSummary(t.naive); });

  nb::class_<ProblemInputs>(m, "Inputs")
      .def(nb::init<>())
      .def_rw("gpu", &ProblemInputs::gpu)
      .def_rw("latency_factor", &ProblemInputs::latency_factor, nb::arg().none())
      .def_rw("router", &ProblemInputs::router)
      .def_rw("rate_margin", &ProblemInputs::rate_margin, nb::arg().none())
      .def_rw("profiles", &ProblemInputs::profiles)
      .def_prop_rw(
          "profile_table",
          [](const ProblemInputs& i) -> std::optional<PyProfiles> {
            if (!i.profile_table) return std::nullopt;
            return PyProfiles{i.profile_table};
          },
          [](ProblemInputs& i, std::optional<PyProfiles> p) {
            i.profile_table = p ? p->table : nullptr;
          },
          nb::arg().none())
      .def_rw("compat", &ProblemInputs::compat)
      .def_rw("capacity_rule", &ProblemInputs::capacity_rule)
      .def_rw("capacity_quantile", &ProblemInputs::capacity_quantile, nb::arg().none())
      .def_rw("coefficients", &ProblemInputs::coefficients)
      .def_rw("gpulet_tables", &ProblemInputs::gpulet_tables)
      .def_rw("price_per_hour", &ProblemInputs::price_per_hour, nb::arg().none())
      .def_rw("replicate", &ProblemInputs::replicate);

  nb::class_<SearchOptions>(m, "SearchOptions")
      .def(nb::init<>())
      .def_rw("time_limit_s", &SearchOptions::time_limit_s)
      .def_rw("seed", &SearchOptions::seed)
      .def_rw("score", &SearchOptions::score);

  nb::class_<SimulateRequest>(m, "SimulateOptions")
      .def(nb::init<>())
      .def_rw("arrivals", &SimulateRequest::arrivals)
      .def_rw("duration_s", &SimulateRequest::duration_s, nb::arg().none())
      .def_rw("burst_on_share", &SimulateRequest::burst_on_share, nb::arg().none())
      .def_rw("burst_on_s", &SimulateRequest::burst_on_s, nb::arg().none())
      .def_rw("router", &SimulateRequest::router)
      .def_rw("max_queue_delay_ms", &SimulateRequest::max_queue_delay_ms, nb::arg().none())
      .def_rw("variability", &SimulateRequest::variability)
      .def_rw("drop_after_ms", &SimulateRequest::drop_after_ms)
      .def_rw("seed", &SimulateRequest::seed);

  nb::class_<ReplayRequest>(m, "ReplayOptions")
      .def(nb::init<>())
      .def_prop_rw(
          "nodes", [](const ReplayRequest& r) { return r.trace.nodes; },
          [](ReplayRequest& r, std::string v) { r.trace.nodes = std::move(v); })
      .def_prop_rw(
          "pods", [](const ReplayRequest& r) { return r.trace.pods; },
          [](ReplayRequest& r, std::string v) { r.trace.pods = std::move(v); })
      .def_prop_rw(
          "gpu", [](const ReplayRequest& r) { return r.trace.gpu; },
          [](ReplayRequest& r, std::string v) { r.trace.gpu = std::move(v); })
      .def_prop_rw(
          "hosts", [](const ReplayRequest& r) { return r.trace.hosts; },
          [](ReplayRequest& r, std::optional<int> v) { r.trace.hosts = v; }, nb::arg().none())
      .def_prop_rw(
          "gpus_per_host", [](const ReplayRequest& r) { return r.trace.gpus_per_host; },
          [](ReplayRequest& r, std::optional<int> v) { r.trace.gpus_per_host = v; },
          nb::arg().none())
      .def_prop_rw(
          "max_pods", [](const ReplayRequest& r) { return r.trace.max_pods; },
          [](ReplayRequest& r, std::optional<int> v) { r.trace.max_pods = v; }, nb::arg().none())
      .def_prop_rw(
          "lifetime", [](const ReplayRequest& r) { return r.trace.lifetime; },
          [](ReplayRequest& r, std::string v) { r.trace.lifetime = std::move(v); })
      .def_rw("policy", &ReplayRequest::policy)
      .def_rw("every_policy", &ReplayRequest::every_policy)
      .def_rw("heavy_share", &ReplayRequest::heavy_share)
      .def_rw("fair_factor", &ReplayRequest::fair_factor)
      .def_rw("consolidate_every_s", &ReplayRequest::consolidate_every_s)
      .def_rw("defragment", &ReplayRequest::defragment)
      .def_rw("mecc_window_s", &ReplayRequest::mecc_window_s)
      .def_rw("optimum", &ReplayRequest::optimum)
      .def_rw("optimum_time_limit_s", &ReplayRequest::optimum_time_limit_s);

  m.def(
      "read_text", [](const std::string& path) { return Unwrap(ReadTextFile(path)); },
      nb::arg("path"));
  m.def("plan", &PlanOf, nb::arg("scenario"), nb::arg("planner"), nb::arg("inputs"),
        nb::arg("search"), nb::arg("current").none(), nb::arg("current_path"),
        nb::arg("max_extra_gpus").none(), nb::arg("repack_gpus"), nb::arg("consolidate"),
        nb::arg("shadow").none());
  m.def("plan_from_json", &PlanFromJson, nb::arg("text"), nb::arg("source"), nb::arg("scenario"),
        nb::arg("inputs"));
  m.def("validate", &Validate, nb::arg("plan"), nb::arg("scenario").none());
  m.def("simulate", &SimulateJson, nb::arg("plan"), nb::arg("scenario").none(), nb::arg("options"));
  m.def("transition", &PlanTransitionBetween, nb::arg("a"), nb::arg("b"), nb::arg("spare_gpus"));
  m.def("replay", &ReplayJson, nb::arg("options"));
  nb::class_<AutoscaleOptions>(m, "AutoscaleOptions")
      .def(nb::init<>())
      .def_rw("forecaster", &AutoscaleOptions::forecaster)
      .def_rw("lead_s", &AutoscaleOptions::lead_s)
      .def_rw("margin", &AutoscaleOptions::margin)
      .def_rw("hysteresis", &AutoscaleOptions::hysteresis)
      .def_rw("down_hold_s", &AutoscaleOptions::down_hold_s)
      .def_rw("spare_gpus", &AutoscaleOptions::spare_gpus)
      .def_rw("plan_windows", &AutoscaleOptions::plan_windows)
      .def_rw("hedge_turns", &AutoscaleOptions::hedge_turns)
      .def_rw("consolidate", &AutoscaleOptions::consolidate)
      .def_rw("sample_s", &AutoscaleOptions::sample_s)
      .def_rw("oracle_interval_s", &AutoscaleOptions::oracle_interval_s)
      .def_rw("jobs", &AutoscaleOptions::jobs)
      .def_rw("seed", &AutoscaleOptions::seed);
  m.def("autoscale", &AutoscaleJson, nb::arg("scenario"), nb::arg("inputs"), nb::arg("rates"),
        nb::arg("season"), nb::arg("planner"), nb::arg("options"), nb::arg("step_durations"));
  m.def("forecasters", [] { return BuiltinForecasters().Names(); });
  m.def("parse_duration", &ParseDurationKeyword, nb::arg("name"), nb::arg("text"));
  m.def("default_planner", [] { return std::string(kDefaultPlanner); });
  m.def("planners", [] {
    std::vector<std::tuple<std::string, std::string>> out;
    for (const std::string& name : BuiltinPlanners().Names()) {
      auto planner = BuiltinPlanners().Create(name);
      out.emplace_back(name, (*planner)->Mode() == Sharing::kMps ? "mps" : "mig");
    }
    return out;
  });
  m.def("placers", [] { return BuiltinPlacers().Names(); });
  m.def("time_native_plan", &TimeNativePlan, nb::arg("scenario"), nb::arg("planner"),
        nb::arg("repeats"));
}
