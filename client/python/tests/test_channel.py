"""Connection settings: the bearer token goes on every call, TLS settings build credentials.

These tests check what the client sends (through a recording channel) and that a TLS client
refuses a plaintext server; test_security.py runs against a daemon with TLS and tokens.
"""

import grpc
import numpy as np
import pytest

import histd
from histd import _channel
from histd.v1 import histograms_pb2


class RecordingChannel:
    """Stands in for a grpc.Channel: every stub call records its keyword arguments."""

    def __init__(self):
        self.calls = []

    def _method(self, path, **_):
        def call(request, **kwargs):
            self.calls.append((path, kwargs))
            if path.endswith("GetHistogramInfo"):
                return histograms_pb2.HistogramInfo(
                    spec=histograms_pb2.HistogramSpec(name="h", rows=1, cols=4))
            if path.endswith(("Query", "Ingest")):
                return iter(())
            return histograms_pb2.ListHistogramsResponse()
        return call

    unary_unary = unary_stream = stream_stream = stream_unary = _method

    def close(self):
        pass


def test_token_is_sent_on_every_call(monkeypatch):
    channel = RecordingChannel()
    monkeypatch.setattr(_channel.ChannelConfig, "sync_channel", lambda self: channel)
    client = histd.Client("127.0.0.1:1", token="s3cret", timeout=5)
    client.list()
    h = client.histogram("h")
    with pytest.raises(ValueError):
        h.values()  # the recording channel returns no chunk
    with pytest.raises(histd.HistdError):
        h.fill(np.array([1], dtype=np.uint32))  # the stream ends without an ack
    paths = [p for p, _ in channel.calls]
    assert paths == ["/histd.v1.Histograms/ListHistograms", "/histd.v1.Histograms/GetHistogramInfo",
                     "/histd.v1.Query/Query", "/histd.v1.Ingest/Ingest"]
    for path, kwargs in channel.calls:
        assert ("authorization", "Bearer s3cret") in kwargs["metadata"], path
        assert ("timeout" in kwargs) == (not path.endswith("Ingest")), path


def test_no_token_no_metadata():
    assert _channel.ChannelConfig("127.0.0.1:1", None, None, None, 1 << 20, False).metadata == ()


@pytest.mark.parametrize("address", ["10.0.0.1:7440", "histd.example.org:443", "dns:///histd:7440"])
def test_token_refused_in_clear_off_loopback(address):
    with pytest.raises(ValueError, match="in clear"):
        histd.Client(address, token="t")
    histd.Client(address, token="t", tls=True).close()  # fine over TLS


@pytest.mark.parametrize("address", ["127.0.0.1:7440", "localhost:7440", "[::1]:7440",
                                     "unix:/run/histd.sock"])
def test_token_allowed_in_clear_on_loopback(address):
    histd.Client(address, token="t").close()


def test_tls_settings(tmp_path):
    with pytest.raises(ValueError, match="go together"):
        histd.TLS(certificate_chain=b"x").credentials()
    pem = tmp_path / "ca.pem"
    pem.write_bytes(b"-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n")
    assert isinstance(histd.TLS(root_certificates=pem).credentials(), grpc.ChannelCredentials)
    config = _channel.ChannelConfig("h:1", histd.TLS(root_certificates=str(pem),
                                                     server_name="histd.internal"),
                                    None, None, 1 << 20, False)
    assert ("grpc.ssl_target_name_override", "histd.internal") in config.options
    with pytest.raises(TypeError):
        histd.Client("127.0.0.1:1", tls="yes")


def test_tls_client_against_plaintext_daemon_is_unavailable(daemon):
    with histd.Client(daemon.address, tls=True, token="t", timeout=10) as c:
        with pytest.raises(histd.UnavailableError) as e:
            c.list()
    assert e.value.code == grpc.StatusCode.UNAVAILABLE
