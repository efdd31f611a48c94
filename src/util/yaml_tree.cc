#include "util/yaml_tree.h"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

#include <exception>
#include <limits>
#include <optional>
#include <sstream>

#include "tessera/util/text_io.h"

namespace tessera {

// Thrown out of yaml-cpp's parser by the handlers below, to stop it at once.
struct YamlTooDeep {
  int line;
  std::string path;
};
struct YamlTooLarge {
  int line;
};

// Builds a YamlTree from yaml-cpp's events. Each open sequence or mapping
// keeps its children on a stack until it closes; they are then stored
// contiguously.
class YamlTreeBuilder : public YAML::EventHandler {
 public:
  YamlTreeBuilder(YamlTree& tree, int max_depth) : tree_(tree), max_depth_(max_depth) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    Add(NewNode(YamlTree::Kind::kNull, mark, false), anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    // An alias is its anchor's node (yaml-cpp rejects an unknown anchor).
    Saw(mark);
    if (anchor < anchors_.size() && anchors_[anchor] != YamlTree::kNone) {
      Push(anchors_[anchor]);
    } else {
      Add(NewNode(YamlTree::Kind::kNull, mark, false), YAML::NullAnchor);
    }
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    const YamlTree::NodeId n = NewNode(YamlTree::Kind::kScalar, mark, tag == "!");
    tree_.nodes_[n].text_begin = tree_.text_.size();
    tree_.nodes_[n].text_size = value.size();
    tree_.text_ += value;
    Add(n, anchor);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(YamlTree::Kind::kSequence, mark, anchor);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(YamlTree::Kind::kMap, mark, anchor);
  }
  void OnMapEnd() override { Close(); }

  // Where the document's first node starts.
  std::optional<YAML::Mark> first;

 private:
  struct Frame {
    YamlTree::NodeId node;
    std::vector<YamlTree::NodeId> children;
  };

  void Saw(const YAML::Mark& mark) {
    if (!first) first = mark;
  }

  YamlTree::NodeId NewNode(YamlTree::Kind kind, const YAML::Mark& mark, bool non_plain) {
    Saw(mark);
    const int line = mark.line >= 0 ? mark.line + 1 : 1;
    if (tree_.nodes_.size() >= static_cast<size_t>(std::numeric_limits<YamlTree::NodeId>::max())) {
      throw YamlTooLarge{line};
    }
    YamlTree::Node node;
    node.kind = kind;
    node.non_plain = non_plain;
    node.line = line;
    tree_.nodes_.push_back(node);
    return static_cast<YamlTree::NodeId>(tree_.nodes_.size() - 1);
  }

  void Push(YamlTree::NodeId n) {
    if (stack_.empty()) {
      if (tree_.root_ == YamlTree::kNone) tree_.root_ = n;
    } else {
      stack_.back().children.push_back(n);
    }
  }

  void Add(YamlTree::NodeId n, YAML::anchor_t anchor) {
    Push(n);
    if (anchor != YAML::NullAnchor) {
      if (anchor >= anchors_.size()) anchors_.resize(anchor + 1, YamlTree::kNone);
      anchors_[anchor] = n;
    }
  }

  void Open(YamlTree::Kind kind, const YAML::Mark& mark, YAML::anchor_t anchor) {
    const YamlTree::NodeId n = NewNode(kind, mark, false);
    Add(n, anchor);
    if (static_cast<int>(stack_.size()) >= max_depth_) throw YamlTooDeep{tree_.line(n), Path()};
    stack_.push_back({n, {}});
  }

  void Close() {
    Frame& frame = stack_.back();
    YamlTree::Node& node = tree_.nodes_[frame.node];
    node.children_begin = static_cast<std::uint32_t>(tree_.children_.size());
    node.children_size = static_cast<std::uint32_t>(frame.children.size());
    tree_.children_.insert(tree_.children_.end(), frame.children.begin(), frame.children.end());
    stack_.pop_back();
  }

  // The path of the node added last, e.g. "services[0].name"; "(key)" for a
  // mapping's key that is itself a collection. Cut short past 120 bytes.
  std::string Path() const {
    constexpr size_t kMax = 120;
    std::string path;
    for (const Frame& frame : stack_) {
      const size_t count = frame.children.size();
      if (tree_.kind(frame.node) == YamlTree::Kind::kSequence) {
        path += fmt::format("[{}]", count - 1);
      } else if (count % 2 == 1) {
        path += path.empty() ? "(key)" : ".(key)";
      } else {
        const YamlTree::NodeId key = frame.children[count - 2];
        const std::string name =
            tree_.IsScalar(key) ? EscapeForMessage(tree_.scalar(key)) : std::string("(key)");
        path += (path.empty() ? "" : ".") + name;
      }
      if (path.size() > kMax) return path.substr(0, kMax) + "...";
    }
    return path;
  }

  YamlTree& tree_;
  const int max_depth_;
  std::vector<Frame> stack_;
  std::vector<YamlTree::NodeId> anchors_;
};

namespace {

// Thrown at the first node of a second document: it is not parsed further.
struct SecondDocument {
  YAML::Mark mark;
};

class StopAtFirstNode : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { throw SecondDocument{mark}; }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { throw SecondDocument{mark}; }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    throw SecondDocument{mark};
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    throw SecondDocument{mark};
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    throw SecondDocument{mark};
  }
  void OnMapEnd() override {}
};

Status SyntaxError(std::string_view source, int line, std::string_view what) {
  return Status::InvalidArgument(fmt::format("{}:{}: YAML syntax error: {}", source, line, what));
}

}  // namespace

YamlTree::NodeId YamlTree::Get(NodeId map, std::string_view key) const {
  if (map == kNone || !IsMap(map)) return kNone;
  const std::span<const NodeId> entries = children(map);
  for (size_t i = 0; i + 1 < entries.size(); i += 2) {
    if (IsScalar(entries[i]) && scalar(entries[i]) == key) return entries[i + 1];
  }
  return kNone;
}

Result<YamlTree> ParseYamlDocument(std::string_view text, std::string_view source,
                                   std::string_view what, int max_depth) {
  YamlTree tree;
  std::istringstream in{std::string(text)};
  YAML::Parser parser(in);
  YamlTreeBuilder builder(tree, max_depth);
  try {
    if (!parser.HandleNextDocument(builder)) return tree;  // no document at all
    StopAtFirstNode probe;
    parser.HandleNextDocument(probe);
  } catch (const SecondDocument& second) {
    const YAML::Mark at = second.mark;
    if (builder.first && builder.first->pos == at.pos && at.pos >= 0 &&
        static_cast<size_t>(at.pos) < text.size()) {
      // No progress between the two documents: a token yaml-cpp cannot place.
      return SyntaxError(source, at.line + 1,
                         "unexpected " + QuoteForMessage(text.substr(at.pos, 1)));
    }
    return FieldError(source, at.line >= 0 ? at.line + 1 : 1, "---",
                      fmt::format("a second YAML document; {} holds exactly one", what));
  } catch (const YamlTooDeep& deep) {
    return FieldError(
        source, deep.line, deep.path,
        fmt::format("nested deeper than {} levels of sequences and mappings", max_depth));
  } catch (const YamlTooLarge& large) {
    return FieldError(source, large.line, "(document)", "too many YAML nodes");
  } catch (const YAML::Exception& e) {
    // e.mark.line is 0-based; e.msg has no position.
    return SyntaxError(source, e.mark.line + 1, e.msg);
  } catch (const std::exception& e) {
    return Status::InvalidArgument(fmt::format("{}: cannot read YAML: {}", source, e.what()));
  }
  return tree;
}

}  // namespace tessera
