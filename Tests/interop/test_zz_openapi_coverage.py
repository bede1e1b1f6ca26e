"""Runs last: every documented operation was exercised by the API tests above, and matched the document."""
from api_client import OPENAPI, SEEN


def test_every_documented_route_was_exercised():
    documented = {(m.upper(), path) for path, item in OPENAPI["paths"].items() for m in item if m in ("get", "post", "patch", "delete")}
    missing = documented - SEEN
    assert not missing, f"routes no test exercised: {sorted(missing)}"
