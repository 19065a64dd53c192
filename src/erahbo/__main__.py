"""``python -m erahbo`` runs the command-line interface."""

from erahbo.cli import main

main()
