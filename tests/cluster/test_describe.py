"""describe(): whatever a server answers, a user reads one line naming the server."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kubesched.backend.kube.api import APIError, TLSError, describe

SERVER = "https://10.0.0.1:6443"


@given(
    status=st.sampled_from([0, 400, 401, 403, 404, 409, 410, 429, 500, 503]) | st.integers(0, 999),
    reason=st.text(max_size=40),
    message=st.text(max_size=200),
)
def test_any_answer_is_one_line_naming_the_server(status: int, reason: str, message: str) -> None:
    line = describe(APIError(status, reason, message), SERVER)
    assert line.startswith(f"{SERVER}: ")
    assert len(line.splitlines()) == 1


@given(detail=st.text(max_size=100), verify=st.booleans())
def test_any_tls_failure_is_one_line(detail: str, verify: bool) -> None:
    line = describe(TLSError(detail, verify=verify), SERVER)
    assert len(line.splitlines()) == 1
    assert "HTTPS address" in line if not verify else "certificate" in line


def test_a_403_of_several_requests_groups_them_by_verb() -> None:
    err = APIError(403, "Forbidden", 'pods is forbidden: User "u" cannot watch resource "pods" in API group ""')
    refused = ["list nodes", "watch pods", "list csinodes.storage.k8s.io", "list nodes"]
    assert describe(err, SERVER, refused) == (
        f'{SERVER}: 403 Forbidden, user "u" may not list csinodes.storage.k8s.io, nodes; watch pods: '
        'check the RBAC role bound to user "u"'
    )


def test_an_expired_certificate_is_not_blamed_on_the_ca() -> None:
    assert describe(TLSError("certificate has expired", verify=True), SERVER) == (
        f"{SERVER}: the server's certificate is out of date (certificate has expired): "
        "renew the API server's certificate, or check this machine's clock"
    )
