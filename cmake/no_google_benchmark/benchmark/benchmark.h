// Stands in for Google Benchmark's header in the layers that must not know it (the harness and
// the reporters): Debian installs the real one in /usr/include, where every target would find
// it, so only this folder, first on those layers' include path, makes the include fail.
#error "this layer knows no Google Benchmark: only benchmarks/ (feedbench_families), tools/ and tests/ include <benchmark/benchmark.h>"
