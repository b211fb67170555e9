"""Small models users copy to start their own; their state counts can be derived by hand (tests rely on that)."""
