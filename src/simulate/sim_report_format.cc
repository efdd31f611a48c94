// FormatSimReportTable and FormatSimReportJson (simulator.h), and their
// transition forms (transition_simulation.h): a simulation report for people
// (fixed-width tables, at most 100 columns, like the deployment table) and
// for programs (JSON with a fixed key order, like the deployment JSON).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "tessera/simulate/transition_simulation.h"
#include "tessera/simulator.h"
#include "util/json_numbers.h"

namespace tessera {
namespace {

using OrderedJson = nlohmann::ordered_json;
using Out = std::back_insert_iterator<std::string>;

// ---- Table ----------------------------------------------------------------

// Cuts `s` to `width` characters, marking the cut with "..." so columns stay
// aligned (as the deployment table does).
std::string Fit(std::string_view s, size_t width) {
  if (s.size() <= width) return std::string(s);
  if (width <= 3) return std::string(s.substr(0, width));
  return std::string(s.substr(0, width - 3)) + "...";
}

bool Misses(const ServiceReport& s) { return s.requests > 0 && s.compliance < kComplianceTarget; }

long Served(const ServiceReport& s) { return s.requests - s.dropped; }

// Compliance in percent, rounded down: 98.996% must not print as "99.00"
// next to a MISS mark. "-" when no request arrived (nothing to judge).
std::string CompliancePercent(const ServiceReport& s) {
  if (s.requests <= 0) return "-";
  return fmt::format("{:.2f}", std::floor(s.compliance * 1e4 + 1e-6) / 100);
}

// A latency of served requests; "-" when none was served (all dropped).
std::string LatencyMs(const ServiceReport& s, double ms) {
  return Served(s) > 0 ? fmt::format("{:.1f}", ms) : "-";
}

void AppendHeader(const SimReport& r, std::string& out) {
  const auto misses = std::count_if(r.services.begin(), r.services.end(), Misses);
  fmt::format_to(Out(out),
                 "Simulation: {:g} s simulated, {} requests, {} services ({} below {:g}% within "
                 "SLO)\n",
                 r.duration_s, r.requests, r.services.size(), misses, 100 * kComplianceTarget);
}

void AppendServices(const SimReport& r, std::string& out) {
  out += "\nServices\n";
  fmt::format_to(Out(out), "  {:<22}  {:>10}  {:>11}  {:>12}  {:>9}  {:>8}  {:>8}\n", "name",
                 "rate rps", "offered rps", "achieved rps", "requests", "dropped", "in SLO %");
  for (const ServiceReport& s : r.services) {
    fmt::format_to(Out(out), "  {:<22}  {:>10.1f}  {:>11.1f}  {:>12.1f}  {:>9}  {:>8}  {:>8}{}\n",
                   Fit(s.name, 22), s.rate_rps, s.offered_rps, s.achieved_rps, s.requests,
                   s.dropped, CompliancePercent(s), Misses(s) ? "  MISS" : "");
  }
}

void AppendLatencies(const SimReport& r, std::string& out) {
  out += "\nLatency ms (served requests: queueing + batching + execution)\n";
  fmt::format_to(Out(out), "  {:<22}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}\n", "name", "SLO",
                 "p50", "p95", "p99", "max", "mean wait");
  for (const ServiceReport& s : r.services) {
    fmt::format_to(Out(out), "  {:<22}  {:>9.1f}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}\n",
                   Fit(s.name, 22), s.slo_ms, LatencyMs(s, s.p50_ms), LatencyMs(s, s.p95_ms),
                   LatencyMs(s, s.p99_ms), LatencyMs(s, s.max_ms), LatencyMs(s, s.mean_wait_ms));
  }
}

void AppendGpus(const SimReport& r, std::string& out) {
  out += "\nGPUs\n";
  fmt::format_to(Out(out), "  {:>5}  {:>7}\n", "gpu", "busy %");
  for (const GpuReport& g : r.gpus) {
    fmt::format_to(Out(out), "  {:>5}  {:>7.1f}\n", g.gpu, 100 * g.busy_share);
  }
}

void AppendInstances(const SimReport& r, std::string& out) {
  out += "\nInstances\n";
  fmt::format_to(Out(out), "  {:>5}  {:<14}  {:<24}  {:>7}\n", "gpu", "instance", "service",
                 "busy %");
  for (const InstanceReport& i : r.instances) {
    fmt::format_to(Out(out), "  {:>5}  {:<14}  {:<24}  {:>7.1f}\n", i.gpu,
                   Fit(fmt::format("{}@{}", i.profile, i.start), 14), Fit(i.service, 24),
                   100 * i.busy_share);
  }
}

void AppendWindows(const TransitionSimReport& r, std::string& out) {
  out += "\nWindows (requests by arrival time)\n";
  fmt::format_to(Out(out), "  {:<9}  {:>7}  {:>7}  {:<20}  {:>9}  {:>8}  {:>9}  {:>8}\n", "window",
                 "from s", "to s", "name", "requests", "dropped", "p99 ms", "in SLO %");
  for (const TransitionWindowReport& w : r.windows) {
    for (const ServiceReport& s : w.services) {
      fmt::format_to(Out(out), "  {:<9}  {:>7g}  {:>7g}  {:<20}  {:>9}  {:>8}  {:>9}  {:>8}{}\n",
                     Fit(w.name, 9), w.start_s, w.end_s, Fit(s.name, 20), s.requests, s.dropped,
                     LatencyMs(s, s.p99_ms), CompliancePercent(s), Misses(s) ? "  MISS" : "");
    }
  }
}

// ---- JSON -----------------------------------------------------------------

// JSON numbers as every Tessera JSON writes them (util/json_numbers.h).
OrderedJson Number(double v) { return JsonNumber(v); }
OrderedJson Measurement(double v) { return JsonMeasurement(v); }

OrderedJson ServiceJson(const ServiceReport& s) {
  OrderedJson j;
  j["name"] = s.name;
  j["rate_rps"] = Number(s.rate_rps);  // inputs: written exactly, not rounded
  j["slo_ms"] = Number(s.slo_ms);
  j["requests"] = s.requests;
  j["dropped"] = s.dropped;
  j["offered_rps"] = Measurement(s.offered_rps);
  j["achieved_rps"] = Measurement(s.achieved_rps);
  j["mean_wait_ms"] = Measurement(s.mean_wait_ms);
  j["p50_ms"] = Measurement(s.p50_ms);
  j["p95_ms"] = Measurement(s.p95_ms);
  j["p99_ms"] = Measurement(s.p99_ms);
  j["max_ms"] = Measurement(s.max_ms);
  j["compliance"] = Measurement(s.compliance);
  return j;
}

OrderedJson GpuJson(const GpuReport& g) {
  OrderedJson j;
  j["gpu"] = g.gpu;
  j["busy_share"] = Measurement(g.busy_share);
  return j;
}

OrderedJson InstanceJson(const InstanceReport& i) {
  OrderedJson j;
  j["gpu"] = i.gpu;
  j["profile"] = i.profile;
  j["start"] = i.start;
  j["service"] = i.service;
  j["busy_share"] = Measurement(i.busy_share);
  return j;
}

OrderedJson ReportJson(const SimReport& report) {
  OrderedJson j;
  j["duration_s"] = Number(report.duration_s);
  j["requests"] = report.requests;
  j["services"] = OrderedJson::array();
  for (const ServiceReport& s : report.services) j["services"].push_back(ServiceJson(s));
  j["gpus"] = OrderedJson::array();
  for (const GpuReport& g : report.gpus) j["gpus"].push_back(GpuJson(g));
  j["instances"] = OrderedJson::array();
  for (const InstanceReport& i : report.instances) j["instances"].push_back(InstanceJson(i));
  return j;
}

// "replace": a name with invalid UTF-8 must not make dump() throw.
std::string Dump(const OrderedJson& j) {
  return j.dump(2, ' ', false, OrderedJson::error_handler_t::replace) + "\n";
}

}  // namespace

std::string FormatSimReportTable(const SimReport& report) {
  std::string out;
  AppendHeader(report, out);
  AppendServices(report, out);
  AppendLatencies(report, out);
  AppendGpus(report, out);
  AppendInstances(report, out);
  return out;
}

std::string FormatSimReportJson(const SimReport& report) { return Dump(ReportJson(report)); }

std::string FormatTransitionSimTable(const TransitionSimReport& report) {
  std::string out = FormatSimReportTable(report.overall);
  AppendWindows(report, out);
  return out;
}

std::string FormatTransitionSimJson(const TransitionSimReport& report) {
  OrderedJson j = ReportJson(report.overall);
  j["windows"] = OrderedJson::array();
  for (const TransitionWindowReport& w : report.windows) {
    OrderedJson window;
    window["name"] = w.name;
    window["start_s"] = Number(w.start_s);
    window["end_s"] = Number(w.end_s);
    window["services"] = OrderedJson::array();
    for (const ServiceReport& s : w.services) window["services"].push_back(ServiceJson(s));
    j["windows"].push_back(std::move(window));
  }
  return Dump(j);
}

}  // namespace tessera
