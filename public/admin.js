// Progressive enhancement only: every console page and form works without this file.
// Loaded in <head> (not deferred) for one thing only: the sidebar's folded state is applied before
// the page is drawn, so it does not flash open. Everything else waits for the document.

// The sidebar: "Menu" folds it away and opens it again; the choice is kept in localStorage. With no
// choice kept, it starts folded on a narrow window and open on a wide one.
(function () {
  var key = 'storytime.sidebar', root = document.documentElement, kept = null;
  try { kept = window.localStorage.getItem(key); } catch (e) { /* storage off: per page */ }
  var narrow = window.matchMedia && window.matchMedia('(max-width: 56rem)').matches;
  if (kept === 'collapsed' || (kept === null && narrow)) root.classList.add('sidebar-collapsed');
  document.addEventListener('DOMContentLoaded', function () {
    var button = document.querySelector('.menu-toggle'), sidebar = document.getElementById('sidebar');
    if (!button || !sidebar) { root.classList.remove('sidebar-collapsed'); return; }
    function show() { button.setAttribute('aria-expanded', root.classList.contains('sidebar-collapsed') ? 'false' : 'true'); }
    button.hidden = false;
    show();
    button.addEventListener('click', function () {
      var folded = root.classList.toggle('sidebar-collapsed');
      try { window.localStorage.setItem(key, folded ? 'collapsed' : 'expanded'); } catch (e) { /* kept for this page only */ }
      show();
      if (!folded) { var current = sidebar.querySelector('a[aria-current]') || sidebar.querySelector('a'); if (current) current.focus(); }
    });
  });
})();

document.addEventListener('DOMContentLoaded', function () {
  var all = document.getElementById('select-all');
  if (all) {
    all.addEventListener('change', function () {
      document.querySelectorAll('input[name="ids[]"]').forEach(function (box) { box.checked = all.checked; });
    });
  }
  var summary = document.getElementById('error-summary');
  if (summary) summary.focus();

  // A cover chosen on the cover page is shown before it is sent.
  document.querySelectorAll('input[type=file][data-preview]').forEach(function (input) {
    input.addEventListener('change', function () {
      var preview = document.getElementById(input.getAttribute('data-preview'));
      if (!preview || !input.files || !input.files[0]) return;
      preview.src = URL.createObjectURL(input.files[0]);
      preview.hidden = false;
    });
  });

  // The batch bar shows only the choice the chosen action needs (without script: all of them,
  // each labelled with its action).
  var action = document.getElementById('batch-action');
  if (action) {
    var targets = document.querySelectorAll('.batch-target[data-action]');
    var pick = function () { targets.forEach(function (t) { t.hidden = t.getAttribute('data-action') !== action.value; }); };
    action.addEventListener('change', pick);
    pick();
  }

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

  palette();
});

// ⌘K / Ctrl-K: a palette over /admin/search (the header's search box works without this), built
// as the WAI-ARIA combobox pattern: the field is a combobox that owns a listbox of options; the
// focus stays in the field and aria-activedescendant names the option the arrows are on.
function palette() {
  var form = document.querySelector('form.quick-search');
  if (!form) return;
  var dialog = document.createElement('dialog');
  dialog.className = 'palette';
  dialog.setAttribute('aria-label', 'Search the console');
  dialog.innerHTML = '<form method="get" role="search"><label for="palette-q" class="visually-hidden">Search books, publishers, categories and pages</label>' +
    '<input id="palette-q" name="q" type="text" autocomplete="off" spellcheck="false" placeholder="Search books, publishers, categories, pages…"' +
    ' role="combobox" aria-expanded="false" aria-controls="palette-results" aria-autocomplete="list" aria-describedby="palette-help"></form>' +
    '<ul id="palette-results" role="listbox" aria-label="Results" hidden></ul>' +
    '<p id="palette-status" class="palette-status" role="status"></p>' +
    '<p id="palette-help" class="palette-help">↑ ↓ to choose, Enter to open, Esc to close</p>';
  document.body.appendChild(dialog);
  var input = dialog.querySelector('input'), list = dialog.querySelector('ul'), status = dialog.querySelector('[role=status]');
  dialog.querySelector('form').action = form.action;
  var selected = -1, timer = null, serial = 0;
  function options() { return list.querySelectorAll('[role=option]'); }
  function mark(i) {
    var all = options();
    selected = all.length ? Math.max(0, Math.min(i, all.length - 1)) : -1;
    all.forEach(function (o, j) { o.setAttribute('aria-selected', j === selected ? 'true' : 'false'); });
    if (selected >= 0) { input.setAttribute('aria-activedescendant', all[selected].id); all[selected].scrollIntoView({ block: 'nearest' }); }
    else input.removeAttribute('aria-activedescendant');
  }
  function go(i) { var o = options()[i]; if (o) window.location.href = o.getAttribute('data-href'); }
  function show(results, q) {
    list.textContent = '';
    results.forEach(function (r, i) {
      var option = document.createElement('li'), kind = document.createElement('span');
      option.id = 'palette-option-' + i;
      option.setAttribute('role', 'option');
      option.setAttribute('data-href', r.href);
      option.textContent = r.label;
      kind.className = 'result-kind';
      kind.textContent = r.kind;
      option.appendChild(kind);
      option.addEventListener('mousemove', function () { if (selected !== i) mark(i); });
      option.addEventListener('click', function () { go(i); });
      list.appendChild(option);
    });
    list.hidden = results.length === 0;
    input.setAttribute('aria-expanded', results.length ? 'true' : 'false');
    status.textContent = !q ? '' : results.length ? results.length + (results.length === 1 ? ' result' : ' results') : 'Nothing matches “' + q + '”';
    mark(0);
  }
  function lookup() {
    var q = input.value.trim(), mine = ++serial;
    if (!q) { show([], q); return; }
    fetch(form.action + '?q=' + encodeURIComponent(q), { headers: { Accept: 'application/json' }, credentials: 'same-origin' })
      .then(function (r) { return r.ok ? r.json() : []; })
      .then(function (results) { if (mine === serial) show(results, q); })
      .catch(function () {});
  }
  function open() { input.value = ''; show([], ''); dialog.showModal(); input.focus(); }
  document.addEventListener('keydown', function (e) {
    if ((e.metaKey || e.ctrlKey) && (e.key === 'k' || e.key === 'K')) { e.preventDefault(); if (dialog.open) dialog.close(); else open(); }
  });
  dialog.addEventListener('click', function (e) { if (e.target === dialog) dialog.close(); });   // the backdrop
  input.addEventListener('input', function () { clearTimeout(timer); timer = setTimeout(lookup, 120); });
  input.addEventListener('keydown', function (e) {
    var count = options().length;
    if (e.key === 'ArrowDown' && count) { e.preventDefault(); mark(selected + 1 < count ? selected + 1 : 0); }
    else if (e.key === 'ArrowUp' && count) { e.preventDefault(); mark(selected > 0 ? selected - 1 : count - 1); }
    else if (e.key === 'Home' && count && e.ctrlKey) { e.preventDefault(); mark(0); }
    else if (e.key === 'End' && count && e.ctrlKey) { e.preventDefault(); mark(count - 1); }
    else if (e.key === 'Enter' && selected >= 0) { e.preventDefault(); go(selected); }
  });
}
