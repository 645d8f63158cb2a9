"""The tenant's settings page: open it at both widths, create a named editor key (its secret
shows once, and not when the page is loaded again), give production a colour and find it in
the overview's header, create a goal."""

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

COLOUR = "#c0392b"
# What Chromium computes for COLOUR, and for the white text the marking picks on it.
COLOUR_RGB = "rgb(192, 57, 43)"
WHITE = "rgb(255, 255, 255)"


def run(check, environment):
    driver = check.driver
    tenant = environment.rsplit("/", 1)[0]
    settings = tenant + "/settings"
    environment_name = environment.rsplit("/", 1)[1]

    check.page("settings", settings, ["table.keys tbody tr", "form.new-key input#key-name", "select#key-role", f"form#settings-{environment_name}", "form.new-goal select#goal-kind"], phone=True)

    # A named editor key: the secret on the answer page, with its copy button; never again.
    driver.find_element(By.ID, "key-name").send_keys("browser check")
    Select(driver.find_element(By.ID, "key-role")).select_by_value("editor")
    check.click("form.new-key button[type=submit]")
    if not check.wait_for("the new key's secret", lambda: driver.find_elements(By.ID, "new-key-secret")):
        return
    secret = driver.find_element(By.ID, "new-key-secret").text.strip()
    if not secret.startswith("fp_"):
        check.fail(f"settings-key-created: the secret shown is {secret!r}")
    check.checked("settings-key-created", ["section.created-key button[data-copy=new-key-secret]"])
    rows = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "table.keys tbody tr")]
    if not any("browser check" in row and "editor" in row for row in rows):
        check.fail(f"settings-key-created: no row lists the new editor key: {rows}")
    check.page("settings-reloaded", settings, ["table.keys tbody tr"])
    if secret and secret in driver.page_source:
        check.fail("settings-reloaded: the key's secret is shown again")
    if driver.find_elements(By.ID, "new-key-secret"):
        check.fail("settings-reloaded: the page still shows a new key's secret")

    # Production's colour: saved, then in the overview's header.
    colour = driver.find_element(By.ID, f"{environment_name}-colour")
    colour.clear()
    colour.send_keys(COLOUR)
    check.click(f"form#settings-{environment_name} button[type=submit]")
    if not check.wait_for("the saved environment", lambda: "settings are saved" in driver.page_source):
        return
    check.checked("settings-environment-saved", ["p.notice", f'.marking[data-environment="{environment_name}"]'])
    check.page("overview-coloured", environment, [f'header.top p.marking[data-environment="{environment_name}"]'], phone=True)
    marking = driver.find_element(By.CSS_SELECTOR, "header.top p.marking")
    background = marking.value_of_css_property("background-color").replace("rgba", "rgb").replace(", 1)", ")")
    text = marking.value_of_css_property("color").replace("rgba", "rgb").replace(", 1)", ")")
    if background != COLOUR_RGB or text != WHITE:
        check.fail(f"overview-coloured: the header's marking is {text} on {background}, not white on {COLOUR_RGB}")
    if environment.strip("/").split("/", 1)[1] not in marking.text:
        check.fail(f"overview-coloured: the header's marking reads {marking.text!r}")
    if not driver.title.endswith(" · " + environment.split("/tenants/", 1)[1] + " · Flagpole"):
        check.fail(f"overview-coloured: the title {driver.title!r} does not end with the environment")

    # A goal of production.
    check.page("settings-goal-form", settings, ["form.new-goal input#goal-name"])
    Select(driver.find_element(By.ID, "goal-environment")).select_by_value(environment_name)
    driver.find_element(By.ID, "goal-name").send_keys("browser-check-goal")
    Select(driver.find_element(By.ID, "goal-kind")).select_by_value("count")
    check.click("form.new-goal button[type=submit]")
    if not check.wait_for("the created goal", lambda: "The goal is created" in driver.page_source):
        return
    rows = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "table.goals tbody tr")]
    if not any("browser-check-goal" in row and "count" in row for row in rows):
        check.fail(f"settings-goal-created: no row lists the new goal: {rows}")
    check.checked("settings-goal-created", ["p.notice", "table.goals tbody tr"], phone=True)
