"""spreport: the one program for the statistics, tables and figures of
scaleppm's experiments.  The shell scripts run the experiments and call
it; nothing else computes a median or draws a figure."""
