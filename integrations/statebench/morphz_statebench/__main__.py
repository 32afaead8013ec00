import sys

from morphz_statebench.cli import main

sys.exit(main())
