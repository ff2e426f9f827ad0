# Writes OUTPUT, a header defining POSENC_GIT_COMMIT: the commit of SOURCE_DIR
# (12 hex digits, "-dirty" when tracked files differ), or "unknown" outside a
# git checkout. Run at every build (server/CMakeLists.txt); the header is
# rewritten only when the commit changes, so only build_info.cc recompiles.
execute_process(
  COMMAND git -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE rc ERROR_QUIET)
if(NOT rc EQUAL 0 OR commit STREQUAL "")
  set(commit "unknown")
else()
  execute_process(
    COMMAND git -C "${SOURCE_DIR}" diff --quiet HEAD --
    RESULT_VARIABLE dirty ERROR_QUIET)
  if(NOT dirty EQUAL 0)
    string(APPEND commit "-dirty")
  endif()
endif()
file(WRITE "${OUTPUT}.tmp" "#define POSENC_GIT_COMMIT \"${commit}\"\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
