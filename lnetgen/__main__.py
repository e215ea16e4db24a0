"""``python -m lnetgen``."""

from lnetgen.cli import main

main()
