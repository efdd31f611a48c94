// Scenario: the services an operator wants served, each a DNN model with a
// request rate and a latency SLO, and (optionally) the GPU model to use.
//
// YAML form (DESIGN.md, Formats):
//   name: S3                # optional
//   gpu: a100-80gb          # optional; `--gpu` overrides it
//   pool:                   # or, instead of gpu: several models, priced
//     - {gpu: a100-80gb, price_per_hour: 4.10, max_count: 16}  # max_count optional
//     - {gpu: h100-80gb, price_per_hour: 6.98}
//   services:
//     - {name: resnet50, model: resnet50, rate_rps: 1463, slo_ms: 138}
//
// Also importable: one row of ParvaGPU's SLO_req_rate.csv + SLO_latency.csv
// (N/A or 0 in either file = the service is absent in that row).
//
// Thread-safety: values.
#ifndef TESSERA_SCENARIO_H_
#define TESSERA_SCENARIO_H_

#include <string>
#include <string_view>
#include <vector>

#include "tessera/status.h"

namespace tessera {

struct Service {
  std::string name;     // unique within the scenario
  std::string model;    // canonical model name (CanonicalModelName)
  double rate_rps = 0;  // requests per second to sustain, > 0
  double slo_ms = 0;    // end-to-end latency objective, > 0
  int line = 0;         // line in the source file (0 when built in code)
};

// One GPU model of a mixed pool, with its hourly price and an optional cap.
struct PoolEntry {
  std::string gpu;            // catalog name
  double price_per_hour = 0;  // > 0
  int max_count = 0;          // 0 = no limit
  int line = 0;
};

struct Scenario {
  std::string name;  // e.g. "S3"; may be empty
  std::string gpu;   // catalog GPU name; empty = not given
  int gpu_line = 0;  // line of `gpu` in the source file (0 when not read from one)
  // GPU models to choose from, priced (exclusive with `gpu`); planners that
  // support pools minimise the hourly cost.
  std::vector<PoolEntry> pool;
  std::string source;  // file the scenario came from, for messages
  std::vector<Service> services;
};

// Parses scenario YAML text; `source` names the file in error messages.
// Errors (InvalidArgument, "<source>:<line>: field '<field>': <what>"): not a
// mapping, no or empty `services`, a missing or mistyped field (a quoted
// "829" is a string, not a number), a rate or SLO that is not a finite number
// > 0, a duplicate service name, an unknown or repeated key, a `gpu` not in
// the catalog (stored as the catalog spells it), a second YAML document; in
// `pool`: both `gpu` and `pool`, an empty pool, a model listed twice, a price
// that is not > 0, a max_count that is not an integer >= 1.
// Syntax errors read "<source>:<line>: YAML syntax error: <what>". Models go
// through CanonicalModelName; Service::line is the service's 1-based line.
Result<Scenario> ParseScenarioYaml(std::string_view text, std::string_view source);
// Reads and parses a YAML file (NotFound / IoError when unreadable).
Result<Scenario> LoadScenarioYaml(const std::string& path);

// The scenario as YAML in the form above: `name` and `gpu` when not empty,
// `pool` when not empty (max_count when > 0), then `services`, one flow
// mapping per line. Numbers are written in their shortest form that reads
// back exactly, strings (UTF-8) plain unless YAML needs quotes. For a
// scenario that ValidateScenario accepts, with canonical model names and GPU
// names as the catalog spells them (as ParseScenarioYaml stores them),
// ParseScenarioYaml(FormatScenarioYaml(s), src) gives back every field but
// `source` and the lines.
std::string FormatScenarioYaml(const Scenario& scenario);

// The scenario as one line of JSON with the YAML's keys: the control
// plane's API body, `tessera serve`'s first PUT and the Python package's
// Scenario.to_dict(); numbers as the shortest text that reads back the same.
std::string FormatScenarioJson(const Scenario& scenario);

// Imports row `row` (1-based) of ParvaGPU's SLO directory `dir` (holding
// SLO_req_rate.csv and SLO_latency.csv, 11 columns in the order of
// ParvaModelColumns(), no header). Service names are the artifact's model
// names ("bert"), models canonical ("bert-large"); SLOs keep their fraction
// (418.5: truncation is a planner rule). Name "ParvaGPU row N", gpu
// "a100-80gb", Service::line = N. Every row of both files is checked: 11
// numbers >= 0 or N/A each, the same rows and the same services present in
// both files. A row out of range or with no service is an error.
Result<Scenario> ImportParvaSloRow(const std::string& dir, int row);

// The 11 model columns of ParvaGPU's SLO files, in file order.
const std::vector<std::string>& ParvaModelColumns();

// Where a service was read, for messages: "<source>:<line>" for `line` > 0,
// else the source alone; "scenario" stands for an empty Scenario::source
// (a scenario built in code). E.g. ServiceLocation(s, 2) == "model.yaml:2",
// ServiceLocation(s, 0) == "model.yaml". Pass Service::line, or 0 for the
// scenario as a whole.
std::string ServiceLocation(const Scenario& scenario, int line);

// Structural checks shared by every source: at least one service, unique
// names, finite positive rates and SLOs, non-empty models.
Status ValidateScenario(const Scenario& scenario);

// `copies` copies of every service, renamed "<name>#<k>" for k >= 2 (same
// model, rate and SLO): how ParvaGPU's scalability study (Fig. 10) grows S5
// to 110 services. Copy-major order: every service, then every "#2", ...
// copies <= 1 returns the scenario unchanged; the name is kept.
Scenario ReplicateScenario(const Scenario& scenario, int copies);

}  // namespace tessera

#endif  // TESSERA_SCENARIO_H_
