// The day's SVG timeline (FormatAutoscaleSvg): GPUs over the day for the
// three strategies, then each service's rate against the autoscaled
// capacity (the sums when there are more than kServicePanels services);
// the autoscaler's moves are shaded bands with a title each.
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "tessera/autoscale_request.h"
#include "util/svg_text.h"

namespace tessera {
namespace {

constexpr int kServicePanels = 12;
constexpr double kLeft = 70;
constexpr double kWidth = 860;
constexpr double kPanelHeight = 150;
constexpr double kGap = 50;

auto Out(std::string& s) { return std::back_inserter(s); }

struct Panel {
  double top = 0;
  int minutes = 1;
  double max = 1;
  double X(double minute) const { return kLeft + kWidth * minute / std::max(minutes, 1); }
  double Y(double v) const { return top + kPanelHeight * (1 - std::clamp(v / max, 0.0, 1.0)); }
};

void Frame(const Panel& p, std::string_view title, std::string_view unit, const AutoscaleReport& r,
           std::string& out) {
  fmt::format_to(Out(out), "<text x=\"{}\" y=\"{}\" font-weight=\"bold\">{}</text>\n", kLeft,
                 p.top - 8, XmlEscape(title));
  for (const AutoscaleMove& m : r.autoscale.moves) {
    const double x = p.X(m.minute);
    const double w = std::max(1.0, p.X(m.minute + m.seconds / 60) - x);
    fmt::format_to(Out(out),
                   "<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"#dddddd\">"
                   "<title>move {}: {} to {} GPUs, {:.0f} s</title></rect>\n",
                   x, p.top, w, kPanelHeight, m.up ? "up" : "down", m.from_gpus, m.to_gpus,
                   m.seconds);
  }
  for (int k = 0; k <= 4; ++k) {
    const double v = p.max * k / 4;
    fmt::format_to(
        Out(out),
        "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" font-size=\"10\">{:.4g}</text>\n",
        kLeft - 4, p.Y(v) + 3, v);
  }
  for (int hour = 0; hour * 60 <= p.minutes; hour += std::max(1, p.minutes / 60 / 12)) {
    fmt::format_to(
        Out(out),
        "<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\" font-size=\"10\">{}h</text>\n",
        p.X(hour * 60), p.top + kPanelHeight + 12, hour);
  }
  fmt::format_to(
      Out(out),
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#888888\"/>\n"
      "<text x=\"{}\" y=\"{}\" font-size=\"10\" transform=\"rotate(-90 {} {})\" "
      "text-anchor=\"middle\">{}</text>\n",
      kLeft, p.top, kWidth, kPanelHeight, kLeft - 45, p.top + kPanelHeight / 2, kLeft - 45,
      p.top + kPanelHeight / 2, XmlEscape(unit));
}

void Line(const Panel& p, const std::vector<double>& values, std::string_view colour,
          std::string_view name, bool steps, std::string& out) {
  std::string points;
  for (size_t m = 0; m < values.size(); ++m) {
    if (steps) {
      // A step only where the value changes, and the line's end.
      if (m == 0 || values[m] != values[m - 1]) {
        if (m > 0) fmt::format_to(Out(points), "{:.1f},{:.1f} ", p.X(m), p.Y(values[m - 1]));
        fmt::format_to(Out(points), "{:.1f},{:.1f} ", p.X(m), p.Y(values[m]));
      }
      if (m + 1 == values.size()) {
        fmt::format_to(Out(points), "{:.1f},{:.1f} ", p.X(m + 1), p.Y(values[m]));
      }
    } else {
      fmt::format_to(Out(points), "{:.1f},{:.1f} ", p.X(m + 0.5), p.Y(values[m]));
    }
  }
  fmt::format_to(Out(out),
                 "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" points=\"{}\">"
                 "<title>{}</title></polyline>\n",
                 colour, points, XmlEscape(name));
}

void Legend(double x, double y, const std::vector<std::pair<std::string, std::string_view>>& items,
            std::string& out) {
  for (const auto& [name, colour] : items) {
    fmt::format_to(Out(out),
                   "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"12\" height=\"3\" fill=\"{}\"/>"
                   "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\">{}</text>\n",
                   x, y - 4, colour, x + 16, y, XmlEscape(name));
    x += 24 + 7 * name.size();
  }
}

std::vector<double> Sum(const std::vector<std::vector<double>>& series) {
  std::vector<double> out(series.empty() ? 0 : series[0].size(), 0);
  for (const auto& s : series) {
    for (size_t m = 0; m < s.size(); ++m) out[m] += s[m];
  }
  return out;
}

double MaxOf(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (double v : a) m = std::max(m, v);
  for (double v : b) m = std::max(m, v);
  return m > 0 ? m * 1.1 : 1;
}

}  // namespace

std::string FormatAutoscaleSvg(const AutoscaleReport& r) {
  const bool each = static_cast<int>(r.services.size()) <= kServicePanels;
  const int panels = 1 + (each ? static_cast<int>(r.services.size()) : 1);
  const double height = 40 + panels * (kPanelHeight + kGap) + 20;
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{:.0f}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{}\" y=\"22\" font-size=\"14\" font-weight=\"bold\">{}: autoscale {:.1f} "
      "GPU-hours, "
      "static peak {:.1f}, oracle {:.1f}; {} moves (grey)</text>\n",
      kLeft + kWidth + 30, height, kLeft, XmlEscape(r.scenario), r.autoscale.gpu_hours,
      r.static_peak.gpu_hours, r.oracle.gpu_hours, r.autoscale.moves.size());
  Panel gpus{40 + kGap, r.minutes, 1};
  gpus.max = std::max({1.0, static_cast<double>(r.static_peak.peak_gpus),
                       static_cast<double>(r.autoscale.peak_gpus),
                       static_cast<double>(r.oracle.peak_gpus)}) *
             1.1;
  Frame(gpus, "GPUs holding an instance", "GPUs", r, out);
  Line(gpus, r.static_peak.gpus, PaletteColour(2), "static-peak", true, out);
  Line(gpus, r.oracle.gpus, PaletteColour(1), "oracle", true, out);
  Line(gpus, r.autoscale.gpus, PaletteColour(0), "autoscale", true, out);
  Legend(kLeft + 300, gpus.top - 8,
         {{"autoscale", PaletteColour(0)},
          {"oracle", PaletteColour(1)},
          {"static-peak", PaletteColour(2)}},
         out);
  const auto service_panel = [&](int index, const std::string& title,
                                 const std::vector<double>& rate,
                                 const std::vector<double>& capacity) {
    Panel p{40 + kGap + index * (kPanelHeight + kGap), r.minutes, MaxOf(rate, capacity)};
    Frame(p, title, "req/s", r, out);
    Line(p, capacity, PaletteColour(0), "autoscaled capacity", true, out);
    Line(p, rate, "#000000", "rate", false, out);
    Legend(kLeft + 300, p.top - 8,
           {{"rate", "#000000"}, {"autoscaled SLO-safe capacity", PaletteColour(0)}}, out);
  };
  if (each) {
    for (size_t s = 0; s < r.services.size(); ++s) {
      service_panel(static_cast<int>(s) + 1, r.services[s], r.rps[s], r.autoscale.capacity[s]);
    }
  } else {
    service_panel(1, fmt::format("all {} services, summed", r.services.size()), Sum(r.rps),
                  Sum(r.autoscale.capacity));
  }
  out += "</svg>\n";
  return out;
}

}  // namespace tessera
