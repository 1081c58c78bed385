"""The kill -9 harness (see harness.py); run it on its own with `python3 -m tests.crash --trials 50`."""
