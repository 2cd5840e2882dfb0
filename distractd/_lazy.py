"""Lazy re-exports for a package whose modules pull heavy dependencies (SPEC 1 of the Scientific
Python project, as scipy and scikit-image do).

A package ``__init__`` names each public name's module; the module is imported when the name is
first read (``from package import name`` included), so importing the package, or one light name of
it, does not load scikit-learn, scipy or matplotlib behind its neighbours (DESIGN §1: the daemon's
import path and the command's start-up stay lean). ``__all__`` and ``dir()`` list every name.
"""

import importlib

__all__ = ["lazy_exports"]


def lazy_exports(package, modules):
    """``(__getattr__, __dir__, __all__)`` for ``package`` re-exporting, from each relative module
    of ``modules`` (``{".module": ("name", ...)}``), its names."""
    where = {name: module for module, names in modules.items() for name in names}

    def __getattr__(name):
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where[name], package), name)
        setattr(importlib.import_module(package), name, value)  # the next read is a plain one
        return value

    def __dir__():
        return sorted(where)

    return __getattr__, __dir__, list(where)
