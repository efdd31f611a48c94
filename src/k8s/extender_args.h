// ExtenderArgs: the body kube-scheduler sends to an extender's filter and
// prioritize verbs, {"Pod": {...}, "Nodes": NodeList | null, "NodeNames":
// [name, ...] | null}, read into the pod object and the candidate nodes.
//
// With nodeCacheCapable the body is mostly NodeNames: thousands of short
// names. ReadExtenderArgs reads that common form (the three keys, each at
// most once, names of printable ASCII without escapes) in one pass that
// builds no JSON tree for the names; Pod and Nodes values are checked
// (CheckJsonStructure) and parsed alone. Anything else (escapes, other keys,
// a syntax error, a field of the wrong type) goes through the whole-body
// reader, ReadExtenderArgsThroughTree, which defines the answer: the same
// ExtenderArgs, or InvalidArgument naming the problem ("invalid JSON: parse
// error at line 1, column 7: ...", "Pod: missing or not an object",
// "NodeNames: must hold strings", "Nodes.items[3].metadata.name: missing").
// Bodies nested deeper than kMaxJsonDepth or with a duplicate key are
// refused, as every JSON body of Tessera's is.
//
// Thread-safety: pure functions.
#ifndef TESSERA_K8S_EXTENDER_ARGS_H_
#define TESSERA_K8S_EXTENDER_ARGS_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/status.h"

namespace tessera {

struct ExtenderArgs {
  nlohmann::json pod;  // an object
  // The candidates by name, in the body's order; by_name says they came as
  // NodeNames. Otherwise they came as Nodes.items: `objects` holds each node
  // object (the answer returns those kept) and `list` the NodeList less its
  // items.
  bool by_name = true;
  std::vector<std::string> names;
  std::vector<nlohmann::json> objects;
  nlohmann::json list;
};

Result<ExtenderArgs> ReadExtenderArgs(std::string_view body);
Result<ExtenderArgs> ReadExtenderArgsThroughTree(std::string_view body);

}  // namespace tessera

#endif  // TESSERA_K8S_EXTENDER_ARGS_H_
