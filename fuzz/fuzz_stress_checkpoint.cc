// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: a stress checkpoint file as the supervisor's workers read it back, and the
// same bytes as an --inject value.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "stress/checkpoint.h"
#include "stress/inject.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const int fd = ::memfd_create("checkpoint", MFD_CLOEXEC);
  if (fd < 0) return 0;
  if (::write(fd, data, size) == static_cast<ssize_t>(size)) {
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    auto checkpoint = parity::stress::ReadCheckpoint(path);
    if (checkpoint.ok()) {
      // A checkpoint that reads back is rewritten and read to the same step and payload.
      char dir[] = "/tmp/fuzz-ckpt-XXXXXX";
      if (::mkdtemp(dir) != nullptr) {
        const std::string copy = std::string(dir) + "/c.ckpt";
        if (parity::stress::WriteCheckpoint(copy, checkpoint->step, checkpoint->payload).ok()) {
          auto again = parity::stress::ReadCheckpoint(copy);
          if (!again.ok() || again->step != checkpoint->step ||
              again->payload != checkpoint->payload) {
            std::abort();
          }
          ::unlink(copy.c_str());
        }
        ::rmdir(dir);
      }
    }
  }
  ::close(fd);
  auto spec =
      parity::stress::ParseInjectSpec(std::string_view(reinterpret_cast<const char*>(data), size));
  if (spec.ok()) {
    parity::stress::FaultSchedule schedule({*spec}, size, {100.0, 1000}, 3);
    (void)schedule.Due(1000.0, 1000.0);
  }
  return 0;
}
