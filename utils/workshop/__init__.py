"""The workshop and the costs lesson: a room's measured figures (results), the dated price
files (prices) and the text lesson 09 prints from them (cost_tables)."""
