"""For the end-to-end tests' Python checks: a tool script of tools/ (a name with a hyphen and no
.py, so not importable as it is) loaded as a module, with tools/ on sys.path as the script has."""

import importlib.machinery
import importlib.util
import os
import sys


def load(tools, script):
    """RETURNS: tools/`script` (e.g. "compare-fio") as a module; its main() is not run."""
    if tools not in sys.path:
        sys.path.insert(0, tools)
    name = script.replace("-", "_")
    loader = importlib.machinery.SourceFileLoader(name, os.path.join(tools, script))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(name, loader))
    loader.exec_module(module)
    return module
