"""The course's labs: `labs/src/` the sources, `labs/checks/` the checks of each lab."""
