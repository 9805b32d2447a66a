#include "accelerator_search.h"

#include <algorithm>
#include <cmath>

namespace feedbench {

AcceleratorSearch::AcceleratorSearch(double target_au, int cap)
    : target_(target_au), cap_(std::max(cap, 1)) {}

std::optional<int> AcceleratorSearch::narrowing(const Bracket& b) const {
  const std::optional<int> k = open_narrowing(b);
  if (k && b.unjudged != 0 && *k >= b.unjudged) return std::nullopt;
  return k;
}

std::optional<int> AcceleratorSearch::open_narrowing(const Bracket& b) const {
  if (b.unjudgeable) return std::nullopt;
  if (b.trials == 0) return 1;
  if (b.short_of == 1) return std::nullopt;                              // short at one: a fraction
  if (b.short_of != 0 && b.short_of <= b.kept + 1) return std::nullopt;  // K kept, K + 1 short
  if (b.short_of == 0) {
    if (b.kept >= cap_) return std::nullopt;  // the cap kept: a lower bound
    // Growing: at least double, at most eight times, and as far as the cores' headroom says.
    const int by_headroom = b.headroom > 0 ? int(std::floor(b.kept * b.headroom)) : 0;
    const int grown = std::max(2 * b.kept, std::min(8 * b.kept, by_headroom));
    return std::min(cap_, grown);
  }
  return b.kept + (b.short_of - b.kept) / 2;  // bisecting: strictly between
}

std::optional<int> AcceleratorSearch::next() const {
  std::optional<int> k;
  for (const Bracket& b : brackets_)
    if (const std::optional<int> n = narrowing(b); n && (!k || *n < *k)) k = n;
  return k;
}

void AcceleratorSearch::record(const TrialOutcome& outcome) {
  const int k = outcome.accelerators;
  for (FedState s : kFedStates) {
    const StateOutcome& o = outcome.states[std::size_t(s)];
    Bracket& b = brackets_[std::size_t(s)];
    if (!o.judged) {
      if (k == 1 && b.trials == 0) b.unjudgeable = true;
      // Asking again would be told the same: the search stays below it.
      if (k > 1) b.unjudged = b.unjudged == 0 ? k : std::min(b.unjudged, k);
      continue;
    }
    ++b.trials;
    if (k == 1) b.au_of_one = o.au;
    if (o.au >= target_) {
      // A pass at or above a K that fell short says that shortfall was noise; a larger K's
      // shortfall still bounds the bracket.
      if (k > b.kept) b.headroom = o.headroom;
      b.passes.insert(k);
      b.shortfalls.erase(b.shortfalls.begin(), b.shortfalls.upper_bound(k));
    } else {
      b.shortfalls.insert(k);
      b.passes.erase(b.passes.lower_bound(k), b.passes.end());
    }
    b.kept = b.passes.empty() ? 0 : *b.passes.rbegin();
    b.short_of = b.shortfalls.empty() ? 0 : *b.shortfalls.begin();
  }
}

FedAnswer AcceleratorSearch::answer(FedState state) const {
  const Bracket& b = brackets_[std::size_t(state)];
  FedAnswer a;
  a.trials = b.trials;
  a.found = b.trials > 0 && !b.unjudgeable;
  if (!a.found) return a;
  a.last_fed = b.kept;
  a.first_short = b.short_of;
  a.unjudged = b.unjudged;
  if (b.kept == 0) {
    a.fed = b.au_of_one / target_;  // "0.43 of one accelerator"
  } else {
    a.fed = b.kept;
    a.capped = b.short_of == 0 && b.kept >= cap_;
  }
  return a;
}

}  // namespace feedbench
