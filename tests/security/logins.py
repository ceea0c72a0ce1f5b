"""Logging in to a real server over HTTP: the API token login and the admin form."""

from __future__ import annotations

import http.cookiejar
import json
import re
import urllib.error
import urllib.parse
import urllib.request

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import PBKDF2PasswordHasher

PASSWORD = "right-horse-battery"


def make_user(username: str, **fields):
    """A user the server can check quickly (the server hashes with its defaults)."""
    encoded = PBKDF2PasswordHasher().encode(PASSWORD, "testsalt", iterations=1000)
    return get_user_model().objects.create(
        username=username, password=encoded, **fields
    )


def request(method: str, url: str, body: bytes | None = None, headers=None):
    """(status, headers, body) of one request; errors are answers too."""
    req = urllib.request.Request(url, method=method, data=body, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=20) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def api_login(server, username: str, password: str, **headers: str):
    status, response_headers, body = request(
        "POST",
        server.url("/api/auth/token"),
        json.dumps({"username": username, "password": password}).encode(),
        {"Content-Type": "application/json", **headers},
    )
    return status, response_headers, json.loads(body)


class FormBrowser:
    """A login form over HTTP with its CSRF cookie: the admin's by default, or the
    pages' sign-in (`path="/login/"`). Extra headers go with every request."""

    def __init__(self, server, path: str = "/admin/login/", **headers: str) -> None:
        self.server = server
        self.path = path
        self.headers = headers
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )

    def _open(self, path: str, form: bytes | None = None):
        request = urllib.request.Request(
            self.server.url(path), data=form, headers=self.headers
        )
        return self.opener.open(request, timeout=20)

    def get(self, path: str):
        try:
            with self._open(path) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def login(self, username: str, password: str, next_page: str = "/admin/"):
        """(status, headers, page) after the form is sent, redirects followed:
        a success ends on `next_page`, not on the form."""
        with self._open(self.path) as response:
            page = response.read()
        token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        form = urllib.parse.urlencode(
            {
                "csrfmiddlewaretoken": token.group(1).decode(),
                "username": username,
                "password": password,
                "next": next_page,
            }
        ).encode()
        try:
            with self._open(self.path, form) as response:
                self.landed = urllib.parse.urlsplit(response.geturl()).path
                return response.status, response.headers, response.read().decode()
        except urllib.error.HTTPError as error:
            self.landed = urllib.parse.urlsplit(error.geturl()).path
            return error.code, error.headers, error.read().decode()
