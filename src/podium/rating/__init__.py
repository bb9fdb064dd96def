"""Rating: evidence + declared facts + a published rubric -> scorecards, tiers, rankings, history."""
