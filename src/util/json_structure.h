// A check of JSON text before it is parsed into a DOM, shared by every JSON
// input (deployment JSON, iGniter coefficients, gpu-lets' tables): one SAX
// pass that reports the first syntax error with its position (nlohmann's DOM
// parser without exceptions only says "discarded"), a duplicate key with its
// path (the DOM silently keeps the last), and nesting deeper than
// kMaxJsonDepth with its path: nlohmann's dump() and Tessera's readers
// recurse, so 100,000 nested arrays in an unread key would overflow the
// stack. The SAX pass itself does not recurse.
//
// Thread-safety: a pure function.
#ifndef TESSERA_UTIL_JSON_STRUCTURE_H_
#define TESSERA_UTIL_JSON_STRUCTURE_H_

#include <string>
#include <string_view>

namespace tessera {

// Arrays and objects nested in one another, the document's own counted: the
// deepest Tessera format needs 5; 64 leaves room for hand-written notes.
inline constexpr int kMaxJsonDepth = 64;

// Empty when `text` is one well-formed JSON value with unique keys and at
// most `max_depth` levels of nesting; otherwise what is wrong, without the
// source: "invalid JSON: parse error at line 1, column 5: ...",
// "gpus[1].index: duplicate key" or "services[0].reason[0][0]...: nested
// deeper than 64 levels". Keys in paths go through EscapeForMessage.
std::string CheckJsonStructure(std::string_view text, int max_depth = kMaxJsonDepth);

}  // namespace tessera

#endif  // TESSERA_UTIL_JSON_STRUCTURE_H_
