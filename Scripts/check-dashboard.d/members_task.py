"""Members, in two browsers: the admin (signed in with the demo's key) adds Grace on the
Members page and hands over the link; Grace sets her password, switches a feature off and finds
her name in the revision list; the admin demotes her, and the form Grace already has open is
refused; the admin removes her, and her next page is the sign-in page. Both widths; every page
through the accessibility checks."""

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

NAME = "Grace Hopper"
EMAIL = "grace@example.com"
PASSWORD = "a ship in port is safe"


def run(check, environment, make_browser):
    admin = check.driver
    tenant = environment.rsplit("/", 1)[0]
    members = tenant + "/settings/members"

    check.page("members", members, ["form.new-member input#member-email", "select#member-role"], phone=True)
    admin.find_element(By.ID, "member-email").send_keys(EMAIL)
    admin.find_element(By.ID, "member-name").send_keys(NAME)
    Select(admin.find_element(By.ID, "member-role")).select_by_value("editor")
    check.click("form.new-member button[type=submit]")
    if not check.wait_for("the invitation link", lambda: admin.find_elements(By.ID, "member-link")):
        return
    link = admin.find_element(By.ID, "member-link").text.strip()
    check.checked("members-invited", ["table.members tbody tr", "section.created-key button[data-copy=member-link]"])
    if "/welcome?token=fpl_" not in link:
        check.fail(f"members-invited: the link shown is {link!r}")
        return

    grace = make_browser()
    try:
        # Accepting the invitation: the password twice, then the tenants page, signed in as Grace.
        grace.page("welcome", link.split(check.base, 1)[1], ["input#new-password", "input#repeated-password"], phone=True)
        grace.driver.find_element(By.ID, "new-password").send_keys(PASSWORD)
        grace.driver.find_element(By.ID, "repeated-password").send_keys(PASSWORD)
        grace.click("main form button[type=submit]")
        if not grace.wait_for("Grace's home", lambda: grace.driver.current_url.rstrip("/") == check.base, seconds=30):
            return
        grace.checked("member-home", ["header .who a[href='/account']"])
        if NAME not in grace.driver.find_element(By.CSS_SELECTOR, "header .who").text:
            grace.fail("member-home: the header does not name Grace")
        grace.page("account", "/account", ["table.sessions tbody tr", "input#current-password"], phone=True)

        # Acting: a switch on the overview, then her name in the revision list.
        grace.page("member-overview", environment, ["button.switch[aria-pressed]"])
        grace.click("button.switch[aria-pressed]")
        # Every switch confirms first, saying what changes: its page is the form's answer.
        confirm = "#confirm-toggle button[value=apply]"
        if not grace.wait_for("the switch's confirmation", lambda: grace.driver.find_elements(By.CSS_SELECTOR, confirm)):
            return
        grace.checked("member-switch-confirm", [confirm])
        grace.click(confirm)
        if not grace.wait_for("the switch applied", lambda: "notice=applied" in grace.driver.current_url):
            return
        grace.page("member-revisions", environment + "/revisions", ["table tbody tr"])
        if f"{NAME} <{EMAIL}>" not in grace.driver.find_element(By.TAG_NAME, "main").text:
            grace.fail("member-revisions: the newest revision does not name Grace")

        # Demoted while her overview is open: the form she has is refused.
        grace.page("member-overview-again", environment, ["button.switch[aria-pressed]"])
        check.page("members-demote", members, ["table.members tbody tr"])
        row = admin.find_element(By.XPATH, f"//table[@class='members']//tr[td[contains(., '{EMAIL}')]]")
        Select(row.find_element(By.CSS_SELECTOR, "select")).select_by_value("reader")
        row.find_element(By.CSS_SELECTOR, "form.role button").click()
        if not check.wait_for("the role changed", lambda: "notice=role-changed" in admin.current_url):
            return
        grace.click("button.switch[aria-pressed]")
        grace.wait_for("the refusal", lambda: "needs editor" in grace.driver.page_source)
        grace.checked("member-refused", [], expected_status=403)

        # Removed: confirmed first, then her next page is the sign-in page.
        check.page("members-remove", members, ["table.members tbody tr"])
        row = admin.find_element(By.XPATH, f"//table[@class='members']//tr[td[contains(., '{EMAIL}')]]")
        row.find_element(By.CSS_SELECTOR, "button[value=preview]").click()
        if not check.wait_for("the removal's confirmation", lambda: admin.find_elements(By.CSS_SELECTOR, "section.confirm button.danger")):
            return
        check.checked("members-remove-confirm", ["section.confirm button.danger"])
        check.click("section.confirm button.danger")
        if not check.wait_for("the member removed", lambda: "notice=member-removed" in admin.current_url):
            return
        if EMAIL in admin.find_element(By.TAG_NAME, "main").text:
            check.fail("members-removed: Grace is still listed")
        grace.driver.get(check.base + environment)
        if not grace.wait_for("Grace sent to sign in", lambda: "/login" in grace.driver.current_url):
            return
        grace.checked("member-signed-out", ["input#email", "input#password"])
    finally:
        check.failures.extend(grace.failures)
        grace.driver.quit()
