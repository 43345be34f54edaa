"""JupyterLab and the classic notebook in headless Chromium (`make test-browser`)."""
