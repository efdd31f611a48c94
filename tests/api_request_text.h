// An API request written as text, as the control plane's fuzz harness
// (fuzz/fuzz_control_api.cc) and its in-tree mutation test read them: the
// first line is "METHOD PATH[?QUERY]" (QUERY: key=value pairs joined by '&',
// taken verbatim), the rest is the body. Test-only.
#ifndef TESSERA_TESTS_API_REQUEST_TEXT_H_
#define TESSERA_TESTS_API_REQUEST_TEXT_H_

#include <string>
#include <string_view>

#include "tessera/control/control_plane.h"

namespace tessera::testing {

inline ApiRequest ParseRequestText(std::string_view text) {
  ApiRequest request;
  const size_t end_of_line = text.find('\n');
  const std::string_view line = text.substr(0, end_of_line);
  if (end_of_line != std::string_view::npos) request.body = text.substr(end_of_line + 1);
  const size_t space = line.find(' ');
  request.method = line.substr(0, space);
  std::string_view target = space == std::string_view::npos ? "/" : line.substr(space + 1);
  const size_t question = target.find('?');
  request.path = target.substr(0, question);
  if (question != std::string_view::npos) {
    std::string_view query = target.substr(question + 1);
    while (!query.empty()) {
      const size_t amp = query.find('&');
      const std::string_view pair = query.substr(0, amp);
      const size_t eq = pair.find('=');
      request.query[std::string(pair.substr(0, eq))] =
          eq == std::string_view::npos ? "" : std::string(pair.substr(eq + 1));
      query = amp == std::string_view::npos ? "" : query.substr(amp + 1);
    }
  }
  request.content_type = "application/json";
  return request;
}

}  // namespace tessera::testing

#endif  // TESSERA_TESTS_API_REQUEST_TEXT_H_
