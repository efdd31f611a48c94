// Small pieces every SVG Tessera draws shares: XML escaping and the colour
// palette. Internal to the library (util: the emitters and the online replay
// report both draw SVG).
//
// Thread-safety: free functions without state.
#ifndef TESSERA_UTIL_SVG_TEXT_H_
#define TESSERA_UTIL_SVG_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace tessera {

// `s` escaped for SVG text and attribute values. Control characters other
// than tab and newline are not allowed in XML 1.0, so they are dropped.
std::string XmlEscape(std::string_view s);

// Colour `i` of the palette: Okabe-Ito (without black), then Paul Tol's muted
// colours. The first seven stay distinguishable under the common colour-vision
// deficiencies; past twelve the colours repeat and only a legend tells them
// apart.
std::string_view PaletteColour(size_t i);

}  // namespace tessera

#endif  // TESSERA_UTIL_SVG_TEXT_H_
