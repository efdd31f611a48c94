// The GSLICE runtime's reports of gslice_report_format.h: a table for people
// and JSON for programs.
#include "tessera/simulate/gslice_report_format.h"

#include <fmt/format.h>

#include <cmath>
#include <iterator>
#include <nlohmann/json.hpp>

#include "util/json_numbers.h"

namespace tessera {
namespace {

using Out = std::back_insert_iterator<std::string>;
using OrderedJson = nlohmann::ordered_json;

// "-" for a window without completed requests.
std::string Ms(double v) { return std::isnan(v) ? "-" : fmt::format("{:.1f}", v); }
// Percent rounded down, so 98.996% does not print as a compliant "99.00".
std::string Percent(double v) {
  return std::isnan(v) ? "-" : fmt::format("{:.2f}", std::floor(v * 1e4 + 1e-6) / 100);
}

void AppendSummary(const GsliceReport& r, std::string& out) {
  fmt::format_to(Out(out),
                 "GSLICE runtime: policy {}, {} (MPS, whole GPU), {:g} s, period {:g} s, seed {}\n",
                 GslicePolicyName(r.policy), r.gpu, r.duration_s, r.period_s, r.seed);
  fmt::format_to(Out(out),
                 "GPUs {}, initial GPU% {}, contention {}; throughput {:.1f} req/s, {} SLO "
                 "violations\n",
                 r.gpus, r.initial_shares, r.contention ? "on" : "off", r.throughput_rps,
                 r.violations);
  if (r.last_switch_s >= 0)
    fmt::format_to(Out(out), "Last switch-over at {:.3f} s\n", r.last_switch_s);
  out += "\nServices\n";
  fmt::format_to(Out(out),
                 "  {:<16} {:<12} {:>7} {:>6} {:>8} {:>8} {:>8} {:>8} {:>6} {:>8} {:>9} {:>6} "
                 "{:>6}\n",
                 "name", "model", "rate/s", "SLO", "thr/s", "in SLO %", "misses", "p99 ms", "knee%",
                 "GPU% 0", "GPU% end", "batch", "under");
  for (const GsliceServiceSummary& s : r.services) {
    fmt::format_to(Out(out),
                   "  {:<16} {:<12} {:>7g} {:>6g} {:>8.1f} {:>8} {:>8} {:>8} {:>6.0f} {:>8.1f} "
                   "{:>9.1f} {:>6} {:>6}\n",
                   s.name, s.model, s.rate_rps, s.slo_ms, s.throughput_rps, Percent(s.compliance),
                   s.violations, Ms(s.p99_ms), 100 * s.knee_share, 100 * s.initial_share,
                   100 * s.final_share, s.final_max_batch, s.underprovisioned);
  }
}

void AppendTimeline(const GsliceReport& r, std::string& out) {
  out += "\nTimeline (per period; latency of the requests completed in it)\n";
  fmt::format_to(Out(out), "  {:>7} {:<16} {:>6} {:>6} {:>5} {:>6} {:>8} {:>8} {:>8} {:>8} {:>8}\n",
                 "time s", "service", "GPU%", "eff%", "busy", "batch", "arr/s", "thr/s", "mean ms",
                 "p99 ms", "in SLO %");
  for (const GslicePeriod& p : r.periods) {
    for (size_t s = 0; s < p.services.size(); ++s) {
      const GsliceWindow& w = p.services[s];
      fmt::format_to(Out(out),
                     "  {:>7.1f} {:<16} {:>6.1f} {:>6.1f} {:>5.2f} {:>6} {:>8.0f} {:>8.0f} {:>8} "
                     "{:>8} {:>8}\n",
                     p.end_s, r.services[s].name, 100 * w.share, 100 * w.effective_share, w.busy,
                     w.max_batch, w.arrival_rps, w.throughput_rps, Ms(w.mean_ms), Ms(w.p99_ms),
                     Percent(w.compliance));
    }
  }
}

void AppendEvents(const GsliceReport& r, std::string& out) {
  out += "\nEvents\n";
  if (r.events.empty()) out += "  (none)\n";
  for (const GsliceEvent& e : r.events) {
    fmt::format_to(Out(out), "  {:>8.3f} {:<16} {:<17} {:>5.1f}% -> {:>5.1f}%  {}\n", e.time_s,
                   r.services[e.service].name, GsliceEventKindName(e.kind), 100 * e.from_share,
                   100 * e.to_share, e.note);
  }
}

OrderedJson SummaryJson(const GsliceServiceSummary& s) {
  OrderedJson j;
  j["name"] = s.name;
  j["model"] = s.model;
  j["rate_rps"] = JsonNumber(s.rate_rps);
  j["slo_ms"] = JsonNumber(s.slo_ms);
  j["requests"] = s.requests;
  j["violations"] = s.violations;
  j["throughput_rps"] = JsonMeasurement(s.throughput_rps);
  j["compliance"] = JsonMeasurement(s.compliance);
  j["mean_ms"] = JsonMeasurement(s.mean_ms);
  j["p99_ms"] = JsonMeasurement(s.p99_ms);
  j["knee_share"] = JsonMeasurement(s.knee_share);
  j["initial_share"] = JsonMeasurement(s.initial_share);
  j["final_share"] = JsonMeasurement(s.final_share);
  j["final_max_batch"] = s.final_max_batch;
  j["switch_overs"] = s.switch_overs;
  j["underprovisioned"] = s.underprovisioned;
  return j;
}

OrderedJson PeriodJson(const GslicePeriod& p, const GsliceReport& r) {
  OrderedJson services = OrderedJson::array();
  for (size_t s = 0; s < p.services.size(); ++s) {
    const GsliceWindow& w = p.services[s];
    OrderedJson j;
    j["name"] = r.services[s].name;
    j["share"] = JsonMeasurement(w.share);
    j["effective_share"] = JsonMeasurement(w.effective_share);
    j["interference"] = JsonMeasurement(w.interference);
    j["busy"] = JsonMeasurement(w.busy);
    j["max_batch"] = w.max_batch;
    j["arrivals"] = w.arrivals;
    j["completed"] = w.completed;
    j["arrival_rps"] = JsonMeasurement(w.arrival_rps);
    j["throughput_rps"] = JsonMeasurement(w.throughput_rps);
    j["mean_ms"] = JsonMeasurement(w.mean_ms);
    j["p99_ms"] = JsonMeasurement(w.p99_ms);
    j["compliance"] = JsonMeasurement(w.compliance);
    services.push_back(std::move(j));
  }
  return {{"start_s", JsonMeasurement(p.start_s)},
          {"end_s", JsonMeasurement(p.end_s)},
          {"services", std::move(services)}};
}

OrderedJson EventJson(const GsliceEvent& e, const GsliceReport& r) {
  return {{"time_s", JsonMeasurement(e.time_s)},     {"service", r.services[e.service].name},
          {"kind", GsliceEventKindName(e.kind)},     {"from_share", JsonMeasurement(e.from_share)},
          {"to_share", JsonMeasurement(e.to_share)}, {"note", e.note}};
}

}  // namespace

std::string FormatGsliceReportTable(const GsliceReport& report) {
  std::string out;
  AppendSummary(report, out);
  AppendTimeline(report, out);
  AppendEvents(report, out);
  return out;
}

std::string FormatGsliceReportJson(const GsliceReport& report) {
  OrderedJson j;
  j["policy"] = GslicePolicyName(report.policy);
  j["gpu"] = report.gpu;
  j["duration_s"] = JsonNumber(report.duration_s);
  j["period_s"] = JsonNumber(report.period_s);
  j["seed"] = report.seed;
  j["contention"] = report.contention;
  j["initial_shares"] = report.initial_shares;
  j["gpus"] = report.gpus;
  j["throughput_rps"] = JsonMeasurement(report.throughput_rps);
  j["violations"] = report.violations;
  j["last_switch_s"] = JsonMeasurement(report.last_switch_s);
  j["services"] = OrderedJson::array();
  for (const GsliceServiceSummary& s : report.services) j["services"].push_back(SummaryJson(s));
  j["periods"] = OrderedJson::array();
  for (const GslicePeriod& p : report.periods) j["periods"].push_back(PeriodJson(p, report));
  j["events"] = OrderedJson::array();
  for (const GsliceEvent& e : report.events) j["events"].push_back(EventJson(e, report));
  return j.dump(2) + "\n";
}

}  // namespace tessera
