"""TLS for the loopback server: a throw-away CA and server certificate, made when the server starts.

The CA and the certificate (ECDSA P-256, valid one day, SANs ``127.0.0.1``, ``::1`` and ``localhost``) are made
with the ``cryptography`` package (the standard library cannot sign certificates); nothing is reused between servers.
Clients trust the server through the CA file or the kubeconfig's ``certificate-authority-data``, exactly as
they trust a real API server, so TLS verification stays on in tests.
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path

from restmapper._optional import install_hint

__all__ = ["TLSMaterial", "make_tls_material"]


@dataclass(frozen=True)
class TLSMaterial:
    """The files of a generated CA and the server certificate it signed (PEM).

    Attributes:
        ca_file: the CA certificate (what ``ca.crt`` holds in a pod).
        cert_file: the server certificate.
        key_file: the server's private key (mode 0600).
    """

    ca_file: Path
    cert_file: Path
    key_file: Path

    def server_context(self) -> ssl.SSLContext:
        """Return a server-side ``SSLContext`` (TLS 1.2+) serving the certificate."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(str(self.cert_file), str(self.key_file))
        return context


def make_tls_material(directory: Path) -> TLSMaterial:
    """Generate a CA and a server certificate for loopback into ``directory``.

    Args:
        directory: an existing private folder; ``ca.crt``, ``server.crt`` and ``server.key`` are written there.

    Returns:
        The file paths.

    Raises:
        ModuleNotFoundError: the ``cryptography`` package is not installed (the ``testing`` extra brings it).
    """
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    except ModuleNotFoundError as exc:  # an optional test dependency
        raise ModuleNotFoundError("the kit's TLS mode needs the 'cryptography' package: " + install_hint("testing"),
                                  name="cryptography") from exc

    now = datetime.datetime.now(datetime.timezone.utc)
    start, end = now - datetime.timedelta(minutes=5), now + datetime.timedelta(days=1)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "restmapper-fake-apiserver-ca")])
    ca_cert = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(start).not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                     content_commitment=False, key_encipherment=False, data_encipherment=False,
                                     key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    sans = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
            x509.IPAddress(ipaddress.ip_address("::1"))]
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "restmapper-fake-apiserver")]))
        .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(start).not_valid_after(end)
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    material = TLSMaterial(directory / "ca.crt", directory / "server.crt", directory / "server.key")
    material.ca_file.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    material.cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    material.key_file.touch(mode=0o600)
    material.key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                    serialization.NoEncryption()))
    return material
