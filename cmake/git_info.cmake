# Writes the source tree's git commit and whether it has uncommitted changes into a header, at
# every build (not once at configure time, which left tool.git_commit stale after a commit and
# an incremental build). The header is rewritten only when its text changes, so an unchanged
# commit recompiles nothing.
# Usage: cmake -DSOURCE_DIR=<repo> -DOUTPUT=<header> -P git_info.cmake
execute_process(COMMAND git rev-parse HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE status OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(status)
  set(dirty true)
else()
  set(dirty false)
endif()
set(text "// Generated at build time by cmake/git_info.cmake: the commit this binary was built from.
#pragma once
namespace feedbench::build {
inline constexpr const char* kGitCommit = \"${commit}\";
inline constexpr bool kGitDirty = ${dirty};
}  // namespace feedbench::build
")
set(old "")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUTPUT} "${text}")
endif()
