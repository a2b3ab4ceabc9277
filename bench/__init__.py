"""The benchmark: Mirrorplane vs Apache MirrorMaker 2 vs a tuned raw Java copy, on the same
clusters and data in one run (`make bench`, or `python -m bench --help`)."""
