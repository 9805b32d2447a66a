// The Cluster over MPI (built when CMake finds MPI). Only the main thread calls MPI, between
// rounds: workers never do, so MPI_THREAD_FUNNELED is all it needs.
// MPI's C interface only: the deprecated C++ bindings need a library feedbench does not link.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "feedbench/base/error.h"
#include "feedbench/cluster/cluster.h"

namespace feedbench {
namespace {

class MpiCluster final : public Cluster {
 public:
  MpiCluster(int* argc, char*** argv) {
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);

    // This rank's host: the ranks that share memory with it (MPI_COMM_TYPE_SHARED), or, when
    // FEEDBENCH_HOST_NAME names hosts (ranks of one machine standing in for several), by name.
    FixedText<256> name;
    name.set(cluster_host_name());
    const std::vector<FixedText<256>> names = all_gather(*this, name);
    MPI_Comm node = MPI_COMM_NULL;
    if (std::getenv("FEEDBENCH_HOST_NAME")) {
      int color = rank_;
      for (int r = 0; r < size_; ++r)
        if (names[std::size_t(r)].str() == name.str()) {
          color = r;
          break;
        }
      MPI_Comm_split(MPI_COMM_WORLD, color, rank_, &node);
    } else {
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
    }
    int node_size = 0;
    MPI_Comm_size(node, &node_size);
    ranks_on_host_.resize(std::size_t(node_size));
    MPI_Allgather(&rank_, 1, MPI_INT, ranks_on_host_.data(), 1, MPI_INT, node);
    MPI_Comm_free(&node);
    std::sort(ranks_on_host_.begin(), ranks_on_host_.end());

    // Hosts numbered in the order of their lowest rank.
    const std::vector<int> leaders = all_gather(*this, ranks_on_host_.front());
    std::map<int, int> index;  // leader rank -> host index (leaders ascend with host order)
    for (int leader : leaders) index.emplace(leader, 0);
    int next = 0;
    for (auto& [leader, i] : index) {
      i = next++;
      host_names_.push_back(names[std::size_t(leader)].str());
    }
    for (int leader : leaders) host_of_rank_.push_back(index[leader]);

    char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int length = 0;
    MPI_Get_library_version(version, &length);
    implementation_ = std::string(version, strnlen(version, std::size_t(std::max(0, length))));
    // "Open MPI v4.1.4, package: ..., ident: ...": the name and version come first; the rest is
    // build detail.
    if (auto cut = implementation_.find_first_of(",\r\n"); cut != std::string::npos)
      implementation_.resize(cut);
  }

  ~MpiCluster() override { MPI_Finalize(); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int host_index() const override { return host_of_rank_[std::size_t(rank_)]; }
  int hosts() const override { return int(host_names_.size()); }
  const std::string& host_name() const override { return host_names_[std::size_t(host_index())]; }
  const std::vector<int>& ranks_on_host() const override { return ranks_on_host_; }
  const std::vector<int>& host_of_rank() const override { return host_of_rank_; }
  const std::vector<std::string>& host_names() const override { return host_names_; }
  std::string implementation() const override { return implementation_; }

  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }

  void abort(int code) override { MPI_Abort(MPI_COMM_WORLD, code); }

  std::vector<unsigned char> all_gather_bytes(const void* data, std::size_t bytes) override {
    FB_CHECK(bytes <= std::size_t(1) << 30, "all_gather of plain structs, not bulk data");
    std::vector<unsigned char> out(bytes * std::size_t(size_));
    MPI_Allgather(data, int(bytes), MPI_BYTE, out.data(), int(bytes), MPI_BYTE, MPI_COMM_WORLD);
    return out;
  }

 private:
  int rank_ = 0;
  int size_ = 1;
  std::vector<int> ranks_on_host_;
  std::vector<int> host_of_rank_;
  std::vector<std::string> host_names_;
  std::string implementation_;
};

}  // namespace

std::unique_ptr<Cluster> make_mpi_cluster(int* argc, char*** argv) {
  return std::make_unique<MpiCluster>(argc, argv);
}

}  // namespace feedbench
