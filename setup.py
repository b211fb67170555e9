"""The build is configured in pyproject.toml; this file only keeps kraftcheck/'s links to the top-level folders.

setuptools lists a linked package's files under kraftcheck/<folder>/ and copies them into the sdist, so the sdist
would hold every module twice and the unpacked tree would no longer be the repository's layout (tests/
test_architecture.py checks the links).  The sdist command puts each link back: the tar archive keeps it as a link,
and a wheel built from the unpacked sdist follows it, as from a clone.
"""

from __future__ import annotations

import os
import shutil

from setuptools import setup
from setuptools.command.sdist import sdist

LINKED = ("model", "spec", "checker", "impl", "examples")  # kraftcheck/<name> -> ../<name>


class TreeSdist(sdist):
    """The sdist of the repository tree, kraftcheck/'s links kept as links."""

    def make_release_tree(self, base_dir: str, files: list[str]) -> None:
        super().make_release_tree(base_dir, files)
        for name in LINKED:
            if not os.path.islink(os.path.join("kraftcheck", name)):
                continue  # not a link in this tree: nothing to restore
            copied = os.path.join(base_dir, "kraftcheck", name)
            if os.path.isdir(copied) and not os.path.islink(copied):
                shutil.rmtree(copied)
            os.symlink(os.path.join("..", name), copied)


setup(cmdclass={"sdist": TreeSdist})
