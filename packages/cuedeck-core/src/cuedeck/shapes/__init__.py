"""Shapes features exchange that know no document: scene items and placements, code
ranked for a query, baselines. :mod:`cuedeck.models` re-exports them, their public home."""
