# SPDX-License-Identifier: Apache-2.0
# Install rules (`cmake --install build --prefix /usr`), in the layout the binary looks in at run
# time (docs/INSTALL.md): plugins in ../lib/parity beside bin/ (bench/registry.cc), the Python
# packages where Debian's python3 imports them (workload/python_env.cc looks there too).
# scripts/package installs each component into its own staging tree and packs one .deb each:
#   parity         the CLI, the Python packages with their extension, examples, deploy, data
#   parity-cuda    the cuda backend plugin (links cuBLAS: installed only where CUDA is)
#   parity-hip     the hip backend plugin (links the HIP runtime)

set(PARITY_PYTHON_INSTALL_DIR "lib/python3/dist-packages"
    CACHE STRING "Where the Python packages are installed, relative to the prefix")

install(TARGETS parity RUNTIME DESTINATION bin COMPONENT parity)
foreach(plugin cuda hip)
  if(TARGET parity_backend_${plugin})
    install(TARGETS parity_backend_${plugin} LIBRARY DESTINATION lib/parity COMPONENT ${plugin})
  endif()
endforeach()

install(DIRECTORY "${PROJECT_SOURCE_DIR}/examples/" DESTINATION share/parity/examples
        COMPONENT parity PATTERN "__pycache__" EXCLUDE)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/deploy/" DESTINATION share/parity/deploy
        COMPONENT parity PATTERN "__pycache__" EXCLUDE)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/data/" DESTINATION share/parity/data COMPONENT parity)
install(FILES "${PROJECT_SOURCE_DIR}/README.md" DESTINATION share/doc/parity COMPONENT parity)

# parity_dump and parity_workloads are pure Python; parity gets its extension and _version.py
# from the build tree (build/python/parity), as python/setup.py takes them.
install(DIRECTORY "${PROJECT_SOURCE_DIR}/python/parity_dump"
                  "${PROJECT_SOURCE_DIR}/python/parity_workloads"
        DESTINATION "${PARITY_PYTHON_INSTALL_DIR}" COMPONENT parity
        PATTERN "__pycache__" EXCLUDE)
if(TARGET _parity)
  install(DIRECTORY "${CMAKE_BINARY_DIR}/python/parity" DESTINATION "${PARITY_PYTHON_INSTALL_DIR}"
          COMPONENT parity PATTERN "__pycache__" EXCLUDE)
endif()

# What the demo runs (scripts/demo builds only this): the CLI and the backend plugins; and what
# scripts/package packs: those and the Python extension.
add_custom_target(parity_runtime)
add_dependencies(parity_runtime parity)
foreach(plugin cuda hip)
  if(TARGET parity_backend_${plugin})
    add_dependencies(parity_runtime parity_backend_${plugin})
  endif()
endforeach()
add_custom_target(parity_packaged)
add_dependencies(parity_packaged parity_runtime)
if(TARGET _parity)
  add_dependencies(parity_packaged _parity)
endif()
