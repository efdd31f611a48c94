// ExtenderArgs (extender_args.h): a one-pass reader for the common body and
// the whole-body reader that defines every answer.
#include "k8s/extender_args.h"

#include <optional>

#include "util/json_structure.h"

namespace tessera {
namespace {

using nlohmann::json;

Status FromNodes(const json& nodes, ExtenderArgs& args) {
  if (!nodes.is_object()) return Status::InvalidArgument("Nodes: must be a NodeList object");
  args.by_name = false;
  args.list = nodes;
  args.list.erase("items");
  const auto items = nodes.find("items");
  if (items == nodes.end() || items->is_null()) return Status::Ok();
  if (!items->is_array()) return Status::InvalidArgument("Nodes.items: must be an array");
  for (size_t i = 0; i < items->size(); ++i) {
    const json& node = (*items)[i];
    const json* name = nullptr;
    if (node.is_object() && node.contains("metadata") && node["metadata"].is_object()) {
      const auto it = node["metadata"].find("name");
      if (it != node["metadata"].end() && it->is_string()) name = &*it;
    }
    if (name == nullptr) {
      return Status::InvalidArgument("Nodes.items[" + std::to_string(i) +
                                     "].metadata.name: missing");
    }
    args.names.push_back(name->get<std::string>());
    args.objects.push_back(node);
  }
  return Status::Ok();
}

// The common body, read in one pass; nullopt for anything else (the
// whole-body reader then gives the answer).
class FastReader {
 public:
  explicit FastReader(std::string_view text) : text_(text) {}

  std::optional<ExtenderArgs> Read() {
    ExtenderArgs args;
    std::string_view pod, nodes;
    bool seen_names = false, names_null = true;
    SkipSpace();
    if (!Take('{')) return std::nullopt;
    SkipSpace();
    if (Take('}')) return std::nullopt;  // no Pod
    for (;;) {
      std::string_view key;
      if (!PlainString(key)) return std::nullopt;
      SkipSpace();
      if (!Take(':')) return std::nullopt;
      SkipSpace();
      if (key == "NodeNames") {
        if (seen_names || !Names(args.names, names_null)) return std::nullopt;
        seen_names = true;
      } else if (key == "Pod" || key == "Nodes") {
        std::string_view& value = key == "Pod" ? pod : nodes;
        if (!value.empty() || !Value(value)) return std::nullopt;
      } else {
        return std::nullopt;
      }
      SkipSpace();
      if (Take('}')) break;
      if (!Take(',')) return std::nullopt;
      SkipSpace();
    }
    SkipSpace();
    if (pos_ != text_.size() || pod.empty()) return std::nullopt;
    // Pod and Nodes sit one level inside the body.
    if (!CheckJsonStructure(pod, kMaxJsonDepth - 1).empty()) return std::nullopt;
    args.pod = json::parse(pod, nullptr, /*allow_exceptions=*/false);
    if (!args.pod.is_object()) return std::nullopt;
    if (!nodes.empty() && !CheckJsonStructure(nodes, kMaxJsonDepth - 1).empty()) {
      return std::nullopt;
    }
    if (!names_null) return args;
    if (nodes.empty() || nodes == "null") return std::nullopt;  // no candidates
    if (!FromNodes(json::parse(nodes, nullptr, false), args).ok()) return std::nullopt;
    return args;
  }

 private:
  bool Take(char c) {
    if (pos_ >= text_.size() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }

  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r' || text_[pos_] == '\t'))
      ++pos_;
  }

  // A string of printable ASCII without escapes.
  bool PlainString(std::string_view& out) {
    if (!Take('"')) return false;
    const size_t start = pos_;
    for (; pos_ < text_.size(); ++pos_) {
      const auto c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        out = text_.substr(start, pos_++ - start);
        return true;
      }
      if (c < 0x20 || c > 0x7e || c == '\\') return false;
    }
    return false;
  }

  // null, or an array of plain strings.
  bool Names(std::vector<std::string>& names, bool& is_null) {
    if (text_.substr(pos_, 4) == "null") {
      pos_ += 4;
      return true;
    }
    if (!Take('[')) return false;
    is_null = false;
    SkipSpace();
    if (Take(']')) return true;
    for (;;) {
      std::string_view name;
      if (!PlainString(name)) return false;
      names.emplace_back(name);
      SkipSpace();
      if (Take(']')) return true;
      if (!Take(',')) return false;
      SkipSpace();
    }
  }

  // The text of an object, an array or null, found by matching brackets
  // outside strings (CheckJsonStructure validates it afterwards).
  bool Value(std::string_view& out) {
    const size_t start = pos_;
    if (text_.substr(pos_, 4) == "null") {
      pos_ += 4;
      out = text_.substr(start, 4);
      return true;
    }
    if (pos_ >= text_.size() || (text_[pos_] != '{' && text_[pos_] != '[')) return false;
    int depth = 0;
    bool in_string = false;
    for (; pos_ < text_.size(); ++pos_) {
      const char c = text_[pos_];
      if (in_string) {
        if (c == '\\') {
          ++pos_;
        } else if (c == '"') {
          in_string = false;
        }
      } else if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        if (++depth >= kMaxJsonDepth) return false;
      } else if ((c == '}' || c == ']') && --depth == 0) {
        out = text_.substr(start, ++pos_ - start);
        return true;
      }
    }
    return false;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

Result<ExtenderArgs> ReadExtenderArgs(std::string_view body) {
  if (std::optional<ExtenderArgs> args = FastReader(body).Read()) return std::move(*args);
  return ReadExtenderArgsThroughTree(body);
}

Result<ExtenderArgs> ReadExtenderArgsThroughTree(std::string_view body) {
  if (const std::string problem = CheckJsonStructure(body); !problem.empty()) {
    return Status::InvalidArgument(problem);
  }
  const json root = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!root.is_object()) return Status::InvalidArgument("the body must be an ExtenderArgs object");
  const auto pod = root.find("Pod");
  if (pod == root.end() || !pod->is_object()) {
    return Status::InvalidArgument("Pod: missing or not an object");
  }
  ExtenderArgs args;
  args.pod = *pod;
  const auto names = root.find("NodeNames");
  const auto nodes = root.find("Nodes");
  if (names != root.end() && !names->is_null()) {
    if (!names->is_array()) return Status::InvalidArgument("NodeNames: must be an array");
    for (const json& name : *names) {
      if (!name.is_string()) return Status::InvalidArgument("NodeNames: must hold strings");
      args.names.push_back(name.get<std::string>());
    }
    return args;
  }
  if (nodes == root.end() || nodes->is_null()) {
    return Status::InvalidArgument("NodeNames: missing (and no Nodes)");
  }
  TESSERA_RETURN_IF_ERROR(FromNodes(*nodes, args));
  return args;
}

}  // namespace tessera
