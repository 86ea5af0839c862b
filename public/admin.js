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

// A cover chosen on the cover page is shown before it is sent (the page works without this).
document.querySelectorAll('input[type=file][data-preview]').forEach(function (input) {
  input.addEventListener('change', function () {
    var preview = document.getElementById(input.getAttribute('data-preview'));
    if (!preview || !input.files || !input.files[0]) return;
    preview.src = URL.createObjectURL(input.files[0]);
    preview.hidden = false;
  });
});
