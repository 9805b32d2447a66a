"""The command-line parser of the Python tools in tools/: argparse, answering a bad command line
as the feedbench verbs do - one line naming the tool and what was wrong, exit 2 - instead of
argparse's usage block followed by the error (`--help` still prints the usage)."""

import argparse
import sys


class ArgumentParser(argparse.ArgumentParser):
    def error(self, message):
        print("%s: %s" % (self.prog, message), file=sys.stderr)
        sys.exit(2)
