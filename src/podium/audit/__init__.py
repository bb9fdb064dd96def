"""The version audit: node facts graded against the offline advisory bundle."""
