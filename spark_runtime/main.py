"""spark-submit entry point of a mirror application: `spark-submit spark_runtime/main.py --config=PATH`,
or of a standby driver waiting for one: `... main.py --standby=FOLDER`."""

import sys
from pathlib import Path

if __name__ == "__main__":
    # Local masters run this file in place; other masters get the package through --py-files.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    if len(sys.argv) == 2 and sys.argv[1].startswith("--standby="):
        from spark_runtime.standby import main
    else:
        from spark_runtime.app import main

    sys.exit(main(sys.argv))
