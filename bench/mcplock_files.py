"""mcplock's own `snapshot` and `check` commands with the server's tools read from a file.

mcplock only talks to live servers; for a like-for-like comparison with `driftgate diff OLD NEW`
this replaces its one network call (`cli.fetch_or_exit`) by reading a `tools/list` capture and
runs its CLI as published, whole process included (interpreter start, imports, rendering).

    python mcplock_files.py snapshot TOOLS.json   # the pinned baseline, under $MCPLOCK_HOME
    python mcplock_files.py check TOOLS.json      # the drift from it, exit 1 at --fail-on high
"""

import json
import sys

from mcplock import cli

command, path = sys.argv[1], sys.argv[2]
with open(path, encoding="utf-8") as f:
    data = json.load(f)
tools = data if isinstance(data, list) else data["tools"]
cli.fetch_or_exit = lambda target: tools
sys.argv = ["mcplock", command, "capture-server"]
cli.app()
