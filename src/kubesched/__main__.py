import sys

from kubesched.cli import main

sys.exit(main())
