"""The build and the repository: generated notebooks, site, slides, agenda, German text, citations, layering."""
