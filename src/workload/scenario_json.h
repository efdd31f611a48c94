// A scenario as JSON, written in one place: the control plane's API bodies
// (docs/control-plane.md, Scenario), `tessera serve`'s first PUT and the
// Python package's Scenario.to_dict() all write it so. Keys as the YAML's
// (ParseScenarioYaml); numbers as the shortest text that reads back the same
// double (util/json_numbers.h); name, gpu and pool only when set.
//
// Thread-safety: pure functions.
#ifndef TESSERA_WORKLOAD_SCENARIO_JSON_H_
#define TESSERA_WORKLOAD_SCENARIO_JSON_H_

#include <nlohmann/json.hpp>

#include "tessera/scenario.h"

namespace tessera {

nlohmann::ordered_json ScenarioToJson(const Scenario& scenario);
// One service: {name, model, rate_rps, slo_ms}.
nlohmann::ordered_json ServiceToJson(const Service& service);

}  // namespace tessera

#endif  // TESSERA_WORKLOAD_SCENARIO_JSON_H_
