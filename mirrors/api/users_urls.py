"""`/api/v1/users/`: users and roles (admins only)."""

from rest_framework.routers import SimpleRouter

from mirrors.api.users import UserViewSet

router = SimpleRouter()
router.register("users", UserViewSet, basename="user")

urlpatterns = router.urls
