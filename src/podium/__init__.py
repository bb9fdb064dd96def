"""podium: rate GPU clouds with evidence."""

__version__ = "0.1.0"
