"""Local infrastructure for development, tests, the demo and the benchmarks: real Kafka brokers
(KRaft, with TLS and SASL listeners and throwaway certificates), Redis, a Spark standalone cluster
and an HDFS + YARN test bed, fetched from Maven Central and Debian and run on loopback.

Production deployments bring their own; nothing under `controlplane/`, `mirrors/` or `frontend/`
needs this package except the `devstack` and `demo` commands (and the class archive's recording run).
Imports no Django.
"""
