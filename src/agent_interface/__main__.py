import sys

from agent_interface.cli.main import main

sys.exit(main())
