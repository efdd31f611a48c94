#include "k8s/watch_stream.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <utility>

#include "k8s/kube_errors.h"
#include "tessera/util/text_io.h"

namespace tessera {

WatchStream::WatchStream(std::string what, std::string resource_version,
                         std::function<bool(const WatchEvent&)> on_event)
    : what_(std::move(what)),
      last_version_(std::move(resource_version)),
      on_event_(std::move(on_event)) {}

bool WatchStream::Feed(std::string_view chunk) {
  if (error_ || ended_by_caller_) return false;
  // Lines completed by this chunk: the first one joins the buffer.
  for (size_t newline = chunk.find('\n'); newline != std::string_view::npos;
       newline = chunk.find('\n')) {
    bool go_on;
    if (buffer_.empty()) {
      go_on = HandleLine(chunk.substr(0, newline));
    } else {
      buffer_.append(chunk.substr(0, newline));
      const std::string line = std::move(buffer_);
      buffer_.clear();
      go_on = HandleLine(line);
    }
    chunk.remove_prefix(newline + 1);
    if (!go_on) return false;
  }
  buffer_.append(chunk);
  if (buffer_.size() > kMaxWatchLineBytes) {
    error_ = Status::IoError(
        fmt::format("{}: a watch event is longer than {} bytes", what_, kMaxWatchLineBytes));
    return false;
  }
  return true;
}

void WatchStream::Finish() {
  if (buffer_.empty() || error_ || ended_by_caller_) return;
  const std::string line = std::move(buffer_);
  buffer_.clear();
  HandleLine(line);
}

// One line of the stream: an event. False ends the watch.
bool WatchStream::HandleLine(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  if (IsBlank(line)) return true;
  nlohmann::json json = nlohmann::json::parse(line, nullptr, false);
  if (!json.is_object() || !json.contains("type") || !json["type"].is_string()) {
    error_ = Status::IoError(fmt::format("{}: a watch event is not a JSON object with a 'type': {}",
                                         what_, QuoteForMessage(line)));
    return false;
  }
  WatchEvent event{json["type"].get<std::string>(),
                   json.contains("object") ? std::move(json["object"]) : nlohmann::json()};
  if (event.type == "ERROR") {
    int code = 0;
    if (event.object.is_object() && event.object.contains("code") &&
        event.object["code"].is_number_integer()) {
      code = event.object["code"].get<int>();
    }
    const std::string message = ServerMessage(event.object.dump());
    error_ =
        code >= 100 && code <= 999
            ? HttpError(what_, code, message + " (an ERROR event)")
            : Status::IoError(fmt::format("{}: an ERROR event without a code: {}", what_, message));
    return false;
  }
  if (event.object.is_object()) {
    const auto metadata = event.object.find("metadata");
    if (metadata != event.object.end() && metadata->is_object()) {
      const auto version = metadata->find("resourceVersion");
      if (version != metadata->end() && version->is_string() &&
          !version->get_ref<const std::string&>().empty()) {
        last_version_ = version->get<std::string>();
      }
    }
  }
  if (!on_event_(event)) {
    ended_by_caller_ = true;
    return false;
  }
  return true;
}

}  // namespace tessera
