"""A ramp, in the browser: the MVT test's last variation planned to grow 10 % → 20 % → 40 %,
every step's plan read before starting, the timeline after it, then paused and aborted with a
roll-back, each action confirmed with its plan first."""

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select


def run(check, environment):
    driver = check.driver
    ramp = environment + "/features/Example%20MVT%20Test/ramp"

    check.page("ramp", ramp, ["form#ramp-form select#ramp-variation", "input#ramp-steps", "input#ramp-hold"], phone=True)
    choices = [option.text for option in driver.find_elements(By.CSS_SELECTOR, "select#ramp-variation option")]
    if choices != ["Group A", "Group C"]:
        check.fail(f"ramp: the variations that can grow are {choices}, not the two ends")
    Select(driver.find_element(By.ID, "ramp-variation")).select_by_value("Group C")
    steps = driver.find_element(By.ID, "ramp-steps")
    steps.clear()
    steps.send_keys("20, 40")
    check.click("form#ramp-form button[value=preview]")
    if not check.wait_for("the ramp's plan", lambda: driver.find_elements(By.CSS_SELECTOR, "#confirm ul.moves li")):
        return
    check.checked("ramp-plan", ["#confirm h3", "#confirm button[value=apply]"], phone=True)
    plan = driver.find_element(By.ID, "confirm").text
    # 10 → 20 takes from Group B only; 20 → 40 takes the rest of B, then from A.
    for expected in ["Step 1: Group C 20 %", "from Group B to Group C", "Step 2: Group C 40 %", "from Group A to Group C"]:
        if expected not in plan:
            check.fail(f"ramp-plan: {expected!r} is not in the plan: {plan[:300]!r}")
    check.click("#confirm button[value=apply]")
    if not check.wait_for("the started ramp", lambda: "the timeline below shows the ramp" in driver.page_source):
        return
    check.checked("ramp-timeline", ["ol.ramp-steps li.applied", "ol.ramp-steps li.next time", "p#ramp-state"], phone=True)

    for action, label, state in [("pause", "Pause the ramp", "Paused"), ("abort", "Abort and roll back to 0 %", "Aborted")]:
        selector = f"form input[name=do][value={action}]"
        forms = [form for form in driver.find_elements(By.CSS_SELECTOR, "form") if form.find_elements(By.CSS_SELECTOR, selector)]
        if not forms:
            check.fail(f"ramp-{action}: no button plans it")
            return
        forms[-1].find_element(By.CSS_SELECTOR, "button[value=preview]").click()
        if not check.wait_for(f"the {action} plan", lambda: driver.find_elements(By.CSS_SELECTOR, "#confirm button[value=apply]")):
            return
        check.checked(f"ramp-{action}-confirm", ["#confirm p.summary"])
        button = driver.find_element(By.CSS_SELECTOR, "#confirm button[value=apply]")
        if button.text != label:
            check.fail(f"ramp-{action}-confirm: the button reads {button.text!r}, not {label!r}")
        button.click()
        check.wait_for(f"the ramp {state.lower()}", lambda: driver.find_element(By.ID, "ramp-state").text.startswith(state))
        check.checked(f"ramp-{action}", ["ol.ramp-steps li", "ul.ramp-events li"])

    # A trigger: its URL shown once, then revoked after confirming.
    driver.find_element(By.ID, "trigger-name").send_keys("Crashlytics velocity alert")
    Select(driver.find_element(By.ID, "trigger-action")).select_by_value("rollback")
    check.click("form#trigger-form button[type=submit]")
    if not check.wait_for("the new trigger's URL", lambda: driver.find_elements(By.ID, "new-trigger-url")):
        return
    url = driver.find_element(By.ID, "new-trigger-url").text.strip()
    if "/triggers?token=fpt_" not in url:
        check.fail(f"ramp-trigger-made: the URL shown is {url!r}")
    check.checked("ramp-trigger-made", ["button[data-copy=new-trigger-url]", "table.triggers tbody tr"], phone=True)
    check.click("table.triggers button[value=preview]")
    if not check.wait_for("the revoke confirmation", lambda: driver.find_elements(By.CSS_SELECTOR, "#confirm-revoke button.danger")):
        return
    check.checked("ramp-trigger-revoke-confirm", ["#confirm-revoke button.danger"])
    check.click("#confirm-revoke button.danger")
    check.wait_for("the revoked trigger", lambda: "The trigger is revoked" in driver.page_source)
    check.checked("ramp-trigger-revoked", ["p.notice", "table.triggers tbody tr"])

    # The environment's webhooks, which the ramp page links to (Settings › Environments ›
    # Webhooks). A webhook into the server's own network: refused, saying how its operator allows
    # it, the URL and the events ticked kept in the form to be corrected; nothing is added.
    check.click("#webhooks-link")
    if not check.wait_for("the webhooks page", lambda: driver.find_elements(By.ID, "webhook-form")):
        return
    check.checked("webhooks", ["#webhook-form", "#webhook-events input[type=checkbox]"], phone=True)
    for box in driver.find_elements(By.CSS_SELECTOR, "#webhook-events input[type=checkbox]"):
        if box.get_attribute("value") != "revision.created" and box.is_selected():
            box.click()
    driver.find_element(By.ID, "webhook-url").send_keys("http://127.0.0.1:9/hook")
    Select(driver.find_element(By.ID, "webhook-format")).select_by_value("slack")
    check.click("form#webhook-form button[type=submit]")
    if not check.wait_for("the webhook's refusal", lambda: driver.find_elements(By.ID, "webhook-error")):
        return
    check.checked("ramp-webhook-refused", ["#webhooks #webhook-error", "select#webhook-format option[value=slack][selected]", "#webhook-events input[value='revision.created'][checked]"], phone=True, expected_status=403)
    if driver.find_elements(By.CSS_SELECTOR, "#webhook-events input[value='ramp.paused'][checked]"):
        check.fail("ramp-webhook-refused: an event left unticked came back ticked")
    refusal = driver.find_element(By.ID, "webhook-error").text
    if "--allow-private-webhooks" not in refusal:
        check.fail(f"ramp-webhook-refused: the refusal does not say how to allow it: {refusal!r}")
    kept = driver.find_element(By.ID, "webhook-url").get_attribute("value")
    if kept != "http://127.0.0.1:9/hook":
        check.fail(f"ramp-webhook-refused: the field holds {kept!r}, not the URL typed")
    if "No webhook." not in driver.page_source:
        check.fail("ramp-webhook-refused: a webhook was added")
