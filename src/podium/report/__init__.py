"""Reports: self-contained HTML (inline SVG plots), Markdown and JSON for scorecards and rankings."""
