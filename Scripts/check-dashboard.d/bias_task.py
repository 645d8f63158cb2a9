"""Task (a) of the dashboard's checks: move a test from 10 % to 20 % with a reason, reading the
plan first, in the browser only; sums of 110 and 120 are refused while typing, with Apply
disabled; then the same on a phone."""

from selenium.webdriver.common.by import By

BIASES = "#bias-form input[name='biases[]']"


def type_biases(check, values):
    """Types each value over its field, as a person would (the live plan follows every key)."""
    fields = check.driver.find_elements(By.CSS_SELECTOR, BIASES)
    for field, value in zip(fields, values):
        if value is None:
            continue
        field.clear()
        field.send_keys(value)


def apply_is_offered(check):
    return any(button.is_enabled() for button in check.driver.find_elements(By.CSS_SELECTOR, "#bias-form button[value=apply]"))


def plan_text(check):
    return check.driver.find_element(By.ID, "plan").text


def refused_while_typing(check, name, values, code):
    """Types biases the app would not apply: the refusal with its code shows where the plan
    was, and Apply is not offered."""
    type_biases(check, values)
    if check.wait_for(f"{name}: the refusal of {values}", lambda: code in plan_text(check)):
        if apply_is_offered(check):
            check.fail(f"{name}: Apply is offered for {values}, which the app would not apply as typed")
        check.checked(name, ["#plan #bias-refusal ul.diagnostics li"], expected_status=422)


def move(check, name, feature, before, after, reason, phone=False):
    """From `before` to `after` on `feature`'s page: the plan first, then Apply with a reason, in
    two page loads; returns nothing, records failures."""
    driver = check.driver
    loads = check.page_loads()
    check.page(f"{name}-before", feature, [BIASES, "#plan"], phone=phone)
    values = [field.get_attribute("value") for field in driver.find_elements(By.CSS_SELECTOR, BIASES)]
    if values != before:
        check.fail(f"{name}: the editor shows {values}, not {before}")
        return
    # The first field alone: 20 and 90 add up to 110, which the app would not apply as typed.
    refused_while_typing(check, f"{name}-refused-110", [after[0]], "W202")
    type_biases(check, [None] + after[1:])
    # As soon as a number changes, what is shown is of other numbers: Apply is not offered.
    if apply_is_offered(check):
        check.fail(f"{name}: Apply is offered before the plan of the numbers typed is shown")
    if not check.wait_for(f"{name}: the plan of {after}", lambda: "change group" in plan_text(check) and apply_is_offered(check)):
        return
    if "After:" not in plan_text(check) or "move from" not in plan_text(check):
        check.fail(f"{name}: the plan does not say who moves: {plan_text(check)!r}")
    check.checked(f"{name}-plan", ["#plan .summary", "#plan ul.moves li", "#plan svg.bar", "#bias-form button[value=apply]"], phone=phone)
    driver.find_element(By.ID, "bias-reason").send_keys(reason)
    check.click("#bias-form button[value=apply]")
    if not check.wait_for(f"{name}: the applied notice", lambda: "Applied as revision" in driver.page_source):
        return
    check.checked(f"{name}-applied", ["p.notice"], phone=phone)
    if driver.execute_script("return document.activeElement.classList.contains('notice')") is not True:
        check.fail(f"{name}: focus is not on the applied notice")
    values = [field.get_attribute("value") for field in driver.find_elements(By.CSS_SELECTOR, BIASES)]
    if values != after:
        check.fail(f"{name}: after applying the editor shows {values}, not {after}")
    # The feature's history: the change on top, with its reason and its biases in words.
    latest = driver.find_element(By.CSS_SELECTOR, "ol.history > li").text
    words = f"Biases: {before[0]} %, {before[1]} % → {after[0]} %, {after[1]} %"
    if reason not in latest or words not in latest:
        check.fail(f"{name}: the history's latest change is {latest!r}, without {reason!r} or {words!r}")
    used = check.page_loads() - loads
    if used > 3:
        check.fail(f"{name}: took {used} page loads, more than 3")
    print(f"     {name}: {used} page loads")


def run(check, environment):
    features = environment + "/features/"
    move(check, "bias-10-to-20", features + "New%20Onboarding", ["10", "90"], ["20", "80"], "phase 2 of the onboarding roll-out")
    # A three-way test: 60 / 50 / 10 adds up to 120, and the app would give the third group nothing.
    check.page("bias-mvt", features + "Example%20MVT%20Test", [BIASES])
    refused_while_typing(check, "bias-refused-120", ["60", "50", "10"], "W202")
    check.driver.set_window_size(*check.phone_size)
    move(check, "bias-phone", features + "Example%20A%2FB%20Test", ["50", "50"], ["60", "40"], "more on A", phone=False)
    check.driver.set_window_size(*check.desktop_size)
