# Compiles through ccache when it is installed. ccache keys a compilation on its command line,
# which holds absolute paths: a fresh clone in another folder (CI's) would miss every object an
# earlier build made. Paths under the repository are made relative to it (base_dir), and debug
# builds do not hash the working folder (hash_dir), so any clone of the same sources hits.
# ccache 4.7 (Debian 12) takes its settings from the environment, hence `cmake -E env`.
# REQUIRES: FEEDBENCH_ROOT, the repository's top folder.
# RETURNS: FEEDBENCH_COMPILER_LAUNCHER (empty without ccache); sets the C++ launcher.
find_program(CCACHE_PROGRAM ccache)
set(FEEDBENCH_COMPILER_LAUNCHER "")
if(CCACHE_PROGRAM)
  set(FEEDBENCH_COMPILER_LAUNCHER
      ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${FEEDBENCH_ROOT} CCACHE_NOHASHDIR=true ${CCACHE_PROGRAM})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${FEEDBENCH_COMPILER_LAUNCHER})
endif()
