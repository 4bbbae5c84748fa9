"""The scoring lesson's server side (not in the browser wheel): the three-scorers widget's form and
the data-checks page."""
