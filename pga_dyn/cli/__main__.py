"""``python -m pga_dyn.cli``: the ``pga-dyn`` command."""

import sys

from . import main

sys.exit(main())
