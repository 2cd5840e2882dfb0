"""The helper process of a cold warm-up (:meth:`Model._warm_up`): it compiles the baseline's and
the scoring kernels into numba's cache while the daemon compiles the stream kernel.

``python -m distractd.daemon._precompile MODEL_PATH MAX_BYTES``; the exit status is
all it says (the daemon checks the model again and compiles whatever is missing).
"""

import sys

from ._model import Model


def main(argv):
    path, max_bytes = argv[:2]
    Model(path, int(max_bytes), warm_up=False).warm_up_scoring()


if __name__ == "__main__":
    main(sys.argv[1:])
