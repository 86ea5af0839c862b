"""The console in a real browser: what staff do every day, end to end."""
import json
import os
import unittest
import urllib.request
import urllib.error

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

BASE = os.environ["STORYTIME_URL"]


def totp(secret, step):
    """RFC 6238 (SHA-1, 6 digits, 30 s) — what an authenticator app computes."""
    import base64, hashlib, hmac, struct
    key = base64.b32decode(secret + "=" * (-len(secret) % 8))
    mac = hmac.new(key, struct.pack(">Q", step), hashlib.sha1).digest()
    offset = mac[-1] & 15
    return "%06d" % ((struct.unpack(">I", mac[offset:offset + 4])[0] & 0x7FFFFFFF) % 1000000)


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def api(path, token=None, body=None):
    request = urllib.request.Request(BASE + path, data=json.dumps(body).encode() if body else None,
                                     headers={"Content-Type": "application/json"})
    if token:
        request.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(request) as response:
        return json.load(response)


class ConsoleCase(unittest.TestCase):
    """A browser shared by a class's tests, and the steps they all take."""

    @classmethod
    def setUpClass(cls):
        cls.driver = browser()
        cls.driver.implicitly_wait(2)

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()

    def setUp(self):
        self.driver.delete_all_cookies()

    def submit(self, element):
        """Clicks and waits for the next page to replace this one."""
        self.driver.execute_script("window.__previousPage = true")
        element.click()
        self.wait_for_new_page()

    def wait_for_new_page(self):
        def loaded(driver):
            try:
                return driver.execute_script("return window.__previousPage === undefined && document.readyState === 'complete'")
            except WebDriverException:
                return False  # mid-navigation
        WebDriverWait(self.driver, 15).until(loaded)

    def sign_in(self, email, password):
        d = self.driver
        d.get(BASE + "/admin/login")
        d.find_element(By.ID, "email").send_keys(email)
        d.find_element(By.ID, "password").send_keys(password)
        self.submit(d.find_element(By.CSS_SELECTOR, "button[type=submit]"))
        self.assertIn("Dashboard", d.find_element(By.TAG_NAME, "h1").text)

    def fill(self, field_id, value):
        element = self.driver.find_element(By.ID, field_id)
        element.clear()
        element.send_keys(value)

    def new_category(self, name, slug):
        d = self.driver
        d.get(BASE + "/admin/categories")
        self.submit(d.find_element(By.LINK_TEXT, "New category"))
        self.fill("field-name", name)
        self.fill("field-slug", slug)
        self.fill("field-display_order", "90")
        self.submit(d.find_element(By.XPATH, "//button[text()='Save']"))


class ConsoleTest(ConsoleCase):
    def test_1_category_assignment_by_checkbox_and_batch_reaches_the_parent_api(self):
        d = self.driver
        self.sign_in("editor@e2e.test", "editor password")
        self.new_category("Space Stories", "space-stories")
        self.assertIn("was created", d.find_element(By.CLASS_NAME, "flash").text)
        # the same slug again: an error beside the field, the input kept
        self.new_category("Outer Space", "space-stories")
        self.assertEqual("A category with this slug already exists.", d.find_element(By.ID, "error-slug").text)
        self.assertEqual("Outer Space", d.find_element(By.ID, "field-name").get_attribute("value"))

        # one book by checkbox on its form
        d.get(BASE + "/admin/books?q=alpha")
        self.submit(d.find_element(By.LINK_TEXT, "E2E Alpha"))
        self.submit(d.find_element(By.LINK_TEXT, "Edit"))
        d.find_element(By.XPATH, "//label[contains(., 'Space Stories')]/input").click()
        self.submit(d.find_element(By.XPATH, "//button[text()='Save']"))
        self.assertIn("was saved", d.find_element(By.CLASS_NAME, "flash").text)
        self.assertTrue(d.find_elements(By.XPATH, "//section[h2='Categories']//a[text()='Space Stories']"))

        # three books by batch action
        d.get(BASE + "/admin/books?q=e2e&sort=title")
        for title in ("E2E Beta", "E2E Delta", "E2E Gamma"):
            row = d.find_element(By.XPATH, f"//tr[td/a[text()='{title}']]")
            row.find_element(By.CSS_SELECTOR, "input[name='ids[]']").click()
        Select(d.find_element(By.ID, "batch-action")).select_by_visible_text("Add to category")
        Select(d.find_element(By.ID, "target-add_category")).select_by_visible_text("Space Stories")
        self.submit(d.find_element(By.XPATH, "//button[text()='Apply to selected']"))
        self.assertIn("3 books added to “Space Stories”", d.find_element(By.CLASS_NAME, "flash").text)

        token = api("/api/v1/auth/token", body={"email": "parent@e2e.test", "password": "parent password"})["access_token"]
        page = api("/api/v1/catalog/books?category=space-stories", token)
        self.assertEqual(["E2E Alpha", "E2E Beta", "E2E Delta", "E2E Gamma"], [b["title"] for b in page["data"]])

    def test_2_rights_window_ending_before_it_starts_is_refused(self):
        d = self.driver
        self.sign_in("editor@e2e.test", "editor password")
        d.get(BASE + "/admin/books?q=beta")
        self.submit(d.find_element(By.LINK_TEXT, "E2E Beta"))
        self.submit(d.find_element(By.LINK_TEXT, "Manage rights windows"))
        self.submit(d.find_element(By.LINK_TEXT, "New rights window"))
        d.execute_script("document.getElementById('field-starts_at').value = '2027-05-01T10:00';"
                         "document.getElementById('field-ends_at').value = '2027-04-01T10:00';")
        self.submit(d.find_element(By.XPATH, "//button[text()='Save']"))
        self.assertEqual("The end must be after the start.", d.find_element(By.ID, "error-ends_at").text)
        self.assertIn("Please correct the errors below.", d.find_element(By.ID, "error-summary").text)

    def test_3_viewer_cannot_change_anything(self):
        d = self.driver
        self.sign_in("viewer@e2e.test", "viewer password")
        d.get(BASE + "/admin/categories")
        self.assertFalse(d.find_elements(By.LINK_TEXT, "New category"))
        d.get(BASE + "/admin/books")
        self.assertFalse(d.find_elements(By.XPATH, "//button[text()='Apply to selected']"))
        d.get(BASE + "/admin/categories/new")
        self.assertIn("403", d.find_element(By.TAG_NAME, "h1").text)
        # even a hand-made form post with a valid token is refused
        d.get(BASE + "/admin/categories")
        status = d.execute_script("""
            const token = document.querySelector('input[name=csrf_token]').value;
            const body = new URLSearchParams({csrf_token: token, name: 'Viewer Made', slug: 'viewer-made', display_order: '1'});
            const xhr = new XMLHttpRequest(); xhr.open('POST', '/admin/categories', false);
            xhr.setRequestHeader('Content-Type', 'application/x-www-form-urlencoded'); xhr.send(body.toString());
            return xhr.status;""")
        self.assertEqual(403, status)
        d.get(BASE + "/admin/categories")
        self.assertNotIn("Viewer Made", d.page_source)

    def test_4_post_without_csrf_token_is_refused(self):
        d = self.driver
        self.sign_in("editor@e2e.test", "editor password")
        d.get(BASE + "/admin/categories/new")
        d.execute_script("document.querySelector('form.record-form input[name=csrf_token]').remove();")
        self.fill("field-name", "No Token")
        self.submit(d.find_element(By.XPATH, "//button[text()='Save']"))
        self.assertIn("403", d.find_element(By.TAG_NAME, "h1").text)
        d.get(BASE + "/admin/categories")
        self.assertNotIn("No Token", d.page_source)

    def test_5_script_in_a_name_is_shown_as_text(self):
        d = self.driver
        self.sign_in("editor@e2e.test", "editor password")
        self.new_category("<script>alert(1)</script>", "")
        d.get(BASE + "/admin/categories")
        with self.assertRaises(NoAlertPresentException):
            d.switch_to.alert.text
        self.assertTrue(d.find_elements(By.XPATH, "//a[text()='<script>alert(1)</script>']"))

    def test_6_keyboard_reaches_the_login_form_with_visible_focus(self):
        d = self.driver
        d.get(BASE + "/admin/login")
        active = lambda: d.switch_to.active_element
        self.assertEqual("email", active().get_attribute("id"))           # autofocus
        active().send_keys("editor@e2e.test", Keys.TAB)
        self.assertEqual("password", active().get_attribute("id"))
        outline = d.execute_script("return getComputedStyle(document.activeElement).outlineStyle")
        self.assertNotEqual("none", outline)
        active().send_keys("editor password", Keys.TAB)
        self.assertEqual("submit", active().get_attribute("type"))
        d.execute_script("window.__previousPage = true")
        active().send_keys(Keys.ENTER)
        self.wait_for_new_page()
        self.assertIn("Dashboard", d.find_element(By.TAG_NAME, "h1").text)
        # every form control of the book list has a label
        d.get(BASE + "/admin/books")
        unlabeled = d.execute_script("""
            return [...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
              .filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label')).map(e => e.name);""")
        self.assertEqual([], unlabeled)

    def test_7_rights_calendar_across_a_year_boundary(self):
        d = self.driver
        self.sign_in("viewer@e2e.test", "viewer password")
        self.submit(d.find_element(By.LINK_TEXT, "Rights calendar"))
        self.assertIn("Rights calendar", d.find_element(By.TAG_NAME, "h1").text)
        self.assertTrue(d.find_elements(By.CSS_SELECTOR, "table.calendar td.today"))
        d.get(BASE + "/admin/rights/calendar?month=2026-12")
        self.assertEqual("Rights calendar: December 2026", d.find_element(By.TAG_NAME, "h1").text)
        self.assertEqual(6, len(d.find_elements(By.CSS_SELECTOR, "table.calendar tbody tr")))
        last_day = d.find_element(By.CSS_SELECTOR, "a.day-number[aria-label^='2026-12-31']").find_element(By.XPATH, "..")
        self.assertIn("E2E Calendar", last_day.text)
        self.assertIn("▼", last_day.text)
        self.assertTrue(d.find_elements(By.XPATH, "//ul[@class='legend']/li[contains(., 'E2E Press')]"))
        self.submit(d.find_element(By.PARTIAL_LINK_TEXT, "Next month"))
        self.assertEqual("Rights calendar: January 2027", d.find_element(By.TAG_NAME, "h1").text)
        # the grid's first row shows the last days of December, marked as outside the month
        self.assertIn("outside", d.find_element(By.CSS_SELECTOR, "a.day-number[aria-label^='2026-12-31']").find_element(By.XPATH, "..").get_attribute("class"))
        self.submit(d.find_element(By.PARTIAL_LINK_TEXT, "Previous month"))
        self.assertEqual("Rights calendar: December 2026", d.find_element(By.TAG_NAME, "h1").text)
        self.submit(d.find_element(By.PARTIAL_LINK_TEXT, "Next month"))
        # at 200 % zoom the grid still fits the window
        d.execute_script("document.body.style.zoom = '200%'")
        self.assertTrue(d.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1"))
        d.execute_script("document.body.style.zoom = ''")
        self.submit(d.find_element(By.CSS_SELECTOR, "a.day-number[aria-label^='2027-01-02']"))
        self.assertIn("2027-01-02", d.find_element(By.TAG_NAME, "h1").text)
        row = d.find_element(By.XPATH, "//tr[td/a[text()='E2E Calendar']]")
        self.assertIn("Starts", row.text)
        self.assertIn("E2E Press", row.text)
        self.submit(row.find_element(By.LINK_TEXT, "E2E Calendar"))
        self.assertIn("E2E Calendar", d.find_element(By.TAG_NAME, "h1").text)

    def test_8_revert_an_edit_from_the_audit_log(self):
        # A draft: with review on (this run), a live book's content changes only through review.
        d = self.driver
        self.sign_in("editor@e2e.test", "editor password")
        d.get(BASE + "/admin/books?q=calendar")
        self.submit(d.find_element(By.LINK_TEXT, "E2E Calendar"))
        self.submit(d.find_element(By.LINK_TEXT, "Edit"))
        self.fill("field-title", "E2E Calendar Renamed")
        self.submit(d.find_element(By.XPATH, "//button[text()='Save']"))
        book_url = d.current_url
        d.get(BASE + "/admin/audit?table=books")
        row = d.find_element(By.XPATH, "//tr[td[text()='update']][.//del[text()='E2E Calendar']]")
        self.submit(row.find_element(By.LINK_TEXT, "Revert…"))
        self.assertIn("Sets title", d.find_element(By.TAG_NAME, "main").text)
        self.submit(d.find_element(By.XPATH, "//button[text()='Yes, revert']"))
        self.assertIn("was reverted", d.find_element(By.CLASS_NAME, "flash").text)
        self.assertEqual(book_url, d.current_url)
        self.assertIn("E2E Calendar", d.find_element(By.TAG_NAME, "h1").text)
        self.assertNotIn("Renamed", d.find_element(By.TAG_NAME, "h1").text)
        d.get(BASE + "/admin/audit?table=books")
        self.assertTrue(d.find_elements(By.XPATH, "//tr/td[starts-with(text(), 'revert #')]"))

    def test_9_select_all_matching_dry_run_then_job_then_audit(self):
        d = self.driver
        self.sign_in("editor@e2e.test", "editor password")
        d.get(BASE + "/admin/books?q=e2e")
        Select(d.find_element(By.ID, "batch-action")).select_by_visible_text("Change status")
        Select(d.find_element(By.ID, "target-set_status")).select_by_visible_text("Archived")
        d.find_element(By.XPATH, "//label[contains(., 'Everything matching this filter')]/input").click()
        self.submit(d.find_element(By.XPATH, "//button[text()='Apply to selected']"))
        self.assertIn("This will change 5 books", d.find_element(By.CSS_SELECTOR, "p.warning").text)
        confirmation = d.current_window_handle                         # the dry run changed nothing:
        d.switch_to.new_window("tab")
        d.get(BASE + "/admin/books?q=e2e&status=archived")
        self.assertIn("Nothing matches.", d.page_source)
        d.close()
        d.switch_to.window(confirmation)
        self.submit(d.find_element(By.XPATH, "//button[text()='Yes, change 5 books']"))
        WebDriverWait(d, 20).until(lambda driver: "Done." in driver.find_element(By.ID, "batch-state").text)
        self.assertEqual("5 of 5", d.find_element(By.ID, "batch-count").text)
        self.submit(d.find_element(By.LINK_TEXT, "Audit log"))
        self.assertEqual(5, len(d.find_elements(By.XPATH, "//tr[td[text()='batch: change status']]")))

    def test_9b_import_dry_run_then_import(self):
        d = self.driver
        self.sign_in("editor@e2e.test", "editor password")
        d.get(BASE + "/admin/books")
        self.submit(d.find_element(By.LINK_TEXT, "Import CSV"))
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
            f.write("Title,ISBN,Ages from,Ages to,Status\r\nE2E Imported Owl,E2E-1,2,6,draft\r\n,E2E-2,1,2,draft\r\n")
        d.find_element(By.ID, "file").send_keys(f.name)
        self.submit(d.find_element(By.XPATH, "//button[text()='Upload and map columns']"))
        self.assertIn("2 rows.", d.page_source)
        Select(d.find_element(By.ID, "map_external_id")).select_by_visible_text("ISBN")   # not guessed from "ISBN"
        self.submit(d.find_element(By.XPATH, "//button[text()='Dry run']"))
        self.assertIn("1 to create, 0 to update, 1 refused, of 2 rows. Nothing has been written.", d.find_element(By.ID, "dry-run-summary").text)
        self.assertIn("title: This field is required.", d.page_source)
        d.switch_to.new_window("tab")                                   # the dry run wrote nothing
        d.get(BASE + "/admin/books?q=imported")
        self.assertIn("Nothing matches.", d.page_source)
        d.close()
        d.switch_to.window(d.window_handles[0])
        self.submit(d.find_element(By.XPATH, "//button[text()='Import 1 new and 0 updated books']"))
        self.assertIn("Imported: 1 created, 0 updated.", d.page_source)
        d.get(BASE + "/admin/books?q=imported")
        self.assertIn("E2E Imported Owl", d.page_source)

    def test_9c_cover_upload_shows_thumbnails_in_the_list_and_the_cover_on_the_page(self):
        d = self.driver
        self.sign_in("editor@e2e.test", "editor password")
        d.get(BASE + "/admin/books?q=E2E+Alpha")
        self.submit(d.find_element(By.LINK_TEXT, "E2E Alpha"))
        self.submit(d.find_element(By.LINK_TEXT, "Cover"))
        # tests/e2e.sh made a 600 × 900 JPEG with libvips; the page previews it before it is sent.
        d.find_element(By.ID, "file").send_keys(os.environ["STORYTIME_E2E_COVER"])
        WebDriverWait(d, 5).until(lambda driver: driver.execute_script(
            "var p = document.getElementById('cover-preview'); return !p.hidden && p.complete && p.naturalWidth === 600"))
        self.submit(d.find_element(By.XPATH, "//button[text()='Upload the cover']"))
        self.assertIn("The cover was saved", d.page_source)
        self.assertIn("600 × 900 pixels", d.page_source)

        def loaded(selector):
            return d.execute_script("""
                var images = Array.from(document.querySelectorAll(arguments[0]));
                return images.length > 0 && images.every(function (i) { return i.complete && i.naturalWidth > 0; })
                    ? images.map(function (i) { return [i.naturalWidth, i.getBoundingClientRect().width, i.getAttribute('loading')]; }) : null;
            """, selector)
        d.get(BASE + "/admin/books?q=E2E")
        thumbnails = WebDriverWait(d, 10).until(lambda driver: loaded("img.thumb"))
        self.assertEqual(len(thumbnails), 1, thumbnails)
        self.assertEqual(thumbnails[0][0], 160)        # the 160-pixel rendition, really decoded by Chromium
        self.assertEqual(thumbnails[0][1], 28)         # in its 28-pixel box
        self.assertEqual(thumbnails[0][2], "lazy")
        d.find_element(By.LINK_TEXT, "E2E Alpha").click()
        covers = WebDriverWait(d, 10).until(lambda driver: loaded("img.cover"))
        self.assertEqual(covers[0][0], 320)



    # --- Second factor, review, preview, saved views, Ctrl-K, accessibility -------------------

    def test_a_two_factor_enrolment_then_sign_in_with_a_code_and_with_a_recovery_code(self):
        import time
        d = self.driver
        d.get(BASE + "/admin/login")
        self.fill("email", "admin@e2e.test")
        self.fill("password", "admin password")
        self.submit(d.find_element(By.CSS_SELECTOR, "button[type=submit]"))
        # Admins must enrol first (STAFF_2FA_REQUIRED=admin, the default).
        self.assertIn("Two-factor sign-in", d.find_element(By.TAG_NAME, "h1").text)
        qr = d.find_element(By.CSS_SELECTOR, "img.qr")
        WebDriverWait(d, 10).until(lambda _: d.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0", qr))
        secret = d.find_element(By.ID, "totp-secret").text.replace(" ", "")
        step = int(time.time() // 30)
        self.fill("code", totp(secret, step))
        self.submit(d.find_element(By.XPATH, "//button[text()='Turn on two-factor sign-in']"))
        codes = [c.text for c in d.find_elements(By.CSS_SELECTOR, "ol.codes code")]
        self.assertEqual(10, len(codes))
        self.submit(d.find_element(By.XPATH, "//button[text()='Sign out']"))
        # With a code (the next step's: the enrolment's is spent).
        self.fill("email", "admin@e2e.test")
        self.fill("password", "admin password")
        self.submit(d.find_element(By.CSS_SELECTOR, "button[type=submit]"))
        self.fill("code", totp(secret, max(int(time.time() // 30), step + 1)))   # the next step's, or now's if past it
        self.submit(d.find_element(By.XPATH, "//button[text()='Verify']"))
        self.assertIn("Dashboard", d.find_element(By.TAG_NAME, "h1").text)
        self.submit(d.find_element(By.XPATH, "//button[text()='Sign out']"))
        # With a recovery code: once.
        for attempt in range(2):
            d.get(BASE + "/admin/login")
            self.fill("email", "admin@e2e.test")
            self.fill("password", "admin password")
            self.submit(d.find_element(By.CSS_SELECTOR, "button[type=submit]"))
            self.fill("code", codes[0])
            self.submit(d.find_element(By.XPATH, "//button[text()='Verify']"))
            if attempt == 0:
                self.assertIn("recovery code", d.find_element(By.CLASS_NAME, "flash").text)
                self.submit(d.find_element(By.XPATH, "//button[text()='Sign out']"))
            else:
                self.assertIn("wrong or was already used", d.find_element(By.ID, "code-error").text)

    def test_b_review_submit_then_approve_then_live(self):
        d = self.driver
        self.sign_in("editor@e2e.test", "editor password")
        d.get(BASE + "/admin/books?q=review+fox")
        self.submit(d.find_element(By.LINK_TEXT, "Review Fox"))
        book_url = d.current_url
        self.submit(d.find_element(By.LINK_TEXT, "Edit"))
        Select(d.find_element(By.ID, "field-status")).select_by_visible_text("Active")
        self.submit(d.find_element(By.XPATH, "//button[text()='Save']"))
        self.assertIn("needs another editor's approval", d.find_element(By.ID, "error-status").text)
        d.get(book_url)
        self.submit(d.find_element(By.LINK_TEXT, "Review"))
        self.submit(d.find_element(By.XPATH, "//button[text()='Submit for review']"))
        self.assertIn("Waiting for review", d.find_element(By.TAG_NAME, "main").text)
        self.submit(d.find_element(By.XPATH, "//button[text()='Sign out']"))
        self.sign_in("reviewer@e2e.test", "reviewer password")
        self.submit(d.find_element(By.LINK_TEXT, "Review queue"))
        self.submit(d.find_element(By.LINK_TEXT, "Review Fox"))
        self.submit(d.find_element(By.XPATH, "//button[text()='Approve']"))
        self.assertIn("Approved", d.find_element(By.CLASS_NAME, "flash").text)
        self.submit(d.find_element(By.XPATH, "//button[text()='Sign out']"))
        self.sign_in("editor@e2e.test", "editor password")
        d.get(book_url + "/edit")
        Select(d.find_element(By.ID, "field-status")).select_by_visible_text("Active")
        self.submit(d.find_element(By.XPATH, "//button[text()='Save']"))
        d.get(book_url)
        details = d.find_element(By.CLASS_NAME, "details").text
        self.assertIn("live", details)
        titles = [b["title"] for b in api("/api/v1/catalog/books?q=review+fox", token=self.parent_token())["data"]]
        self.assertEqual(["Review Fox"], titles)

    def parent_token(self):
        return api("/api/v1/auth/token", body={"email": "parent@e2e.test", "password": "parent password"})["access_token"]

    def test_c_preview_as_a_family_on_a_future_date_and_in_another_country(self):
        d = self.driver
        self.sign_in("viewer@e2e.test", "viewer password")
        self.submit(d.find_element(By.LINK_TEXT, "Preview"))
        self.fill("country", "US")
        self.submit(d.find_element(By.XPATH, "//button[text()='Preview']"))
        # (The E2E books were archived by test_9; what is left is the fixtures of this test.)
        summary = d.find_element(By.ID, "preview-summary").text
        self.assertIn("for a family in US reading en now", summary)
        grid = d.find_element(By.TAG_NAME, "main").text
        self.assertNotIn("Future Owl", grid)
        self.assertNotIn("France Only Hen", grid)
        d.find_element(By.ID, "date").send_keys("02012030")   # mm/dd/yyyy in an en-US Chromium
        self.assertEqual("2030-02-01", d.find_element(By.ID, "date").get_attribute("value"))
        self.submit(d.find_element(By.XPATH, "//button[text()='Preview']"))
        self.assertIn("Future Owl", d.find_element(By.CLASS_NAME, "preview-grid").text)
        self.assertIn("on 2030-02-01", d.find_element(By.ID, "preview-summary").text)
        self.fill("country", "FR")
        Select(d.find_element(By.ID, "plocale")).select_by_value("fr")
        self.submit(d.find_element(By.XPATH, "//button[text()='Preview']"))
        self.assertIn("France Only Hen", d.find_element(By.CLASS_NAME, "preview-grid").text)
        self.assertIn("for a family in FR reading fr", d.find_element(By.ID, "preview-summary").text)

    def test_d_saved_view(self):
        d = self.driver
        self.sign_in("editor@e2e.test", "editor password")
        d.get(BASE + "/admin/books")
        Select(d.find_element(By.ID, "filter-status")).select_by_visible_text("Draft")
        self.submit(d.find_element(By.XPATH, "//button[text()='Apply filters']"))
        d.find_element(By.XPATH, "//summary[text()='Save this view']").click()
        self.fill("view-name", "My drafts")
        self.submit(d.find_element(By.XPATH, "//button[text()='Save view']"))
        self.assertIn("Saved the view", d.find_element(By.CLASS_NAME, "flash").text)
        d.get(BASE + "/admin/books")
        self.submit(d.find_element(By.LINK_TEXT, "My drafts"))
        self.assertIn("status=draft", d.current_url)
        self.assertEqual("page", d.find_element(By.LINK_TEXT, "My drafts").get_attribute("aria-current"))
        self.assertTrue(d.find_elements(By.CSS_SELECTOR, "table.list tbody .badge-draft"))
        self.assertFalse(d.find_elements(By.CSS_SELECTOR, "table.list tbody .badge-active"))

    def test_e_ctrl_k_opens_search_and_enter_goes_to_the_book(self):
        d = self.driver
        self.sign_in("editor@e2e.test", "editor password")
        d.find_element(By.TAG_NAME, "body").send_keys(Keys.CONTROL, "k")
        field = d.find_element(By.ID, "palette-q")
        WebDriverWait(d, 5).until(lambda _: d.switch_to.active_element == field)
        field.send_keys("alpha")
        WebDriverWait(d, 5).until(lambda _: d.find_elements(By.CSS_SELECTOR, "#palette-results [role=option][aria-selected=true]"))
        self.assertIn("E2E Alpha", d.find_element(By.ID, "palette-results").text)
        # the combobox pattern: the field names the option the arrows are on, and says it is open
        self.assertEqual("true", field.get_attribute("aria-expanded"))
        first = d.find_element(By.CSS_SELECTOR, "#palette-results [role=option][aria-selected=true]")
        self.assertEqual(first.get_attribute("id"), field.get_attribute("aria-activedescendant"))
        field.send_keys(Keys.ARROW_DOWN, Keys.ARROW_UP)
        self.assertEqual(first.get_attribute("id"), field.get_attribute("aria-activedescendant"))
        self.driver.execute_script("window.__previousPage = true")
        field.send_keys(Keys.ENTER)
        self.wait_for_new_page()
        self.assertIn("E2E Alpha", d.find_element(By.TAG_NAME, "h1").text)

    def test_g_publisher_picker_suggests_as_you_type(self):
        d = self.driver
        self.sign_in("editor@e2e.test", "editor password")
        d.get(BASE + "/admin/books?q=e2e+beta")
        self.submit(d.find_element(By.LINK_TEXT, "E2E Beta"))
        self.submit(d.find_element(By.LINK_TEXT, "Edit"))
        field = d.find_element(By.ID, "field-publisher_id")
        field.clear()
        field.send_keys("e2e pr")
        WebDriverWait(d, 5).until(lambda _: d.execute_script(
            "return Array.from(document.getElementById('options-publisher_id').options).map(o => o.value)") == ["E2E Press"])
        field.clear()
        field.send_keys("E2E Press")
        self.submit(d.find_element(By.XPATH, "//button[text()='Save']"))
        self.assertIn("E2E Press", d.find_element(By.CLASS_NAME, "details").text)

    def axe(self, dark=False):
        """Runs the pinned, current axe-core on this page with WCAG 2.2 A/AA rules."""
        d = self.driver
        d.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]})
        with open(os.environ["STORYTIME_AXE"], encoding="utf-8") as f:
            d.execute_script(f.read())
        d.set_script_timeout(60)
        result = d.execute_async_script("""
            const done = arguments[arguments.length - 1];
            axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa']}})
               .then(r => done(r.violations.map(v => v.id + ': ' + v.help + ' — ' + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(' | '))))
               .catch(e => done(['axe failed: ' + e]));
        """)
        return result

    def test_f_every_console_page_type_has_no_axe_violations(self):
        d = self.driver
        checked, failures = 0, []
        d.get(BASE + "/admin/login")
        failures += ["login: " + v for v in self.axe()]
        self.sign_in("editor@e2e.test", "editor password")
        d.get(BASE + "/admin/books?q=e2e+alpha")
        book = d.find_element(By.LINK_TEXT, "E2E Alpha").get_attribute("href")
        pages = ["/admin", "/admin/books", book, book + "/edit", book + "/review", book + "/cover", book + "/rights_windows",
                 "/admin/books/new", "/admin/books/import", "/admin/categories", "/admin/publishers", "/admin/video_assets",
                 "/admin/synonyms", "/admin/reviews", "/admin/preview?country=US", "/admin/rights/calendar?month=2026-12",
                 "/admin/reports/plays", "/admin/reports/searches", "/admin/audit", "/admin/search?q=e2e", "/admin/account",
                 "/admin/account/tokens", "/admin/account/two-factor", "/admin/account/password", "/admin/categories/new"]
        for page in pages:
            d.get(page if page.startswith("http") else BASE + page)
            failures += [page + ": " + v for v in self.axe()]
            checked += 1
        for page in ["/admin/books", "/admin"]:
            d.get(BASE + page)
            failures += [page + " (dark): " + v for v in self.axe(dark=True)]
        d.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
        print("axe checked %d page types (+2 dark)" % checked)
        self.assertEqual([], failures)


if __name__ == "__main__":
    unittest.main()
