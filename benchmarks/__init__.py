"""Side-by-side benchmarks of rig against its baselines; run them with `python -m benchmarks`."""
