#include "families.h"

#include "feedbench/base/error.h"

namespace feedbench {

FamilyFunction family_function(const std::string& family) {
  if (family == "file_read") return run_file_read_case;
  if (family == "loader") return run_loader_case;
  if (family == "stage") return run_stage_case;
  if (family == "replay") return run_replay_case;
  if (family == "checkpoint") return run_checkpoint_case;
  FB_CHECK(false, "no function for family '" + family + "'");
}

}  // namespace feedbench
