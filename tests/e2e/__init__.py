"""End to end: JupyterLab and the browser, lessons resumed in fresh processes, the other CPU paths, T4 memory."""
