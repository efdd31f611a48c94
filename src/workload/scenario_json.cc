#include "workload/scenario_json.h"

#include <string>
#include <utility>

#include "util/json_numbers.h"

namespace tessera {

nlohmann::ordered_json ScenarioToJson(const Scenario& scenario) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  if (!scenario.name.empty()) j["name"] = scenario.name;
  if (!scenario.gpu.empty()) j["gpu"] = scenario.gpu;
  if (!scenario.pool.empty()) {
    nlohmann::ordered_json pool = nlohmann::ordered_json::array();
    for (const PoolEntry& entry : scenario.pool) {
      nlohmann::ordered_json e;
      e["gpu"] = entry.gpu;
      e["price_per_hour"] = JsonNumber(entry.price_per_hour);
      if (entry.max_count > 0) e["max_count"] = entry.max_count;
      pool.push_back(std::move(e));
    }
    j["pool"] = std::move(pool);
  }
  nlohmann::ordered_json services = nlohmann::ordered_json::array();
  for (const Service& s : scenario.services) services.push_back(ServiceToJson(s));
  j["services"] = std::move(services);
  return j;
}

nlohmann::ordered_json ServiceToJson(const Service& service) {
  nlohmann::ordered_json e;
  e["name"] = service.name;
  e["model"] = service.model;
  e["rate_rps"] = JsonNumber(service.rate_rps);
  e["slo_ms"] = JsonNumber(service.slo_ms);
  return e;
}

std::string FormatScenarioJson(const Scenario& scenario) {
  // "replace": a name with invalid UTF-8 must not throw.
  return ScenarioToJson(scenario).dump(-1, ' ', false,
                                       nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace tessera
