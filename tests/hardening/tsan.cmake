# ThreadSanitizer builds only: included right after project() by the `tsan`
# preset (CMAKE_PROJECT_INCLUDE). Links tsan_grpc_hb.cc, which tells TSan
# about the happens-before edges of posenc's uninstrumented gRPC and Abseil
# (see that file), into every executable of the build, with the linker
# wraps it needs.
add_library(posenc_tsan_grpc_hb OBJECT
  ${CMAKE_CURRENT_LIST_DIR}/tsan_grpc_hb.cc)
set_target_properties(posenc_tsan_grpc_hb PROPERTIES CXX_STANDARD 17
                                                     CXX_EXTENSIONS OFF)
target_compile_options(posenc_tsan_grpc_hb PRIVATE -Wall -Wextra)
target_link_libraries(posenc_tsan_grpc_hb INTERFACE ${CMAKE_DL_LIBS})
target_link_options(posenc_tsan_grpc_hb INTERFACE
  "LINKER:--wrap=grpc_call_start_batch"
  "LINKER:--wrap=grpc_server_request_call"
  "LINKER:--wrap=grpc_server_request_registered_call"
  "LINKER:--wrap=_Z14grpc_cq_end_opP21grpc_completion_queuePvN4absl7debian36StatusEPFvS1_P18grpc_cq_completionES1_S6_b"
  "LINKER:--wrap=grpc_completion_queue_next"
  "LINKER:--wrap=grpc_completion_queue_pluck"
  "LINKER:--wrap=grpc_slice_new_with_user_data"
  "LINKER:--wrap=_ZN4grpc15CompletionQueue28ReleaseCallbackAlternativeCQEPS0_")

# Every executable target under `dir`, recursively.
function(posenc_tsan_executables dir out)
  set(found)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    if(type STREQUAL "EXECUTABLE")
      list(APPEND found ${t})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    posenc_tsan_executables(${sub} sub_found)
    list(APPEND found ${sub_found})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

function(posenc_tsan_link_all)
  # gRPC's headers (the C API's types); gRPC is found after this file runs.
  target_include_directories(posenc_tsan_grpc_hb PRIVATE
    $<TARGET_PROPERTY:gRPC::grpc,INTERFACE_INCLUDE_DIRECTORIES>)
  posenc_tsan_executables(${CMAKE_SOURCE_DIR} executables)
  foreach(exe IN LISTS executables)
    target_link_libraries(${exe} PRIVATE posenc_tsan_grpc_hb)
  endforeach()
  list(LENGTH executables n)
  message(STATUS "tsan: gRPC/Abseil happens-before annotations linked "
                 "into ${n} executables")
endfunction()
cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL posenc_tsan_link_all)
