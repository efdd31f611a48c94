// YamlTree: one YAML document parsed once, by yaml-cpp's event parser, into a
// compact tree that keeps every node's line. It replaces YAML::Load where a
// file is user input:
//  * one pass: the document is parsed once (YAML::Load after a separate
//    document-count check parsed a 50 MB scenario twice, in 3 GB);
//  * bounded nesting: past kMaxYamlDepth sequences and mappings in one
//    another the parse stops with an error naming the line and the path,
//    long before yaml-cpp's recursion (or its vague "bad file" at 500);
//  * exactly one document: a second one is an error at its line, found
//    without parsing it (YAML::LoadAll loops forever on a stray leading
//    token, jbeder/yaml-cpp#1040).
// Nodes are indices into the tree; an alias is its anchor's node.
//
// Thread-safety: values; ParseYamlDocument is a pure function.
#ifndef TESSERA_UTIL_YAML_TREE_H_
#define TESSERA_UTIL_YAML_TREE_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/status.h"

namespace tessera {

// Sequences and mappings in one another, the document's own counted. A
// scenario needs 3.
inline constexpr int kMaxYamlDepth = 64;

class YamlTree {
 public:
  enum class Kind : std::uint8_t { kNull, kScalar, kSequence, kMap };
  using NodeId = std::int32_t;
  static constexpr NodeId kNone = -1;

  // The document's node; kNone for an empty document.
  NodeId root() const { return root_; }

  Kind kind(NodeId n) const { return nodes_[n].kind; }
  bool IsNull(NodeId n) const { return kind(n) == Kind::kNull; }
  bool IsScalar(NodeId n) const { return kind(n) == Kind::kScalar; }
  bool IsSequence(NodeId n) const { return kind(n) == Kind::kSequence; }
  bool IsMap(NodeId n) const { return kind(n) == Kind::kMap; }
  // 1-based line where the node starts.
  int line(NodeId n) const { return nodes_[n].line; }
  // A scalar's text ("" for other nodes).
  std::string_view scalar(NodeId n) const {
    return std::string_view(text_).substr(nodes_[n].text_begin, nodes_[n].text_size);
  }
  // True for a quoted (or block) scalar: yaml-cpp's tag "!", so that a quoted
  // "829" is a string, not a number.
  bool NonPlain(NodeId n) const { return nodes_[n].non_plain; }
  // A sequence's items; a mapping's keys and values, alternating.
  std::span<const NodeId> children(NodeId n) const {
    return std::span<const NodeId>(children_).subspan(nodes_[n].children_begin,
                                                      nodes_[n].children_size);
  }
  // Items of a sequence, or entries (key/value pairs) of a mapping.
  size_t size(NodeId n) const { return IsMap(n) ? children(n).size() / 2 : children(n).size(); }
  // The value of the first entry of mapping `map` whose key is the scalar
  // `key`; kNone when there is none (or `map` is not a mapping).
  NodeId Get(NodeId map, std::string_view key) const;

 private:
  friend class YamlTreeBuilder;

  struct Node {
    Kind kind = Kind::kNull;
    bool non_plain = false;
    int line = 0;
    std::uint32_t children_begin = 0;
    std::uint32_t children_size = 0;
    size_t text_begin = 0;
    size_t text_size = 0;
  };

  std::vector<Node> nodes_;
  std::vector<NodeId> children_;  // every node's children, contiguous per node
  std::string text_;              // every scalar's text
  NodeId root_ = kNone;
};

// The one YAML document of `text`. Errors (InvalidArgument), with `source`
// and the 1-based line: "<source>:<line>: YAML syntax error: <what>",
// "<source>:<line>: field '<path>': nested deeper than <max_depth> levels of
// sequences and mappings" (path like "services[0].name"), "<source>:<line>:
// field '---': a second YAML document; ..." (`what` is the kind of file, e.g.
// "a scenario file").
Result<YamlTree> ParseYamlDocument(std::string_view text, std::string_view source,
                                   std::string_view what, int max_depth = kMaxYamlDepth);

}  // namespace tessera

#endif  // TESSERA_UTIL_YAML_TREE_H_
