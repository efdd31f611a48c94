// The kubeconfig reader of include/tessera/k8s/kube_client.h (LoadKubeconfig).
#include <fmt/format.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "k8s/kube_server_url.h"
#include "tessera/k8s/kube_client.h"
#include "tessera/util/text_io.h"
#include "util/base64.h"
#include "util/yaml_tree.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

using NodeId = YamlTree::NodeId;

class KubeconfigReader {
 public:
  KubeconfigReader(const YamlTree& tree, std::string path)
      : tree_(tree), path_(std::move(path)), dir_(fs::path(path_).parent_path()) {}

  Result<KubeConfig> Read(const std::string& wanted_context) {
    const NodeId root = tree_.root();
    if (root == YamlTree::kNone || !tree_.IsMap(root)) {
      return FieldError(path_, root == YamlTree::kNone ? 1 : tree_.line(root), "(document)",
                        "expected a mapping (a kubeconfig: clusters, contexts, users, "
                        "current-context)");
    }
    // The context.
    std::string context_name = wanted_context;
    if (context_name.empty()) {
      const NodeId current = tree_.Get(root, "current-context");
      if (current == YamlTree::kNone || !tree_.IsScalar(current) || tree_.scalar(current).empty()) {
        return FieldError(path_,
                          current == YamlTree::kNone ? tree_.line(root) : tree_.line(current),
                          "current-context",
                          "missing or empty, and no context was named" + Names(root, "contexts"));
      }
      context_name = std::string(tree_.scalar(current));
    }
    TESSERA_ASSIGN_OR_RETURN(const Entry context, Find(root, "contexts", "context", context_name));
    if (context.entry == YamlTree::kNone) {
      const NodeId at =
          wanted_context.empty() ? tree_.Get(root, "current-context") : tree_.Get(root, "contexts");
      return FieldError(
          path_, at == YamlTree::kNone ? tree_.line(root) : tree_.line(at),
          wanted_context.empty() ? "current-context" : "contexts",
          "no context named " + QuoteForMessage(context_name) + Names(root, "contexts"));
    }
    TESSERA_ASSIGN_OR_RETURN(const std::string cluster_name, RequiredString(context, "cluster"));
    TESSERA_ASSIGN_OR_RETURN(const std::string user_name, RequiredString(context, "user"));

    KubeConfig config;
    // The cluster.
    TESSERA_ASSIGN_OR_RETURN(const Entry cluster, Find(root, "clusters", "cluster", cluster_name));
    if (cluster.entry == YamlTree::kNone) {
      return FieldError(path_, tree_.line(tree_.Get(context.body, "cluster")),
                        context.field + ".cluster",
                        "no cluster named " + QuoteForMessage(cluster_name) + " in 'clusters'" +
                            Names(root, "clusters"));
    }
    TESSERA_ASSIGN_OR_RETURN(config.server, RequiredString(cluster, "server"));
    if (Result<ServerUrl> url = ParseServerUrl(config.server); !url.ok()) {
      return FieldError(path_, tree_.line(tree_.Get(cluster.body, "server")),
                        cluster.field + ".server",
                        QuoteForMessage(config.server) + ": " + url.status().message() +
                            "; give http(s)://HOST[:PORT], e.g. https://127.0.0.1:6443");
    }
    if (const NodeId skip = tree_.Get(cluster.body, "insecure-skip-tls-verify");
        skip != YamlTree::kNone && tree_.IsScalar(skip) && tree_.scalar(skip) == "true") {
      return FieldError(path_, tree_.line(skip), cluster.field + ".insecure-skip-tls-verify",
                        "not supported: give the cluster's certificate-authority(-data)");
    }
    TESSERA_RETURN_IF_ERROR(
        FileOrData(cluster, "certificate-authority", &config.ca_file, &config.ca_data));

    // The user.
    TESSERA_ASSIGN_OR_RETURN(const Entry user, Find(root, "users", "user", user_name));
    if (user.entry == YamlTree::kNone) {
      return FieldError(
          path_, tree_.line(tree_.Get(context.body, "user")), context.field + ".user",
          "no user named " + QuoteForMessage(user_name) + " in 'users'" + Names(root, "users"));
    }
    TESSERA_RETURN_IF_ERROR(FileOrData(user, "client-certificate", &config.client_certificate_file,
                                       &config.client_certificate_data));
    TESSERA_RETURN_IF_ERROR(
        FileOrData(user, "client-key", &config.client_key_file, &config.client_key_data));
    const bool has_cert =
        !config.client_certificate_file.empty() || !config.client_certificate_data.empty();
    const bool has_key = !config.client_key_file.empty() || !config.client_key_data.empty();
    if (has_cert != has_key) {
      return FieldError(path_, tree_.line(user.body),
                        user.field + (has_cert ? ".client-key" : ".client-certificate"),
                        has_cert ? "missing: a client certificate needs its key (client-key or "
                                   "client-key-data)"
                                 : "missing: a client key needs its certificate "
                                   "(client-certificate or client-certificate-data)");
    }
    TESSERA_ASSIGN_OR_RETURN(std::optional<std::string> token, OptionalString(user, "token"));
    if (token) {
      config.token = *token;
    } else {
      for (const char* key : {"tokenFile", "token-file"}) {
        TESSERA_ASSIGN_OR_RETURN(std::optional<std::string> file, OptionalString(user, key));
        if (!file) continue;
        const std::string resolved = Resolve(*file);
        Result<std::string> text = ReadTextFile(resolved);
        if (!text.ok()) {
          return FieldError(path_, tree_.line(tree_.Get(user.body, key)), user.field + "." + key,
                            "cannot read the token: " + text.status().message());
        }
        config.token = std::string(Trim(TrimLineEnds(*text)));
        if (config.token.empty()) {
          return FieldError(path_, tree_.line(tree_.Get(user.body, key)), user.field + "." + key,
                            QuoteForMessage(resolved) + " is empty");
        }
        break;
      }
    }
    if (config.token.empty() && !has_cert) {
      for (const char* plugin : {"exec", "auth-provider"}) {
        if (const NodeId node = tree_.Get(user.body, plugin); node != YamlTree::kNone) {
          return FieldError(path_, tree_.line(node), user.field + "." + plugin,
                            "not supported: give a token, tokenFile or client-certificate and "
                            "client-key");
        }
      }
    }
    return config;
  }

 private:
  // An entry of a named list: `entry` the list item, `body` its `key`
  // mapping (e.g. "cluster"), `field` its path ("clusters[2].cluster").
  struct Entry {
    NodeId entry = YamlTree::kNone;
    NodeId body = YamlTree::kNone;
    std::string field;
  };

  static std::string_view TrimLineEnds(std::string_view s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
    while (!s.empty() && (s.front() == '\n' || s.front() == '\r')) s.remove_prefix(1);
    return s;
  }

  std::string Resolve(const std::string& file) const {
    if (file.empty() || fs::path(file).is_absolute() || dir_.empty()) return file;
    return (dir_ / file).lexically_normal().string();
  }

  // ": the file has 'a', 'b'" (or "; the file has none").
  std::string Names(NodeId root, std::string_view list) const {
    const NodeId seq = tree_.Get(root, list);
    std::string names;
    if (seq != YamlTree::kNone && tree_.IsSequence(seq)) {
      for (NodeId item : tree_.children(seq)) {
        const NodeId name = tree_.Get(item, "name");
        if (name == YamlTree::kNone || !tree_.IsScalar(name)) continue;
        names += (names.empty() ? "" : ", ") + QuoteForMessage(tree_.scalar(name));
      }
    }
    return names.empty() ? fmt::format(" (the file has no {})", list)
                         : fmt::format(" (the file has {})", names);
  }

  // The item of list `list` named `name`; an Entry with entry kNone when
  // there is none.
  Result<Entry> Find(NodeId root, std::string_view list, std::string_view key,
                     const std::string& name) const {
    const NodeId seq = tree_.Get(root, list);
    if (seq == YamlTree::kNone || tree_.IsNull(seq)) return Entry{};
    if (!tree_.IsSequence(seq)) {
      return FieldError(path_, tree_.line(seq), list, "expected a list of named entries");
    }
    const auto items = tree_.children(seq);
    for (size_t i = 0; i < items.size(); ++i) {
      const NodeId item = items[i];
      const std::string field = fmt::format("{}[{}]", list, i);
      if (!tree_.IsMap(item)) {
        return FieldError(path_, tree_.line(item), field, "expected a mapping with a name");
      }
      const NodeId item_name = tree_.Get(item, "name");
      if (item_name == YamlTree::kNone || !tree_.IsScalar(item_name) ||
          tree_.scalar(item_name) != name) {
        continue;
      }
      const NodeId body = tree_.Get(item, key);
      if (body == YamlTree::kNone || !tree_.IsMap(body)) {
        return FieldError(path_, body == YamlTree::kNone ? tree_.line(item) : tree_.line(body),
                          field + "." + std::string(key),
                          body == YamlTree::kNone ? "missing" : "expected a mapping");
      }
      return Entry{item, body, field + "." + std::string(key)};
    }
    return Entry{};
  }

  Result<std::optional<std::string>> OptionalString(const Entry& entry,
                                                    std::string_view key) const {
    const NodeId node = tree_.Get(entry.body, key);
    if (node == YamlTree::kNone || tree_.IsNull(node)) return std::optional<std::string>();
    if (!tree_.IsScalar(node)) {
      return FieldError(path_, tree_.line(node), entry.field + "." + std::string(key),
                        "expected a string");
    }
    if (tree_.scalar(node).empty()) return std::optional<std::string>();
    return std::optional<std::string>(std::string(tree_.scalar(node)));
  }

  Result<std::string> RequiredString(const Entry& entry, std::string_view key) const {
    TESSERA_ASSIGN_OR_RETURN(std::optional<std::string> value, OptionalString(entry, key));
    if (!value) {
      const NodeId node = tree_.Get(entry.body, key);
      return FieldError(path_, tree_.line(node == YamlTree::kNone ? entry.body : node),
                        entry.field + "." + std::string(key), "missing");
    }
    return *value;
  }

  // `key` (a file, relative to the kubeconfig's directory) or `key`-data
  // (base64); the data wins when both are there.
  Status FileOrData(const Entry& entry, const std::string& key, std::string* file,
                    std::string* data) const {
    const std::string data_key = key + "-data";
    TESSERA_ASSIGN_OR_RETURN(std::optional<std::string> encoded, OptionalString(entry, data_key));
    if (encoded) {
      std::string why;
      std::optional<std::string> decoded = DecodeBase64(*encoded, &why);
      if (!decoded || decoded->empty()) {
        return FieldError(path_, tree_.line(tree_.Get(entry.body, data_key)),
                          entry.field + "." + data_key, decoded ? "empty" : why);
      }
      *data = std::move(*decoded);
      return Status::Ok();
    }
    TESSERA_ASSIGN_OR_RETURN(std::optional<std::string> name, OptionalString(entry, key));
    if (!name) return Status::Ok();
    *file = Resolve(*name);
    if (!IsRegularFile(*file)) {
      return FieldError(path_, tree_.line(tree_.Get(entry.body, key)), entry.field + "." + key,
                        "no such file " + QuoteForMessage(*file));
    }
    return Status::Ok();
  }

  const YamlTree& tree_;
  std::string path_;
  fs::path dir_;
};

}  // namespace

Result<KubeConfig> LoadKubeconfig(const std::string& path, const std::string& context) {
  Result<std::string> text = ReadTextFile(path);
  if (!text.ok()) return Status::IoError("kubeconfig " + text.status().message());
  TESSERA_ASSIGN_OR_RETURN(const YamlTree tree,
                           ParseYamlDocument(*text, path, "a kubeconfig file"));
  return KubeconfigReader(tree, path).Read(context);
}

}  // namespace tessera
