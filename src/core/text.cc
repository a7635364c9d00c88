// SPDX-License-Identifier: Apache-2.0
#include "core/text.h"

#include <fmt/format.h>

#include <cmath>
#include <ctime>

namespace parity {
namespace {

bool IsBlank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

}  // namespace

std::string Printable(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 80)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out += c;
    }
  }
  if (text.size() > 80) out += "...";
  return out;
}

Result<std::vector<std::string>> SplitCommand(std::string_view text) {
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    return Status::Invalid("", fmt::format("the command has a NUL byte at byte {}", nul + 1));
  }
  std::vector<std::string> words;
  std::string current;
  bool in_word = false;
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (IsBlank(c)) {
      if (in_word) words.push_back(std::move(current));
      current.clear();
      in_word = false;
      ++i;
    } else if (c == '\\') {
      if (i + 1 == text.size()) {
        return Status::Invalid("", "the command ends in a backslash (write \\\\ for one)");
      }
      if (text[i + 1] != '\n') {  // a backslash-newline joins the lines
        current += text[i + 1];
        in_word = true;
      }
      i += 2;
    } else if (c == '\'') {
      const std::size_t close = text.find('\'', i + 1);
      if (close == std::string_view::npos) {
        return Status::Invalid(
            "", fmt::format("the command has an unterminated ' (opened at byte {})", i + 1));
      }
      current.append(text.substr(i + 1, close - i - 1));
      in_word = true;
      i = close + 1;
    } else if (c == '"') {
      std::size_t j = i + 1;
      while (true) {
        if (j >= text.size()) {
          return Status::Invalid(
              "", fmt::format("the command has an unterminated \" (opened at byte {})", i + 1));
        }
        const char d = text[j];
        if (d == '"') break;
        if (d == '\\' && j + 1 < text.size() && (text[j + 1] == '"' || text[j + 1] == '\\')) {
          current += text[j + 1];
          j += 2;
          continue;
        }
        current += d;
        ++j;
      }
      in_word = true;
      i = j + 1;
    } else {
      current += c;
      in_word = true;
      ++i;
    }
  }
  if (in_word) words.push_back(std::move(current));
  if (words.empty()) return Status::Invalid("", "the command is empty");
  return words;
}

std::string UtcTime(double unix_seconds, const char* format) {
  if (!std::isfinite(unix_seconds) || std::fabs(unix_seconds) > 1e15) return "?";
  const auto t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  if (gmtime_r(&t, &tm) == nullptr) return "?";
  char buffer[64];
  return std::strftime(buffer, sizeof buffer, format, &tm) > 0 ? buffer : "?";
}

}  // namespace parity
