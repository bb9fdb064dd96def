"""Grading: parsed models -> CheckResult. Each result carries ``details['action']`` for the verdict."""
