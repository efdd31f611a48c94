#include "util/json_structure.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "tessera/util/text_io.h"

namespace tessera {
namespace {

using Json = nlohmann::json;

class StructureCheck : public nlohmann::json_sax<Json> {
 public:
  explicit StructureCheck(int max_depth) : max_depth_(max_depth) {}

  bool null() override { return Value(); }
  bool boolean(bool) override { return Value(); }
  bool number_integer(number_integer_t) override { return Value(); }
  bool number_unsigned(number_unsigned_t) override { return Value(); }
  bool number_float(number_float_t, const string_t&) override { return Value(); }
  bool string(string_t&) override { return Value(); }
  bool binary(binary_t&) override { return Value(); }
  bool start_object(std::size_t) override { return Open(false); }
  bool start_array(std::size_t) override { return Open(true); }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }
  bool key(string_t& key) override {
    Frame& frame = stack_.back();
    frame.key = key;
    if (frame.keys.insert(key).second) return true;
    error = Path() + ": duplicate key";
    return false;
  }
  bool parse_error(std::size_t, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    error = ex.what();
    // Drop the "[json.exception.parse_error.101] " prefix.
    const size_t end = error.find("] ");
    if (error.starts_with("[") && end != std::string::npos) error.erase(0, end + 2);
    error = "invalid JSON: " + EscapeControlBytes(error);
    return false;
  }

  std::string error;  // empty when the text is well-formed

 private:
  struct Frame {
    bool array = false;
    size_t items = 0;  // arrays: values seen so far
    std::string key;   // objects: the current key
    std::set<std::string> keys;
  };

  // nlohmann quotes the offending text in its messages: keep them one line.
  static std::string EscapeControlBytes(const std::string& message) {
    std::string out;
    for (char c : message) {
      const auto byte = static_cast<unsigned char>(c);
      out += byte < 0x20 || byte == 0x7f ? fmt::format("\\x{:02x}", byte) : std::string(1, c);
    }
    return out;
  }

  bool Value() {
    if (!stack_.empty() && stack_.back().array) ++stack_.back().items;
    return true;
  }
  bool Open(bool array) {
    Value();
    if (static_cast<int>(stack_.size()) >= max_depth_) {
      error = fmt::format("{}: nested deeper than {} levels of arrays and objects",
                          stack_.empty() ? "(root)" : Path(), max_depth_);
      return false;
    }
    stack_.push_back({array, 0, {}, {}});
    return true;
  }
  bool Close() {
    stack_.pop_back();
    return true;
  }
  // The path of the current value, e.g. "gpus[1].instances[0].batch"; a
  // long one is cut short with "...".
  std::string Path() const {
    constexpr size_t kMax = 120;
    std::string path;
    for (const Frame& frame : stack_) {
      if (frame.array) {
        path += fmt::format("[{}]", frame.items - 1);
      } else {
        path += (path.empty() ? "" : ".") + EscapeForMessage(frame.key);
      }
      if (path.size() > kMax) return path.substr(0, kMax) + "...";
    }
    return path;
  }

  const int max_depth_;
  std::vector<Frame> stack_;
};

}  // namespace

std::string CheckJsonStructure(std::string_view text, int max_depth) {
  StructureCheck check(max_depth);
  if (!Json::sax_parse(text, &check) && check.error.empty()) return "invalid JSON";
  return check.error;
}

}  // namespace tessera
