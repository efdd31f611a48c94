#include "util/svg_text.h"

#include <iterator>

namespace tessera {

std::string XmlEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n') out += c;
    }
  }
  return out;
}

std::string_view PaletteColour(size_t i) {
  constexpr std::string_view kPalette[] = {
      "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00",
      "#F0E442", "#332288", "#882255", "#44AA99", "#999933", "#DDCC77",
  };
  return kPalette[i % std::size(kPalette)];
}

}  // namespace tessera
