from django.db.models import ProtectedError, Q
from drf_spectacular.utils import extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from mirrors.api.serializers import ClusterSerializer, MirrorSerializer
from mirrors.models import Cluster, Mirror
from mirrors.services import status as mirror_status
from mirrors.services.clusters import check_cluster
from mirrors.services.mirrors import delete_mirror


class ClusterViewSet(viewsets.ModelViewSet):
    queryset = Cluster.objects.all()
    serializer_class = ClusterSerializer
    lookup_field = "alias"

    def destroy(self, request: Request, *args, **kwargs) -> Response:
        cluster = self.get_object()
        try:
            cluster.delete()
        except ProtectedError:
            names = sorted(Mirror.objects.filter(Q(source=cluster) | Q(target=cluster)).values_list("name", flat=True))
            return Response({"detail": f"cluster {cluster.alias!r} is used by mirrors {names}: delete them first"},
                            status=status.HTTP_409_CONFLICT)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=None, responses={200: dict})
    @action(detail=True, methods=["post"])
    def check(self, request: Request, alias: str | None = None) -> Response:
        return Response(check_cluster(self.get_object()).to_dict())


class MirrorViewSet(viewsets.ModelViewSet):
    queryset = Mirror.objects.select_related("source", "target").prefetch_related("connectors")
    serializer_class = MirrorSerializer
    lookup_field = "name"

    def perform_destroy(self, instance: Mirror) -> None:
        delete_mirror(instance)

    @extend_schema(responses={200: dict})
    @action(detail=True, methods=["get"])
    def status(self, request: Request, name: str | None = None) -> Response:
        return Response(mirror_status.describe(self.get_object()))
