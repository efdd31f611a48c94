// The SVG drawing of a Deployment: a title, a legend, then one row per GPU
// whose memory slices are equal-width cells; every instance is a rounded
// rectangle over its memory slices, coloured by service. Standalone SVG 1.1,
// no external resources, no timestamps: equal deployments give equal bytes.

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "emit/gpu_rows_svg.h"
#include "fmt/format.h"
#include "tessera/deployment_format.h"
#include "tessera/plan/metrics.h"
#include "util/svg_text.h"

namespace tessera {
namespace svg {
namespace {

using Out = std::back_insert_iterator<std::string>;

// Geometry, in pixels (kMargin, kLabelWidth, kTrackWidth and kWidth in
// gpu_rows_svg.h). The slice track has a fixed width whatever the GPU model,
// so an A30 (4 slices) and an A100 (8) give pictures of the same size.
constexpr int kTrackX = kMargin + kLabelWidth;
constexpr int kTitleHeight = 62;
constexpr int kLegendItemWidth = 256;
constexpr int kLegendRowHeight = 22;
constexpr int kAxisHeight = 22;
constexpr int kRowHeight = 64;
constexpr int kRowGap = 10;
constexpr int kInset = 2;  // gap between neighbouring instances
// Plans taller than this many rows repeat the slice numbers below the last
// row, so the numbers are on screen wherever one scrolls to an end.
constexpr int kRowsForBottomAxis = 8;

// Code points in UTF-8 `s` (continuation bytes do not count).
size_t Length(std::string_view s) {
  return static_cast<size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

}  // namespace

// "" when not even one character and the ellipsis fit. Cuts only between
// code points so the result stays valid UTF-8.
std::string Shorten(std::string_view s, size_t max) {
  if (Length(s) <= max) return std::string(s);
  if (max < 2) return "";
  size_t kept = 0, end = 0;
  for (; end < s.size(); ++end) {
    bool starts_char = (static_cast<unsigned char>(s[end]) & 0xC0) != 0x80;
    if (starts_char && kept++ == max - 1) break;
  }
  return std::string(s.substr(0, end)) + "\xE2\x80\xA6";  // U+2026
}

// How many characters of a `font_px` font fit in `width_px`: a sans-serif
// character is about 0.6 em wide on average; the nested <svg> around labels
// clips whatever this estimate lets through.
size_t CharsThatFit(int width_px, double font_px) {
  return width_px <= 0 ? 0 : static_cast<size_t>(width_px / (0.6 * font_px));
}

namespace {

// Black or white, whichever contrasts more with `fill` ("#RRGGBB"), by the
// WCAG relative luminance threshold.
std::string_view TextColour(std::string_view fill) {
  auto hex = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
  auto channel = [&](int i) {
    double c = (16 * hex(fill[1 + 2 * i]) + hex(fill[2 + 2 * i])) / 255.0;
    return c <= 0.03928 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
  };
  double l = 0.2126 * channel(0) + 0.7152 * channel(1) + 0.0722 * channel(2);
  return l > 0.179 ? "#000000" : "#FFFFFF";
}

std::string_view Colour(const std::map<std::string, int>& colours, const std::string& service) {
  auto it = colours.find(service);
  return PaletteColour(it == colours.end() ? 0 : it->second);
}

// Services the legend lists: the declared ones, then undeclared ones seen on GPUs.
std::vector<std::string> LegendServices(const std::map<std::string, int>& colours) {
  std::vector<std::string> names(colours.size());
  for (const auto& [name, i] : colours) names[i] = name;
  return names;
}

int LegendColumns() { return std::max(1, (kWidth - 2 * kMargin) / kLegendItemWidth); }

int LegendRows(size_t items) {
  int columns = LegendColumns();
  return static_cast<int>((items + columns - 1) / columns);
}

}  // namespace

void AppendOpen(int height, std::string& out) {
  fmt::format_to(Out(out),
                 "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" "
                 "height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
                 "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n",
                 kWidth, height);
  out +=
      "<defs>\n"
      "<pattern id=\"free\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
      "patternTransform=\"rotate(45)\">"
      "<rect width=\"6\" height=\"6\" fill=\"#F4F4F4\"/>"
      "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#DADADA\" stroke-width=\"2\"/>"
      "</pattern>\n"
      "</defs>\n";
  fmt::format_to(Out(out), "<rect width=\"{}\" height=\"{}\" fill=\"#FFFFFF\"/>\n", kWidth, height);
}

void AddColourIndices(const Deployment& d, std::map<std::string, int>& colours) {
  int next = static_cast<int>(colours.size());
  for (const ServiceOutcome& s : d.services) {
    if (colours.emplace(s.name, next).second) ++next;
  }
  for (const GpuAssignment& g : d.gpus) {
    for (const Instance& i : g.instances()) {
      if (colours.emplace(i.service, next).second) ++next;
    }
    for (const MpsProcess& p : g.processes()) {
      if (colours.emplace(p.service, next).second) ++next;
    }
  }
}

namespace {

void AppendTitle(const Deployment& d, const GpuModel& gpu, std::string& out) {
  int infeasible =
      static_cast<int>(std::count_if(d.services.begin(), d.services.end(), [](const auto& s) {
        return s.status == ServiceStatus::kInfeasible;
      }));
  const Metrics& m = d.metrics;
  std::string title =
      fmt::format("{} on {}", d.planner, gpu.display_name.empty() ? d.gpu : gpu.display_name);
  std::string bound = m.lower_bound_kind.empty()
                          ? fmt::format("lower bound {}", m.lower_bound)
                          : fmt::format("{} bound {}", m.lower_bound_kind, m.lower_bound);
  const std::string used = d.sharing == Sharing::kMps
                               ? fmt::format("{:g}% of one GPU's SMs (MPS)", m.resource_pct)
                               : fmt::format("{} GPCs", m.gpcs);
  std::string subtitle = fmt::format(
      "{} GPUs \xC2\xB7 {} \xC2\xB7 gap {:.1f}% ({}) \xC2\xB7 {} services ({} infeasible)", m.gpus,
      used, 100.0 * m.gap, bound, d.services.size(), infeasible);
  fmt::format_to(Out(out),
                 "<text x=\"{0}\" y=\"30\" font-size=\"17\" font-weight=\"bold\" "
                 "fill=\"#222222\">{1}</text>\n"
                 "<text x=\"{0}\" y=\"50\" font-size=\"12\" fill=\"#555555\">{2}</text>\n",
                 kMargin, XmlEscape(Shorten(title, CharsThatFit(kWidth - 2 * kMargin, 17))),
                 XmlEscape(Shorten(subtitle, CharsThatFit(kWidth - 2 * kMargin, 12))));
}

const ServiceOutcome* FindService(const Deployment& d, const std::string& name) {
  auto it = std::find_if(d.services.begin(), d.services.end(),
                         [&](const auto& s) { return s.name == name; });
  return it == d.services.end() ? nullptr : &*it;
}

// "name (model)", with infeasible and undeclared services marked, because
// they have no rectangle (or no scenario entry) to look for.
std::string LegendLabel(const ServiceOutcome* service, const std::string& name) {
  if (service == nullptr) return name + " (undeclared)";
  std::string label = service->model == name ? name : fmt::format("{} ({})", name, service->model);
  if (service->status == ServiceStatus::kInfeasible) label += " \xE2\x80\x94 infeasible";
  return label;
}

// A filled swatch; an infeasible service gets a hollow dashed one in its
// colour, so it keeps its colour slot but does not look deployed.
void AppendSwatch(int x, int y, std::string_view colour, bool hollow, std::string& out) {
  if (hollow) {
    fmt::format_to(Out(out),
                   "<rect x=\"{}\" y=\"{}\" width=\"13\" height=\"13\" rx=\"3\" "
                   "fill=\"#FFFFFF\" stroke=\"{}\" stroke-width=\"1.5\" "
                   "stroke-dasharray=\"3 2\"/>",
                   x, y, colour);
  } else {
    fmt::format_to(Out(out),
                   "<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"14\" rx=\"3\" "
                   "fill=\"{}\" stroke=\"#000000\" stroke-opacity=\"0.25\"/>",
                   x, y, colour);
  }
}

void AppendLegend(const Deployment& d, const std::vector<std::string>& services,
                  const std::map<std::string, int>& colours, int top, std::string& out) {
  out += "<g class=\"legend\" font-size=\"12\" fill=\"#333333\">\n";
  int columns = LegendColumns();
  for (size_t i = 0; i < services.size(); ++i) {
    int x = kMargin + static_cast<int>(i % columns) * kLegendItemWidth;
    int y = top + static_cast<int>(i / columns) * kLegendRowHeight;
    const ServiceOutcome* service = FindService(d, services[i]);
    bool infeasible = service != nullptr && service->status == ServiceStatus::kInfeasible;
    AppendSwatch(x, y, Colour(colours, services[i]), infeasible, out);
    fmt::format_to(Out(out), "<text x=\"{}\" y=\"{}\"{}>{}</text>\n", x + 20, y + 11,
                   infeasible ? " fill=\"#777777\" font-style=\"italic\"" : "",
                   XmlEscape(Shorten(LegendLabel(service, services[i]),
                                     CharsThatFit(kLegendItemWidth - 28, 12))));
  }
  out += "</g>\n";
}

// A GPU shared whole (no MIG) is drawn as four quarters of its SMs.
constexpr int kMpsCells = 4;

// The cells a row is divided into: memory slices, or quarters of the SMs.
int Cells(const GpuModel& gpu) { return gpu.HasMig() ? gpu.memory_slices : kMpsCells; }

int SliceWidth(const GpuModel& gpu) { return kTrackWidth / std::max(1, Cells(gpu)); }

// Slice numbers centred over the cells (or SM shares at the cells' ends),
// with a caption in the label column.
void AppendAxis(const GpuModel& gpu, int baseline, std::string& out) {
  int w = SliceWidth(gpu);
  fmt::format_to(Out(out),
                 "<g class=\"axis\" font-size=\"10\" fill=\"#888888\" text-anchor=\"middle\">\n"
                 "<text x=\"{}\" y=\"{}\" text-anchor=\"start\">{}</text>\n",
                 kMargin, baseline, gpu.HasMig() ? "memory slice" : "share of SMs");
  for (int s = 0; s < Cells(gpu); ++s) {
    if (gpu.HasMig()) {
      fmt::format_to(Out(out), "<text x=\"{}\" y=\"{}\">{}</text>\n", kTrackX + s * w + w / 2,
                     baseline, s);
    } else {
      fmt::format_to(Out(out), "<text x=\"{}\" y=\"{}\">{}%</text>\n", kTrackX + (s + 1) * w,
                     baseline, 100 * (s + 1) / kMpsCells);
    }
  }
  out += "</g>\n";
}

// The row's frame: hatched (free) background, faint cell ticks, border.
void AppendTrack(const GpuModel& gpu, int y, std::string& out) {
  int w = SliceWidth(gpu);
  int track = w * Cells(gpu);
  fmt::format_to(Out(out),
                 "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"4\" "
                 "fill=\"url(#free)\"/>\n",
                 kTrackX, y, track, kRowHeight);
  for (int s = 1; s < Cells(gpu); ++s) {
    fmt::format_to(Out(out),
                   "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#C8C8C8\" "
                   "stroke-width=\"1\" stroke-dasharray=\"2 3\"/>\n",
                   kTrackX + s * w, y, y + kRowHeight);
  }
  fmt::format_to(Out(out),
                 "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"4\" fill=\"none\" "
                 "stroke=\"#B4B4B4\"/>\n",
                 kTrackX, y, track, kRowHeight);
}

// Memory slices of `profile`, or 1 for a profile this GPU does not know, so
// that an odd deployment still draws (the validator reports it, not us).
int MemorySlices(const GpuModel& gpu, const std::string& profile) {
  const MigProfile* p = gpu.FindProfile(profile);
  return p == nullptr ? 1 : p->memory_slices;
}

void AppendRowLabel(const GpuAssignment& g, const GpuModel& gpu, int y, std::string& out) {
  double shares = 0;
  for (const MpsProcess& p : g.processes()) shares += p.resource_pct;
  const std::string usage =
      gpu.HasMig() ? fmt::format("{}/{} GPCs", UsedSlices(g, gpu).compute, gpu.compute_slices)
                   : fmt::format("{:g}% of SMs (MPS)", shares);
  fmt::format_to(Out(out),
                 "<text x=\"{0}\" y=\"{1}\" font-size=\"13\" font-weight=\"bold\" "
                 "fill=\"#222222\">GPU {2} (node {3}{6})</text>\n"
                 "<text x=\"{0}\" y=\"{4}\" font-size=\"11\" fill=\"#777777\">{5}"
                 "</text>\n",
                 kMargin, y + kRowHeight / 2 - 2, g.index, g.node, y + kRowHeight / 2 + 14, usage,
                 g.gpu.empty() ? "" : ", " + XmlEscape(g.gpu));
}

// One box of a row: its tooltip, the rectangle from `x` (pixels from the
// track's left) `width` wide, and three centred label lines inside a nested
// <svg>, which clips them.
struct Box {
  int x = 0;
  int width = 0;
  std::string title;
  std::string lines[3];
};

void AppendBox(const Box& box, std::string_view fill, int row_y, std::string& out) {
  int x = kTrackX + box.x + kInset;
  int y = row_y + kInset;
  int width = std::max(1, box.width - 2 * kInset);
  int height = kRowHeight - 2 * kInset;
  fmt::format_to(Out(out),
                 "<g class=\"instance\"><title>{}</title>\n"
                 "<rect class=\"instance\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"6\" "
                 "fill=\"{}\" stroke=\"#000000\" stroke-opacity=\"0.3\"/>\n",
                 XmlEscape(box.title), x, y, width, height, fill);
  int text_width = width - 8;
  fmt::format_to(Out(out),
                 "<svg x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\">"
                 "<g fill=\"{}\" text-anchor=\"middle\">\n",
                 x, y, width, height, TextColour(fill));
  int cx = width / 2;
  fmt::format_to(Out(out),
                 "<text x=\"{}\" y=\"18\" font-size=\"12\" font-weight=\"bold\">{}</text>\n"
                 "<text x=\"{}\" y=\"35\" font-size=\"11\">{}</text>\n"
                 "<text x=\"{}\" y=\"51\" font-size=\"11\">{}</text>\n",
                 cx, XmlEscape(Shorten(box.lines[0], CharsThatFit(text_width, 12.5))), cx,
                 XmlEscape(Shorten(box.lines[1], CharsThatFit(text_width, 11))), cx,
                 XmlEscape(Shorten(box.lines[2], CharsThatFit(text_width, 11))));
  out += "</g></svg></g>\n";
}

// An instance spans its memory slices; labelled service, profile, "BxP".
Box InstanceBox(const Instance& i, const GpuModel& gpu) {
  int w = SliceWidth(gpu);
  int slices = std::max(1, gpu.memory_slices);
  int start = std::clamp(i.start, 0, slices - 1);
  int span = std::clamp(MemorySlices(gpu, i.profile), 1, slices - start);
  return {start * w,
          span * w,
          fmt::format("{}: {}@{}, batch {} x {} procs, {:.1f} rps, {:.1f} ms", i.service, i.profile,
                      i.start, i.batch, i.procs, i.throughput_rps, i.latency_ms),
          {i.service, i.profile, fmt::format("{}x{}", i.batch, i.procs)}};
}

// An MPS process spans its share of the SMs from `left_pct`; labelled
// service, share, batch.
Box ProcessBox(const MpsProcess& p, double left_pct) {
  const double pct = std::clamp(p.resource_pct, 0.0, 100.0 - std::min(left_pct, 100.0));
  return {static_cast<int>(kTrackWidth * left_pct / 100),
          static_cast<int>(kTrackWidth * pct / 100),
          fmt::format("{}: {:g}% of SMs, batch {}, {:.1f} of {:.1f} rps, {:.1f} ms{}", p.service,
                      p.resource_pct, p.batch, p.rate_rps, p.throughput_rps, p.latency_ms,
                      p.meets_slo ? "" : " (predicted to miss its SLO)"),
          {p.service, fmt::format("{:g}%", p.resource_pct), fmt::format("b{}", p.batch)}};
}

void AppendGpuRow(const GpuAssignment& g, const GpuModel& gpu, std::string_view id_prefix,
                  const std::map<std::string, int>& colours, int y, std::string& out) {
  fmt::format_to(Out(out), "<g class=\"gpu\" id=\"{}gpu-{}\">\n", id_prefix, g.index);
  AppendRowLabel(g, gpu, y, out);
  AppendTrack(gpu, y, out);
  for (const Instance& i : g.instances()) {
    AppendBox(InstanceBox(i, gpu), Colour(colours, i.service), y, out);
  }
  double left_pct = 0;
  for (const MpsProcess& p : g.processes()) {
    AppendBox(ProcessBox(p, left_pct), Colour(colours, p.service), y, out);
    left_pct += p.resource_pct;
  }
  out += "</g>\n";
}

}  // namespace

// The slice numbers sit kAxisHeight below `top`, the first row 8 pixels
// below them.
int GpuRowsHeight(const Deployment& d) {
  const int rows = static_cast<int>(d.gpus.size());
  return kAxisHeight + 8 + rows * (kRowHeight + kRowGap) +
         (rows > kRowsForBottomAxis ? kAxisHeight - kRowGap : 0);
}

void AppendGpuRows(const Deployment& d, const GpuModel& gpu,
                   const std::map<std::string, int>& colours, std::string_view id_prefix, int top,
                   std::string& out) {
  AppendAxis(gpu, top + kAxisHeight, out);
  int y = top + kAxisHeight + 8;
  for (const GpuAssignment& g : d.gpus) {
    AppendGpuRow(g, ModelOf(d, g, gpu), id_prefix, colours, y, out);
    y += kRowHeight + kRowGap;
  }
  if (static_cast<int>(d.gpus.size()) > kRowsForBottomAxis) {
    AppendAxis(gpu, y + kAxisHeight - kRowGap - 6, out);
  }
}

}  // namespace svg

std::string FormatDeploymentSvg(const Deployment& deployment, const GpuModel& gpu) {
  std::map<std::string, int> colours;
  svg::AddColourIndices(deployment, colours);
  std::vector<std::string> legend = svg::LegendServices(colours);
  const int rows_top = svg::kTitleHeight + svg::LegendRows(legend.size()) * svg::kLegendRowHeight;
  std::string out;
  svg::AppendOpen(rows_top + svg::GpuRowsHeight(deployment) + svg::kMargin, out);
  svg::AppendTitle(deployment, gpu, out);
  svg::AppendLegend(deployment, legend, colours, svg::kTitleHeight, out);
  svg::AppendGpuRows(deployment, gpu, colours, "", rows_top, out);
  out += "</svg>\n";
  return out;
}

}  // namespace tessera
