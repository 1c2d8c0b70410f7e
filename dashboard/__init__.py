"""The arbiter and player web pages (to come: issue 7)."""
