/*
 * exitscope report page: the two-window comparison (the same rows, order
 * and arithmetic as `exitscope diff`, on exact 64-bit counts with BigInt)
 * and the search boxes of the embedded flame graphs.
 */
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('xs-data').textContent);
  var wins = data.windows;

  function big(s) { return BigInt(s); }
  function abs(v) { return v < 0n ? -v : v; }

  /* value / 10^decimals with that many decimals */
  function fixed(v, decimals) {
    var s = v.toString();
    if (!decimals) return s;
    while (s.length <= decimals) s = '0' + s;
    return s.slice(0, s.length - decimals) + '.' + s.slice(s.length - decimals);
  }

  function delta(a, b, decimals) {
    var d = b - a;
    return (d > 0n ? '+' : d < 0n ? '-' : '') + fixed(abs(d), decimals);
  }

  /* b / a with 3 decimals, rounded like C's printf("%.3f") on the double
   * quotient: exact binary value, ties to even. */
  function ratio(a, b) {
    if (a === 0n && b === 0n) return '-';
    if (a === 0n) return 'new';
    if (b === 0n) return 'gone';
    var q = Number(b) / Number(a);
    var exact = q.toFixed(100), dot = exact.indexOf('.');
    var head = exact.slice(0, dot) + exact.slice(dot + 1, dot + 4), tail = exact.slice(dot + 4);
    var n = BigInt(head);
    if (tail[0] > '5' || (tail[0] === '5' && (/[1-9]/.test(tail.slice(1)) || n % 2n === 1n))) n += 1n;
    return fixed(n, 3);
  }

  function syscallMap(w) {
    var m = new Map();
    w.syscalls.forEach(function (s) {
      if (!m.has(s[0])) m.set(s[0], { calls: big(s[1]), errors: big(s[2]), ns: big(s[3]) });
    });
    return m;
  }

  var ZERO = { calls: 0n, errors: 0n, ns: 0n };

  function compareRows(wa, wb) {
    var ma = syscallMap(wa), mb = syscallMap(wb), rows = [];
    ma.forEach(function (v, name) { rows.push({ name: name, a: v, b: mb.get(name) || ZERO }); });
    mb.forEach(function (v, name) { if (!ma.has(name)) rows.push({ name: name, a: ZERO, b: v }); });
    rows.sort(function (r, s) {
      var dr = abs(r.b.calls - r.a.calls), ds = abs(s.b.calls - s.a.calls);
      if (dr !== ds) return dr > ds ? -1 : 1;
      var mr = r.a.calls > r.b.calls ? r.a.calls : r.b.calls;
      var ms = s.a.calls > s.b.calls ? s.a.calls : s.b.calls;
      if (mr !== ms) return mr > ms ? -1 : 1;
      return r.name < s.name ? -1 : r.name > s.name ? 1 : 0;
    });
    return rows;
  }

  function cell(tr, text, cls) {
    var td = document.createElement('td');
    td.textContent = text;
    if (cls) td.className = cls;
    tr.appendChild(td);
  }

  function row(tbody, name, metric, a, b, decimals) {
    var tr = document.createElement('tr');
    var d = delta(a, b, decimals);
    cell(tr, name); cell(tr, metric);
    cell(tr, fixed(a, decimals), 'n'); cell(tr, fixed(b, decimals), 'n');
    cell(tr, d, 'n ' + (d[0] === '+' ? 'pos' : d[0] === '-' ? 'neg' : ''));
    cell(tr, ratio(a, b), 'n');
    tr.setAttribute('data-name', name || '');
    tr.setAttribute('data-metric', metric);
    tbody.appendChild(tr);
  }

  function describe(w) {
    return 'seq ' + w.seq + ' (' + w.reason + (w.label !== null ? ' "' + w.label + '"' : '') + ', ' +
      fixed(big(w.duration_ns) / 1000n, 6) + ' s)';
  }

  function render() {
    var a = wins[document.getElementById('cmp-a').value];
    var b = wins[document.getElementById('cmp-b').value];
    var out = document.getElementById('cmp-out');
    out.textContent = '';
    var p = document.createElement('p');
    p.textContent = 'A: ' + describe(a) + ' \u2014 B: ' + describe(b) + ' \u2014 delta = B - A';
    out.appendChild(p);
    var table = document.createElement('table');
    table.id = 'cmp-table';
    table.innerHTML = '<thead><tr><th>counter / syscall</th><th>metric</th><th>A</th><th>B</th>' +
      '<th>delta</th><th>ratio</th></tr></thead>';
    var tbody = document.createElement('tbody');
    data.scalar_names.forEach(function (name, i) {
      row(tbody, name, '', big(a.scalars[i]), big(b.scalars[i]), 0);
    });
    compareRows(a, b).forEach(function (r) {
      row(tbody, r.name, 'calls', r.a.calls, r.b.calls, 0);
      if (r.a.errors || r.b.errors) row(tbody, '', 'errors', r.a.errors, r.b.errors, 0);
      row(tbody, '', 'time_us', r.a.ns, r.b.ns, 3);
    });
    table.appendChild(tbody);
    out.appendChild(table);
    document.querySelectorAll('#windows-table tbody tr').forEach(function (tr, i) {
      tr.classList.toggle('sel-a', wins[i] === a);
      tr.classList.toggle('sel-b', wins[i] === b);
    });
  }

  function setUp() {
    var sa = document.getElementById('cmp-a'), sb = document.getElementById('cmp-b');
    wins.forEach(function (w, i) {
      [sa, sb].forEach(function (sel) {
        var o = document.createElement('option');
        o.value = String(i);
        o.textContent = 'seq ' + w.seq + ' ' + w.reason + (w.label !== null ? ' "' + w.label + '"' : '');
        sel.appendChild(o);
      });
    });
    sa.value = '0';
    sb.value = String(wins.length > 1 ? 1 : 0);
    sa.addEventListener('change', render);
    sb.addEventListener('change', render);
    render();

    document.querySelectorAll('.flame').forEach(function (div) {
      var input = div.querySelector('input'), svg = div.querySelector('svg.xs-flame');
      var shown = div.querySelector('.fmatch');
      if (!input || !svg) return;
      input.addEventListener('input', function () {
        var share = window.xsFlame.search(svg, input.value);
        shown.textContent = input.value ? (100 * share).toFixed(2) + '% of samples' : '';
      });
    });
  }

  /* for tests and scripts: the comparison of windows i and j as rows */
  window.xsReport = {
    ratio: function (a, b) { return ratio(BigInt(a), BigInt(b)); },
    compare: function (i, j) {
      document.getElementById('cmp-a').value = String(i);
      document.getElementById('cmp-b').value = String(j);
      render();
      return Array.prototype.map.call(document.querySelectorAll('#cmp-table tbody tr'), function (tr) {
        return Array.prototype.map.call(tr.children, function (td) { return td.textContent; });
      });
    }
  };
  setUp();
})();
