import sys

from utils.preflight.command import main

sys.exit(main())
