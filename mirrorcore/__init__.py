"""MirrorMaker 2's logic that is neither Spark nor Django: replication policies, topic and group
filters, the internal topics' record formats, offset translation, connection and override settings,
the mirror configuration, the Kafka admin calls, and the channel between an application and the
control plane.

The Spark application (`spark_runtime`) and the control plane both import this package; it imports
neither of them, nor pyspark, nor Django (a unit test keeps it so).
"""
