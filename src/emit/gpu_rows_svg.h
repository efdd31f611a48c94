// The pieces of the deployment SVG (deployment_svg.cc) that other pictures
// of deployments reuse: the document's opening, the geometry, short labels,
// service colours and the rows of GPUs. Internal to src/emit.
#ifndef TESSERA_SRC_EMIT_GPU_ROWS_SVG_H_
#define TESSERA_SRC_EMIT_GPU_ROWS_SVG_H_

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "tessera/deployment.h"
#include "tessera/gpu_catalog.h"

namespace tessera::svg {

// The page: margins, the label column, the slice track, in pixels.
inline constexpr int kMargin = 24;
inline constexpr int kLabelWidth = 132;
inline constexpr int kTrackWidth = 768;
inline constexpr int kWidth = kMargin + kLabelWidth + kTrackWidth + kMargin;

// The XML declaration, the <svg> element `height` pixels tall (kWidth wide)
// with the shared definitions (the hatching of free slices), and a white
// background. The caller closes it with "</svg>\n".
void AppendOpen(int height, std::string& out);

// `s` cut to at most `max` code points, ending with an ellipsis when cut.
std::string Shorten(std::string_view s, size_t max);

// How many characters of a `font_px` font fit in `width_px`.
size_t CharsThatFit(int width_px, double font_px);

// Colour index per service: `d`'s declared services in order, then services
// only instances name, in order of first appearance; `colours` may already
// hold some (they keep theirs).
void AddColourIndices(const Deployment& d, std::map<std::string, int>& colours);

// Height of AppendGpuRows's drawing of `d`.
int GpuRowsHeight(const Deployment& d);

// The slice numbers, then one row per GPU of `d` (its label, its slices, its
// instances coloured by `colours` through PaletteColour), from `top` down.
// A row's id is `id_prefix` "gpu-" its index: unique when a picture draws
// several deployments.
void AppendGpuRows(const Deployment& d, const GpuModel& gpu,
                   const std::map<std::string, int>& colours, std::string_view id_prefix, int top,
                   std::string& out);

}  // namespace tessera::svg

#endif  // TESSERA_SRC_EMIT_GPU_ROWS_SVG_H_
