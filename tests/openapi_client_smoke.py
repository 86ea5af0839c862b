"""Drives the client openapi-python-client generated from public/openapi.json (tests/openapi.sh)
over every operation of a served app, as a third-party parents' app would: each call must answer
the expected status and parse into the document's model (not `None`, not an undocumented shape).
Fails when an operation of the document was not called, or has no tag (the client groups its
operations by tag: `storytime_client.api.<tag>`; an untagged one would land in `api.default`).

    PYTHONPATH=.build/python-client python3 tests/openapi_client_smoke.py http://127.0.0.1:PORT
"""
import datetime
import importlib
import json
import pkgutil
import sys

import storytime_client.api as api
from storytime_client import AuthenticatedClient, Client
from storytime_client import models as m
from storytime_client.types import Unset

base = sys.argv[1]
called: set[str] = set()
# Every operation's module, found under its tag's package.
modules = {name: f"{api.__name__}.{tag}.{name}" for _, tag, _ in pkgutil.iter_modules(api.__path__)
           for _, name, _ in pkgutil.iter_modules(importlib.import_module(f"{api.__name__}.{tag}").__path__)}
untagged = sorted(name for name, module in modules.items() if module.startswith(f"{api.__name__}.default."))
if untagged:
    sys.exit(f"operations without a tag: {untagged}")


def call(operation: str, status: int, client, **arguments):
    """Calls `operation`; its answer must have `status` and parse (a problem for an error)."""
    module = importlib.import_module(modules[operation])
    response = module.sync_detailed(client=client, **arguments)
    called.add(operation)
    if response.status_code != status:
        sys.exit(f"{operation}: {response.status_code} (expected {status}): {response.content[:300]!r}")
    parsed = response.parsed
    if status >= 400:
        if not isinstance(parsed, m.Problem):
            sys.exit(f"{operation}: the {status} did not parse as a Problem: {response.content[:300]!r}")
    elif status not in (204, 304) and parsed is None:
        sys.exit(f"{operation}: the {status} answer did not parse: {response.content[:300]!r}")
    elif isinstance(parsed, m.Problem):
        sys.exit(f"{operation}: a problem for a {status}: {response.content[:300]!r}")
    return parsed


anonymous = Client(base_url=base, raise_on_unexpected_status=True)


def signed_in(email: str, password: str, device: str) -> tuple[AuthenticatedClient, m.Token]:
    token = call("create_token", 200, anonymous, body=m.CreateTokenBody(email=email, password=password, device_name=device))
    return AuthenticatedClient(base_url=base, token=token.access_token, raise_on_unexpected_status=True), token


# Accounts: sign-up, verification and password reset (their mailed tokens are not read here: a wrong
# one must be the documented problem).
notice = call("privacy_notice", 200, anonymous)
call("sign_up", 202, anonymous, body=m.SignUpBody(email="new@example.com", password="a new long password",
                                                  country="FR", time_zone="Europe/Paris", privacy_notice=notice.data.version))
call("resend_verification", 202, anonymous, body=m.ResendVerificationBody(email="new@example.com"))
call("verify_email", 400, anonymous, body=m.VerifyEmailBody(token="not-a-token"))
call("request_password_reset", 202, anonymous, body=m.RequestPasswordResetBody(email="smoke@example.com"))
call("confirm_password_reset", 400, anonymous, body=m.ConfirmPasswordResetBody(token="not-a-token", password="another long password"))

parent, token = signed_in("smoke@example.com", "smoke password", "Smoke phone")
refreshed = call("refresh_token", 200, anonymous, body=m.RefreshTokenBody(refresh_token=token.refresh_token))
parent = AuthenticatedClient(base_url=base, token=refreshed.access_token, raise_on_unexpected_status=True)

me = call("get_me", 200, parent).data
# A conditional GET with the answer's ETag is the documented 304.
etag = importlib.import_module(modules["get_me"]).sync_detailed(client=parent).headers["etag"]
call("get_me", 304, parent, if_none_match=etag)
call("update_me", 200, parent, body=m.UpdateMeBody(time_zone="Europe/Paris", country=me.country))
devices = call("list_devices", 200, parent).data
assert devices, "no device listed"

# The catalog.
call("list_categories", 200, parent)
page = call("list_books", 200, parent, per_page=30)
# Books whose rights are available now first: a library add of any other is (rightly) a 422.
books = sorted(page.data, key=lambda b: not b.rights_available)
# tests/openapi.sh gave one book an uploaded cover: its object parses into the model.
covered = [b for n in range(1, 9) for b in call("list_books", 200, parent, per_page=30, page=n).data if b.cover]
assert len(covered) == 1 and covered[0].cover.renditions[0].width == 160 and covered[0].cover.dominant_color == "#c86432", covered
searched = call("list_books", 200, parent, q=books[0].title.split()[0])
assert searched.meta.highlights and searched.meta.highlights[0].id == searched.data[0].id, "a search without highlights"
suggested = call("suggest_books", 200, parent, q=books[0].title.split()[0][:4])
assert suggested.data and all(s.kind.value in ("word", "title") for s in suggested.data), "no suggestion for a title's first letters"
assert len(books) >= 10 and page.meta.total_count >= len(books), "the catalog is empty"
with_publisher = [b for b in books if not isinstance(b.publisher, Unset) and b.publisher is not None]
without_publisher = [b for b in books if b.publisher is None]
assert with_publisher, "no book with a publisher parsed"
call("get_book", 200, parent, id=books[0].id)
call("catalog_calendar", 200, parent, month=datetime.date.today().strftime("%Y-%m"))
call("catalog_calendar_day", 200, parent, date=datetime.date.today().isoformat())

# Children and their libraries.
children = call("list_children", 200, parent).data
ada = children[0].id
# Idempotency-Key: a retry is the first answer again; the key with another body is the documented 422.
ben_body = m.AddChildBody(name="Ben", birth_year=datetime.date.today().year - 5)
ben = call("add_child", 201, parent, body=ben_body, idempotency_key="smoke-add-ben").data.id
assert call("add_child", 201, parent, body=ben_body, idempotency_key="smoke-add-ben").data.id == ben, "the retry added another child"
reused = call("add_child", 422, parent, body=m.AddChildBody(name="Cleo"), idempotency_key="smoke-add-ben")
assert reused.code == "idempotency_key_reused", reused
call("get_child", 200, parent, child_id=ben)
call("update_child", 200, parent, child_id=ben, body=m.UpdateChildBody(name="Benjamin"))
call("add_to_library", 201, parent, child_id=ada, body=m.AddToLibraryBody(book_id=books[0].id))
call("add_to_library", 201, parent, child_id=ada, body=m.AddToLibraryBody(book_id=books[1].id))
entries = call("list_library", 200, parent, child_id=ada).data
assert {e.id for e in entries} >= {books[0].id, books[1].id} and all(e.added_at for e in entries), "the library does not list what was added"
call("record_play", 201, parent, child_id=ada, book_id=books[0].id, body=m.RecordPlayBody(position_seconds=60, completed=False))
grant = call("create_playback_grant", 201, parent, child_id=ada, book_id=books[0].id).data
assert grant.token.count(".") == 2 and grant.expires_because.value == "max_lifetime" and grant.url.endswith(".m3u8"), grant
now = datetime.datetime.now(datetime.timezone.utc)
offline = [m.OfflinePlay(client_id=f"offline-{i}", book_id=books[0].id, position_seconds=30 * i, completed=False,
                         played_at=now - datetime.timedelta(minutes=30 - i)) for i in range(3)]
batch = call("record_offline_plays", 200, parent, child_id=ada, body=m.RecordOfflinePlaysBody(plays=offline + offline[:1]))
assert [r.status.value for r in batch.data] == ["recorded", "recorded", "recorded", "duplicate"], batch.data
call("continue_watching", 200, parent, child_id=ada)
history = call("list_history", 200, parent, child_id=ada).data
assert history, "the play is not in the history"
# Exports are downloads: the client reads them as text (`text/csv` comes first in the document),
# never as JSON it would choke on with format=csv.
exported = call("export_history", 200, parent, child_id=ada)
assert isinstance(exported, str) and json.loads(exported)["data"], exported[:200]
exported = call("export_history", 200, parent, child_id=ada, format_=m.ExportHistoryFormat.CSV)
assert isinstance(exported, str) and exported.startswith("play_id,book_id,") and exported.count("\n") > 1, exported[:200]
call("child_stats", 200, parent, child_id=ada)
call("copy_library_entry", 201, parent, child_id=ada, book_id=books[0].id, body=m.CopyLibraryEntryBody(to_child_id=ben))
call("move_library_entry", 200, parent, child_id=ada, book_id=books[1].id, body=m.MoveLibraryEntryBody(to_child_id=ben))
for book in books[2:5]:
    call("add_to_library", 201, parent, child_id=ada, body=m.AddToLibraryBody(book_id=book.id))
call("bulk_library", 200, parent, child_id=ada, body=m.BulkLibraryBody(action=m.BulkLibraryBodyAction.COPY, book_ids=[b.id for b in books[2:5]], to_child_id=ben))
category = books[0].categories[0].slug if books[0].categories else call("list_categories", 200, parent).data[0].slug
call("add_category_to_library", 200, parent, child_id=ben, category=category)
call("remove_play", 204, parent, child_id=ada, play_id=history[0].id)
call("remove_book_history", 204, parent, child_id=ada, book_id=books[0].id)
call("remove_from_library", 204, parent, child_id=ada, book_id=books[0].id)

# Family controls, with the nullable objects (bedtime, schedule days) sent and read back.
bedtime = m.Bedtime(start="19:30", end="07:00")
schedule = m.ScheduleChange(saturday=m.DayLimitsChange(daily_minutes=90, bedtime=m.Bedtime(start="20:30", end="08:00")))
controls = call("set_controls", 200, parent, child_id=ada, body=m.ControlsChange(max_age=8, bedtime=bedtime, schedule=schedule)).data
assert controls.bedtime is not None and controls.bedtime.start == "19:30", "the bedtime did not come back"
controls = call("set_controls", 200, parent, child_id=ada, body=m.ControlsChange(bedtime=None, schedule=None)).data
assert controls.bedtime is None, "a null bedtime did not clear it"
call("get_controls", 200, parent, child_id=ada)
call("child_today", 200, parent, child_id=ada)

# Child mode: a PIN, a paired device, a request the parent approves and one it declines.
call("set_parent_pin", 204, parent, body=m.SetParentPinBody(pin="2468", password="smoke password"))
call("unlock_parent_mode", 200, parent, body=m.UnlockParentModeBody(pin="2468"))
paired = call("pair_child_device", 201, parent, child_id=ada, body=m.PairChildDeviceBody(name="Ada's tablet"))
tablet = AuthenticatedClient(base_url=base, token=paired.data.access_token, raise_on_unexpected_status=True)
first = call("ask_for_book", 201, tablet, child_id=ada, body=m.AskForBookBody(book_id=books[6].id)).data
second = call("ask_for_book", 201, tablet, child_id=ada, body=m.AskForBookBody(book_id=books[7].id)).data
call("list_book_requests", 200, parent, child_id=ada)
call("approve_book_request", 200, parent, child_id=ada, request_id=first.id)
call("decline_book_request", 200, parent, child_id=ada, request_id=second.id)
call("remove_parent_pin", 204, parent, body=m.RemoveParentPinBody(password="smoke password"))
exported = call("export_child", 200, parent, child_id=ada)
assert isinstance(exported, str) and json.loads(exported), exported[:200]
exported = call("export_child", 200, parent, child_id=ada, format_=m.ExportChildFormat.CSV)
assert isinstance(exported, str) and exported.startswith("play_id,book_id,"), exported[:200]
call("remove_child", 200, parent, child_id=ben)

# The family circle: an invitation listed and withdrawn; the rules' problems where a second member
# would be needed (the mailed token is not read here: a wrong one is the documented 400).
family = call("get_family", 200, parent).data
assert family.role == m.FamilyRole.PARENT and [x.account_id for x in family.members] == [me.id], family
assert [c.id for c in family.children] == [ada], family.children
invited = call("invite_to_family", 201, parent, body=m.InviteToFamilyBody(email="gran@example.com", role=m.FamilyRole.CAREGIVER)).data
pending = call("get_family", 200, parent).data.invitations
assert [(i.id, i.role, i.invited_by) for i in pending] == [(invited.id, m.FamilyRole.CAREGIVER, "smoke@example.com")], pending
call("revoke_family_invitation", 204, parent, invitation_id=invited.id)
assert call("accept_family_invitation", 400, parent, body=m.AcceptFamilyInvitationBody(token="not-a-token")).code == "invalid_token"
assert call("update_family_member", 200, parent, account_id=me.id, body=m.UpdateFamilyMemberBody(may_answer_requests=True)).data.role == m.FamilyRole.PARENT
assert call("remove_family_member", 409, parent, account_id=me.id).code == "last_parent"
assert call("leave_family", 409, parent).code == "only_member"

# The account's own changes, then signing devices out, then the account itself.
call("change_email", 202, parent, body=m.ChangeEmailBody(email="smoke2@example.com", password="smoke password"))
call("change_password", 204, parent, body=m.ChangePasswordBody(current_password="smoke password", new_password="smoke password two"))
parent, _ = signed_in("smoke@example.com", "smoke password two", "Smoke laptop")
other = call("list_devices", 200, parent).data
call("sign_out_device", 204, parent, device_id=[d for d in other if not d.current][0].id)
call("logout", 204, parent)
parent, _ = signed_in("smoke@example.com", "smoke password two", "Smoke phone 2")
call("sign_out_all_devices", 204, parent)
parent, _ = signed_in("smoke@example.com", "smoke password two", "Smoke phone 3")
receipt = call("delete_account", 200, parent, body=m.DeleteAccountBody(password="smoke password two")).data
assert receipt.family_removed is True and receipt.children == 1, receipt

every = set(modules)
missing = every - called
if missing:
    sys.exit(f"operations never called: {sorted(missing)}")
print(f"the generated client called all {len(every)} operations; every answer parsed")
