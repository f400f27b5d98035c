/*
 * exitscope flame graphs: zoom on click, search, and a details line on
 * hover, for every <svg class="xs-flame"> in the document. Works in a
 * standalone .svg file and for graphs embedded in the HTML report.
 * Frames carry their position in samples (data-o, data-n) and depth
 * (data-d), so zooming recomputes pixels without re-reading the tree.
 */
(function () {
  'use strict';
  var CHAR_W = 7.2;          /* px per character of the 12px monospace labels */

  function num(el, name) { return Number(el.getAttribute(name)); }

  function fitLabel(f, width) {
    var fit = Math.floor((width - 6) / CHAR_W);
    if (fit < 3) return '';
    return f.label.length <= fit ? f.label : f.label.slice(0, fit - 2) + '..';
  }

  function place(f, x, width, st) {
    f.rect.setAttribute('x', x.toFixed(1));
    f.rect.setAttribute('width', Math.max(width, 0.1).toFixed(1));
    f.text.setAttribute('x', (x + 3).toFixed(1));
    f.text.textContent = fitLabel(f, width);
    f.g.style.display = '';
    f.g.classList.toggle('anc', st === 'anc');
  }

  function init(svg) {
    if (svg.getAttribute('data-ready')) return null;
    svg.setAttribute('data-ready', '1');
    var pad = num(svg, 'data-pad'), width = num(svg, 'data-width') - 2 * pad;
    var frames = Array.prototype.map.call(svg.querySelectorAll('g.fr'), function (g) {
      return { g: g, o: num(g, 'data-o'), n: num(g, 'data-n'), d: num(g, 'data-d'),
               label: g.getAttribute('data-l'), rect: g.querySelector('rect'),
               text: g.querySelector('text'), tip: g.querySelector('title').textContent };
    });
    var details = svg.querySelector('.details'), reset = svg.querySelector('.reset');
    var matched = svg.querySelector('.matched'), searchBtn = svg.querySelector('.search');
    var total = num(svg, 'data-total');
    var state = { svg: svg, frames: frames, zoomed: null };

    function zoom(z) {
      state.zoomed = z;
      frames.forEach(function (f) {
        if (!z) { place(f, pad + f.o / total * width, f.n / total * width, ''); return; }
        if (f.d < z.d && f.o <= z.o && f.o + f.n >= z.o + z.n) {
          place(f, pad, width, 'anc');
        } else if (f.d >= z.d && f.o >= z.o && f.o + f.n <= z.o + z.n) {
          place(f, pad + (f.o - z.o) / z.n * width, f.n / z.n * width, '');
        } else {
          f.g.style.display = 'none';
        }
      });
      if (reset) reset.style.display = z ? '' : 'none';
    }

    function search(term) {
      var re = null, spans = [];
      if (term) {
        try { re = new RegExp(term); } catch (e) {
          re = new RegExp(term.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
        }
      }
      frames.forEach(function (f) {
        var hit = re && re.test(f.label);
        f.g.classList.toggle('hit', !!hit);
        if (hit) spans.push([f.o, f.o + f.n]);
      });
      /* matched share: the union of the hits, so nested hits count once */
      spans.sort(function (a, b) { return a[0] - b[0]; });
      var covered = 0, end = -1;
      spans.forEach(function (s) {
        if (s[1] <= end) return;
        covered += s[1] - Math.max(s[0], end);
        end = s[1];
      });
      var share = total ? covered / total : 0;
      if (matched) matched.textContent = re ? 'Matched: ' + (100 * share).toFixed(2) + '%' : '';
      if (searchBtn) searchBtn.textContent = re ? 'Clear' : 'Search';
      state.searched = !!re;
      return share;
    }
    state.search = search;
    state.zoom = zoom;

    frames.forEach(function (f) {
      f.g.addEventListener('click', function () { zoom(f.d === 0 ? null : f); });
      f.g.addEventListener('mouseover', function () { if (details) details.textContent = f.tip; });
      f.g.addEventListener('mouseout', function () { if (details) details.textContent = ' '; });
    });
    if (reset) reset.addEventListener('click', function () { zoom(null); });
    if (searchBtn) searchBtn.addEventListener('click', function () {
      if (state.searched) { search(''); return; }
      var term = window.prompt('Search frames (a regular expression):', '');
      if (term) search(term);
    });
    if (svg === document.documentElement) {
      window.addEventListener('keydown', function (e) {
        if ((e.ctrlKey || e.metaKey) && e.key === 'f') {
          e.preventDefault();
          var term = window.prompt('Search frames (a regular expression):', '');
          if (term) search(term);
        } else if (e.key === 'Escape') {
          zoom(null);
          search('');
        }
      });
    }
    zoom(null);
    svg.xsFlame = state;
    return state;
  }

  function initAll() {
    Array.prototype.forEach.call(document.querySelectorAll('svg.xs-flame'), init);
  }

  /* xsFlame.search(svg, term) returns the matched share (0..1); tests and
   * the HTML report's search box use it. */
  window.xsFlame = {
    init: init,
    initAll: initAll,
    search: function (svg, term) { init(svg); return svg.xsFlame.search(term); },
    zoom: function (svg, frameGroup) {
      init(svg);
      var st = svg.xsFlame, z = null;
      st.frames.forEach(function (f) { if (f.g === frameGroup) z = f; });
      st.zoom(z);
    }
  };
  initAll();
  if (document.readyState === 'loading')
    document.addEventListener('DOMContentLoaded', initAll);
})();
