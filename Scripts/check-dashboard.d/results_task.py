"""The results page decides: browse.py calls `run` after its own look at the results page.

It reads the verdict of "New Onboarding" and checks every figure it prints against the table,
checks that epochs with data come first and empty ones are collapsed, switches the control with
the picker, refuses an unknown control, and follows "Roll out the winner" to the feature page's
plan (without applying it).
"""

import re

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

# "by +9.68 pts (+48.4 %; always-valid 95 % interval +4.39 to +15.0 pts)": what the verdict
# must repeat, cell for cell, of its variation's row.
VERDICT_FIGURES = "by {difference} ({relative}; always-valid 95 % interval {sequential})"


def number(text):
    """The first number of `text`, read with its sign (the page writes a real minus)."""
    match = re.search(r"[+\u2212-]?\d+(?:\.\d+)?", text)
    return float(match.group(0).replace("\u2212", "-")) if match else None


def interval(text):
    """The two ends of "+4.39 to +15.0 pts"."""
    low, high = text.split(" to ")
    return number(low), number(high)


def row(section, variation):
    rows = section.find_elements(By.CSS_SELECTOR, f'table.results tbody tr[data-variation="{variation}"]')
    return {cell.get_attribute("class"): cell.text for cell in rows[0].find_elements(By.CSS_SELECTOR, "td")} if rows else None


def control_row(section):
    rows = section.find_elements(By.CSS_SELECTOR, "table.results tbody tr.control")
    return rows[0].get_attribute("data-variation") if len(rows) == 1 else None


def check_verdict(check, where):
    """Reads the newest epoch's signup verdict and checks it against the table; returns
    (verdict kind, variation named) or None."""
    driver = check.driver
    section = driver.find_element(By.CSS_SELECTOR, "section.results")
    verdicts = section.find_elements(By.CSS_SELECTOR, 'li.verdict[data-goal="signup"]')
    if not verdicts:
        check.fail(f"{where}: no verdict on signup in the newest epoch with data")
        return None
    text = verdicts[0].find_element(By.CSS_SELECTOR, "p").text
    kind = verdicts[0].get_attribute("class").split()[-1]
    match = re.match(r"Ship ([^:]+): better on signup ", text) or re.match(r"Worse: (.+?) (?:lowers|raises) signup ", text)
    if kind not in ("ship", "worse") or not match:
        check.fail(f"{where}: the demo's verdict should ship or call a variation worse, not {kind!r}: {text!r}")
        return None
    variation = match.group(1)
    cells = row(section, variation)
    if cells is None:
        check.fail(f"{where}: the verdict names {variation!r}, which has no row in the table")
        return None
    expected = VERDICT_FIGURES.format(difference=cells["difference"], relative=cells["relative"], sequential=cells["sequential"])
    if expected not in text:
        check.fail(f"{where}: the verdict {text!r} does not repeat its row's figures {expected!r}")
    low, high = interval(cells["sequential"])
    if kind == "ship" and not low > 0:
        check.fail(f"{where}: ships {variation} though its always-valid interval {cells['sequential']} does not lie above 0")
    if kind == "worse" and not high < 0:
        check.fail(f"{where}: calls {variation} worse though its always-valid interval {cells['sequential']} does not lie below 0")
    return kind, variation


def check_epochs(check, where):
    """Epochs with data only, newest first; the empty ones listed apart, each saying why."""
    driver = check.driver
    numbers = [int(section.get_attribute("data-epoch")) for section in driver.find_elements(By.CSS_SELECTOR, "section.results")]
    if numbers != sorted(numbers, reverse=True):
        check.fail(f"{where}: epochs with data are not newest first: {numbers}")
    for section in driver.find_elements(By.CSS_SELECTOR, "section.results"):
        users = sum(int(re.sub(r"\D", "", cell.text) or 0) for cell in section.find_elements(By.CSS_SELECTOR, "td.users"))
        if users == 0:
            check.fail(f"{where}: epoch {section.get_attribute('data-epoch')} is listed with its tables but has no user")
        split = section.find_element(By.CSS_SELECTOR, "p.split").text
        if "The biases give" not in split or "first assigned by the split" not in split:
            check.fail(f"{where}: the split line does not say what its figures are: {split!r}")
    for item in driver.find_elements(By.CSS_SELECTOR, "section.empty-epochs li"):
        if not re.search(r"no user (exposed|joined) yet since", item.text):
            check.fail(f"{where}: an empty epoch does not say why it is empty: {item.text!r}")
        number = int(re.match(r"Epoch (\d+)", item.text).group(1))
        if numbers and number < max(numbers) and number in numbers:
            check.fail(f"{where}: epoch {number} is both empty and listed with data")


def run(check, base_environment):
    driver = check.driver
    results = base_environment + "/features/New%20Onboarding/results"

    check.page("results-verdict", results, ["form.control-picker select#control[name=control]", "label[for=control]", "section.results ul.verdicts li.verdict", "figure.timeline svg circle", "p.ran time[datetime]"], phone=True)
    check_epochs(check, "results-verdict")
    # The default control is the variation the file names first.
    section = driver.find_element(By.CSS_SELECTOR, "section.results")
    if control_row(section) != "Enabled":
        check.fail(f"results-verdict: the default control is {control_row(section)!r}, not Enabled, the first variation")
    before = row(section, "Disabled")
    first = check_verdict(check, "results-verdict")

    # Another control: its row is the control's, and the other's difference changes sign.
    Select(driver.find_element(By.ID, "control")).select_by_value("Disabled")
    check.click("form.control-picker button[type=submit]")
    check.wait_for("the results against Disabled", lambda: "control=Disabled" in driver.current_url)
    check.checked("results-control", ["section.results table.results tbody tr.control", "figure.timeline svg circle"], phone=True)
    section = driver.find_element(By.CSS_SELECTOR, "section.results")
    if control_row(section) != "Disabled":
        check.fail(f"results-control: ?control=Disabled shows {control_row(section)!r} as the control")
    after = row(section, "Enabled")
    if before and after and number(before["difference"]) is not None and number(after["difference"]) != -number(before["difference"]):
        check.fail(f"results-control: Enabled against Disabled is {after['difference']}, not the opposite of {before['difference']}")
    if Select(driver.find_element(By.ID, "control")).first_selected_option.get_attribute("value") != "Disabled":
        check.fail("results-control: the picker does not show the control in use")
    second = check_verdict(check, "results-control")
    if first and second and first[1] == second[1] and first[0] == second[0]:
        check.fail(f"results-control: the verdict did not change with the control: {second}")

    # An unknown control is refused on the page, with the variations to choose from.
    driver.get(check.base + results + "?control=Nope")
    check.checked("results-unknown-control", ["#control-error", "select#control"], expected_status=422)
    refusal = driver.find_element(By.ID, "control-error").text
    if "Nope" not in refusal or "not a variation" not in refusal:
        check.fail(f"results-unknown-control: the refusal does not say what is wrong: {refusal!r}")
    if driver.find_elements(By.CSS_SELECTOR, "section.results"):
        check.fail("results-unknown-control: figures are shown against a control that does not exist")

    # Roll out the winner: the feature page's plan says who moves; it is not applied here.
    driver.get(check.base + results + "?control=Disabled")
    buttons = driver.find_elements(By.XPATH, "//form[contains(@class, 'rollout')]//button[normalize-space()='Roll out the winner']")
    if not buttons:
        check.fail("results-rollout: no \"Roll out the winner\" button with a Ship verdict")
        return
    winner = buttons[0].find_element(By.XPATH, "./ancestor::form").find_element(By.CSS_SELECTOR, "input[name=variation]").get_attribute("value")
    buttons[0].click()
    if check.wait_for("the roll-out plan", lambda: driver.find_elements(By.CSS_SELECTOR, "#rollout ~ * p.summary, section[aria-labelledby=rollout] p.summary")):
        check.checked("results-rollout-plan", ["section[aria-labelledby=rollout] p.summary", "section[aria-labelledby=rollout] button[value=apply]"], phone=True)
        summary = driver.find_element(By.CSS_SELECTOR, "section[aria-labelledby=rollout] p.summary").text
        if "move" not in summary:
            check.fail(f"results-rollout-plan: the plan does not say who moves: {summary!r}")
        chosen = Select(driver.find_element(By.ID, "winner")).first_selected_option.get_attribute("value")
        if chosen != winner:
            check.fail(f"results-rollout-plan: the plan is for {chosen!r}, not the winner {winner!r}")
