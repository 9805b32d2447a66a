"""Reading a feedbench result file in the Python tools of tools/: the measured rounds, and only
rounds that measured what they claim - the same rounds `feedbench run` folds into a case's
figures (docs/run.md, "What a round records about itself")."""


def measured_rounds(doc):
    """The measured repetitions (iteration entries) of a parsed result file. Raises ValueError,
    naming the case and why, when there is none, or one was skipped (error_occurred), read less
    than its selection (extra.round_complete false: files shrank or vanished) or did not reach
    its cache state (cache.achieved false: a cold round that was not cold): a figure made of
    such a round would say more than was measured."""
    rounds = [b for b in doc.get("benchmarks", []) if b.get("run_type", "iteration") == "iteration"]
    if not rounds:
        raise ValueError("the result holds no measured repetition")
    for b in rounds:
        name = b.get("case") or b.get("name", "?")
        if b.get("error_occurred"):
            raise ValueError("%s: skipped: %s" % (name, b.get("error_message")))
        extra = b.get("extra") or {}
        if extra.get("round_complete") is False:
            raise ValueError("%s: incomplete round: read %s of %s bytes (%s)" % (
                name, extra.get("bytes_read"), extra.get("bytes_planned"), extra.get("incomplete", "")))
        cache = b.get("cache") or {}
        if cache.get("achieved") is False:
            raise ValueError("%s: %s NOT achieved: %.1f%% resident before the round" % (
                name, cache.get("requested"), 100.0 * cache.get("residency_before", 0.0)))
    return rounds
