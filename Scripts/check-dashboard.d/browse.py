"""Drives headless Chromium through the dashboard of a live `flagpole serve --demo`.

Each step loads a page, checks the elements it must have, checks that the page is labelled
for screen readers and fits a phone screen, saves a screenshot, and fails on any console
message of level SEVERE (script errors, failed loads, CSP violations).
"""

import argparse
import json
import os
import sys
import time

from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

import accessibility
import bias_task
import members_task
import ramp_task
import results_task
import rules_task
import search_task
import settings_task

DESKTOP = (1280, 900)
PHONE = (390, 844)

# Every visible form control has a label: <label for>, a wrapping <label>, or aria-label.
UNLABELLED_CONTROLS = """
return [...document.querySelectorAll('input, select, textarea')]
  .filter(e => e.type !== 'hidden' && !e.hidden)
  .filter(e => !(e.id && document.querySelector(`label[for="${e.id}"]`)) && !e.closest('label') && !e.getAttribute('aria-label'))
  .map(e => e.outerHTML.slice(0, 80));
"""
# Images (SVG charts) carry a role and a name.
UNNAMED_IMAGES = """
return [...document.querySelectorAll('svg')]
  .filter(e => e.getAttribute('aria-hidden') !== 'true')
  .filter(e => e.getAttribute('role') !== 'img' || !(e.getAttribute('aria-label') || e.getAttribute('aria-labelledby')))
  .map(e => e.outerHTML.slice(0, 80));
"""


class Check:
    desktop_size = DESKTOP
    phone_size = PHONE

    def __init__(self, base, screenshots, javascript=True):
        self.base = base
        self.screenshots = screenshots
        self.failures = []
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]:
            options.add_argument(argument)
        # performance: the DevTools events, to count the documents a task loads.
        options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
        if not javascript:
            options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
        self.driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        self.driver.set_window_size(*DESKTOP)
        self.documents = 0

    def fail(self, message):
        print(f"FAIL {message}")
        self.failures.append(message)

    def console_errors(self, where, expected_status=None):
        """Fails on SEVERE console messages, but for the page's own status when a step expects
        one (a refused form answers 422, and Chromium logs any 4xx document)."""
        expected = f"the server responded with a status of {expected_status}" if expected_status else None
        for entry in self.driver.get_log("browser"):
            if entry["level"] == "SEVERE" and not (expected and expected in entry["message"]):
                self.fail(f"{where}: console: {entry['message']}")

    def page(self, name, path, selectors, phone=False):
        """Loads `path` and checks it; returns nothing, records failures."""
        if path is not None:
            self.driver.get(self.base + path)
        self.checked(name, selectors, phone)

    def checked(self, name, selectors, phone=False, expected_status=None):
        driver = self.driver
        for selector in selectors + ["main#main", "h1"]:
            if not driver.find_elements(By.CSS_SELECTOR, selector):
                self.fail(f"{name}: no element matches {selector!r} at {driver.current_url}")
        if len(driver.find_elements(By.CSS_SELECTOR, "h1")) != 1:
            self.fail(f"{name}: a page has one h1")
        for control in driver.execute_script(UNLABELLED_CONTROLS):
            self.fail(f"{name}: unlabelled control {control}")
        for image in driver.execute_script(UNNAMED_IMAGES):
            self.fail(f"{name}: unnamed image {image}")
        self.console_errors(name, expected_status)
        is_phone = driver.get_window_size()["width"] <= PHONE[0] + 20
        if is_phone:
            self.fits_the_screen(name)
        self.accessible(name, is_phone)
        driver.save_screenshot(os.path.join(self.screenshots, f"{name}.png"))
        if phone:
            driver.set_window_size(*PHONE)
            self.fits_the_screen(name)
            self.accessible(name + " (phone)", phone=True)
            driver.save_screenshot(os.path.join(self.screenshots, f"{name}-phone.png"))
            driver.set_window_size(*DESKTOP)
        print(f"ok   {name}")

    def accessible(self, name, phone):
        for problem in accessibility.violations(self.driver, phone):
            self.fail(f"{name}: {problem}")

    def focus_rings(self, name):
        for problem in accessibility.focus_ring_violations(self.driver):
            self.fail(f"{name}: {problem}")

    def fits_the_screen(self, name):
        overflow = self.driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
        if overflow > 1:
            self.fail(f"{name}: {overflow} px wider than a phone screen")

    def page_loads(self):
        """How many documents this tab has loaded so far: a link, a form's answer, a redirect's
        target, a reload (a fetch or replaceState loads none)."""
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message["method"] == "Page.frameNavigated" and "parentId" not in message["params"]["frame"]:
                self.documents += 1
        return self.documents

    def wait_for(self, description, condition, seconds=10):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                if condition():
                    return True
            except (NoSuchElementException, StaleElementReferenceException):
                # The page is being replaced (a form's answer is loading): look again.
                pass
            time.sleep(0.1)
        self.fail(f"timed out waiting for {description}")
        return False

    def click(self, selector):
        self.driver.find_element(By.CSS_SELECTOR, selector).click()


def save_config(check, name, selectors):
    """A config's Save: its plan first (what changes, in words), then Save as the revision it names."""
    check.click("#config-form button[value=preview]")
    if check.wait_for(f"{name}: the config's plan", lambda: check.driver.find_elements(By.CSS_SELECTOR, "#config-plan")):
        check.checked(name, selectors + ["#config-form button[value=apply]"], phone=True)
        check.click("#config-form button[value=apply]")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--screenshots", required=True)
    parser.add_argument("--only", choices=["members"], help="sign in, then run this task alone")
    arguments = parser.parse_args()
    environment = "/tenants/demo/production"
    feature = environment + "/features/New%20Onboarding"
    configs = environment + "/configs"

    check = Check(arguments.base, arguments.screenshots)
    driver = check.driver
    try:
        check.page("signin", "/login", ["form input#email[type=email]", "form input#password[type=password]", "details.advanced summary"], phone=True)
        # Automation's way in: the key, under its disclosure.
        check.click("details.advanced summary")
        driver.find_element(By.ID, "key").send_keys(arguments.key)
        check.click("details.advanced form button[type=submit]")
        check.wait_for("the tenants page", lambda: driver.current_url.rstrip("/") == arguments.base)
        check.checked("home", [f'a[href="{environment}"]'])
        if arguments.only == "members":
            members_task.run(check, environment, lambda: Check(arguments.base, arguments.screenshots))
            return finish(check.failures, arguments.screenshots)

        check.page("overview", environment, ["nav.env a[aria-current=page]", "li.card.feature", "svg.bar rect", "button.switch[aria-pressed]"], phone=True)
        search_task.run(check, environment)

        check.page("feature", feature, ["#bias-form input[name='biases[]']", "#plan", "figure.timeline svg rect", "section table tbody tr", "select#winner", "input#feature-tags"], phone=True)
        check.focus_rings("feature")
        # The environment tabs keep the feature shown.
        tabs = [link.get_attribute("href") for link in driver.find_elements(By.CSS_SELECTOR, "nav.env ul.tabs a")]
        if not any(href.endswith("/tenants/demo/staging/features/New%20Onboarding") for href in tabs):
            check.fail(f"feature: no environment tab keeps the feature: {tabs}")
        bias_task.run(check, environment)

        # Targeting rules: the plan (a dry run: who would move, with examples), then applied as planned.
        check.page("feature-rules", feature, ["textarea#rules", "#rules-form button[value=plan]", "table.rules, section[aria-labelledby=targeting] p"])
        rules = '{"rules": [\n  {"id": "everyone-enabled", "serve": {"variation": "Enabled"}}\n]}\n'
        # The JSON is the rules' advanced view, folded under the builder.
        check.click("details.advanced summary")
        driver.execute_script("document.getElementById('rules').value = arguments[0]", rules)
        check.click("#rules-form button[value=plan]")
        if check.wait_for("the rules plan", lambda: driver.find_elements(By.CSS_SELECTOR, "#rules-plan p.summary")):
            check.checked("feature-rules-plan", ["#rules-plan ul.moves li code", "#rules-plan button[value=apply]"], phone=True)
            check.click("#rules-plan button[value=apply]")
            check.wait_for("the applied rules", lambda: "Applied as revision" in driver.page_source)
            check.checked("feature-rules-applied", ["p.notice", "table.rules tbody tr"])
        rules_task.run(check, environment)
        check.page("segments", environment + "/segments", ["nav.env a[aria-current=page]", "a#new-segment"], phone=True)
        # The demo's sign-ups: a table per goal, the sample-ratio line, the chart of the difference.
        check.page("results", feature + "/results", ["section.results table.results tbody tr", "figure.timeline svg circle", "ul.legend li"], phone=True)
        results_task.run(check, environment)
        ramp_task.run(check, environment)

        check.page("user", environment + "/users?user=demo-user-7", ["table tbody tr", "form select[name=variation]", "input#user-id"], phone=True)
        check.page("revisions", environment + "/revisions", ["table tbody tr", "select#from", "select#to"], phone=True)
        current = int(driver.find_element(By.CSS_SELECTOR, "select#to option[selected]").get_attribute("value"))
        check.page("revisions-diff", environment + f"/revisions?from={current}&to={current - 1}", ["table.diff tbody tr", "form button.primary"], phone=True)

        check.page("import", environment + "/import", ["textarea#source", "input#file[type=file]"])
        driver.execute_script("document.getElementById('source').value = arguments[0]", '{\n  "features": [\n    {"name": "Broken", "test-biases": [50, "fifty"]}\n  ]\n}\n')
        check.click("form.stack button[value=check]")
        check.wait_for("the import diagnostics", lambda: driver.find_elements(By.CSS_SELECTOR, "ol.source li.flagged"))
        check.checked("import-diagnostics", ["ul.diagnostics li.error", "ol.source li.flagged .note"], phone=True, expected_status=422)

        check.page("export", environment + "/export", ["dl.facts", "a[download]"], phone=True)

        # Tags set on a feature's page filter the overview.
        check.page("feature-tags", feature, ["input#feature-tags"])
        tags = driver.find_element(By.ID, "feature-tags")
        tags.clear()
        tags.send_keys("ios, onboarding")
        check.click("form[action$='/tags'] button[type=submit]")
        check.wait_for("the saved tags", lambda: "Applied as revision" in driver.page_source)
        check.page("overview-tagged", environment + "?tag=onboarding", ["nav.tags a.label[aria-current=page]", "li.card.feature p.tags a.label"], phone=True)

        check.page("configs", configs, ["table.configs tbody tr", "nav.tags a.label", "input#new-name", "select#new-type"], phone=True)
        check.page("configs-tagged", configs + "?tag=watch", ["table.configs tbody tr", "nav.tags a.label[aria-current=page]"])
        check.page("config-string", configs + "/mainViewTitle", ["input#default[type=text]", "select#follows", "fieldset.values input[name='values[]']", "dl.facts"], phone=True)
        check.page("config-int", configs + "/numberOfItemsToDisplay", ["input#default[type=number][step='1']", "input#tags"])
        check.page("config-double", configs + "/discountRate", ["input#default[type=number][step=any]"])
        check.page("config-bool", configs + "/someFeatureEnabled", ["input#default[type=checkbox][role=switch]"])
        check.page("config-json", configs + "/theme", ["textarea#default[data-json]", "#default-check"], phone=True)
        # The JSON editor checks as it is typed: the error shows, and the form won't send, until it parses.
        area = driver.find_element(By.ID, "default")
        area.clear()
        area.send_keys('{"accent": ')
        if check.wait_for("the JSON editor's error", lambda: driver.find_element(By.ID, "default-check").text.strip() != ""):
            if driver.execute_script("return document.getElementById('config-form').checkValidity()"):
                check.fail("config-json: the form would send JSON that does not parse")
            check.checked("config-json-invalid", ["textarea#default[aria-invalid=true]", "#default-check"])
        area.send_keys('"green", "cornerRadius": 8}')
        check.wait_for("the JSON editor to accept the object", lambda: driver.find_element(By.ID, "default-check").text.strip() == "")
        save_config(check, "config-json-plan", ["#config-plan ul.moves li code"])
        check.wait_for("the saved JSON config", lambda: "Applied as revision" in driver.page_source)
        check.checked("config-json-saved", ["p.notice", "dl.facts code"])

        # A new config through the create form, then deleted after confirming.
        check.page("config-new-form", configs, ["input#new-name"])
        driver.find_element(By.ID, "new-name").send_keys("checkout limit/ü")
        driver.find_element(By.CSS_SELECTOR, "select#new-type option[value=int]").click()
        check.click("section.card form button[type=submit]")
        check.wait_for("the new config's editor", lambda: "/configs/checkout%20limit%2F%C3%BC" in driver.current_url)
        check.checked("config-new", ["input#default[type=number]", "input[name=new][type=hidden]"])
        number = driver.find_element(By.ID, "default")
        number.clear()
        number.send_keys("5")
        save_config(check, "config-new-plan", ["#config-plan p.summary"])
        check.wait_for("the created config", lambda: "Applied as revision" in driver.page_source)
        check.click("form[action$='/delete'] button[value=preview]")
        check.wait_for("the delete confirmation", lambda: driver.find_elements(By.CSS_SELECTOR, "button.danger"))
        check.checked("config-delete-confirm", ["section.confirm button.danger"])
        check.click("section.confirm button.danger")
        check.wait_for("the configs after deleting", lambda: driver.current_url.split("?")[0].endswith("/configs"))
        check.checked("config-deleted", ["p.notice"])

        settings_task.run(check, environment)
        members_task.run(check, environment, lambda: Check(arguments.base, arguments.screenshots))
        check.click("header form button[type=submit]")
        check.wait_for("the sign-in page after signing out", lambda: "/login" in driver.current_url)
        check.page("signed-out", environment, ["form input#email"])
    finally:
        driver.quit()

    # Readable without JavaScript: the same session can't be reused, so sign in by the form.
    plain = Check(arguments.base, arguments.screenshots, javascript=False)
    try:
        plain.page("nojs-signin", "/login?next=" + environment, ["form input#email", "details.advanced"])
        plain.click("details.advanced summary")
        plain.driver.find_element(By.ID, "key").send_keys(arguments.key)
        plain.click("details.advanced form button[type=submit]")
        # The sign-in page's own URL ends with its `next`: wait for the overview itself.
        plain.wait_for("the overview without JavaScript", lambda: plain.driver.current_url == arguments.base + environment)
        plain.checked("nojs-overview", ["li.card.feature", "svg.bar rect"])
        plain.page("nojs-feature", feature, ["#bias-form button[value=preview]", "figure.timeline svg rect"])
        plain.page("nojs-configs", configs, ["table.configs tbody tr"])
        plain.page("nojs-results", feature + "/results", ["table.results tbody tr", "figure.timeline svg circle"])
        plain.page("nojs-ramp", environment + "/features/Example%20MVT%20Test/ramp", ["ol.ramp-steps li", "ul.ramp-events li"])
        plain.page("nojs-config", configs + "/theme", ["textarea#default[data-json]", "#config-form button[type=submit]"])
    finally:
        plain.driver.quit()

    finish(check.failures + plain.failures, arguments.screenshots)


def finish(failures, screenshots):
    print(f"{len(failures)} failure(s); screenshots in {screenshots}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
