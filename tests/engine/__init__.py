"""Engine tests: one suite, run on the C engine and on its pure-Python twin."""
