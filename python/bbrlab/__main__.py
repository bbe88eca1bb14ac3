"""`python -m bbrlab ...` is the same as the `bbrlab` command."""

from .cli import main

main()
