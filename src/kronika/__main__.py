"""``python -m kronika`` runs the command line."""

import sys

from kronika.cli import main

sys.exit(main())
