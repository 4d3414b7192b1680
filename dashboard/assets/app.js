// backupmon dashboard: keyboard shortcuts, select-all and live-refresh guards.
// Plain ES2017, no build step. Every listener is on `document`, because htmx
// (hx-boost) swaps page content and elements present at load time go away.
(function () {
  'use strict';

  var CURRENT = 'current';
  var cursorKey = null; // data-row value of the cursor row, kept across swaps

  // ---------- Helpers ----------

  function rows() {
    return Array.prototype.slice.call(document.querySelectorAll('[data-row]'));
  }

  function currentRow() {
    return document.querySelector('[data-row].' + CURRENT);
  }

  // Place the cursor on row (or clear it with null).
  function setCursor(row, scroll) {
    document.querySelectorAll('[data-row].' + CURRENT).forEach(function (r) {
      r.classList.remove(CURRENT);
      r.removeAttribute('aria-current');
    });
    if (!row) {
      cursorKey = null;
      return;
    }
    row.classList.add(CURRENT);
    row.setAttribute('aria-current', 'true');
    cursorKey = row.getAttribute('data-row');
    if (scroll) row.scrollIntoView({ block: 'nearest' });
  }

  // Move the cursor by step rows; with no cursor yet, start at the first row.
  function move(step) {
    var list = rows();
    if (!list.length) return;
    var cur = currentRow();
    var i = cur ? list.indexOf(cur) + step : 0;
    i = Math.max(0, Math.min(list.length - 1, i));
    setCursor(list[i], true);
  }

  // Click el if it exists and is enabled; report whether it did.
  function press(el) {
    if (!el || el.disabled || el.getAttribute('aria-disabled') === 'true') return false;
    el.click();
    return true;
  }

  // True when keys typed now belong to a text field, not to the shortcuts.
  // Checkboxes, radios and buttons do not count: after clicking a checkbox
  // j/k should still move the cursor.
  function typing(el) {
    if (!el || el === document.body) return false;
    if (el.isContentEditable) return true;
    var tag = el.tagName;
    if (tag === 'TEXTAREA' || tag === 'SELECT') return true;
    if (tag !== 'INPUT') return false;
    return !/^(checkbox|radio|button|submit|reset|image)$/.test(el.type);
  }

  function openDialog() {
    return document.querySelector('dialog[open]');
  }

  // ---------- Keyboard shortcuts ----------

  document.addEventListener('keydown', function (e) {
    if (e.defaultPrevented || e.isComposing) return;
    var active = document.activeElement;

    if (e.key === 'Escape') {
      if (openDialog()) return; // the dialog closes itself
      if (typing(active)) active.blur(); // leave the field, back to shortcuts
      else if (currentRow()) setCursor(null);
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (typing(active)) return;

    var help = document.getElementById('shortcuts');
    if (e.key === '?') {
      if (!help || typeof help.showModal !== 'function') return;
      e.preventDefault();
      if (help.open) help.close();
      else help.showModal();
      return;
    }
    if (openDialog()) return; // no other shortcuts behind a dialog

    var row = currentRow();
    switch (e.key) {
      case 'j':
        move(1);
        break;
      case 'k':
        move(-1);
        break;
      case 'x': {
        var box = row && row.querySelector('input[type="checkbox"]');
        if (!box || box.disabled) return;
        box.checked = !box.checked;
        box.dispatchEvent(new Event('change', { bubbles: true }));
        break;
      }
      case 'a':
      case 's':
        if (!press(document.querySelector('[data-key="' + e.key + '"]'))) return;
        break;
      case 'Enter': {
        // Only from the page itself: Enter on a focused link or button is theirs.
        if (active && active !== document.body) return;
        var link = row && row.querySelector('a[data-open]');
        if (!link) return;
        link.click(); // a real click, so hx-boost handles it
        break;
      }
      case '/': {
        var field = document.querySelector('[data-key="/"]') ||
          document.querySelector('input[type="search"]');
        if (!field) return;
        field.focus();
        if (typeof field.select === 'function') field.select();
        break;
      }
      default:
        return;
    }
    e.preventDefault();
  });

  // Clicking inside a row (not on a control) moves the cursor there too.
  document.addEventListener('click', function (e) {
    var row = e.target.closest && e.target.closest('[data-row]');
    if (row && !row.classList.contains(CURRENT)) setCursor(row, false);
  });

  // ---------- Select all ----------

  function groupOf(el) {
    return el.closest('section.group') || document.getElementById('queue') || document;
  }

  document.addEventListener('change', function (e) {
    var t = e.target;
    if (!t.matches) return;

    // The select-all box sets every alert box of its group.
    if (t.matches('input[data-select-all]')) {
      groupOf(t).querySelectorAll('input[name="alert"]').forEach(function (box) {
        if (!box.disabled) box.checked = t.checked;
      });
      return;
    }

    // An alert box keeps its group's select-all box in step (checked / mixed).
    if (t.matches('input[name="alert"]')) {
      var scope = groupOf(t);
      var all = scope.querySelector('input[data-select-all]');
      if (!all) return;
      var boxes = Array.prototype.slice.call(scope.querySelectorAll('input[name="alert"]'));
      var on = boxes.filter(function (b) { return b.checked; }).length;
      all.checked = on > 0 && on === boxes.length;
      all.indeterminate = on > 0 && on < boxes.length;
    }
  });

  // ---------- Live refresh guard ----------

  // True when the user has changed a control inside el from what the server sent.
  function edited(el) {
    var controls = el.querySelectorAll('input, select, textarea');
    for (var i = 0; i < controls.length; i++) {
      var c = controls[i];
      if (c.type === 'checkbox' || c.type === 'radio') {
        if (c.checked !== c.defaultChecked) return true;
      } else if (c.tagName === 'SELECT') {
        for (var j = 0; j < c.options.length; j++) {
          if (c.options[j].selected !== c.options[j].defaultSelected) return true;
        }
      } else if (c.type !== 'hidden' && c.value !== c.defaultValue) {
        return true;
      }
    }
    return false;
  }

  // A polling refresh of a [data-live] element is skipped while the user is
  // working in it (a selection, typing, focus) or typing in the #bulk bar.
  document.addEventListener('htmx:beforeRequest', function (e) {
    var elt = e.detail && e.detail.elt;
    if (!elt || !elt.matches || !elt.matches('[data-live]')) return;
    var active = document.activeElement;
    var bulk = document.getElementById('bulk');
    var busy = edited(elt) ||
      (active && active !== document.body && elt.contains(active)) ||
      (bulk && typing(active) && (active.form === bulk || bulk.contains(active)));
    if (busy) e.preventDefault();
  });

  // ---------- Copy buttons ----------

  // A [data-copy] button copies the value (or text) of the element whose id
  // it names, and says so on itself for two seconds.
  document.addEventListener('click', function (e) {
    var btn = e.target.closest && e.target.closest('[data-copy]');
    if (!btn) return;
    var src = document.getElementById(btn.getAttribute('data-copy'));
    if (!src) return;
    var text = 'value' in src ? src.value : src.textContent;
    var said = function () {
      btn.textContent = 'Copied';
      setTimeout(function () { btn.textContent = 'Copy'; }, 2000);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(said, function () {
        if (src.select) src.select();
      });
    } else if (src.select) {
      src.select();
      if (document.execCommand('copy')) said();
    }
  });

  // ---------- Keep the cursor across swaps ----------

  document.addEventListener('htmx:afterSwap', function () {
    if (!cursorKey || currentRow()) return;
    var row = document.querySelector('[data-row="' + CSS.escape(cursorKey) + '"]');
    if (row) setCursor(row, false);
  });

  // ---------- Copy buttons: data-copy names the field to copy ----------

  document.addEventListener('click', function (e) {
    var btn = e.target.closest ? e.target.closest('[data-copy]') : null;
    if (!btn) return;
    var field = document.querySelector(btn.getAttribute('data-copy'));
    if (!field) return;
    field.select();
    if (navigator.clipboard) navigator.clipboard.writeText(field.value);
    btn.textContent = 'Copied';
  });
})();
