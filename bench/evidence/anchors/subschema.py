"""IBM's jsonsubschema (PyPI `jsonsubschema`, installed by bench/evidence/run into a cached venv,
never committed) as a third schema checker beside Confluent's labels and getsentry's: is every
value the old schema accepts accepted by the new one? For a tool's `inputSchema` that is "every
call valid at base is valid at head": compatible.

    python subschema.py < pairs.jsonl > answers.jsonl

Each input line is {"id", "old", "new"}; each output line {"id", "compatible": true|false} or
{"id", "error": "..."} when the checker does not answer (a keyword it does not support, an
exception, or more than TIMEOUT seconds).
"""

import json
import signal
import sys

from jsonsubschema import isSubschema

TIMEOUT = 20


class Timeout(Exception):
    pass


def alarm(_signum, _frame):
    raise Timeout()


signal.signal(signal.SIGALRM, alarm)
for line in sys.stdin:
    if not line.strip():
        continue
    item = json.loads(line)
    out = {"id": item["id"]}
    signal.alarm(TIMEOUT)
    try:
        out["compatible"] = bool(isSubschema(item["old"], item["new"]))
    except Timeout:
        out["error"] = f"no answer in {TIMEOUT} s"
    except BaseException as e:  # the checker raises its own types for what it does not support
        out["error"] = f"{type(e).__name__}: {str(e)[:160]}"
    finally:
        signal.alarm(0)
    print(json.dumps(out), flush=True)
