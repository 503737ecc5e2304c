"""The reference side of tests/canary_reference.rs: `expectation`'s sequential proportion test run
on the streams the Rust test generated. Reads {"rho", "alternative", "alpha", "batch", "streams":
["0110…", …]} on stdin; prints, per stream, the number of events at the first look where the
reference rejected (null: never)."""

import json
import sys
import warnings

import numpy as np
from expectation.seqtest.sequential_e_testing import SequentialTesting

warnings.filterwarnings("ignore")
job = json.load(sys.stdin)
out = []
for s in job["streams"]:
    x = np.frombuffer(s.encode(), dtype=np.uint8) - ord("0")
    test = SequentialTesting(
        test_type="proportion",
        null_value=job["rho"],
        alternative=job["alternative"],
    )
    # The e-process itself (`e_calculator`: the library's mixture over the running sums), not
    # `update`, whose confidence-bound step raises on some streams (scipy bisect without a sign
    # change, expectation 0.6.1) after the e-value is already computed.
    hit, log_e = None, 0.0
    for i in range(0, len(x), job["batch"]):
        log_e += float(np.log(test.e_calculator(x[i : i + job["batch"]].astype(int))))
        if log_e >= np.log(1 / job["alpha"]):
            hit = min(i + job["batch"], len(x))
            break
    out.append(hit)
print(json.dumps(out))
