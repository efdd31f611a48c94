#include "k8s/kube_errors.h"

#include <fmt/format.h>

#include <cctype>
#include <nlohmann/json.hpp>

#include "tessera/util/text_io.h"

namespace tessera {

std::string ServerMessage(const std::string& body) {
  std::string message;
  const nlohmann::json json = nlohmann::json::parse(body, nullptr, false);
  if (json.is_object() && json.contains("message") && json["message"].is_string()) {
    message = json["message"].get<std::string>();
  } else {
    std::string_view text = body;
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
      text.remove_suffix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
      text.remove_prefix(1);
    message = std::string(text);
  }
  if (message.empty()) return "no message";
  if (message.size() > kMaxMessageBytes) message = message.substr(0, kMaxMessageBytes) + "...";
  return EscapeMessage(message);
}

Status HttpError(std::string_view what, int code, std::string_view message) {
  std::string text = fmt::format("{}: HTTP {}: {}", what, code, message);
  if (code == 404) return Status::NotFound(std::move(text));
  if (code >= 400 && code < 500) return Status::InvalidArgument(std::move(text));
  return Status::IoError(std::move(text));
}

}  // namespace tessera
