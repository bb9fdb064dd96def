"""Results store: runs, findings, measurements, scorecards and rankings (SQLAlchemy 2)."""
