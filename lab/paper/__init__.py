"""The MRC paper's room: what `lab/run.py paper` runs and calls its rows (settings), the
paper's published results (figures), the runner and its judgements (runner, links), and a
paper run read back and drawn beside the paper for notebook 06 (rows, plots, notebook)."""
