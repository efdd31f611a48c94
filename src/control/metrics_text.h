// The control plane's /metrics (docs/control-plane.md, "Metrics"):
// Prometheus text exposition format 0.0.4, a HELP and a TYPE line per
// metric, label values escaped (backslash, double quote, newline).
//
// Thread-safety: pure functions.
#ifndef TESSERA_CONTROL_METRICS_TEXT_H_
#define TESSERA_CONTROL_METRICS_TEXT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

struct ServiceGauges {
  std::string name;
  double declared_rps = 0;                    // the scenario's rate
  std::optional<double> observed_rps;         // the nodes' and routers' reports, summed
  std::optional<double> capacity_rps;         // the deployment's SLO-safe capacity
  std::optional<double> observed_compliance;  // the reports, weighted by their rates
  std::optional<double> observed_p99_ms;      // the highest reported p99
};

struct ControlGauges {
  std::vector<ServiceGauges> services;
  int gpus_used = 0;
  std::map<std::string, int> transitions;  // by state
  int64_t store_version = 0;
  // This replica leads (it may write), the leader's name ("" when none
  // leads), and how often this replica has gained or lost the leadership.
  bool leader = true;
  std::string leader_name;
  int64_t leadership_changes = 0;
};

// `value` escaped for a label value of the text format.
std::string EscapePrometheusLabel(std::string_view value);

std::string FormatMetricsText(const ControlGauges& gauges);

}  // namespace tessera

#endif  // TESSERA_CONTROL_METRICS_TEXT_H_
