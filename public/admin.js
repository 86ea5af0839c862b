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

// ⌘K / Ctrl-K: a palette over /admin/search (the header's search box works without this).
(function () {
  var form = document.querySelector('form.quick-search');
  if (!form) return;
  var dialog = document.createElement('dialog');
  dialog.className = 'palette';
  dialog.setAttribute('aria-label', 'Search the console');
  dialog.innerHTML = '<form method="get" role="search"><label for="palette-q" class="visually-hidden">Search books, publishers, categories and pages</label>' +
    '<input id="palette-q" name="q" type="search" autocomplete="off" placeholder="Search books, publishers, categories, pages…" role="combobox" aria-expanded="false" aria-controls="palette-results" aria-autocomplete="list"></form>' +
    '<ul id="palette-results" role="listbox" aria-label="Results"></ul>';
  document.body.appendChild(dialog);
  var input = dialog.querySelector('input'), list = dialog.querySelector('ul'), inner = dialog.querySelector('form');
  inner.action = form.action;
  var selected = -1, timer = null, serial = 0;
  function items() { return list.querySelectorAll('a'); }
  function mark(i) {
    var all = items();
    selected = Math.max(-1, Math.min(i, all.length - 1));
    all.forEach(function (a, j) { a.setAttribute('aria-selected', j === selected ? 'true' : 'false'); });
    if (selected >= 0) { input.setAttribute('aria-activedescendant', all[selected].id); all[selected].scrollIntoView({ block: 'nearest' }); }
    else input.removeAttribute('aria-activedescendant');
  }
  function show(results) {
    list.textContent = '';
    results.forEach(function (r, i) {
      var li = document.createElement('li'), a = document.createElement('a'), kind = document.createElement('span');
      a.href = r.href; a.textContent = r.label; a.id = 'palette-item-' + i; a.setAttribute('role', 'option');
      kind.className = 'result-kind'; kind.textContent = r.kind;
      a.appendChild(kind); li.appendChild(a); list.appendChild(li);
    });
    input.setAttribute('aria-expanded', results.length ? 'true' : 'false');
    mark(results.length ? 0 : -1);
  }
  function lookup() {
    var q = input.value.trim(), mine = ++serial;
    if (!q) { show([]); return; }
    fetch(form.action + '?q=' + encodeURIComponent(q), { headers: { Accept: 'application/json' }, credentials: 'same-origin' })
      .then(function (r) { return r.ok ? r.json() : []; })
      .then(function (results) { if (mine === serial) show(results); })
      .catch(function () {});
  }
  function open() { input.value = ''; show([]); dialog.showModal(); input.focus(); }
  document.addEventListener('keydown', function (e) {
    if ((e.metaKey || e.ctrlKey) && (e.key === 'k' || e.key === 'K')) { e.preventDefault(); if (dialog.open) dialog.close(); else open(); }
  });
  input.addEventListener('input', function () { clearTimeout(timer); timer = setTimeout(lookup, 120); });
  input.addEventListener('keydown', function (e) {
    if (e.key === 'ArrowDown') { e.preventDefault(); mark(selected + 1); }
    else if (e.key === 'ArrowUp') { e.preventDefault(); mark(selected - 1); }
    else if (e.key === 'Enter' && selected >= 0) { e.preventDefault(); window.location.href = items()[selected].href; }
  });
})();

// Pickers for lookups with many rows (publishers): suggestions as you type, into the field's
// datalist. Without script, typing the exact name works the same.
document.querySelectorAll('input[data-lookup]').forEach(function (input) {
  var list = document.getElementById(input.getAttribute('list')), timer = null, serial = 0;
  if (!list) return;
  input.addEventListener('input', function () {
    clearTimeout(timer);
    timer = setTimeout(function () {
      var q = input.value.trim(), mine = ++serial;
      if (q.length < 1) return;
      fetch(input.getAttribute('data-lookup') + '?q=' + encodeURIComponent(q), { headers: { Accept: 'application/json' }, credentials: 'same-origin' })
        .then(function (r) { return r.ok ? r.json() : []; })
        .then(function (labels) {
          if (mine !== serial) return;
          list.textContent = '';
          labels.forEach(function (label) { var o = document.createElement('option'); o.value = label; list.appendChild(o); });
        }).catch(function () {});
    }, 150);
  });
});
