"""The package's own tests: the client and server against the repository's build, the plugin through pytester.

The binary is `$CREDEMU`, else `$CREDEMU_BIN` (the interop suite's variable), else the repository's debug build.
"""
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
os.environ.setdefault("CREDEMU", os.environ.get("CREDEMU_BIN") or str(ROOT / ".build" / "debug" / "credemu"))

pytest_plugins = ["pytester"]
