// SPDX-License-Identifier: Apache-2.0
#include "io/py_literal.h"

#include <fmt/format.h>

#include <unordered_set>

namespace parity {
namespace {

constexpr int kMaxDepth = 16;

class Parser {
 public:
  Parser(std::string_view text, std::string_view path) : text_(text), path_(path) {}

  Result<PyValue> ParseAll() {
    PyValue value;
    PARITY_RETURN_IF_ERROR(ParseValue(0, &value));
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after the literal");
    return value;
  }

 private:
  Status Error(std::string_view what) const {
    return Status::Invalid(path_, fmt::format("header: {} at offset {}", what, pos_));
  }

  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool Consume(std::string_view token) {
    if (text_.substr(pos_).starts_with(token)) {
      pos_ += token.size();
      return true;
    }
    return false;
  }

  Status ParseValue(int depth, PyValue* out) {
    if (depth > kMaxDepth) return Error("nesting too deep");
    SkipSpace();
    if (pos_ >= text_.size()) return Error("unexpected end");
    const char c = text_[pos_];
    if (c == '{') return ParseDict(depth, out);
    if (c == '(') return ParseSequence(depth, ')', PyValue::Kind::kTuple, out);
    if (c == '[') return ParseSequence(depth, ']', PyValue::Kind::kList, out);
    if (c == '\'' || c == '"') {
      out->kind = PyValue::Kind::kStr;
      return ParseString(&out->text);
    }
    if (c == '-' || c == '+' || (c >= '0' && c <= '9')) return ParseInt(out);
    if (Consume("True")) {
      out->kind = PyValue::Kind::kBool;
      out->boolean = true;
      return Status::Ok();
    }
    if (Consume("False")) {
      out->kind = PyValue::Kind::kBool;
      return Status::Ok();
    }
    if (Consume("None")) {
      out->kind = PyValue::Kind::kNone;
      return Status::Ok();
    }
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f) return Error(fmt::format("unexpected character '{}'", c));
    return Error(fmt::format("unexpected byte 0x{:02x}", byte));
  }

  Status ParseString(std::string* out) {
    const char quote = text_[pos_++];
    while (pos_ < text_.size()) {
      char c = text_[pos_++];
      if (c == quote) return Status::Ok();
      if (c == '\\') {
        if (pos_ >= text_.size()) break;
        c = text_[pos_++];
        if (c == 'n') c = '\n';
        if (c == 't') c = '\t';
      }
      out->push_back(c);
    }
    return Error("unterminated string");
  }

  Status ParseInt(PyValue* out) {
    out->kind = PyValue::Kind::kInt;
    bool negative = false;
    if (text_[pos_] == '-' || text_[pos_] == '+') negative = text_[pos_++] == '-';
    const std::size_t start = pos_;
    uint64_t magnitude = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      const auto digit = static_cast<uint64_t>(text_[pos_] - '0');
      if (__builtin_mul_overflow(magnitude, uint64_t{10}, &magnitude) ||
          __builtin_add_overflow(magnitude, digit, &magnitude)) {
        out->integer_overflow = true;
      }
      ++pos_;
    }
    if (pos_ == start) return Error("expected digits");
    out->text = std::string(negative ? "-" : "") + std::string(text_.substr(start, pos_ - start));
    if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;  // Python 2 long suffix
    const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
    if (magnitude > limit) out->integer_overflow = true;
    if (!out->integer_overflow) {
      out->integer =
          negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
    }
    return Status::Ok();
  }

  Status ParseSequence(int depth, char close, PyValue::Kind kind, PyValue* out) {
    out->kind = kind;
    ++pos_;
    SkipSpace();
    while (pos_ < text_.size() && text_[pos_] != close) {
      PyValue item;
      PARITY_RETURN_IF_ERROR(ParseValue(depth + 1, &item));
      out->items.push_back(std::move(item));
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        SkipSpace();
      } else if (pos_ < text_.size() && text_[pos_] != close) {
        return Error("expected ',' or closing bracket");
      }
    }
    if (pos_ >= text_.size()) return Error("unterminated sequence");
    ++pos_;
    return Status::Ok();
  }

  Status ParseDict(int depth, PyValue* out) {
    out->kind = PyValue::Kind::kDict;
    std::unordered_set<std::string> seen;
    ++pos_;
    SkipSpace();
    while (pos_ < text_.size() && text_[pos_] != '}') {
      if (text_[pos_] != '\'' && text_[pos_] != '"') return Error("dict key is not a string");
      std::string key;
      PARITY_RETURN_IF_ERROR(ParseString(&key));
      SkipSpace();
      if (!Consume(":")) return Error("expected ':'");
      PyValue value;
      PARITY_RETURN_IF_ERROR(ParseValue(depth + 1, &value));
      if (!seen.insert(key).second) return Error(fmt::format("duplicate key '{}'", key));
      out->keys.push_back(std::move(key));
      out->items.push_back(std::move(value));
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        SkipSpace();
      } else if (pos_ < text_.size() && text_[pos_] != '}') {
        return Error("expected ',' or '}'");
      }
    }
    if (pos_ >= text_.size()) return Error("unterminated dict");
    ++pos_;
    return Status::Ok();
  }

  std::string_view text_;
  std::string_view path_;
  std::size_t pos_ = 0;
};

}  // namespace

const PyValue* PyValue::Find(std::string_view key) const {
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] == key) return &items[i];
  }
  return nullptr;
}

Result<PyValue> ParsePyLiteral(std::string_view text, std::string_view path) {
  return Parser(text, path).ParseAll();
}

}  // namespace parity
