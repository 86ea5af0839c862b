#!/usr/bin/env python3
"""A real SMTP server for the tests (aiosmtpd): every message it accepts is parsed with Python's
email package and written to DIR as one JSON file {from, to, subject, text, html, message_id}.
Prints "PORT <n>" once listening. With --user/--password it requires AUTH (PLAIN or LOGIN) and
writes each attempt to DIR as auth-*.attempt {mechanism, tls}. With --tls it makes a CA and a
certificate for 127.0.0.1 (written to DIR/ca.pem) and speaks TLS: `starttls` (offered and required
before AUTH and MAIL) or `implicit` (from the first byte). Each mail's record says whether it came over TLS.
Usage: smtp_sink.py DIR [--port N] [--user U --password P] [--tls starttls|implicit]"""
import argparse, datetime, email, email.policy, ipaddress, json, os, signal, ssl, sys, time
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


def over_tls(server, session):
    """STARTTLS done (aiosmtpd's session.ssl), or TLS from the first byte (the socket's transport)."""
    return session.ssl is not None or server.transport.get_extra_info("ssl_object") is not None


class Sink:
    def __init__(self, folder):
        self.folder = folder
        self.count = 0

    async def handle_DATA(self, server, session, envelope):
        message = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
        text = message.get_body(preferencelist=("plain",))
        html = message.get_body(preferencelist=("html",))
        self.count += 1
        record = {
            "from": envelope.mail_from, "to": envelope.rcpt_tos, "subject": str(message["Subject"]),
            "message_id": str(message["Message-ID"]), "date": str(message["Date"]),
            "text": text.get_content() if text else None, "html": html.get_content() if html else None,
            "tls": over_tls(server, session), "authenticated": bool(session.authenticated),
        }
        name = os.path.join(self.folder, "%d-%06d.json" % (time.time_ns(), self.count))
        with open(name + ".tmp", "w") as f:
            json.dump(record, f)
        os.rename(name + ".tmp", name)
        return "250 OK"


def make_certificate(folder):
    """A CA (its certificate in folder/ca.pem) and a server certificate it signed for 127.0.0.1."""
    now = datetime.datetime.now(datetime.timezone.utc)
    def build(subject, issuer, key, signer, ca):
        builder = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
                   .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)])).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if not ca:
            builder = (builder.add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]), critical=False)
                       .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False))
        else:
            builder = builder.add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                                                          key_encipherment=False, data_encipherment=False, key_agreement=False,
                                                          encipher_only=False, decipher_only=False), critical=True)
        return builder.sign(signer, hashes.SHA256())
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = build("storytime test CA", "storytime test CA", ca_key, ca_key, True)
    server = build("127.0.0.1", "storytime test CA", key, ca_key, False)
    pem = lambda name, data: open(os.path.join(folder, name), "wb").write(data)
    pem("ca.pem", ca.public_bytes(serialization.Encoding.PEM))
    pem("server.pem", server.public_bytes(serialization.Encoding.PEM))
    pem("server.key", key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(os.path.join(folder, "server.pem"), os.path.join(folder, "server.key"))
    return context


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--user")
    parser.add_argument("--password")
    parser.add_argument("--tls", choices=["starttls", "implicit"])
    args = parser.parse_args()
    os.makedirs(args.folder, exist_ok=True)

    def authenticate(server, session, envelope, mechanism, auth_data):
        name = os.path.join(args.folder, "auth-%d.attempt" % time.time_ns())
        with open(name, "w") as f:
            json.dump({"mechanism": mechanism, "tls": over_tls(server, session)}, f)
        ok = isinstance(auth_data, LoginPassword) and auth_data.login.decode() == args.user and auth_data.password.decode() == args.password
        return AuthResult(success=ok)

    options = {}
    if args.user:
        # Without TLS the sink takes AUTH in clear (and records it): the client must not send it.
        # (aiosmtpd counts only STARTTLS as TLS for `auth_require_tls`.)
        options = dict(authenticator=authenticate, auth_require_tls=args.tls == "starttls", auth_required=True)
    if args.tls == "starttls":
        options.update(tls_context=make_certificate(args.folder), require_starttls=True)
    elif args.tls == "implicit":
        options.update(ssl_context=make_certificate(args.folder))
    controller = Controller(Sink(args.folder), hostname="127.0.0.1", port=args.port or 0, **options)
    if args.port == 0:
        # aiosmtpd needs a concrete port: take a free one from the kernel.
        import socket
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            controller.port = probe.getsockname()[1]
    controller.start()
    print("PORT %d" % controller.port, flush=True)
    # Stopped by SIGTERM (the test's stop()) or when the test process dies (stdin closes).
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM, signal.SIGINT])
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    sys.stdin.read()
    os._exit(0)


if __name__ == "__main__":
    main()
