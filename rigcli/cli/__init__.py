"""The command line: argv handling, Typer wiring, commands, completion; the only room importing Typer."""
