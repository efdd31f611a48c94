// FormatTransitionSvg (transition_svg.h): a title, a grid of small capacity
// charts (one per service), then the GPU rows of A and of B, the latter by
// the drawing code of the deployment SVG (emit/gpu_rows_svg.h).
#include "tessera/emit/transition_svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "emit/gpu_rows_svg.h"
#include "util/svg_text.h"

namespace tessera {
namespace {

using Out = std::back_insert_iterator<std::string>;

// Geometry, in pixels.
constexpr int kTitleHeight = 80;
constexpr int kColumns = 3;
constexpr int kPanelGap = 16;
constexpr int kPanelWidth =
    (svg::kWidth - 2 * svg::kMargin - (kColumns - 1) * kPanelGap) / kColumns;
constexpr int kPanelHeight = 150;
constexpr int kPlotLeft = 48;  // room for the y labels
constexpr int kPlotRight = 10;
constexpr int kPlotTop = 28;     // room for the panel's title
constexpr int kPlotBottom = 22;  // room for the x labels
constexpr int kPlotWidth = kPanelWidth - kPlotLeft - kPlotRight;
constexpr int kPlotHeight = kPanelHeight - kPlotTop - kPlotBottom;
constexpr int kSectionHeight = 34;
// Phase numbers under the x axis only while they fit.
constexpr size_t kMostPhaseLabels = 12;

// One service's capacity in every state, and its floor.
struct Curve {
  std::string name;
  double floor = 0;
  std::vector<double> capacity;  // start, then per phase: worst, end
};

double Rate(const Deployment& d, const std::string& name) {
  for (const ServiceOutcome& s : d.services) {
    if (s.name == name) return s.rate_rps;
  }
  return 0;
}

bool Has(const Deployment& d, const std::string& name) {
  return std::any_of(d.services.begin(), d.services.end(),
                     [&](const ServiceOutcome& s) { return s.name == name; });
}

// The steps replayed on A: a live instance by (cluster GPU, start), its
// service and throughput.
std::vector<Curve> Curves(const Deployment& from, const Deployment& to, const Transition& t) {
  std::vector<Curve> curves;
  for (const Deployment* d : {&from, &to}) {
    for (const ServiceOutcome& s : d->services) {
      if (d == &to && Has(from, s.name)) continue;
      const bool both = Has(from, s.name) && Has(to, s.name);
      curves.push_back({s.name, both ? std::min(Rate(from, s.name), Rate(to, s.name)) : 0, {}});
    }
  }
  const TransitionCapacity shares(from, to);
  std::map<std::pair<int, int>, std::pair<std::string, double>> up;
  for (const GpuAssignment& g : from.gpus) {
    for (const Instance& i : g.instances()) up[{g.index, i.start}] = {i.service, shares.Of(i)};
  }
  auto record = [&] {
    std::map<std::string, double> total;
    for (const auto& [where, instance] : up) total[instance.first] += instance.second;
    for (Curve& c : curves) c.capacity.push_back(total[c.name]);
  };
  record();
  for (const TransitionPhase& phase : t.phases) {
    for (const TransitionStep& s : phase.steps) {
      if (s.action != StepAction::kCreate) up.erase({s.gpu, s.start});
    }
    record();
    for (const TransitionStep& s : phase.steps) {
      if (s.action != StepAction::kDestroy) up[{s.gpu, s.start}] = {s.service, shares.Of(s)};
    }
    record();
  }
  return curves;
}

// The lowest capacity / floor over the states and services with a floor.
double MinRatio(const std::vector<Curve>& curves) {
  double lowest = 1;
  for (const Curve& c : curves) {
    if (c.floor <= 0) continue;
    for (double v : c.capacity) lowest = std::min(lowest, v / c.floor);
  }
  return lowest;
}

void AppendTitle(const Transition& t, const GpuModel& gpu, const std::vector<Curve>& curves,
                 std::string& out) {
  size_t steps = 0;
  for (const TransitionPhase& p : t.phases) steps += p.steps.size();
  const std::string title =
      fmt::format("Transition on {}: {} steps in {} phases",
                  gpu.display_name.empty() ? gpu.name : gpu.display_name, steps, t.phases.size());
  fmt::format_to(
      Out(out),
      "<text x=\"{0}\" y=\"30\" font-size=\"17\" font-weight=\"bold\" "
      "fill=\"#222222\">{1}</text>\n"
      "<g font-size=\"12\" fill=\"#555555\">\n"
      "<text x=\"{0}\" y=\"50\">Capacity (req/s) per service: at the start (A), then per phase "
      "its worst state (destroys done, creates not yet) and its end.</text>\n"
      "<text x=\"{0}\" y=\"66\">Dashed: the floor min(rate in A, rate in B); red dots: states "
      "below it. Lowest capacity / floor: {2:.2f}</text>\n</g>\n",
      svg::kMargin, XmlEscape(svg::Shorten(title, svg::CharsThatFit(svg::kWidth, 17))),
      MinRatio(curves));
}

// One service's chart, its top-left corner at (x, y).
void AppendPanel(const Curve& c, std::string_view colour, int x, int y, std::string& out) {
  const double top = std::max(
      1.0, 1.1 * std::max(c.floor, *std::max_element(c.capacity.begin(), c.capacity.end())));
  const size_t n = c.capacity.size();
  auto px = [&](size_t i) { return kPlotLeft + (n > 1 ? kPlotWidth * i / (n - 1.0) : 0.0); };
  auto py = [&](double v) { return kPlotTop + kPlotHeight * (1 - v / top); };
  fmt::format_to(Out(out),
                 "<g class=\"service\" transform=\"translate({},{})\">"
                 "<title>{}: floor {:g} req/s</title>\n"
                 "<rect width=\"{}\" height=\"{}\" rx=\"4\" fill=\"#FAFAFA\" stroke=\"#DDDDDD\"/>\n"
                 "<rect x=\"8\" y=\"8\" width=\"12\" height=\"12\" rx=\"2\" fill=\"{}\"/>"
                 "<text x=\"26\" y=\"19\" font-size=\"12\" font-weight=\"bold\" "
                 "fill=\"#222222\">{}</text>\n",
                 x, y, XmlEscape(c.name), c.floor, kPanelWidth, kPanelHeight, colour,
                 XmlEscape(svg::Shorten(c.name, svg::CharsThatFit(kPanelWidth - 34, 12))));
  // Axes: 0 and the top value; a faint line at each phase's start.
  fmt::format_to(
      Out(out),
      "<g font-size=\"10\" fill=\"#888888\" text-anchor=\"end\">"
      "<text x=\"{0}\" y=\"{1:.1f}\">0</text><text x=\"{0}\" y=\"{2:.1f}\">{3:.0f}</text>"
      "</g>\n<line x1=\"{4}\" y1=\"{5:.1f}\" x2=\"{6}\" y2=\"{5:.1f}\" "
      "stroke=\"#BBBBBB\"/>\n",
      kPlotLeft - 4, py(0) + 3, py(top) + 8, top, kPlotLeft, py(0), kPlotLeft + kPlotWidth);
  const size_t phases = (n - 1) / 2;
  for (size_t k = 0; k < phases; ++k) {
    fmt::format_to(Out(out),
                   "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" "
                   "stroke=\"#E4E4E4\"/>\n",
                   px(2 * k + 1), kPlotTop, py(0));
    if (phases <= kMostPhaseLabels) {
      fmt::format_to(Out(out),
                     "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" fill=\"#888888\" "
                     "text-anchor=\"middle\">{}</text>\n",
                     (px(2 * k + 1) + px(2 * k + 2)) / 2, py(0) + 14, k + 1);
    }
  }
  if (c.floor > 0) {
    fmt::format_to(Out(out),
                   "<line class=\"floor\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" "
                   "stroke=\"#333333\" stroke-dasharray=\"5 3\"/>\n",
                   kPlotLeft, py(c.floor), kPlotLeft + kPlotWidth, py(c.floor));
  }
  out += "<polyline class=\"capacity\" points=\"";
  for (size_t i = 0; i < n; ++i) {
    fmt::format_to(Out(out), "{}{:.1f},{:.1f}", i == 0 ? "" : " ", px(i), py(c.capacity[i]));
  }
  fmt::format_to(Out(out), "\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n", colour);
  for (size_t i = 0; i < n; ++i) {
    if (c.capacity[i] >= c.floor) continue;
    fmt::format_to(Out(out),
                   "<circle class=\"dip\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"#D00000\"/>\n",
                   px(i), py(c.capacity[i]));
  }
  out += "</g>\n";
}

void AppendSection(std::string_view heading, int y, std::string& out) {
  fmt::format_to(Out(out),
                 "<text x=\"{}\" y=\"{}\" font-size=\"15\" font-weight=\"bold\" "
                 "fill=\"#222222\">{}</text>\n",
                 svg::kMargin, y + 22, XmlEscape(heading));
}

}  // namespace

std::string FormatTransitionSvg(const Deployment& from, const Deployment& to,
                                const Transition& transition, const GpuModel& gpu) {
  const std::vector<Curve> curves = Curves(from, to, transition);
  const Deployment after = PlacedOnCluster(to, transition);
  std::map<std::string, int> colours;
  svg::AddColourIndices(from, colours);
  svg::AddColourIndices(to, colours);
  const int panel_rows = static_cast<int>((curves.size() + kColumns - 1) / kColumns);
  const int charts_height = panel_rows * (kPanelHeight + kPanelGap);
  const int before_y = kTitleHeight + charts_height;
  const int after_y = before_y + kSectionHeight + svg::GpuRowsHeight(from);
  std::string out;
  svg::AppendOpen(after_y + kSectionHeight + svg::GpuRowsHeight(after) + svg::kMargin, out);
  AppendTitle(transition, gpu, curves, out);
  out += "<g class=\"capacity-charts\" font-family=\"inherit\">\n";
  for (size_t i = 0; i < curves.size(); ++i) {
    const int x = svg::kMargin + static_cast<int>(i % kColumns) * (kPanelWidth + kPanelGap);
    const int y = kTitleHeight + static_cast<int>(i / kColumns) * (kPanelHeight + kPanelGap);
    AppendPanel(curves[i], PaletteColour(colours.at(curves[i].name)), x, y, out);
  }
  out += "</g>\n";
  AppendSection("Before (A)", before_y, out);
  svg::AppendGpuRows(from, gpu, colours, "before-", before_y + kSectionHeight - 16, out);
  AppendSection("After (B on the cluster's GPUs)", after_y, out);
  svg::AppendGpuRows(after, gpu, colours, "after-", after_y + kSectionHeight - 16, out);
  out += "</svg>\n";
  return out;
}

}  // namespace tessera
