// Live bias plan: as biases are typed, the page's own preview is fetched and its plan shown.
// Without JavaScript the "Preview the move" button does the same with a page load.
"use strict";
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
