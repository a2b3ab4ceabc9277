"""What the control plane needs to run mirror applications: Spark's jars and our writer, Maven
resolution, the driver's class archive, process supervision, Hadoop file system calls and YARN's
REST API. Development launchers of local brokers, Redis and Hadoop live in `devstack`.

Imports no Django so that scripts and fixtures can use it before settings exist.
"""
