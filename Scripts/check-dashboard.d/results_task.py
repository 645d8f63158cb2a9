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


def table(section):
    """The first table of `section` as {variation: {column header: cell text}}, read by its
    headers, with the control's row under "control" too."""
    tables = section.find_elements(By.CSS_SELECTOR, "table")
    if not tables:
        return {}
    headers = [header.text.replace("\n", " ") for header in tables[0].find_elements(By.CSS_SELECTOR, "thead th")]
    rows = {}
    for line in tables[0].find_elements(By.CSS_SELECTOR, "tbody tr"):
        name = line.find_element(By.CSS_SELECTOR, "th").text
        variation = name.replace("control", "").strip()
        cells = dict(zip(headers[1:], [cell.text for cell in line.find_elements(By.CSS_SELECTOR, "td")]))
        rows[variation] = cells
        if name.endswith("control"):
            rows["control"] = dict(cells, variation=variation)
    return rows


def row(section, variation):
    cells = table(section).get(variation)
    return None if cells is None else {"difference": cells.get("Difference", ""), "relative": cells.get("Relative", ""), "sequential": cells.get("Always-valid 95 %", ""), "users": cells.get("Users", "")}


def control_row(section):
    return table(section).get("control", {}).get("variation")


def epoch_number(section):
    match = re.search(r"Epoch (\d+)", section.find_element(By.CSS_SELECTOR, "h2").text)
    return int(match.group(1)) if match else None


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
    numbers = [epoch_number(section) for section in driver.find_elements(By.CSS_SELECTOR, "section.results")]
    if numbers != sorted(numbers, reverse=True):
        check.fail(f"{where}: epochs with data are not newest first: {numbers}")
    for section in driver.find_elements(By.CSS_SELECTOR, "section.results"):
        users = sum(int(re.sub(r"\D", "", cells.get("Users", "")) or 0) for name, cells in table(section).items() if name != "control")
        if users == 0:
            check.fail(f"{where}: epoch {epoch_number(section)} is listed with its tables but has no user")
        # In the demo, an epoch worth reading compares its variations; one a change has just
        # begun (users moved in, none exposed) has nothing to compare and belongs to the list.
        if not any(cells.get("Difference") for name, cells in table(section).items() if name != "control"):
            check.fail(f"{where}: epoch {epoch_number(section)} is listed with its tables but compares nothing")
        if "The biases give" not in section.text or "first assigned by the split" not in section.text:
            check.fail(f"{where}: epoch {epoch_number(section)}'s split line does not say what its figures are")
    # The biases changed before this task runs: the epoch that began is listed apart.
    if not driver.find_elements(By.CSS_SELECTOR, "section.empty-epochs li"):
        check.fail(f"{where}: the epoch the bias change began is not listed among the epochs with nothing to read")
    for item in driver.find_elements(By.CSS_SELECTOR, "section.empty-epochs li"):
        if not re.search(r"no user (exposed|joined) yet since", item.text):
            check.fail(f"{where}: an empty epoch does not say why it is empty: {item.text!r}")
        number = int(re.match(r"Epoch (\d+)", item.text).group(1))
        if numbers and number < max(numbers) and number in numbers:
            check.fail(f"{where}: epoch {number} is both empty and listed with data")


def run(check, base_environment):
    """Each step on its own: an exception fails its step, not the others nor browse.py."""
    results = base_environment + "/features/New%20Onboarding/results"
    for step in (default_control, legible_on_a_phone, control_by_query, control_by_picker, unknown_control, roll_out_the_winner):
        try:
            step(check, results)
        except Exception as error:  # noqa: BLE001 - any error is a failure of the step
            check.fail(f"results task, {step.__name__}: {error!r}")


def default_control(check, results):
    """Epochs with data newest first, the verdict against the table, Disabled as the control of an on/off test."""
    driver = check.driver
    check.page("results-verdict", results, ["form.control-picker select#control[name=control]", "label[for=control]", "section.results ul.verdicts li.verdict", "figure.timeline svg circle", "p.ran time[datetime]"], phone=True)
    check_epochs(check, "results-verdict")
    section = driver.find_element(By.CSS_SELECTOR, "section.results")
    if control_row(section) != "Disabled":
        check.fail(f"results-verdict: the default control is {control_row(section)!r}, not Disabled (an on/off test is read about its new arm)")
    check_verdict(check, "results-verdict")


def legible_on_a_phone(check, results):
    """On a phone the charts' labels stay 9 px high or more: the chart scrolls sideways rather than shrink."""
    from browse import DESKTOP, PHONE

    driver = check.driver
    driver.set_window_size(*PHONE)
    try:
        driver.get(check.base + results)
        smallest = driver.execute_script("return Math.min(...[...document.querySelectorAll('figure.timeline svg text')].map(e => e.getBoundingClientRect().height))")
        if smallest < 9:
            check.fail(f"results-phone: a chart's label is {smallest:.1f} px high on a phone")
    finally:
        driver.set_window_size(*DESKTOP)


def control_by_query(check, results):
    """?control= is honoured: the control's row changes, and the other's difference changes sign."""
    driver = check.driver
    driver.get(check.base + results)
    before = row(driver.find_element(By.CSS_SELECTOR, "section.results"), "Enabled")
    first = check_verdict(check, "results-verdict")
    check.page("results-control-query", results + "?control=Enabled", ["section.results table.results tbody tr"])
    section = driver.find_element(By.CSS_SELECTOR, "section.results")
    if control_row(section) != "Enabled":
        check.fail(f"results-control-query: ?control=Enabled shows {control_row(section)!r} as the control")
    after = row(section, "Disabled")
    if not (before and after and number(before["difference"]) is not None and number(after["difference"]) == -number(before["difference"])):
        check.fail(f"results-control-query: Disabled against Enabled is {after and after['difference']!r}, not the opposite of Enabled against Disabled, {before and before['difference']!r}")
    second = check_verdict(check, "results-control-query")
    if first and second and first == second:
        check.fail(f"results-control-query: the verdict did not change with the control: {second}")


def control_by_picker(check, results):
    """The picker's GET form sends ?control=, and shows the control in use."""
    driver = check.driver
    driver.get(check.base + results)
    Select(driver.find_element(By.ID, "control")).select_by_value("Enabled")
    check.click("form.control-picker button[type=submit]")
    check.wait_for("the results against Enabled", lambda: "control=Enabled" in driver.current_url)
    check.checked("results-control", ["section.results table.results tbody tr", "figure.timeline svg circle"], phone=True)
    if control_row(driver.find_element(By.CSS_SELECTOR, "section.results")) != "Enabled":
        check.fail("results-control: the picker's choice is not the control of the table")
    if Select(driver.find_element(By.ID, "control")).first_selected_option.get_attribute("value") != "Enabled":
        check.fail("results-control: the picker does not show the control in use")


def unknown_control(check, results):
    """An unknown control is refused on the page (422), with the variations to choose from."""
    driver = check.driver
    driver.get(check.base + results + "?control=Nope")
    # Its status, read before the check of the page, which expects this 422 in the console.
    status = driver.execute_async_script("const done = arguments[arguments.length - 1]; fetch(arguments[0]).then(r => done(r.status), () => done(0));", check.base + results + "?control=Nope")
    if status not in (404, 422):
        check.fail(f"results-unknown-control: answered {status}, not 422 or 404")
    check.checked("results-unknown-control", ["#control-error", "select#control"], expected_status=422)
    refusal = " ".join(element.text for element in driver.find_elements(By.ID, "control-error"))
    if "Nope" not in refusal or "not a variation" not in refusal:
        check.fail(f"results-unknown-control: the refusal does not say what is wrong: {refusal!r}")
    if driver.find_elements(By.CSS_SELECTOR, "section.results"):
        check.fail("results-unknown-control: figures are shown against a control that does not exist")


def roll_out_the_winner(check, results):
    """The button previews the roll-out on the feature page, whose plan says who moves; it is not applied."""
    driver = check.driver
    driver.get(check.base + results + "?control=Disabled")
    buttons = driver.find_elements(By.XPATH, "//form[contains(@class, 'rollout')]//button[normalize-space()='Roll out the winner']")
    if not buttons:
        check.fail("results-rollout: no \"Roll out the winner\" button with a Ship verdict")
        return
    winner = buttons[0].find_element(By.XPATH, "./ancestor::form").find_element(By.CSS_SELECTOR, "input[name=variation]").get_attribute("value")
    buttons[0].click()
    plan = "section[aria-labelledby=rollout] p.summary"
    if check.wait_for("the roll-out plan", lambda: driver.find_elements(By.CSS_SELECTOR, plan)):
        check.checked("results-rollout-plan", [plan, "section[aria-labelledby=rollout] button[value=apply]"], phone=True)
        summary = driver.find_element(By.CSS_SELECTOR, plan).text
        if "move" not in summary:
            check.fail(f"results-rollout-plan: the plan does not say who moves: {summary!r}")
        chosen = Select(driver.find_element(By.ID, "winner")).first_selected_option.get_attribute("value")
        if chosen != winner:
            check.fail(f"results-rollout-plan: the plan is for {chosen!r}, not the winner {winner!r}")
        # It lands on the roll-out card, not the top of the page, and says what ends with the test.
        if not driver.current_url.endswith("#rollout"):
            check.fail(f"results-rollout-plan: the page did not land on the roll-out card: {driver.current_url}")
        ending = driver.find_elements(By.ID, "rollout-ending")
        if not ending or "becomes a plain flag" not in ending[0].text or "final results" not in ending[0].text:
            check.fail(f"results-rollout-plan: the plan does not say the test ends: {[e.text for e in ending]!r}")
