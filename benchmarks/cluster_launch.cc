#include "cluster_launch.h"

#include <cstdlib>
#include <string>

#include "feedbench/base/error.h"

namespace feedbench {

#ifdef FEEDBENCH_WITH_MPI
std::unique_ptr<Cluster> make_mpi_cluster(int* argc, char*** argv);  // mpi_cluster.cc
bool built_with_mpi() { return true; }
#else
bool built_with_mpi() { return false; }
#endif

namespace {

// RETURNS: the world size an MPI launcher announced (Open MPI, PMIx, PMI, Slurm), 0 when none.
long launcher_size() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"})
    if (const char* v = std::getenv(var); v && *v) return std::atol(v);
  if (std::getenv("PMIX_RANK") || std::getenv("PMI_RANK")) return 1;
  return 0;
}

}  // namespace

bool launched_by_mpi() { return launcher_size() > 0; }

std::unique_ptr<Cluster> start_cluster(int* argc, char*** argv) {
  (void)argc;
  (void)argv;
  const long size = launcher_size();
#ifdef FEEDBENCH_WITH_MPI
  if (size > 0) return make_mpi_cluster(argc, argv);
#else
  if (size > 1)
    throw InputError("started by an MPI launcher with " + std::to_string(size) +
                     " ranks, but this feedbench was built without MPI (install libopenmpi-dev, "
                     "tools/install-deps does, and rebuild); each rank would run the whole experiment alone");
#endif
  return std::make_unique<LocalCluster>();
}

}  // namespace feedbench
