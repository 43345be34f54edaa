"""The workshop and the costs lesson: a room's measured figures (results) and the dated price
files (prices)."""
