"""The replication application run by spark-submit, one per mirror: its connectors, the Spark
queries and the JVM writer they drive.

Nothing here imports Django; the MM2 logic it shares with the control plane lives in `mirrorcore`.
"""
