// Which Cluster a run gets: Open MPI's when this build has MPI and an MPI launcher (mpirun)
// started the process, else the single process. The only door to MPI: families see Cluster.
#pragma once

#include <memory>

#include "feedbench/cluster/cluster.h"

namespace feedbench {

// RETURNS: the run's cluster (MPI initialised when it is MPI's; finalised when destroyed).
// Throws InputError when a launcher started several ranks of a build without MPI (each would
// run the whole experiment alone and write its own result).
std::unique_ptr<Cluster> start_cluster(int* argc, char*** argv);

// RETURNS: true when an MPI launcher started this process (its environment says so).
bool launched_by_mpi();

// RETURNS: true when this build can run across ranks.
bool built_with_mpi();

}  // namespace feedbench
