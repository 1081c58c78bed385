"""Everything that draws on the terminal: tables, prompts, the live view and plain run lines."""
