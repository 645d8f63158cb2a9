"""Task (b) of the dashboard's checks: "country = NZ gets Group B", built with the rule
builder's fields (no JSON), planned, applied, then verified on the user page with attributes,
in at most 5 page loads; then a rule built on a phone, its refusal listing every mistake."""

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select


def build(check, attribute, condition, value, serve):
    driver = check.driver
    field = driver.find_element(By.ID, "rule-attribute")
    field.clear()
    field.send_keys(attribute)
    Select(driver.find_element(By.ID, "rule-op")).select_by_visible_text(condition)
    values = driver.find_element(By.ID, "rule-values")
    values.clear()
    values.send_keys(value)
    Select(driver.find_element(By.ID, "rule-serve")).select_by_visible_text(serve)
    check.click("#rule-builder button[value=plan]")


def run(check, environment):
    driver = check.driver
    feature = environment + "/features/Example%20A%2FB%20Test"
    loads = check.page_loads()
    check.page("rules-builder", feature, ["#rule-builder input#rule-attribute[list]", "#known-attributes option", "select#rule-op", "select#rule-serve"], phone=True)
    known = [option.get_attribute("value") for option in driver.find_elements(By.CSS_SELECTOR, "#known-attributes option")]
    if "country" not in known:
        check.fail(f"rules-builder: the known attributes {known} lack the demo's country")
    build(check, "country", "is", "NZ", "Group B")
    if not check.wait_for("the builder's plan", lambda: driver.find_elements(By.CSS_SELECTOR, "#rules-plan p.summary")):
        return
    check.checked("rules-builder-plan", ["#rules-plan button[value=apply]"], phone=True)
    # The advanced view holds the same rule, as JSON.
    text = driver.execute_script("return document.getElementById('rules').value")
    if '"attribute": "country"' not in text or '"NZ"' not in text or '"Group B"' not in text:
        check.fail(f"rules-builder-plan: the JSON view lacks the built rule: {text!r}")
    driver.find_element(By.ID, "rules-reason").send_keys("New Zealand launch")
    check.click("#rules-plan button[value=apply]")
    if not check.wait_for("the applied rule", lambda: "Applied as revision" in driver.page_source):
        return
    rows = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "table.rules tbody tr")]
    if not any('country is "NZ"' in row and "Group B" in row for row in rows):
        check.fail(f"rules-builder-applied: no rule row says country is \"NZ\" serves Group B: {rows}")
    check.checked("rules-builder-applied", ["table.rules tbody tr", "p.notice"])

    # The user page, with the attributes typed: the rule decides, and is named.
    driver.get(check.base + environment + "/users")
    driver.find_element(By.ID, "user-id").send_keys("nz-visitor-1")
    driver.find_element(By.ID, "user-attributes").send_keys("country=NZ, appVersion=5.2")
    check.click("form[role=search] button[type=submit]")
    check.wait_for("the user's evaluations", lambda: driver.find_elements(By.CSS_SELECTOR, "section[aria-labelledby=groups] tbody tr"))
    rows = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "section[aria-labelledby=groups] tbody tr")]
    row = next((row for row in rows if row.startswith("Example A/B Test")), "")
    if "Group B" not in row or "rule country-equals-nz" not in row:
        check.fail(f"rules-user: Example A/B Test for an NZ user reads {row!r}, not Group B by the rule")
    check.checked("rules-user", ["input#user-attributes"], phone=True)
    used = check.page_loads() - loads
    if used > 5:
        check.fail(f"rules: took {used} page loads, more than 5")
    print(f"     rules: {used} page loads")

    # A demo user with attributes on record: the page lists them.
    check.page("user-attributes", environment + "/users?user=demo-user-1", ["ul.attributes li code"])

    # On a phone: a rule with two mistakes is refused, every one listed at once.
    driver.set_window_size(*check.phone_size)
    check.page("rules-builder-refused-before", environment + "/features/Example%20MVT%20Test", ["#rule-builder"])
    build(check, "", "is less than", "many", "Group C")
    if check.wait_for("the builder's refusal", lambda: driver.find_elements(By.CSS_SELECTOR, "#rules-issues li")):
        issues = driver.find_elements(By.CSS_SELECTOR, "#rules-issues li")
        if len(issues) < 2:
            check.fail(f"rules-builder-refused: {len(issues)} issue(s) listed for a blank attribute and a value that is not a number")
        check.checked("rules-builder-refused", ["#rules-issues li"], expected_status=422)
    driver.set_window_size(*check.desktop_size)
