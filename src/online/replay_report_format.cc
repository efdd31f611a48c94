// FormatReplayTable, FormatReplayJson, FormatReplayCsv and FormatReplaySvg
// (replay_report_format.h): online replay reports for people (fixed-width
// tables, at most 100 columns, like the simulation report), for programs (JSON
// with a fixed key order, CSV in long format) and as a picture (standalone SVG
// 1.1 like the deployment drawing: no external resources, no timestamps, so
// equal reports give equal bytes).
#include "tessera/online/replay_report_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/gpu_catalog.h"
#include "tessera/util/text_io.h"
#include "util/json_numbers.h"
#include "util/svg_text.h"

namespace tessera {
namespace {

using OrderedJson = nlohmann::ordered_json;
using Out = std::back_insert_iterator<std::string>;

// ---- Shared ---------------------------------------------------------------

// The catalog name of profile `index` of `gpu`, or "profile#N" when the GPU
// or the index is unknown (a report from a newer catalog still prints).
std::string ProfileName(const std::string& gpu, int index) {
  Result<const GpuModel*> model = FindGpu(gpu);
  if (model.ok() && index >= 0 && index < static_cast<int>((*model)->profiles.size())) {
    return (*model)->profiles[index].name;
  }
  return fmt::format("profile#{}", index);
}

// num / den, or nothing when den is 0: an hour without arrivals has no
// acceptance, and a 0 there would read as "all rejected".
std::optional<double> Ratio(int num, int den) {
  if (den <= 0) return std::nullopt;
  return static_cast<double>(num) / den;
}

// ---- Table ----------------------------------------------------------------

// Cuts `s` to `width` characters, marking the cut with "..." so columns stay
// aligned (as the other tables do).
std::string Fit(std::string_view s, size_t width) {
  if (s.size() <= width) return std::string(s);
  if (width <= 3) return std::string(s.substr(0, width));
  return std::string(s.substr(0, width - 3)) + "...";
}

// num / den in percent, rounded down so that "100.00" means every request was
// accepted; "-" when there was no request.
std::string FloorPercent(int num, int den) {
  if (den <= 0) return "-";
  return fmt::format("{:.2f}", std::floor(1e4 * num / den + 1e-6) / 100);
}

// A finite value with `decimals` decimals, "-" otherwise (never "nan").
std::string Fixed(double v, int decimals) {
  return std::isfinite(v) ? fmt::format("{:.{}f}", v, decimals) : "-";
}

// `v` rounded to an integer with thousands separators: AUCs reach 100,000s.
std::string Grouped(double v) {
  if (!std::isfinite(v) || std::fabs(v) >= 1e18) return Fixed(v, 0);
  return GroupThousands(std::llround(v));
}

void AppendHeader(const ReplayReport& r, std::string& out) {
  fmt::format_to(Out(out), "Replay: {} requests on {} hosts / {} GPUs ({}), {:.1f} h\n", r.requests,
                 r.hosts, r.gpus, r.gpu, r.duration_s / 3600);
}

void AppendPolicies(std::span<const ReplayReport> reports, std::string& out) {
  out += "\nPolicies\n";
  fmt::format_to(Out(out), "  {:<12}  {:>9}  {:>8}  {:>10}  {:>9}  {:>6}  {:>6}  {:>7}  {:>10}\n",
                 "policy", "accepted", "accept %", "HW AUC %h", "mean HW %", "intra", "inter",
                 "migr %", "replay ms");
  for (const ReplayReport& r : reports) {
    const int moves = r.intra_migrations + r.inter_migrations;
    const std::string share = r.accepted > 0 ? Fixed(100.0 * moves / r.accepted, 2) : "-";
    fmt::format_to(Out(out), "  {:<12}  {:>9}  {:>8}  {:>10}  {:>9}  {:>6}  {:>6}  {:>7}  {:>10}\n",
                   Fit(r.policy, 12), r.accepted, FloorPercent(r.accepted, r.requests),
                   Grouped(r.active_hw_auc), Fixed(100 * r.mean_active_hw_rate, 1),
                   r.intra_migrations, r.inter_migrations, share, Fixed(r.replay_ms, 1));
  }
}

// Requests per profile index over all reports. They replay the same trace, so
// the first report that lists a profile gives its count.
std::map<int, int> ProfileRequests(std::span<const ReplayReport> reports) {
  std::map<int, int> requests;
  for (const ReplayReport& r : reports) {
    for (const ProfileTally& t : r.per_profile) requests.emplace(t.profile, t.requests);
  }
  return requests;
}

const ProfileTally* FindTally(const ReplayReport& r, int profile) {
  auto it = std::find_if(r.per_profile.begin(), r.per_profile.end(),
                         [&](const ProfileTally& t) { return t.profile == profile; });
  return it == r.per_profile.end() ? nullptr : &*it;
}

// Seven policy columns of 10 characters after the 24 of profile and requests
// keep a line within 100 columns; more policies continue in another block.
constexpr size_t kPoliciesPerBlock = 7;

void AppendProfileBlock(std::span<const ReplayReport> block, const std::map<int, int>& requests,
                        std::string& out) {
  fmt::format_to(Out(out), "  {:<12}  {:>8}", "profile", "requests");
  for (const ReplayReport& r : block) fmt::format_to(Out(out), "  {:>8}", Fit(r.policy, 8));
  out += '\n';
  for (const auto& [profile, count] : requests) {
    fmt::format_to(Out(out), "  {:<12}  {:>8}", Fit(ProfileName(block[0].gpu, profile), 12), count);
    for (const ReplayReport& r : block) {
      const ProfileTally* t = FindTally(r, profile);
      fmt::format_to(Out(out), "  {:>8}", t ? FloorPercent(t->accepted, t->requests) : "-");
    }
    out += '\n';
  }
}

void AppendProfiles(std::span<const ReplayReport> reports, std::string& out) {
  out += "\nAcceptance per profile (%)\n";
  const std::map<int, int> requests = ProfileRequests(reports);
  for (size_t first = 0; first < reports.size(); first += kPoliciesPerBlock) {
    if (first > 0) out += '\n';
    const size_t n = std::min(kPoliciesPerBlock, reports.size() - first);
    AppendProfileBlock(reports.subspan(first, n), requests, out);
  }
}

// ---- JSON -----------------------------------------------------------------

OrderedJson Measurement(double v) { return JsonMeasurement(v); }

// A ratio as a rounded fraction, or null where it is undefined.
OrderedJson RatioJson(int num, int den) {
  std::optional<double> ratio = Ratio(num, den);
  return ratio ? Measurement(*ratio) : OrderedJson(nullptr);
}

OrderedJson ProfileJson(const ReplayReport& r, const ProfileTally& t) {
  OrderedJson j;
  j["profile"] = ProfileName(r.gpu, t.profile);
  j["requests"] = t.requests;
  j["accepted"] = t.accepted;
  j["acceptance"] = RatioJson(t.accepted, t.requests);
  return j;
}

OrderedJson SampleJson(size_t hour, const ReplaySample& s) {
  OrderedJson j;
  j["hour"] = hour;
  j["start_s"] = Measurement(s.start_s);
  j["arrivals"] = s.arrivals;
  j["accepted"] = s.accepted;
  j["cumulative_acceptance"] = RatioJson(s.cumulative_accepted, s.cumulative_arrivals);
  j["active_hw_rate"] = Measurement(s.active_hw_rate);
  j["resident_vms"] = s.resident_vms;
  return j;
}

OrderedJson ReportJson(const ReplayReport& r, bool with_samples) {
  OrderedJson j;
  j["policy"] = r.policy;
  j["gpu"] = r.gpu;
  j["hosts"] = r.hosts;
  j["gpus"] = r.gpus;
  j["requests"] = r.requests;
  j["accepted"] = r.accepted;
  j["acceptance"] = Measurement(r.acceptance);
  j["active_hw_auc"] = Measurement(r.active_hw_auc);
  j["mean_active_hw_rate"] = Measurement(r.mean_active_hw_rate);
  j["migrations"] = r.intra_migrations + r.inter_migrations;
  j["intra_migrations"] = r.intra_migrations;
  j["inter_migrations"] = r.inter_migrations;
  j["migration_share"] = Measurement(r.migration_share);
  j["peak_resident_vms"] = r.peak_resident_vms;
  j["duration_s"] = Measurement(r.duration_s);
  j["replay_ms"] = Measurement(r.replay_ms);
  j["per_profile"] = OrderedJson::array();
  for (const ProfileTally& t : r.per_profile) j["per_profile"].push_back(ProfileJson(r, t));
  if (with_samples) {
    j["samples"] = OrderedJson::array();
    for (size_t i = 0; i < r.samples.size(); ++i) {
      j["samples"].push_back(SampleJson(i, r.samples[i]));
    }
  }
  return j;
}

// ---- CSV ------------------------------------------------------------------

// Up to 6 decimals without trailing zeros ("0.5", "3600"); empty for a
// non-finite value, which CSV readers take as missing.
std::string CsvNumber(double v) {
  if (!std::isfinite(v)) return "";
  std::string s = fmt::format("{:.6f}", v);
  s.erase(s.find_last_not_of('0') + 1);
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

std::string CsvRatio(int num, int den) {
  std::optional<double> ratio = Ratio(num, den);
  return ratio ? CsvNumber(*ratio) : "";
}

// RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled.
std::string CsvField(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// ---- SVG ------------------------------------------------------------------

// Geometry, in pixels: two charts of equal size, one above the other.
constexpr int kWidth = 900;
constexpr int kMargin = 24;
constexpr int kPlotX = kMargin + 48;  // room for the y tick labels
constexpr int kPlotWidth = kWidth - kPlotX - kMargin;
constexpr int kPlotHeight = 200;
constexpr int kTitleHeight = 62;
constexpr int kLegendItemWidth = 140;
constexpr int kLegendRowHeight = 22;
constexpr int kCaptionHeight = 24;  // chart caption above the plot area
constexpr int kChartGap = 28;       // between the first plot and the second caption
constexpr int kXLabelsHeight = 44;  // hour labels and axis title below the second plot
constexpr int kYStepPercent = 20;
constexpr int kMaxXTicks = 12;

// Okabe-Ito (without black and yellow, too faint for a thin line), then Paul
// Tol's muted colours; past ten policies colours repeat and only the legend
// tells lines apart.
// One plot area: hours [0, hours] across, 0..100% up.
struct Plot {
  int top = 0;
  int hours = 1;  // at least 1, so that X() never divides by zero

  double X(double hour) const { return kPlotX + kPlotWidth * hour / hours; }
  double Y(double fraction) const { return top + kPlotHeight * (1 - fraction); }
};

// Hours between x ticks: 1, 2, 5, 10, 20, 50... so that at most kMaxXTicks
// intervals fit.
int XTickStep(int hours) {
  for (long long scale = 1;; scale *= 10) {
    for (long long step : {scale, 2 * scale, 5 * scale}) {
      if (hours <= step * kMaxXTicks) return static_cast<int>(step);
    }
  }
}

int LegendColumns() { return std::max(1, (kWidth - 2 * kMargin) / kLegendItemWidth); }

int LegendRows(size_t items) {
  const int columns = LegendColumns();
  return static_cast<int>((items + columns - 1) / columns);
}

size_t MaxSamples(std::span<const ReplayReport> reports) {
  size_t n = 0;
  for (const ReplayReport& r : reports) n = std::max(n, r.samples.size());
  return n;
}

void AppendOpen(int height, std::string& out) {
  fmt::format_to(Out(out),
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" "
                 "height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
                 "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n"
                 "<rect width=\"{0}\" height=\"{1}\" fill=\"#FFFFFF\"/>\n",
                 kWidth, height);
}

void AppendTitle(std::string_view title, std::string_view subtitle, std::string& out) {
  fmt::format_to(Out(out),
                 "<text x=\"{0}\" y=\"30\" font-size=\"17\" font-weight=\"bold\" "
                 "fill=\"#222222\">{1}</text>\n"
                 "<text x=\"{0}\" y=\"50\" font-size=\"12\" fill=\"#555555\">{2}</text>\n",
                 kMargin, XmlEscape(title), XmlEscape(subtitle));
}

std::string Subtitle(const ReplayReport& r) {
  return fmt::format("{} requests on {} hosts / {} GPUs ({}), {:.1f} h", r.requests, r.hosts,
                     r.gpus, r.gpu, r.duration_s / 3600);
}

void AppendLegend(std::span<const std::string> names, std::string& out) {
  out += "<g class=\"legend\" font-size=\"12\" fill=\"#333333\">\n";
  const int columns = LegendColumns();
  for (size_t i = 0; i < names.size(); ++i) {
    const int x = kMargin + static_cast<int>(i % columns) * kLegendItemWidth;
    const int y = kTitleHeight + static_cast<int>(i / columns) * kLegendRowHeight;
    fmt::format_to(Out(out),
                   "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" "
                   "stroke-width=\"3\"/><text x=\"{}\" y=\"{}\">{}</text>\n",
                   x, y + 7, x + 18, y + 7, PaletteColour(i), x + 24, y + 11, XmlEscape(names[i]));
  }
  out += "</g>\n";
}

// Caption, horizontal grid lines with percent labels, vertical grid lines,
// the frame; x labels only under the bottom chart (`x_labels`): the hour, or
// when `names` is not empty, names[x] at each x = 0, 1, ...
void AppendFrame(const Plot& p, std::string_view caption, bool x_labels, std::string& out,
                 std::span<const std::string> names = {}) {
  const int bottom = p.top + kPlotHeight;
  fmt::format_to(Out(out),
                 "<g class=\"chart\">\n<text x=\"{}\" y=\"{}\" font-size=\"13\" "
                 "font-weight=\"bold\" fill=\"#222222\">{}</text>\n"
                 "<g font-size=\"10\" fill=\"#666666\" stroke=\"#E2E2E2\">\n",
                 kPlotX, p.top - 8, XmlEscape(caption));
  for (int percent = 0; percent <= 100; percent += kYStepPercent) {
    const double y = p.Y(percent / 100.0);
    fmt::format_to(Out(out),
                   "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\"/>"
                   "<text x=\"{3}\" y=\"{4:.1f}\" stroke=\"none\" text-anchor=\"end\">{5}</text>\n",
                   kPlotX, y, kPlotX + kPlotWidth, kPlotX - 6, y + 3.5, percent);
  }
  const int step = names.empty() ? XTickStep(p.hours) : 1;
  for (int hour = 0; hour <= p.hours; hour += step) {
    const double x = p.X(hour);
    fmt::format_to(Out(out), "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>", x,
                   p.top, bottom + 4);
    if (x_labels) {
      const std::string label =
          names.empty() ? std::to_string(hour)
                        : (hour < static_cast<int>(names.size()) ? XmlEscape(names[hour]) : "");
      fmt::format_to(Out(out),
                     "<text x=\"{:.1f}\" y=\"{}\" stroke=\"none\" text-anchor=\"middle\">{}</text>",
                     x, bottom + 16, label);
    }
    out += '\n';
  }
  fmt::format_to(Out(out),
                 "</g>\n<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
                 "stroke=\"#888888\"/>\n</g>\n",
                 kPlotX, p.top, kPlotWidth, kPlotHeight);
}

struct Point {
  double hour = 0;
  double fraction = 0;
};

// Cumulative acceptance holds at the end of each hour; hours before the first
// arrival have none and are left out.
std::vector<Point> AcceptancePoints(const ReplayReport& r) {
  std::vector<Point> points;
  for (size_t i = 0; i < r.samples.size(); ++i) {
    const ReplaySample& s = r.samples[i];
    std::optional<double> a = Ratio(s.cumulative_accepted, s.cumulative_arrivals);
    if (a) points.push_back({static_cast<double>(i + 1), *a});
  }
  return points;
}

// The active hardware rate is a mean over the hour: drawn at its middle.
std::vector<Point> ActiveHwPoints(const ReplayReport& r) {
  std::vector<Point> points;
  for (size_t i = 0; i < r.samples.size(); ++i) {
    points.push_back({static_cast<double>(i) + 0.5, r.samples[i].active_hw_rate});
  }
  return points;
}

// One policy's line. Non-finite values are skipped and others clamped to the
// plot, so no coordinate is NaN; a lone point also gets a dot, since a
// one-point polyline draws nothing.
void AppendSeries(const Plot& p, const std::vector<Point>& points, std::string_view colour,
                  std::string_view policy, std::string& out) {
  std::string coordinates;
  for (const Point& pt : points) {
    if (!std::isfinite(pt.fraction)) continue;
    if (!coordinates.empty()) coordinates += ' ';
    fmt::format_to(Out(coordinates), "{:.1f},{:.1f}", p.X(pt.hour),
                   p.Y(std::clamp(pt.fraction, 0.0, 1.0)));
  }
  fmt::format_to(Out(out),
                 "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" "
                 "stroke-linejoin=\"round\" points=\"{}\"><title>{}</title></polyline>\n",
                 colour, coordinates, XmlEscape(policy));
  if (!coordinates.empty() && coordinates.find(' ') == std::string::npos) {
    const size_t comma = coordinates.find(',');
    fmt::format_to(Out(out), "<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{}\"/>\n",
                   coordinates.substr(0, comma), coordinates.substr(comma + 1), colour);
  }
}

// ---- Offline optimum ------------------------------------------------------

// The optimum as one more column of the per-profile table.
ReplayReport OptimumAsReport(const ReplayOptimum& o, const ReplayReport& like) {
  ReplayReport r;
  r.policy = "optimum";
  r.gpu = like.gpu;
  r.requests = o.requests;
  r.accepted = o.accepted;
  r.per_profile = o.per_profile;
  r.active_hw_auc = o.active_hw_auc;
  r.intra_migrations = o.intra_migrations;
  r.inter_migrations = o.inter_migrations;
  return r;
}

std::string Proven(bool proven) { return proven ? "proven" : "not proven (time limit)"; }

void AppendOptimum(const ReplayOptimum& o, std::span<const ReplayReport> reports,
                   std::string& out) {
  fmt::format_to(Out(out),
                 "\nOffline optimum (GRMU's ILP, Eq. 3-5 in order; {} columns, {} rows, {} ms)\n",
                 o.columns, o.rows, Fixed(o.solve_ms, 1));
  fmt::format_to(Out(out), "  accepted {} of {} ({}%), {}; at most {}\n", o.accepted, o.requests,
                 FloorPercent(o.accepted, o.requests), Proven(o.acceptance_proven),
                 o.accepted_bound);
  fmt::format_to(
      Out(out), "  active hardware {} %h, {}\n", Grouped(o.active_hw_auc),
      o.acceptance_proven ? Proven(o.active_hw_proven) : "of the plan found, not minimised");
  fmt::format_to(
      Out(out), "  migrations {} intra, {} inter, {}\n", o.intra_migrations, o.inter_migrations,
      o.active_hw_proven ? Proven(o.migrations_proven) : "of the plan found, not minimised");
  out += "\nDistance to the optimum\n";
  fmt::format_to(Out(out), "  {:<12}  {:>14}  {:>16}\n", "policy", "accepted fewer",
                 "HW AUC more %h");
  for (const ReplayReport& r : reports) {
    fmt::format_to(Out(out), "  {:<12}  {:>14}  {:>16}\n", Fit(r.policy, 12),
                   o.accepted - r.accepted, Grouped(r.active_hw_auc - o.active_hw_auc));
  }
}

OrderedJson OptimumJson(const ReplayOptimum& o, const ReplayReport& like) {
  OrderedJson j;
  j["policy"] = "optimum";
  j["requests"] = o.requests;
  j["accepted"] = o.accepted;
  j["acceptance"] = RatioJson(o.accepted, o.requests);
  j["active_hw_auc"] = Measurement(o.active_hw_auc);
  j["migrations"] = o.intra_migrations + o.inter_migrations;
  j["intra_migrations"] = o.intra_migrations;
  j["inter_migrations"] = o.inter_migrations;
  j["acceptance_proven"] = o.acceptance_proven;
  j["active_hw_proven"] = o.active_hw_proven;
  j["migrations_proven"] = o.migrations_proven;
  j["accepted_bound"] = o.accepted_bound;
  j["columns"] = o.columns;
  j["rows"] = o.rows;
  j["solve_ms"] = Measurement(o.solve_ms);
  OrderedJson profiles = OrderedJson::array();
  ReplayReport as_report = OptimumAsReport(o, like);
  for (const ProfileTally& t : o.per_profile) profiles.push_back(ProfileJson(as_report, t));
  j["per_profile"] = std::move(profiles);
  return j;
}

// ---- Sweep ----------------------------------------------------------------

// Policies in first-seen order over the sweep's points.
std::vector<std::string> SweepPolicies(const ReplaySweep& sweep) {
  std::vector<std::string> names;
  for (const SweepPoint& p : sweep.points) {
    for (const ReplayReport& r : p.reports) {
      if (std::find(names.begin(), names.end(), r.policy) == names.end()) names.push_back(r.policy);
    }
  }
  return names;
}

const ReplayReport* FindPolicy(const SweepPoint& p, const std::string& policy) {
  for (const ReplayReport& r : p.reports) {
    if (r.policy == policy) return &r;
  }
  return nullptr;
}

}  // namespace

std::string FormatReplayTable(std::span<const ReplayReport> reports, const ReplayOptimum* optimum) {
  if (reports.empty()) return "Replay: no reports\n";
  std::string out;
  AppendHeader(reports.front(), out);
  AppendPolicies(reports, out);
  if (optimum == nullptr) {
    AppendProfiles(reports, out);
    return out;
  }
  std::vector<ReplayReport> with_optimum(reports.begin(), reports.end());
  with_optimum.push_back(OptimumAsReport(*optimum, reports.front()));
  AppendProfiles(with_optimum, out);
  AppendOptimum(*optimum, reports, out);
  return out;
}

std::string FormatReplayJson(std::span<const ReplayReport> reports, bool with_samples,
                             const ReplayOptimum* optimum) {
  OrderedJson j = OrderedJson::array();
  for (const ReplayReport& r : reports) {
    OrderedJson row = ReportJson(r, with_samples);
    if (optimum != nullptr) {
      row["accepted_gap"] = optimum->accepted - r.accepted;
      row["active_hw_auc_gap"] = Measurement(r.active_hw_auc - optimum->active_hw_auc);
    }
    j.push_back(std::move(row));
  }
  if (optimum != nullptr && !reports.empty()) j.push_back(OptimumJson(*optimum, reports.front()));
  // "replace": a policy name with invalid UTF-8 must not make dump() throw.
  return j.dump(2, ' ', false, OrderedJson::error_handler_t::replace) + "\n";
}

std::string FormatReplayCsv(std::span<const ReplayReport> reports) {
  std::string out =
      "policy,hour,start_s,arrivals,accepted,acceptance,cumulative_acceptance,active_hw_rate,"
      "resident_vms\n";
  for (const ReplayReport& r : reports) {
    const std::string policy = CsvField(r.policy);
    for (size_t i = 0; i < r.samples.size(); ++i) {
      const ReplaySample& s = r.samples[i];
      fmt::format_to(Out(out), "{},{},{},{},{},{},{},{},{}\n", policy, i, CsvNumber(s.start_s),
                     s.arrivals, s.accepted, CsvRatio(s.accepted, s.arrivals),
                     CsvRatio(s.cumulative_accepted, s.cumulative_arrivals),
                     CsvNumber(s.active_hw_rate), s.resident_vms);
    }
  }
  return out;
}

std::string FormatReplaySvg(std::span<const ReplayReport> reports) {
  const int legend_height = LegendRows(reports.size()) * kLegendRowHeight;
  const int hours = std::max<int>(1, static_cast<int>(MaxSamples(reports)));
  const Plot acceptance{kTitleHeight + legend_height + kCaptionHeight, hours};
  const Plot active_hw{acceptance.top + kPlotHeight + kChartGap + kCaptionHeight, hours};
  const int height = active_hw.top + kPlotHeight + kXLabelsHeight + kMargin / 2;

  std::string out;
  AppendOpen(height, out);
  AppendTitle("Online replay", reports.empty() ? "no reports" : Subtitle(reports.front()), out);
  std::vector<std::string> names;
  for (const ReplayReport& r : reports) names.push_back(r.policy);
  AppendLegend(names, out);
  AppendFrame(acceptance, "Acceptance (cumulative, %)", false, out);
  AppendFrame(active_hw, "Active hardware rate (%)", true, out);
  fmt::format_to(Out(out),
                 "<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#666666\" "
                 "text-anchor=\"middle\">hours since the first arrival</text>\n",
                 kPlotX + kPlotWidth / 2, active_hw.top + kPlotHeight + 34);
  out += "<g class=\"series\" id=\"acceptance\">\n";
  for (size_t i = 0; i < reports.size(); ++i) {
    AppendSeries(acceptance, AcceptancePoints(reports[i]), PaletteColour(i), reports[i].policy,
                 out);
  }
  out += "</g>\n<g class=\"series\" id=\"active-hw\">\n";
  for (size_t i = 0; i < reports.size(); ++i) {
    AppendSeries(active_hw, ActiveHwPoints(reports[i]), PaletteColour(i), reports[i].policy, out);
  }
  out += "</g>\n";
  out += "</svg>\n";
  return out;
}

std::string FormatSweepCsv(const ReplaySweep& sweep) {
  std::string out =
      "knob,value,policy,hosts,gpus,requests,accepted,acceptance,active_hw_auc,"
      "mean_active_hw_rate,intra_migrations,inter_migrations,migration_share,optimum_accepted\n";
  const std::string knob = CsvField(sweep.knob);
  for (const SweepPoint& p : sweep.points) {
    const std::string value = CsvField(p.value);
    const std::string optimum = p.optimum ? std::to_string(p.optimum->accepted) : "";
    for (const ReplayReport& r : p.reports) {
      fmt::format_to(Out(out), "{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", knob, value,
                     CsvField(r.policy), r.hosts, r.gpus, r.requests, r.accepted,
                     CsvRatio(r.accepted, r.requests), CsvNumber(r.active_hw_auc),
                     CsvNumber(r.mean_active_hw_rate), r.intra_migrations, r.inter_migrations,
                     CsvNumber(r.migration_share), optimum);
    }
    if (p.optimum && !p.reports.empty()) {
      const ReplayOptimum& o = *p.optimum;
      const ReplayReport& like = p.reports.front();
      fmt::format_to(Out(out), "{},{},optimum,{},{},{},{},{},{},,{},{},{},{}\n", knob, value,
                     like.hosts, like.gpus, o.requests, o.accepted,
                     CsvRatio(o.accepted, o.requests), CsvNumber(o.active_hw_auc),
                     o.intra_migrations, o.inter_migrations,
                     CsvRatio(o.intra_migrations + o.inter_migrations, o.accepted), o.accepted);
    }
  }
  return out;
}

std::string FormatSweepSvg(const ReplaySweep& sweep) {
  std::vector<std::string> names = SweepPolicies(sweep);
  const size_t policies = names.size();
  bool any_optimum = false;
  for (const SweepPoint& p : sweep.points) any_optimum |= p.optimum.has_value();
  if (any_optimum) names.push_back("optimum (ILP)");
  std::vector<std::string> values;
  for (const SweepPoint& p : sweep.points) values.push_back(p.value);
  const int last = std::max(1, static_cast<int>(values.size()) - 1);
  const int legend_height = LegendRows(names.size()) * kLegendRowHeight;
  const Plot acceptance{kTitleHeight + legend_height + kCaptionHeight, last};
  const Plot active_hw{acceptance.top + kPlotHeight + kChartGap + kCaptionHeight, last};
  const int height = active_hw.top + kPlotHeight + kXLabelsHeight + kMargin / 2;

  std::string out;
  AppendOpen(height, out);
  AppendTitle("Stress sweep: " + sweep.knob,
              fmt::format("{} values x {} policies", values.size(), policies), out);
  AppendLegend(names, out);
  AppendFrame(acceptance, "Overall acceptance (%)", false, out, values);
  AppendFrame(active_hw, "Mean active hardware rate (%)", true, out, values);
  fmt::format_to(Out(out),
                 "<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#666666\" "
                 "text-anchor=\"middle\">{}</text>\n",
                 kPlotX + kPlotWidth / 2, active_hw.top + kPlotHeight + 34, XmlEscape(sweep.knob));
  out += "<g class=\"series\" id=\"acceptance\">\n";
  for (size_t i = 0; i < policies; ++i) {
    std::vector<Point> points;
    for (size_t v = 0; v < sweep.points.size(); ++v) {
      if (const ReplayReport* r = FindPolicy(sweep.points[v], names[i])) {
        points.push_back({static_cast<double>(v), r->acceptance});
      }
    }
    AppendSeries(acceptance, points, PaletteColour(i), names[i], out);
  }
  if (any_optimum) {
    std::vector<Point> points;
    for (size_t v = 0; v < sweep.points.size(); ++v) {
      if (sweep.points[v].optimum) {
        points.push_back({static_cast<double>(v), sweep.points[v].optimum->acceptance});
      }
    }
    AppendSeries(acceptance, points, PaletteColour(policies), names.back(), out);
  }
  out += "</g>\n<g class=\"series\" id=\"active-hw\">\n";
  for (size_t i = 0; i < policies; ++i) {
    std::vector<Point> points;
    for (size_t v = 0; v < sweep.points.size(); ++v) {
      if (const ReplayReport* r = FindPolicy(sweep.points[v], names[i])) {
        points.push_back({static_cast<double>(v), r->mean_active_hw_rate});
      }
    }
    AppendSeries(active_hw, points, PaletteColour(i), names[i], out);
  }
  out += "</g>\n</svg>\n";
  return out;
}

}  // namespace tessera
