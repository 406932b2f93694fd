"""Connection settings shared by histd.Client and histd.aio.Client: address, TLS, token.

Contract: ``tls`` None/False is a plaintext channel; True uses the system's root
certificates; a ``TLS`` names PEM files (or holds PEM bytes) for the roots and, for mutual
TLS, the client's certificate chain and key; a ``grpc.ChannelCredentials`` is used as is.
``token`` is sent as ``authorization: Bearer <token>`` metadata on every call. A token is
refused on a plaintext channel to anything but a loopback address (it would cross the
network in clear). Channels accept messages of up to ``max_message_bytes`` both ways.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from typing import Optional, Sequence, Tuple, Union

import grpc

__all__ = ["TLS", "DEFAULT_ADDRESS", "ChannelConfig"]

DEFAULT_ADDRESS = "127.0.0.1:7440"

PemSource = Union[str, "os.PathLike[str]", bytes, None]


@dataclass(frozen=True)
class TLS:
    """TLS settings: PEM file paths (str / PathLike) or PEM contents (bytes).

    ``root_certificates``: the CA bundle that signs the server's certificate (None: the
    system's roots). ``certificate_chain`` and ``private_key``: the client's certificate and
    key, for mutual TLS. ``server_name``: the name to check the server's certificate against
    when it differs from the address's host (grpc.ssl_target_name_override).
    """

    root_certificates: PemSource = None
    certificate_chain: PemSource = None
    private_key: PemSource = None
    server_name: Optional[str] = None

    def credentials(self) -> grpc.ChannelCredentials:
        """The grpc.ssl_channel_credentials these settings describe."""
        if (self.certificate_chain is None) != (self.private_key is None):
            raise ValueError("TLS: certificate_chain and private_key go together (mutual TLS)")
        return grpc.ssl_channel_credentials(
            root_certificates=_read_pem(self.root_certificates),
            private_key=_read_pem(self.private_key),
            certificate_chain=_read_pem(self.certificate_chain),
        )


def _read_pem(source: PemSource) -> Optional[bytes]:
    if source is None or isinstance(source, bytes):
        return source
    with open(source, "rb") as f:
        return f.read()


def _is_loopback(address: str) -> bool:
    if address.startswith(("unix:", "unix-abstract:")):
        return True
    target = address.split("://", 1)[-1]  # dns:///host:port, ipv4:host:port
    if target.startswith(("ipv4:", "ipv6:")):
        target = target.split(":", 1)[1]
    if target.startswith("["):
        host = target[1:].split("]", 1)[0]
    else:
        host = target.rsplit(":", 1)[0] if target.count(":") == 1 else target
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class ChannelConfig:
    """Resolved connection settings; builds sync or asyncio channels and call metadata."""

    def __init__(
        self,
        address: str,
        tls: Union[None, bool, TLS, grpc.ChannelCredentials],
        token: Optional[str],
        timeout: Optional[float],
        max_message_bytes: int,
        wait_for_ready: bool,
    ) -> None:
        if tls is True:
            credentials: Optional[grpc.ChannelCredentials] = grpc.ssl_channel_credentials()
        elif tls is None or tls is False:
            credentials = None
        elif isinstance(tls, TLS):
            credentials = tls.credentials()
        elif isinstance(tls, grpc.ChannelCredentials):
            credentials = tls
        else:
            raise TypeError("tls: want None, True, histd.TLS or grpc.ChannelCredentials")
        if token is not None and credentials is None and not _is_loopback(address):
            raise ValueError(
                f"a token on a plaintext channel to {address} would be sent in clear; "
                "pass tls=True or tls=histd.TLS(...)")
        self.address = address
        self.credentials = credentials
        self.timeout = timeout
        self.wait_for_ready = wait_for_ready
        self.options: Sequence[Tuple[str, object]] = [
            ("grpc.max_send_message_length", max_message_bytes),
            ("grpc.max_receive_message_length", max_message_bytes),
        ]
        if isinstance(tls, TLS) and tls.server_name:
            self.options = [*self.options, ("grpc.ssl_target_name_override", tls.server_name)]
        self.metadata: Tuple[Tuple[str, str], ...] = (
            (("authorization", f"Bearer {token}"),) if token is not None else ())

    def sync_channel(self) -> grpc.Channel:
        if self.credentials is None:
            return grpc.insecure_channel(self.address, options=self.options)
        return grpc.secure_channel(self.address, self.credentials, options=self.options)

    def aio_channel(self) -> "grpc.aio.Channel":
        if self.credentials is None:
            return grpc.aio.insecure_channel(self.address, options=self.options)
        return grpc.aio.secure_channel(self.address, self.credentials, options=self.options)

    def call_kwargs(self, stream: bool = False) -> dict:
        """Keyword arguments for every stub call: metadata, timeout (not on ingest streams),
        wait_for_ready."""
        kwargs: dict = {"metadata": self.metadata, "wait_for_ready": self.wait_for_ready}
        if not stream and self.timeout is not None:
            kwargs["timeout"] = self.timeout
        return kwargs
