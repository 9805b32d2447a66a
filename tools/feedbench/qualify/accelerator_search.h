// The search `feedbench qualify` makes for one workload and path: the most accelerators K the
// node keeps at AU >= target, found by running K of them at once, as MLPerf Storage does. One
// trial of K measures two states at once (its first epoch cold, its second the steady state),
// so the search keeps a bracket per state and asks for the K that narrows the most open one.
// Pure: the trials are run by the caller, which tells the search what each found.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <set>
#include <vector>

namespace feedbench {

enum class FedState { kCold = 0, kSteady = 1 };
inline constexpr std::array<FedState, 2> kFedStates = {FedState::kCold, FedState::kSteady};

// What one trial of K accelerators found in one state.
struct StateOutcome {
  bool judged = false;  // false: the trial could not judge this state (too few steps, a failure)
  double au = 0;        // the accelerators' AU in that epoch
  // A guess at how many times K the host could take before its cores saturate (the usable
  // cores ÷ those feedbench's trial used); 0 when not known. Only where to look next, never an answer.
  double headroom = 0;
};

struct TrialOutcome {
  int accelerators = 0;
  std::array<StateOutcome, 2> states;  // by FedState
};

// The answer for one state.
struct FedAnswer {
  bool found = false;      // a trial judged it
  double fed = 0;          // the most K at target; below one: AU ÷ target of one accelerator
  bool capped = false;     // every K up to the cap kept the target: fed is a lower bound
  int last_fed = 0;        // the largest K that kept the target (0: none)
  int first_short = 0;     // the smallest K that fell short (0: none)
  int unjudged = 0;        // the smallest K whose trial could not judge it (0: none); none above it ran
  std::size_t trials = 0;  // trials that judged this state
};

class AcceleratorSearch {
 public:
  // REQUIRES: target_au in (0, 1]; cap >= 1 (the most K to try: the data set's or the user's).
  AcceleratorSearch(double target_au, int cap);

  // RETURNS: the K to run next, or nullopt when both states are bracketed (K kept, K + 1 not;
  // or one accelerator short; or the cap kept) or a state cannot be judged at all.
  std::optional<int> next() const;

  // Records a trial's outcome. REQUIRES: outcome.accelerators >= 1.
  void record(const TrialOutcome& outcome);

  // RETURNS: the answer so far for `state`.
  FedAnswer answer(FedState state) const;

 private:
  struct Bracket {
    int kept = 0;      // largest K at target
    int short_of = 0;  // smallest K below target; 0 none
    // Every K judged, as it fell: a pass forgets the shortfalls at or below it, a shortfall the
    // passes at or above it, so a K that contradicts the bracket keeps what the others said.
    std::set<int> passes, shortfalls;
    double au_of_one = 0;      // the AU of K = 1, for a fraction of one
    double headroom = 0;       // of the trial at `kept`
    bool unjudgeable = false;  // a trial of K = 1 could not judge it
    int unjudged = 0;  // the smallest K > 1 whose trial could not judge it: none at or above it is run
    std::size_t trials = 0;
  };
  // RETURNS: the K that narrows `b`, nullopt when it is closed or that K is at or above one
  // that could not be judged.
  std::optional<int> narrowing(const Bracket& b) const;
  // RETURNS: the same, regardless of the K not judged.
  std::optional<int> open_narrowing(const Bracket& b) const;

  double target_;
  int cap_;
  std::array<Bracket, 2> brackets_;
};

}  // namespace feedbench
