"""The scoring lesson: how an MMLU score is made, and when a drop should block a release."""
