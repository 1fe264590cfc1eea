"""AQA: a bandit (LinUCB) over strategy teams, its features, rewards, state and voting."""
