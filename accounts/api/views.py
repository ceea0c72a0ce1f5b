"""Thin HTTP edges over `accounts.services` and `accounts.login_attempts`."""

from __future__ import annotations

from django.contrib.auth import authenticate
from django.contrib.auth.signals import user_logged_in
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from core.authentication import BearerOrTokenAuthentication
from core.openapi import error_responses

from .. import services
from ..login_attempts import login_attempt_begin
from .serializers import TokenRequestSerializer, TokenSerializer


class TokenView(APIView):
    authentication_classes = []
    permission_classes = [AllowAny]

    @extend_schema(
        request=TokenRequestSerializer,
        responses={200: TokenSerializer, **error_responses(401, 422, 429)},
        summary="Exchange a username and password for a new API token",
        description="Every login gets a new token, valid until `expires_at`. "
        "Failed logins are limited per client address and per username at that "
        "address, more slowly each time (429 `throttled`); many failures from "
        "everywhere lock the username except where its user signed in before "
        "(429 `account_locked`). Both come with Retry-After.",
    )
    def post(self, request):
        serializer = TokenRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        login_attempt_begin(request, username=serializer.validated_data["username"])
        user = authenticate(request=request, **serializer.validated_data)
        if user is None or not user.is_active:
            raise AuthenticationFailed("Wrong username or password.")
        user_logged_in.send(sender=type(user), request=request, user=user)
        issued = services.api_token_issue(user=user)
        return Response(TokenSerializer(issued).data)


class LogoutView(APIView):
    authentication_classes = [BearerOrTokenAuthentication]

    @extend_schema(
        request=None,
        responses={204: None, **error_responses(401)},
        summary="Revoke the token this request is made with",
    )
    def post(self, request):
        services.api_token_revoke(token=request.auth)
        return Response(status=status.HTTP_204_NO_CONTENT)


class LogoutAllView(APIView):
    @extend_schema(
        request=None,
        responses={204: None, **error_responses(401)},
        summary="Revoke every API token of the caller",
    )
    def post(self, request):
        services.api_token_revoke_all(user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
