# cmake/version.cmake — run at every build (cmake -P): writes OUT, a header defining
# STARWAVE_VERSION (VERSION, the project's) and STARWAVE_COMMIT as `git describe` of SRC
# ("unknown" outside a git checkout), and rewrites it only when that changes, so only the
# files that print them are compiled again.
execute_process(COMMAND git -C "${SRC}" describe --always --dirty --abbrev=12
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR commit STREQUAL "")
  set(commit "unknown")
endif()
set(content "#pragma once\n#define STARWAVE_VERSION \"${VERSION}\"\n#define STARWAVE_COMMIT \"${commit}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL content)
  file(WRITE "${OUT}" "${content}")
endif()
