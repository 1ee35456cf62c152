"""Jupyter: the notebook command and the helpers the notebooks call."""
