"""Pages for the people who ask, upload and review: server-rendered over the
same services and permission checks as the API (docs/architecture/web.md)."""
