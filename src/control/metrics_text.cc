#include "control/metrics_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tessera {
namespace {

// A sample value: Prometheus reads Go's float syntax; shortest round trip.
std::string Value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

void Header(std::string& out, std::string_view name, std::string_view help,
            std::string_view type = "gauge") {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

void Sample(std::string& out, std::string_view name, std::string_view label,
            std::string_view label_value, double v) {
  out += fmt::format("{}{{{}=\"{}\"}} {}\n", name, label, EscapePrometheusLabel(label_value),
                     Value(v));
}

}  // namespace

std::string EscapePrometheusLabel(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatMetricsText(const ControlGauges& g) {
  std::string out;
  Header(out, "tessera_service_rate_requests_per_second",
         "The declared request rate of each service.");
  for (const ServiceGauges& s : g.services) {
    Sample(out, "tessera_service_rate_requests_per_second", "service", s.name, s.declared_rps);
  }
  Header(out, "tessera_service_observed_rate_requests_per_second",
         "The request rate the node agents and routers observe, summed over them.");
  for (const ServiceGauges& s : g.services) {
    if (s.observed_rps) {
      Sample(out, "tessera_service_observed_rate_requests_per_second", "service", s.name,
             *s.observed_rps);
    }
  }
  Header(out, "tessera_service_capacity_requests_per_second",
         "The SLO-safe capacity of each service in the deployment.");
  for (const ServiceGauges& s : g.services) {
    if (s.capacity_rps) {
      Sample(out, "tessera_service_capacity_requests_per_second", "service", s.name,
             *s.capacity_rps);
    }
  }
  Header(out, "tessera_service_planned_compliance_ratio",
         "min(1, capacity / declared rate) of each service in the deployment.");
  for (const ServiceGauges& s : g.services) {
    if (s.capacity_rps && s.declared_rps > 0) {
      Sample(out, "tessera_service_planned_compliance_ratio", "service", s.name,
             std::min(1.0, *s.capacity_rps / s.declared_rps));
    }
  }
  Header(out, "tessera_service_observed_compliance_ratio",
         "The share of requests meeting the SLO that the node agents and routers observe.");
  for (const ServiceGauges& s : g.services) {
    if (s.observed_compliance) {
      Sample(out, "tessera_service_observed_compliance_ratio", "service", s.name,
             *s.observed_compliance);
    }
  }
  Header(out, "tessera_service_observed_p99_seconds",
         "The 99th percentile latency the routers observe (the highest of their reports).");
  for (const ServiceGauges& s : g.services) {
    if (s.observed_p99_ms) {
      Sample(out, "tessera_service_observed_p99_seconds", "service", s.name,
             *s.observed_p99_ms / 1000);
    }
  }
  Header(out, "tessera_gpus_used", "GPUs holding an instance in the deployment.");
  out += fmt::format("tessera_gpus_used {}\n", g.gpus_used);
  Header(out, "tessera_transitions", "Transitions by state.");
  for (const auto& [state, count] : g.transitions) {
    Sample(out, "tessera_transitions", "state", state, count);
  }
  Header(out, "tessera_store_version", "The store's version, which node agents long-poll.");
  out += fmt::format("tessera_store_version {}\n", g.store_version);
  Header(out, "tessera_leader", "1 when this replica leads and writes the store, else 0.");
  out += fmt::format("tessera_leader {}\n", g.leader ? 1 : 0);
  Header(out, "tessera_leader_info", "The replica that leads, by name (absent when none does).");
  if (!g.leader_name.empty()) Sample(out, "tessera_leader_info", "name", g.leader_name, 1);
  Header(out, "tessera_leadership_changes_total",
         "Times this replica gained or lost the leadership.", "counter");
  out += fmt::format("tessera_leadership_changes_total {}\n", g.leadership_changes);
  return out;
}

}  // namespace tessera
