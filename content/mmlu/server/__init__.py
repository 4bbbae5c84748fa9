"""The MMLU document's server side (not in the browser wheel): its "Run it yourself" page."""
