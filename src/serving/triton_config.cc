// ParseTritonConfig (triton_config.h): a small reader of protobuf text
// format that keeps the dynamic batcher's fields.
#include "tessera/serving/triton_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>

#include "tessera/util/text_io.h"

namespace tessera {
namespace {

constexpr size_t kMaxBytes = 1 << 20;
constexpr int kMaxDepth = 32;
constexpr int kMaxBatch = 4096;
constexpr int64_t kMaxDelayUs = 3'600'000'000;

struct Token {
  enum Kind { kEnd, kName, kNumber, kString, kPunct } kind = kEnd;
  std::string_view text;
  int line = 1;
};

class Reader {
 public:
  Reader(std::string_view text, std::string_view source) : text_(text), source_(source) {}

  Result<TritonBatching> Read() {
    TESSERA_RETURN_IF_ERROR(Advance());
    TESSERA_RETURN_IF_ERROR(Fields(0, ""));
    if (out_.dynamic_batching) {
      std::sort(out_.preferred_batch_sizes.begin(), out_.preferred_batch_sizes.end());
      for (const int b : out_.preferred_batch_sizes) {
        if (b > out_.max_batch_size) {
          return Status::InvalidArgument(
              fmt::format("{}: dynamic_batching.preferred_batch_size: {} is above max_batch_size "
                          "{}",
                          source_, b, out_.max_batch_size));
        }
      }
    }
    return out_;
  }

 private:
  Status Error(int line, std::string_view field, std::string_view what) const {
    return Status::InvalidArgument(
        fmt::format("{}:{}: {}{}{}", source_, line, field, field.empty() ? "" : ": ", what));
  }

  // Reads the next token into tok_.
  Status Advance() {
    for (;;) {
      while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) {
        line_ += text_[at_] == '\n';
        ++at_;
      }
      if (at_ < text_.size() && text_[at_] == '#') {
        while (at_ < text_.size() && text_[at_] != '\n') ++at_;
        continue;
      }
      break;
    }
    tok_ = {Token::kEnd, {}, line_};
    if (at_ >= text_.size()) return Status::Ok();
    const size_t begin = at_;
    const char c = text_[at_];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      while (at_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[at_])) || text_[at_] == '_')) {
        ++at_;
      }
      tok_.kind = Token::kName;
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '.') {
      while (at_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[at_])) ||
                                    text_[at_] == '-' || text_[at_] == '+' || text_[at_] == '.')) {
        ++at_;
      }
      tok_.kind = Token::kNumber;
    } else if (c == '"' || c == '\'') {
      ++at_;
      while (at_ < text_.size() && text_[at_] != c && text_[at_] != '\n') {
        at_ += text_[at_] == '\\' && at_ + 1 < text_.size() ? 2 : 1;
      }
      if (at_ >= text_.size() || text_[at_] != c) {
        return Error(line_, "", "unterminated string");
      }
      ++at_;
      tok_.kind = Token::kString;
    } else if (std::string_view("{}[]:,;<>").find(c) != std::string_view::npos) {
      ++at_;
      tok_.kind = Token::kPunct;
    } else {
      return Error(line_, "", "unexpected character " + QuoteForMessage(std::string(1, c)));
    }
    tok_.text = text_.substr(begin, at_ - begin);
    return Status::Ok();
  }

  bool Is(std::string_view punct) const { return tok_.kind == Token::kPunct && tok_.text == punct; }

  // Fields until '}' (depth > 0) or the end; `path` is the enclosing field.
  Status Fields(int depth, const std::string& path) {
    if (depth > kMaxDepth) return Error(tok_.line, path, "nested too deeply");
    for (;;) {
      if (tok_.kind == Token::kEnd) {
        if (depth > 0) return Error(tok_.line, path, "missing '}'");
        return Status::Ok();
      }
      if (Is("}") || Is(">")) {
        if (depth == 0) return Error(tok_.line, "", "unexpected " + std::string(tok_.text));
        return Status::Ok();
      }
      if (tok_.kind != Token::kName) {
        return Error(tok_.line, path, "expected a field name, got " + QuoteForMessage(tok_.text));
      }
      const std::string field =
          path.empty() ? std::string(tok_.text) : path + "." + std::string(tok_.text);
      TESSERA_RETURN_IF_ERROR(Advance());
      TESSERA_RETURN_IF_ERROR(Field(depth, field));
      if (Is(",") || Is(";")) TESSERA_RETURN_IF_ERROR(Advance());
    }
  }

  // After a field's name: ':' value, or a message, or a list.
  Status Field(int depth, const std::string& field) {
    const bool colon = Is(":");
    if (colon) TESSERA_RETURN_IF_ERROR(Advance());
    if (Is("{") || Is("<")) {
      const std::string close = Is("{") ? "}" : ">";
      const int line = tok_.line;
      TESSERA_RETURN_IF_ERROR(Advance());
      if (field == "dynamic_batching") out_.dynamic_batching = true;
      TESSERA_RETURN_IF_ERROR(Fields(depth + 1, field));
      if (!Is(close)) return Error(line, field, "missing '" + close + "'");
      return Advance();
    }
    if (!colon && !Is("[")) return Error(tok_.line, field, "expected ':', '{' or '['");
    if (Is("[")) {
      TESSERA_RETURN_IF_ERROR(Advance());
      while (!Is("]")) {
        if (Is("{") || Is("<")) {
          TESSERA_RETURN_IF_ERROR(Field(depth, field));
        } else {
          TESSERA_RETURN_IF_ERROR(Scalar(field));
        }
        if (Is(",")) {
          TESSERA_RETURN_IF_ERROR(Advance());
        } else if (!Is("]")) {
          return Error(tok_.line, field, "expected ',' or ']', got " + QuoteForMessage(tok_.text));
        }
      }
      return Advance();
    }
    return Scalar(field);
  }

  // One scalar value of `field`; the batcher's fields are kept.
  Status Scalar(const std::string& field) {
    const Token value = tok_;
    if (value.kind != Token::kName && value.kind != Token::kNumber &&
        value.kind != Token::kString) {
      return Error(value.line, field, "expected a value, got " + QuoteForMessage(value.text));
    }
    TESSERA_RETURN_IF_ERROR(Advance());
    if (field == "name") {
      if (value.kind != Token::kString) return Error(value.line, field, "expected a string");
      out_.name = std::string(value.text.substr(1, value.text.size() - 2));
    } else if (field == "max_batch_size") {
      TESSERA_ASSIGN_OR_RETURN(const int64_t v, Integer(value, field, 0, kMaxBatch));
      out_.max_batch_size = static_cast<int>(v);
    } else if (field == "dynamic_batching.preferred_batch_size") {
      TESSERA_ASSIGN_OR_RETURN(const int64_t v, Integer(value, field, 1, kMaxBatch));
      out_.preferred_batch_sizes.push_back(static_cast<int>(v));
    } else if (field == "dynamic_batching.max_queue_delay_microseconds") {
      TESSERA_ASSIGN_OR_RETURN(out_.max_queue_delay_us, Integer(value, field, 0, kMaxDelayUs));
    }
    return Status::Ok();
  }

  Result<int64_t> Integer(const Token& value, const std::string& field, int64_t lo,
                          int64_t hi) const {
    int64_t v = 0;
    const char* end = value.text.data() + value.text.size();
    const auto [ptr, ec] = std::from_chars(value.text.data(), end, v);
    if (value.kind != Token::kNumber || ec != std::errc() || ptr != end || v < lo || v > hi) {
      return Error(value.line, field,
                   fmt::format("expected an integer in [{}, {}], got {}", lo, hi,
                               QuoteForMessage(value.text)));
    }
    return v;
  }

  std::string_view text_;
  std::string_view source_;
  size_t at_ = 0;
  int line_ = 1;
  Token tok_;
  TritonBatching out_;
};

}  // namespace

Result<TritonBatching> ParseTritonConfig(std::string_view text, std::string_view source) {
  if (text.size() > kMaxBytes) {
    return Status::InvalidArgument(fmt::format(
        "{}: {} bytes, more than a model configuration's limit of 1 MiB", source, text.size()));
  }
  return Reader(text, source).Read();
}

}  // namespace tessera
