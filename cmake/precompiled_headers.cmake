# SPDX-License-Identifier: Apache-2.0
# Precompiled headers for the heavy header-only libraries most translation units include:
# parsing nlohmann/json, fmt and yaml-cpp costs about 2.5 s of CPU per file, CLI11 (header-only
# in Debian) about 6.5 s and GoogleTest about 1.3 s, against well under a second for the code
# itself in most files. Each static library builds its own precompiled header once.
# -DPARITY_PCH=OFF builds without them (the sources never rely on what they add).
option(PARITY_PCH "Precompile the heavy third-party headers (nlohmann/json, fmt, yaml-cpp, CLI11, GoogleTest)" ON)

set(PARITY_PCH_COMMON
  <algorithm> <cstdint> <functional> <map> <memory> <optional> <string> <string_view>
  <unordered_map> <utility> <vector>
  <fmt/format.h> <nlohmann/json.hpp> <yaml-cpp/yaml.h>)

if(PARITY_PCH AND CCACHE_PROGRAM)
  # ccache caches compiles that use a precompiled header only with this sloppiness (its manual,
  # "Precompiled headers"); the launcher passes it so no user configuration is needed.
  foreach(lang C CXX)
    set(CMAKE_${lang}_COMPILER_LAUNCHER
        "${PARITY_CCACHE};CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime;${CCACHE_PROGRAM}")
  endforeach()
endif()

# Gives `target` (C++ sources only) a precompiled header of the common set plus the headers
# named after it.
function(parity_precompile target)
  if(PARITY_PCH)
    target_precompile_headers(${target} PRIVATE ${PARITY_PCH_COMMON} ${ARGN})
  endif()
endfunction()
