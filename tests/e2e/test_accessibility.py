"""The console as an admin sees it, checked by axe-core in light and dark, palette open and shut.

An admin sees every section (staff, parents, webhooks, outbox), so the navigation is at its
longest; 1280 px is a common laptop width. Any violation fails the test, named by page and theme.
"""
import os
import tempfile
import time
import unittest
from collections import Counter

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from test_console import BASE, ConsoleCase, totp

WCAG = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa']


def nav_current(d):
    return d.find_elements(By.CSS_SELECTOR, "#sidebar a[aria-current=page]")


class AccessibilityTest(ConsoleCase):
    """Runs after the console tests (so pages have their records)."""

    secret = None

    def viewport(self, width, height=900):
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def theme(self, dark):
        self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                                    {"features": [{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]})

    def violations(self):
        """axe-core's WCAG 2.0–2.2 A/AA violations of the page as it is now: [(rule, nodes, text)]."""
        d = self.driver
        if not d.execute_script("return typeof axe !== 'undefined'"):
            with open(os.environ["STORYTIME_AXE"], encoding="utf-8") as f:
                d.execute_script(f.read())
        d.set_script_timeout(60)
        return [tuple(v) for v in d.execute_async_script("""
            const done = arguments[arguments.length - 1];
            axe.run(document, {runOnly: {type: 'tag', values: arguments[0]}})
               .then(r => done(r.violations.map(v => [v.id, v.nodes.length,
                   v.help + ' — ' + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(' | ')])))
               .catch(e => done([['axe-failed', 1, String(e)]]));
        """, WCAG)]

    def sweep(self, label, found):
        """Checks this page in light and dark; adds what fails to `found`."""
        for dark in (False, True):
            self.theme(dark)
            found += [(label + (" (dark)" if dark else ""), *v) for v in self.violations()]
        self.theme(False)

    def sign_in_as_admin(self, found):
        """The sweep's admin: enrols a second factor the first time (sweeping the enrolment and
        recovery-code pages), later signs in with a code (sweeping the code page)."""
        d = self.driver
        d.get(BASE + "/admin/login")
        self.fill("email", "sweep@e2e.test")
        self.fill("password", "sweep password")
        self.submit(d.find_element(By.CSS_SELECTOR, "button[type=submit]"))
        if AccessibilityTest.secret is None:
            self.sweep("two-factor enrolment", found)
            AccessibilityTest.secret = d.find_element(By.ID, "totp-secret").text.replace(" ", "")
            AccessibilityTest.step = int(time.time() // 30)
            self.fill("code", totp(self.secret, self.step))
            self.submit(d.find_element(By.XPATH, "//button[text()='Turn on two-factor sign-in']"))
            self.sweep("recovery codes", found)
        else:
            self.sweep("sign-in code", found)
            while self.step + 1 > int(time.time() // 30) + 1:   # a step not used yet, within the one step of drift
                time.sleep(1)
            AccessibilityTest.step = max(int(time.time() // 30), self.step + 1)
            self.fill("code", totp(self.secret, self.step))
            self.submit(d.find_element(By.XPATH, "//button[text()='Verify']"))
        d.get(BASE + "/admin")
        self.assertIn("Dashboard", d.find_element(By.TAG_NAME, "h1").text)

    def open_palette(self, query):
        d = self.driver
        d.find_element(By.TAG_NAME, "body").send_keys(Keys.CONTROL, "k")
        field = d.find_element(By.ID, "palette-q")
        WebDriverWait(d, 5).until(lambda _: d.switch_to.active_element == field)
        if query:
            field.send_keys(query)
            WebDriverWait(d, 5).until(lambda _: d.find_elements(By.CSS_SELECTOR, "#palette-results [role=option][aria-selected=true]"))
        return field

    def admin_pages(self):
        """Every page type an admin reaches, with records the console tests (or this one) made."""
        d = self.driver
        d.get(BASE + "/admin/books?q=e2e+alpha")
        book = d.find_element(By.LINK_TEXT, "E2E Alpha").get_attribute("href")
        d.get(BASE + "/admin/staff_users")
        staff = d.find_element(By.LINK_TEXT, "editor@e2e.test").get_attribute("href")
        d.get(BASE + "/admin/parents")
        parent = d.find_element(By.CSS_SELECTOR, "table.list tbody a").get_attribute("href")
        pages = ["/admin", "/admin/books", book, book + "/edit", book + "/review", book + "/cover", book + "/rights_windows",
                 book + "/rights_windows/new", book + "/delete", "/admin/books/new", "/admin/books/import", "/admin/categories",
                 "/admin/categories/new", "/admin/publishers", "/admin/video_assets", "/admin/synonyms", "/admin/reviews",
                 "/admin/preview?country=US", "/admin/rights/calendar?month=2026-12", "/admin/rights/calendar/2026-12-31",
                 "/admin/reports/plays", "/admin/reports/searches", "/admin/audit", "/admin/audit?table=books",
                 "/admin/search?q=e2e", "/admin/account", "/admin/account/tokens", "/admin/account/two-factor",
                 "/admin/account/password", "/admin/staff_users", staff, staff + "/password", "/admin/parents", parent,
                 "/admin/webhook_endpoints", "/admin/webhook_endpoints/new", "/admin/webhooks/deliveries", "/admin/outbox",
                 "/admin/no-such-page"]
        # And every section the sidebar offers (a new one is swept without being listed here).
        d.get(BASE + "/admin")
        offered = [a.get_attribute("href").replace(BASE, "") for a in d.find_elements(By.CSS_SELECTOR, "#sidebar a")]
        return pages + [p for p in offered if p not in pages]

    def test_x_admin_at_1280_in_light_and_dark_with_the_palette_open_has_no_axe_violations(self):
        d = self.driver
        self.viewport(1280)
        found, swept = [], 0
        d.get(BASE + "/admin/login")
        self.sweep("login", found)
        self.sign_in_as_admin(found)
        for page in self.admin_pages():
            d.get(page if page.startswith("http") else BASE + page)
            self.sweep(page.replace(BASE, ""), found)
            swept += 1
            overflow = d.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
            if overflow > 0:
                found.append((page.replace(BASE, ""), "page-scrolls-sideways", 1, "%d px wider than the window" % overflow))
        # At 1440 px the books list fits beside the sidebar: no sideways scrolling for ID and Updated.
        self.viewport(1440)
        d.get(BASE + "/admin/books")
        wider = d.execute_script("var w = document.querySelector('.table-wrap'); return w.scrollWidth - w.clientWidth")
        if wider > 0:
            found.append(("/admin/books at 1440 px", "list-scrolls-sideways", 1, "the table is %d px wider than its box" % wider))
        self.viewport(1280)
        # The batch confirmation (a dry run: nothing changes) and the import's column mapping.
        d.get(BASE + "/admin/books?q=e2e")
        Select(d.find_element(By.ID, "batch-action")).select_by_visible_text("Change status")
        Select(d.find_element(By.ID, "target-set_status")).select_by_visible_text("Draft")
        d.find_element(By.XPATH, "//label[contains(., 'Everything matching this filter')]/input").click()
        self.submit(d.find_element(By.XPATH, "//button[text()='Apply to selected']"))
        self.sweep("batch confirmation", found)
        d.get(BASE + "/admin/books/import")
        with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
            f.write("Title,Ages from,Ages to\r\nSweep Owl,2,6\r\n")
        d.find_element(By.ID, "file").send_keys(f.name)
        self.submit(d.find_element(By.XPATH, "//button[text()='Upload and map columns']"))
        self.sweep("import mapping", found)
        swept += 2
        # The palette: shut, open and empty, open with options (books, pages), on two pages.
        for page in ("/admin", "/admin/books"):
            d.get(BASE + page)
            field = self.open_palette("")
            self.sweep(page + " palette empty", found)
            field.send_keys("e2e")
            WebDriverWait(d, 5).until(lambda _: d.find_elements(By.CSS_SELECTOR, "#palette-results [role=option][aria-selected=true]"))
            self.sweep(page + " palette with results", found)
            field.send_keys(Keys.ARROW_DOWN)
            self.sweep(page + " palette, second option", found)
        # Signing in with a code (the code page).
        d.delete_all_cookies()
        self.sign_in_as_admin(found)
        print("\naxe: %d admin page types at 1280 px, light and dark, + the palette on 2 pages: %d violations (%d elements)"
              % (swept, len(found), sum(n for _, _, n, _ in found)))
        for rule, count in Counter(rule for _, rule, _, _ in found).most_common():
            print("  %s: %d" % (rule, count))
        for page, rule, nodes, text in found:
            print("  - %s: %s (%d) %s" % (page, rule, nodes, text))
        self.maxDiff = None
        self.assertEqual([], ["%s: %s (%d) %s" % v for v in found])

    def test_w_sidebar_groups_marks_the_current_place_and_folds_away_remembered(self):
        d = self.driver
        self.viewport(1280)
        self.sign_in("editor@e2e.test", "editor password")
        d.get(BASE + "/admin/account/tokens")
        nav = d.find_element(By.CSS_SELECTOR, "nav#sidebar[aria-label=Sections]")
        groups = [g.text for g in nav.find_elements(By.CSS_SELECTOR, ".nav-heading")]
        self.assertEqual(["CATALOG", "REPORTS", "AUTOMATION", "SETTINGS"], groups)   # no Families: an editor has none of it
        self.assertFalse(nav.find_elements(By.LINK_TEXT, "Staff"))
        current = nav.find_elements(By.CSS_SELECTOR, "a[aria-current=page]")
        self.assertEqual(["API tokens"], [a.text for a in current])                 # not "Your account", same section
        d.get(BASE + "/admin/books?q=e2e")
        self.assertEqual(["Books"], [a.text for a in nav_current(d)])
        # The keyboard: past the skip link, Menu, the brand and the header, into the sidebar's links.
        toggle = d.find_element(By.CSS_SELECTOR, "button.menu-toggle")
        self.assertEqual("true", toggle.get_attribute("aria-expanded"))
        body = d.find_element(By.TAG_NAME, "body")
        body.send_keys(Keys.TAB)
        self.assertEqual("skip", d.switch_to.active_element.get_attribute("class"))
        d.switch_to.active_element.send_keys(Keys.TAB)
        self.assertEqual(toggle, d.switch_to.active_element)
        for _ in range(12):
            d.switch_to.active_element.send_keys(Keys.TAB)
            if d.execute_script("return !!document.activeElement.closest('#sidebar')"):
                break
        self.assertEqual("Dashboard", d.switch_to.active_element.text)
        # Folded, it stays folded on the next page, until opened again (Enter on the button).
        toggle.click()
        self.assertEqual("false", toggle.get_attribute("aria-expanded"))
        self.assertFalse(d.find_element(By.ID, "sidebar").is_displayed())
        d.get(BASE + "/admin/categories")
        toggle = d.find_element(By.CSS_SELECTOR, "button.menu-toggle")
        self.assertEqual("false", toggle.get_attribute("aria-expanded"))
        self.assertFalse(d.find_element(By.ID, "sidebar").is_displayed())
        toggle.send_keys(Keys.ENTER)
        self.assertEqual("true", toggle.get_attribute("aria-expanded"))
        self.assertEqual(["Categories"], [a.text for a in nav_current(d)])
        self.assertEqual("Categories", d.switch_to.active_element.text)           # focus moves to the current place
        d.get(BASE + "/admin/publishers")
        self.assertTrue(d.find_element(By.ID, "sidebar").is_displayed())
        # A narrow window: the sections above the page, folded until asked for (nothing kept yet).
        d.execute_script("localStorage.clear()")
        self.viewport(390, 800)
        d.get(BASE + "/admin")
        self.assertFalse(d.find_element(By.ID, "sidebar").is_displayed())
        d.find_element(By.CSS_SELECTOR, "button.menu-toggle").click()
        self.assertTrue(d.find_element(By.LINK_TEXT, "Rights calendar").is_displayed())
        self.assertLessEqual(d.execute_script("return document.documentElement.scrollWidth - window.innerWidth"), 0)
        d.execute_script("localStorage.clear()")
        self.viewport(1280)

    def test_y_screenshots(self):
        """The main pages as an admin at 1280 and 1440 px (and a phone's 390), light and dark: each
        renders and is captured. Kept in STORYTIME_SCREENSHOTS=folder for a person to look at
        (docs/screenshots); otherwise in a temporary folder, removed after."""
        import shutil, tempfile
        folder = os.environ.get("STORYTIME_SCREENSHOTS")
        if not folder:
            folder = tempfile.mkdtemp(prefix="storytime-shots-")
            self.addCleanup(shutil.rmtree, folder, True)
        os.makedirs(folder, exist_ok=True)
        d = self.driver
        self.sign_in_as_admin([])
        d.get(BASE + "/admin/books?q=e2e+alpha")
        book = d.find_element(By.LINK_TEXT, "E2E Alpha").get_attribute("href")
        pages = {"dashboard": "/admin", "books": "/admin/books", "book": book, "audit": "/admin/audit", "staff": "/admin/staff_users"}
        for width in (1280, 1440, 390):
            self.viewport(width)
            for dark in (False, True):
                self.theme(dark)
                for name, page in pages.items():
                    if width == 390 and name not in ("dashboard", "books"):
                        continue
                    d.get(page if page.startswith("http") else BASE + page)
                    if name == "books" and not dark:
                        print("\nbooks at %d px: %s" % (width, d.execute_script("""
                            var rows = document.querySelectorAll('table.list tbody tr'), first = rows[0].getBoundingClientRect();
                            return 'first row at ' + Math.round(first.top) + ' px, rows ' + Math.round(first.height) + ' px tall: '
                                + Math.floor((window.innerHeight - first.top) / first.height) + ' rows in a 900-px window'""")))
                    d.save_screenshot(os.path.join(folder, "%s-%d-%s.png" % (name, width, "dark" if dark else "light")))
                if width == 390:
                    d.get(BASE + "/admin/books")
                    d.find_element(By.CSS_SELECTOR, "button.menu-toggle").click()
                    d.save_screenshot(os.path.join(folder, "menu-%d-%s.png" % (width, "dark" if dark else "light")))
                    d.find_element(By.CSS_SELECTOR, "button.menu-toggle").click()
                else:
                    d.get(BASE + "/admin/books")
                    self.open_palette("e2e")
                    d.save_screenshot(os.path.join(folder, "palette-%d-%s.png" % (width, "dark" if dark else "light")))
        self.theme(False)
        self.viewport(1280)
        # 2 wide widths × 2 themes × (5 pages + the palette) + the phone × 2 themes × (2 pages + the menu)
        shots = [f for f in os.listdir(folder) if f.endswith(".png")]
        self.assertGreaterEqual(len(shots), 30, shots)
        for shot in shots:
            with open(os.path.join(folder, shot), "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", shot)


if __name__ == "__main__":
    unittest.main()
