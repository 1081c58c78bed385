"""The hostile run: process-group interrupts and damaged state databases (`python3 -m tests.hostile --help`)."""
