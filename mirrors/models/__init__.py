from mirrors.models.cluster import Cluster
from mirrors.models.deployment import Deployment
from mirrors.models.event import Event
from mirrors.models.failover import Failover
from mirrors.models.metric import MetricHour, MetricMinute
from mirrors.models.mirror import Connector, Mirror

__all__ = ["Cluster", "Connector", "Deployment", "Event", "Failover", "MetricHour", "MetricMinute", "Mirror"]
