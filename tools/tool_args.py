"""The command line of the Python tools in tools/: argparse, answering a bad command line as the
feedbench verbs do - one line naming the tool and what was wrong, exit 2 - instead of
argparse's usage block followed by the error (`--help` still prints the usage); and the
feedbench binary their --feedbench names."""

import argparse
import os
import shutil
import sys


class ArgumentParser(argparse.ArgumentParser):
    def error(self, message):
        print("%s: %s" % (self.prog, message), file=sys.stderr)
        sys.exit(2)


def feedbench_binary(given, die):
    """The feedbench binary a tool runs: `given` (its --feedbench: a path, or a name found on
    PATH), else the repository's build/release or build/fio-release, else feedbench on PATH.
    RETURNS: its absolute path; calls die(message) when there is none to run."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if given:
        path = given if os.sep in given else shutil.which(given)
    else:
        path = next((os.path.join(here, c, "feedbench") for c in ("build/release", "build/fio-release")
                     if os.access(os.path.join(here, c, "feedbench"), os.X_OK)), None) or shutil.which("feedbench")
    if not path or not os.access(path, os.X_OK):
        die("no feedbench binary: build the release preset or pass --feedbench PATH")
    return os.path.abspath(path)
