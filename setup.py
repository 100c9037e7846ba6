"""setuptools' package list, found rather than written by hand: the repository root is the package `irc`
(pyproject.toml maps it with package-dir), so every package under it is `irc.<dotted path>`. Everything
else about the project is in pyproject.toml. The tests are not shipped: they import `tests.*` from a
checkout (tests/unit/test_packaging.py runs a few of them against the installed wheel)."""

from setuptools import find_packages, setup

setup(
    packages=["irc", *(f"irc.{name}" for name in find_packages(".", exclude=["tests", "tests.*"]))],
    # This script lies in the package's folder; setuptools leaves it out of the package only when it
    # knows the script's path, which a pip build does not tell it.
    script_name="setup.py",
)
