// SPDX-License-Identifier: Apache-2.0
#include "core/status.h"

namespace parity {

Status Status::Invalid(std::string_view path, std::string_view problem) {
  std::string message;
  if (!path.empty()) {
    message.append(path);
    message.append(": ");
  }
  message.append(problem);
  return {StatusCode::kInvalidInput, std::move(message)};
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  std::string message(context);
  message.append(": ");
  message.append(message_);
  return {code_, std::move(message)};
}

}  // namespace parity
