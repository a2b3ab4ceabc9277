"""The replication application run by spark-submit, one per mirror, and its pure building blocks.

Nothing here imports Django: the control plane imports from this package, never the reverse.
"""
