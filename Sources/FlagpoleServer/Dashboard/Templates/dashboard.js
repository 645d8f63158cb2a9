// Live bias plan: as biases are typed, the page's own preview is fetched and its plan shown.
// Without JavaScript the "Preview the move" button does the same with a page load.
// JSON config values: each is parsed as it is typed and its error shown (the form won't send
// a value that can't be a json config's); the server checks it again, and alone without JavaScript.
// Copy buttons: the snippet they name to the clipboard.
"use strict";
document.addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-copy]");
  if (!button) return;
  const snippet = document.getElementById(button.dataset.copy);
  if (!snippet || !navigator.clipboard) return;
  await navigator.clipboard.writeText(snippet.textContent);
  button.textContent = "Copied";
});
document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("bias-form");
  const plan = document.getElementById("plan");
  if (!form || !plan) return;
  let timer = null;
  let generation = 0;
  form.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      // A half-typed form (an empty or out-of-range field) has no plan yet.
      if (!form.checkValidity()) return;
      const mine = ++generation;
      const data = new URLSearchParams(new FormData(form));
      data.set("action", "preview");
      // getAttribute: `form.action` would be the button named "action".
      const response = await fetch(form.getAttribute("action"), { method: "POST", body: data, credentials: "same-origin" });
      if (mine !== generation) return;
      const page = new DOMParser().parseFromString(await response.text(), "text/html");
      const fresh = page.getElementById("plan");
      const buttons = page.querySelector("#bias-form .buttons");
      const error = page.querySelector("main .error");
      plan.replaceChildren(...(fresh ? fresh.childNodes : []));
      if (error) plan.prepend(error);
      const current = form.querySelector(".buttons");
      if (buttons && current) current.replaceChildren(...buttons.childNodes);
    }, 300);
  });
});

document.addEventListener("DOMContentLoaded", () => {
  for (const area of document.querySelectorAll("textarea[data-json]")) {
    const message = document.getElementById(area.id + "-check");
    const check = () => {
      const text = area.value.trim();
      let problem = "";
      // A blank variation value is no value (the default applies); a blank default is caught by `required`.
      if (text !== "") {
        try {
          const value = JSON.parse(text);
          if (value === null || typeof value !== "object" || Array.isArray(value)) {
            problem = "A json config's value is a JSON object, such as {\"accent\": \"blue\"}.";
          }
        } catch (error) {
          problem = "This is not JSON: " + error.message;
        }
      }
      area.setCustomValidity(problem);
      // Only what this script marked is unmarked: the server's own verdict stays until sent again.
      if (problem) {
        area.setAttribute("aria-invalid", "true");
        area.dataset.clientInvalid = "true";
      } else if (area.dataset.clientInvalid) {
        area.removeAttribute("aria-invalid");
        delete area.dataset.clientInvalid;
      }
      if (message) message.textContent = problem;
    };
    area.addEventListener("input", check);
    check();
  }
});
