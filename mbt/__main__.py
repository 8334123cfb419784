"""`python -m mbt` runs the command line."""

from mbt.cli import main

main()
