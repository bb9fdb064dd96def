"""Render check results: table (Rich), Markdown, SARIF 2.1.0. JSON is the models themselves."""
