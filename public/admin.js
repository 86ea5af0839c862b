// Progressive enhancement only: every console form works without this file.
document.addEventListener("DOMContentLoaded", () => {
  const all = document.getElementById("select-all");
  if (all) {
    all.addEventListener("change", () => {
      document.querySelectorAll('input[name="ids[]"]').forEach((box) => { box.checked = all.checked; });
    });
  }
  const summary = document.getElementById("error-summary");
  if (summary) summary.focus();
});
