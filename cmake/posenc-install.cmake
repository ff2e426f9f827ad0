# `cmake --install`: the C++ package, in one place (included by the top-level
# CMakeLists.txt once every target exists; docs/cpp-package.md says what it
# exports and why).
# Into the prefix:
#   bin/posenc_server, bin/posenc            the server and the CLI
#   lib/libposenc_*.a                        the client library and the static
#                                            libraries it is made of
#   include/posenc/...                       client/posenc_client.h, the
#                                            project headers it includes
#                                            (transitively) and the generated
#                                            posenc.v1 / grpc.health.v1 headers
#   lib/cmake/posenc/                        posencConfig.cmake (+ version):
#                                            find_package(posenc CONFIG) gives
#                                            posenc::client, posenc::proto and
#                                            the executables posenc::posenc,
#                                            posenc::posenc_server
#   lib/pkgconfig/posenc.pc                  the same for pkg-config
# Both the exported libraries and the installed headers are computed from the
# client library and its public header, so renaming a target or moving a
# header between folders touches nothing here.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The client library and every project library it links, transitively
# (computed below). posenc::client is what a user links; posenc::proto (the
# generated messages and stubs) serves a user who calls the stub directly.
# The others are exported only because the libraries are static: linking
# posenc::client needs their objects, and CMake requires a private link
# dependency of an exported static library to be exported too (the warnings'
# interface target included). Each is exported as its name without
# "posenc_" (posenc_core -> posenc::core).
set(POSENC_CLIENT_LIBRARY posenc_client)
set(POSENC_INSTALL_EXECUTABLES posenc posenc_server)
# The public headers: this one and every project header it includes.
set(POSENC_PUBLIC_HEADER client/posenc_client.h)
set(POSENC_INCLUDE_SUBDIR posenc)
set(POSENC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/posenc)

# HEADER (relative to the source tree) and every header of the source tree it
# includes as "dir/name.h", transitively, appended to the list OUT.
function(posenc_header_closure header out)
  set(closure ${${out}})
  set(pending ${header})
  while(pending)
    list(POP_FRONT pending current)
    if(current IN_LIST closure)
      continue()
    endif()
    list(APPEND closure ${current})
    file(STRINGS ${PROJECT_SOURCE_DIR}/${current} includes
         REGEX "^#include \"[^\"]+\"")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" included "${line}")
      # Generated (posenc/v1/...) and third-party headers are not in the tree.
      if(EXISTS ${PROJECT_SOURCE_DIR}/${included})
        list(APPEND pending ${included})
      endif()
    endforeach()
  endwhile()
  set(${out} ${closure} PARENT_SCOPE)
endfunction()

set(posenc_headers)
posenc_header_closure(${POSENC_PUBLIC_HEADER} posenc_headers)
foreach(header IN LISTS posenc_headers)
  get_filename_component(dir ${header} DIRECTORY)
  install(FILES ${PROJECT_SOURCE_DIR}/${header}
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/${POSENC_INCLUDE_SUBDIR}/${dir})
endforeach()
# The generated headers, from posenc_proto's own include directory.
get_target_property(posenc_proto_gen_dir posenc_proto
                    INTERFACE_INCLUDE_DIRECTORIES)
install(DIRECTORY ${posenc_proto_gen_dir}/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/${POSENC_INCLUDE_SUBDIR}
        FILES_MATCHING PATTERN "*.h")

# The targets include the source and build trees (PUBLIC ${PROJECT_SOURCE_DIR},
# the generated dir, MPFR's): for the build only. Installed, they all include
# include/posenc, where the headers above keep the same relative paths.
# Depth-first over the project (not imported) targets the client links;
# appended after their dependencies, so the reversed list is a valid static
# link order (posenc.pc's Libs).
# The libraries TARGET links, into OUT. An INTERFACE library (posenc_core,
# the umbrella of the core's layers) has only INTERFACE_LINK_LIBRARIES; a
# static one's private links show there as $<LINK_ONLY:...>.
function(posenc_link_deps target out)
  get_target_property(type ${target} TYPE)
  set(deps)
  if(NOT type STREQUAL "INTERFACE_LIBRARY")
    get_target_property(deps ${target} LINK_LIBRARIES)
  endif()
  get_target_property(interface_deps ${target} INTERFACE_LINK_LIBRARIES)
  if(interface_deps)
    list(APPEND deps ${interface_deps})
  endif()
  list(TRANSFORM deps REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1")
  list(REMOVE_DUPLICATES deps)
  set(${out} ${deps} PARENT_SCOPE)
endfunction()

function(posenc_visit target)
  get_property(visited GLOBAL PROPERTY POSENC_INSTALL_VISITED)
  if(target IN_LIST visited)
    return()
  endif()
  set_property(GLOBAL APPEND PROPERTY POSENC_INSTALL_VISITED ${target})
  posenc_link_deps(${target} deps)
  foreach(dep IN LISTS deps)
    if(TARGET ${dep})
      get_target_property(imported ${dep} IMPORTED)
      if(NOT imported)
        posenc_visit(${dep})
      endif()
    endif()
  endforeach()
  set_property(GLOBAL APPEND PROPERTY POSENC_INSTALL_ORDER ${target})
endfunction()
posenc_visit(${POSENC_CLIENT_LIBRARY})
get_property(posenc_export_targets GLOBAL PROPERTY POSENC_INSTALL_ORDER)
list(REVERSE posenc_export_targets)

set(posenc_pc_libs)
foreach(target IN LISTS posenc_export_targets)
  get_target_property(dirs ${target} INTERFACE_INCLUDE_DIRECTORIES)
  if(dirs)
    set(wrapped)
    foreach(dir IN LISTS dirs)
      list(APPEND wrapped "$<BUILD_INTERFACE:${dir}>")
    endforeach()
    list(APPEND wrapped
         "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/${POSENC_INCLUDE_SUBDIR}>")
    set_target_properties(${target} PROPERTIES
                          INTERFACE_INCLUDE_DIRECTORIES "${wrapped}")
  endif()
  # Its headers are C++17: a consumer compiles them as such.
  set_property(TARGET ${target} APPEND PROPERTY
               INTERFACE_COMPILE_FEATURES cxx_std_17)
  string(REGEX REPLACE "^posenc_" "" export_name ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name})
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "STATIC_LIBRARY")
    string(APPEND posenc_pc_libs " -l${target}")
  endif()
endforeach()
install(TARGETS ${posenc_export_targets} ${POSENC_INSTALL_EXECUTABLES}
        EXPORT posencTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT posencTargets NAMESPACE posenc::
        DESTINATION ${POSENC_CMAKE_DIR})

# posencConfig.cmake finds what the exported targets name: the patched gRPC
# in the prefix posenc was built against (its version exactly), Abseil,
# Protobuf, Highway, xxHash (pkg-config), Threads.
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/posencConfig.cmake.in
  ${PROJECT_BINARY_DIR}/posencConfig.cmake
  INSTALL_DESTINATION ${POSENC_CMAKE_DIR})
# 0.x: a minor version may change the API, so only the same major.minor
# satisfies a request.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/posencConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/posencConfig.cmake
              ${PROJECT_BINARY_DIR}/posencConfigVersion.cmake
        DESTINATION ${POSENC_CMAKE_DIR})

# posenc.pc, relocatable (paths from ${pcfiledir}). Its Requires are the
# pkg-config modules of what the exported libraries link (static: all of it),
# derived from their link lists so a new dependency cannot be forgotten: one
# with no known module stops the configure.
set(posenc_pc_requires)
foreach(target IN LISTS posenc_export_targets)
  posenc_link_deps(${target} deps)
  foreach(dep IN LISTS deps)
    if(NOT dep OR dep IN_LIST posenc_export_targets)
      continue()
    elseif(dep MATCHES "^absl::(.+)$")
      set(module absl_${CMAKE_MATCH_1})
    elseif(dep MATCHES "^gRPC::")
      set(module "grpc++ = ${gRPC_VERSION}")
    elseif(dep STREQUAL "protobuf::libprotobuf")
      set(module protobuf)
    elseif(dep STREQUAL "PkgConfig::XXHASH")
      set(module libxxhash)
    elseif(dep STREQUAL "hwy::hwy")
      set(module libhwy)
    elseif(dep MATCHES "/lib(mpfr|gmp)\\.[^/]*$")
      set(module ${CMAKE_MATCH_1})
    elseif(dep STREQUAL "Threads::Threads")
      continue()  # -pthread in Libs
    else()
      message(FATAL_ERROR "posenc.pc: no pkg-config module known for "
                          "'${dep}' (linked by ${target}): add it in "
                          "cmake/posenc-install.cmake")
    endif()
    if(NOT module IN_LIST posenc_pc_requires)
      list(APPEND posenc_pc_requires "${module}")
    endif()
  endforeach()
endforeach()
list(JOIN posenc_pc_requires ", " posenc_pc_requires)
file(RELATIVE_PATH posenc_pc_prefix
     /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" posenc_pc_prefix "${posenc_pc_prefix}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/posenc.pc.in
               ${PROJECT_BINARY_DIR}/posenc.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/posenc.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
