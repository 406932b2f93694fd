"""The Python client against a daemon with TLS and tokens (certificates made by openssl).

A reader token lists and reads, and gets PermissionDeniedError naming the method for a
create; no token and an unknown token get UnauthenticatedError; trusting another CA or
talking plaintext to the TLS port is UnavailableError; mutual TLS maps a client
certificate's CN to its role.
"""

import hashlib
import subprocess

import pytest

import histd
from conftest import Daemon


def _openssl(cwd, *args):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _ca(cwd, name):
    _openssl(cwd, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
             "-nodes", "-days", "2", "-keyout", f"{name}.key", "-out", f"{name}.pem",
             "-subj", f"/CN=histd test {name}")


def _cert(cwd, name, ca, cn, ext):
    (cwd / f"{name}.ext").write_text(ext)
    _openssl(cwd, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={cn}")
    _openssl(cwd, "x509", "-req", "-days", "2", "-in", f"{name}.csr", "-CA", f"{ca}.pem",
             "-CAkey", f"{ca}.key", "-set_serial", str(abs(hash(name)) % 10**9), "-out",
             f"{name}.pem", "-extfile", f"{name}.ext")


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = tmp_path_factory.mktemp("pki")
    _ca(d, "ca")
    _ca(d, "other")
    _cert(d, "server", "ca", "localhost", "subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    _cert(d, "client", "ca", "py-admin", "extendedKeyUsage=clientAuth\n")
    digest = hashlib.sha256(b"py-reader-token").hexdigest()
    (d / "tokens").write_text(f"sha256:{digest} py reader\nsubject:py-admin ops admin\n")
    return d


@pytest.fixture(scope="module")
def secured(pki, tmp_path_factory):
    daemon = Daemon(tmp_path_factory.mktemp("secured"), f"--tls_cert={pki / 'server.pem'}",
                    f"--tls_key={pki / 'server.key'}", f"--tls_client_ca={pki / 'ca.pem'}",
                    f"--auth_tokens_file={pki / 'tokens'}")
    yield daemon
    daemon.stop()


def _tls(pki, ca="ca", client=True):
    if not client:
        return histd.TLS(root_certificates=pki / f"{ca}.pem")
    return histd.TLS(root_certificates=pki / f"{ca}.pem", certificate_chain=pki / "client.pem",
                     private_key=pki / "client.key")


def test_roles_over_mutual_tls(pki, secured):
    with histd.Client(secured.address, tls=_tls(pki), token="py-reader-token", timeout=10) as reader:
        assert isinstance(reader.list(), list)
        with pytest.raises(histd.PermissionDeniedError) as denied:
            reader.create("py-h", rows=2, cols=2)
    assert "CreateHistogram" in denied.value.details and "reader" in denied.value.details
    # Without a token the certificate's CN is the identity: an admin.
    with histd.Client(secured.address, tls=_tls(pki), timeout=10) as admin:
        admin.create("py-h", rows=2, cols=2)
        admin.delete("py-h")
    with histd.Client(secured.address, tls=_tls(pki), token="wrong", timeout=10) as stranger:
        with pytest.raises(histd.UnauthenticatedError):
            stranger.list()


def test_transport_failures_are_unavailable(pki, secured):
    for tls in (None, _tls(pki, ca="other"), _tls(pki, client=False)):
        with histd.Client(secured.address, tls=tls, timeout=10) as c:
            with pytest.raises(histd.UnavailableError):
                c.list()
