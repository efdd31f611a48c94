// tessera._core: the C++ core for Python (nanobind). Each function runs what
// the CLI command of the same noun runs (tessera/plan_request.h, simulate_inputs.h,
// replay_run.h...), with its options parsed by the same flag declarations,
// so that a plan, a report or an error message is the CLI's, word for word.
// Options arrive as a dict of the CLI's flag names with '_' for '-'
// (time_limit=3 is --time-limit 3; True gives a flag, False its --no- form
// when it has one). Objects hold C++ values; their JSON is the CLI's JSON.
// The GIL is released while a plan, a simulation, a transition or a replay
// runs. The Python package (python/tessera/__init__.py) is the public face.
#include <fmt/format.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "cli_common.h"
#include "incremental_cli.h"
#include "replay_run.h"
#include "shadow_cli.h"
#include "simulate_inputs.h"
#include "tessera/deployment_format.h"
#include "tessera/gpu_catalog.h"
#include "tessera/plan_request.h"
#include "tessera/planner.h"
#include "tessera/profile_io.h"
#include "tessera/replay_report_format.h"
#include "tessera/simulator.h"
#include "tessera/text_io.h"
#include "tessera/transition.h"
#include "tessera/transition_check.h"
#include "tessera/transition_format.h"
#include "tessera/transition_svg.h"
#include "tessera/validator.h"
#include "transition_run.h"

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

// ---- Options: the CLI's flags ----------------------------------------------

// `options` as command-line arguments of `app`: key k becomes --k with '_'
// as '-'; None is left out; True gives the flag, False its --no- form when
// the app has one (else nothing, a flag's default); anything else its str().
std::vector<std::string> ArgsFrom(const CLI::App& app, const nb::dict& options) {
  std::vector<std::string> args;
  for (auto [key, value] : options) {
    std::string flag = "--" + nb::cast<std::string>(nb::str(key));
    std::replace(flag.begin() + 2, flag.end(), '_', '-');
    if (value.is_none()) continue;
    if (nb::isinstance<nb::bool_>(value)) {
      if (nb::cast<bool>(value)) {
        args.push_back(flag);
      } else if (app.get_option_no_throw("--no-" + flag.substr(2)) != nullptr) {
        args.push_back("--no-" + flag.substr(2));
      }
      continue;
    }
    args.push_back(flag);
    args.push_back(nb::cast<std::string>(nb::str(value)));
  }
  return args;
}

// Parses `options` into the flags declared on `app`; a flag it does not
// declare, a bad value or a failed check is an InputError with CLI11's
// message, prefixed with `function`. `refused` are flags the function takes
// otherwise (the scenario, given as an object).
void ParseOptions(CLI::App& app, std::string_view function, const nb::dict& options,
                  std::span<const std::string_view> refused = {}) {
  std::vector<std::string> args = ArgsFrom(app, options);
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    Raise(Status::InvalidArgument(std::string(function) + ": " + e.what()));
  }
  for (std::string_view flag : refused) {
    if (app.count(std::string(flag)) > 0) {
      Raise(
          Status::InvalidArgument(std::string(function) + ": " + std::string(flag) +
                                  " is not an option here: give the scenario as a "
                                  "tessera.Scenario (Scenario.from_yaml, from_dict, replicated)"));
    }
  }
}

constexpr std::array<std::string_view, 4> kScenarioFlags = {"--scenario", "--parva-slo", "--row",
                                                            "--replicate"};
constexpr std::array<std::string_view, 2> kTransitionFlags = {"--transition", "--step-seconds"};

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
  std::vector<std::string> notes;  // what the CLI would have noted on stderr
};

// A result with the notes its run printed (cli::NoteCollector).
template <typename T>
using WithNotes = std::tuple<T, std::vector<std::string>>;

struct PyTransition {
  Transition transition;
  Deployment from;
  Deployment to;
  TransitionCheck check;
  TransitionSummary naive;
};

nlohmann::ordered_json ScenarioJson(const Scenario& s) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  if (!s.name.empty()) out["name"] = s.name;
  if (!s.gpu.empty()) out["gpu"] = s.gpu;
  if (!s.pool.empty()) {
    nlohmann::ordered_json pool = nlohmann::ordered_json::array();
    for (const PoolEntry& e : s.pool) {
      nlohmann::ordered_json entry = {{"gpu", e.gpu}, {"price_per_hour", e.price_per_hour}};
      if (e.max_count > 0) entry["max_count"] = e.max_count;
      pool.push_back(std::move(entry));
    }
    out["pool"] = std::move(pool);
  }
  nlohmann::ordered_json services = nlohmann::ordered_json::array();
  for (const Service& v : s.services) {
    services.push_back(
        {{"name", v.name}, {"model", v.model}, {"rate_rps", v.rate_rps}, {"slo_ms", v.slo_ms}});
  }
  out["services"] = std::move(services);
  return out;
}

// `profiles` (a table given in memory, or None) into `input`; a path in
// the options too would be a second source (only _core can be called so).
void UseProfiles(std::string_view function, ProblemInputs& input, const PyProfiles* profiles) {
  if (profiles == nullptr) return;
  if (!input.profiles.empty()) {
    Raise(Status::InvalidArgument(std::string(function) +
                                  ": give profiles once: a path or a ProfileTable"));
  }
  input.profile_table = profiles->table;
}

// The input flags of `options` (the MIG profiles or the MPS coefficients,
// the rule, the GPU) with `profiles` given in memory when not None.
ProblemInputs InputsOf(std::string_view function, const nb::dict& options,
                       const PyProfiles* profiles) {
  ProblemInputs input;
  CLI::App app{"", std::string(function)};
  cli::AddInputFlags(app, input);
  ParseOptions(app, function, options, kScenarioFlags);
  UseProfiles(function, input, profiles);
  return input;
}

// ---- plan, validate ----------------------------------------------------------

PyPlan PlanOf(const PyScenario& scenario, const std::string& planner, const nb::dict& options,
              const PyProfiles* profiles) {
  PlanRequest request;
  CLI::App app{"", "plan"};
  cli::AddInputFlags(app, request.inputs);
  cli::AddSearchFlags(app, request.search);
  cli::AddIncrementalFlags(app, request);
  cli::AddShadowFlag(app, request.shadow);
  ParseOptions(app, "plan", options, kScenarioFlags);
  UseProfiles("plan", request.inputs, profiles);
  request.planner = planner;
  request.scenario = scenario.scenario;
  request.notes = cli::CliNotes();
  Result<PlanRun> run = Status::Internal("not run");
  std::vector<std::string> notes;
  {
    nb::gil_scoped_release release;
    cli::NoteCollector collector;
    run = Plan(request);
    notes = collector.notes();
  }
  return PyPlan{Unwrap(std::move(run)), scenario.scenario, request.inputs,
                "plan(" + PlannerFor(request) + ")", std::move(notes)};
}

// A plan read back from its JSON, with the problem of `scenario` under the
// rule it records (validate() checks it).
PyPlan PlanFromJson(const std::string& text, const std::string& source, const PyScenario& scenario,
                    const nb::dict& options, const PyProfiles* profiles) {
  cli::NoteCollector collector;
  Deployment d = Unwrap(ParseDeploymentJson(text, source));
  const bool mps = d.sharing == Sharing::kMps;
  ProblemInputs input = InputsOf("Plan.from_json", options, profiles);
  Check(CheckInputsApply(input, mps, source));
  if (!mps) input = InputsForPlan(input, d, cli::CliNotes());
  Problem problem = Unwrap(LoadProblem(input, scenario.scenario, mps,
                                       d.rule_recorded ? &d.rule : nullptr, cli::CliNotes()));
  if (!mps) NoteOtherProfiles(d, input, problem, cli::CliNotes());
  AdoptRule(d, source, problem.rule(), cli::CliNotes());
  bool infeasible = false;
  for (const ServiceOutcome& s : d.services) infeasible |= s.status != ServiceStatus::kOk;
  const PlanOutcome outcome = infeasible ? PlanOutcome::kInfeasible : PlanOutcome::kFeasible;
  return PyPlan{PlanRun{std::move(d), std::move(problem), mps, std::nullopt, outcome, std::nullopt},
                scenario.scenario, std::move(input), source, collector.notes()};
}

std::string PlanJson(const PyPlan& plan) {
  std::string json = FormatDeploymentJson(plan.run.deployment);
  return plan.run.shadow ? cli::WithShadowJson(json, *plan.run.shadow) : json;
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
        Unwrap(LoadProblem(plan.input, scenario->scenario, plan.run.mps, &d.rule, cli::CliNotes()));
    violations = ValidateDeployment(d, problem);
  }
  std::vector<ViolationRow> rows;
  for (const Violation& v : violations) rows.emplace_back(v.rule, v.where, v.message);
  return rows;
}

// ---- simulate ------------------------------------------------------------------

WithNotes<std::string> SimulateJson(const PyPlan& plan, const PyScenario* other,
                                    const nb::dict& options) {
  cli::SimulateFlags flags;
  CLI::App app{"", "simulate"};
  cli::AddSimulationFlags(app, flags);
  ParseOptions(app, "simulate", options, kTransitionFlags);
  flags.profiles = plan.input.profiles;
  flags.profile_table = plan.input.profile_table;
  flags.coefficients = plan.input.coefficients;
  flags.deployment = plan.source;
  const Scenario& scenario = other != nullptr ? other->scenario : plan.scenario;
  Result<SimReport> report = Status::Internal("not run");
  std::vector<std::string> notes;
  {
    nb::gil_scoped_release release;
    cli::NoteCollector collector;
    report = [&]() -> Result<SimReport> {
      TESSERA_ASSIGN_OR_RETURN(SimOptions sim, cli::OptionsFrom(flags, scenario, std::nullopt));
      TESSERA_RETURN_IF_ERROR(
          cli::CheckSameServices(scenario, plan.run.deployment, flags.deployment));
      TESSERA_ASSIGN_OR_RETURN(Problem problem,
                               cli::ProblemFor(flags, scenario, plan.run.deployment));
      return cli::SimulateOn(flags, plan.run.deployment, problem, sim);
    }();
    notes = collector.notes();
  }
  return {FormatSimReportJson(Unwrap(std::move(report))), std::move(notes)};
}

// ---- transition ------------------------------------------------------------------

PyTransition PlanTransitionBetween(const PyPlan& a, const PyPlan& b, int spare_gpus) {
  Check(cli::CheckMigPlan(a.source, a.run.deployment));
  Check(cli::CheckMigPlan(b.source, b.run.deployment));
  Check(CheckServes(b.source, b.run.deployment, b.run.problem));
  Result<cli::TransitionRun> planned = Status::Internal("not run");
  {
    nb::gil_scoped_release release;
    planned = cli::RunTransition(a.run.deployment, b.run.deployment, spare_gpus);
  }
  cli::TransitionRun run = Unwrap(std::move(planned));
  if (!run.transition) Raise(Status::InvalidArgument(run.infeasible), "InfeasibleError");
  return PyTransition{std::move(*run.transition), a.run.deployment, b.run.deployment,
                      std::move(run.check), run.naive};
}

// ---- replay ------------------------------------------------------------------------

WithNotes<std::string> ReplayJson(const nb::dict& options) {
  cli::ReplayFlags flags;
  CLI::App app{"", "replay"};
  cli::AddReplayFlags(app, flags);
  ParseOptions(app, "replay", options);
  cli::NoteReplayFlagsGiven(app, flags);
  Result<cli::ReplayRun> run = Status::Internal("not run");
  std::vector<std::string> notes;
  {
    nb::gil_scoped_release release;
    cli::NoteCollector collector;
    run = cli::RunReplayFlags(flags, /*describe_trace=*/true);
    notes = collector.notes();
  }
  cli::ReplayRun done = Unwrap(std::move(run));
  return {FormatReplayJson(done.reports, /*with_samples=*/false,
                           done.optimum ? &*done.optimum : nullptr),
          std::move(notes)};
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
  request.notes = cli::CliNotes();
  std::vector<double> seconds;
  std::string json;
  nb::gil_scoped_release release;
  for (int i = 0; i < repeats; ++i) {
    cli::NoteCollector collector;  // as plan() does: notes kept, not written to stderr
    const auto start = std::chrono::steady_clock::now();
    Result<PlanRun> run = Plan(request);
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (!run.ok()) {
      nb::gil_scoped_acquire acquire;
      Raise(run.status());
    }
    if (i + 1 == repeats) {
      json = FormatDeploymentJson(run->deployment);
      if (run->shadow) json = cli::WithShadowJson(json, *run->shadow);
    }
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
      .def("to_json", [](const PyScenario& s) { return ScenarioJson(s.scenario).dump(); })
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
      .def("to_json", &PlanJson)
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

  m.def(
      "read_text", [](const std::string& path) { return Unwrap(ReadTextFile(path)); },
      nb::arg("path"));
  m.def("plan", &PlanOf, nb::arg("scenario"), nb::arg("planner"), nb::arg("options"),
        nb::arg("profiles").none());
  m.def("plan_from_json", &PlanFromJson, nb::arg("text"), nb::arg("source"), nb::arg("scenario"),
        nb::arg("options"), nb::arg("profiles").none());
  m.def("validate", &Validate, nb::arg("plan"), nb::arg("scenario").none());
  m.def("simulate", &SimulateJson, nb::arg("plan"), nb::arg("scenario").none(), nb::arg("options"));
  m.def("transition", &PlanTransitionBetween, nb::arg("a"), nb::arg("b"), nb::arg("spare_gpus"));
  m.def("replay", &ReplayJson, nb::arg("options"));
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
