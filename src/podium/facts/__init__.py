"""Node facts: one collector per component, parsing kept apart from running commands."""
