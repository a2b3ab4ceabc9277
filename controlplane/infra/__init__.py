"""Local infrastructure: real Kafka brokers, Redis and Spark's jars, fetched and run on loopback.

Used by `./manage.py devstack`, `make demo`, the test fixtures and the benchmarks alike.
Imports no Django so that scripts and fixtures can use it before settings exist.
"""
