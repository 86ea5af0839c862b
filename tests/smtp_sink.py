#!/usr/bin/env python3
"""A real SMTP server for the tests (aiosmtpd): every message it accepts is parsed with Python's
email package and written to DIR as one JSON file {from, to, subject, text, html, message_id}.
Prints "PORT <n>" once listening. With --user/--password it requires AUTH (PLAIN or LOGIN).
Usage: smtp_sink.py DIR [--port N] [--user U --password P]"""
import argparse, email, email.policy, json, os, signal, sys, time
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


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
        }
        name = os.path.join(self.folder, "%d-%06d.json" % (time.time_ns(), self.count))
        with open(name + ".tmp", "w") as f:
            json.dump(record, f)
        os.rename(name + ".tmp", name)
        return "250 OK"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--user")
    parser.add_argument("--password")
    args = parser.parse_args()
    os.makedirs(args.folder, exist_ok=True)

    def authenticate(server, session, envelope, mechanism, auth_data):
        ok = isinstance(auth_data, LoginPassword) and auth_data.login.decode() == args.user and auth_data.password.decode() == args.password
        return AuthResult(success=ok)

    options = {}
    if args.user:
        options = dict(authenticator=authenticate, auth_require_tls=False, auth_required=True)
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
