// closer dashboard: zoom and pan on the scatter plots, and a live refresh
// while the study is open or a recompute is pending. The page works without it.
(function () {
  "use strict";

  function zoomable(svg) {
    var vb = svg.viewBox.baseVal;
    var home = { x: vb.x, y: vb.y, w: vb.width, h: vb.height };
    function toSVG(evt) {
      var r = svg.getBoundingClientRect();
      return { x: vb.x + (evt.clientX - r.left) / r.width * vb.width, y: vb.y + (evt.clientY - r.top) / r.height * vb.height };
    }
    svg.addEventListener("wheel", function (evt) {
      evt.preventDefault();
      var p = toSVG(evt);
      var f = evt.deltaY < 0 ? 0.8 : 1.25;
      var w = Math.min(home.w * 2, Math.max(home.w / 40, vb.width * f));
      f = w / vb.width;
      vb.x = p.x - (p.x - vb.x) * f;
      vb.y = p.y - (p.y - vb.y) * f;
      vb.width = w;
      vb.height = vb.height * f;
    }, { passive: false });
    var drag = null;
    svg.addEventListener("pointerdown", function (evt) {
      drag = { x: evt.clientX, y: evt.clientY, vx: vb.x, vy: vb.y };
      svg.setPointerCapture(evt.pointerId);
      svg.classList.add("dragging");
    });
    svg.addEventListener("pointermove", function (evt) {
      if (!drag) return;
      var r = svg.getBoundingClientRect();
      vb.x = drag.vx - (evt.clientX - drag.x) / r.width * vb.width;
      vb.y = drag.vy - (evt.clientY - drag.y) / r.height * vb.height;
    });
    function end() { drag = null; svg.classList.remove("dragging"); }
    svg.addEventListener("pointerup", end);
    svg.addEventListener("pointercancel", end);
    svg.addEventListener("dblclick", function () {
      vb.x = home.x; vb.y = home.y; vb.width = home.w; vb.height = home.h;
    });
    svg.dataset.zoom = "on"; // the handlers are in place
  }

  function live(main) {
    var url = main.dataset.status;
    var shown = main.dataset.run;
    var answers = main.dataset.answers;
    var loaded = Date.now();
    function poll() {
      fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (s) {
          if (!s) return;
          var state = document.getElementById("run-state");
          if (state && s.state) state.textContent = s.state;
          // New results, or (at most once a minute) new answers: reload.
          var newRun = s.done_run && String(s.done_run) !== shown;
          var newAnswers = String(s.answers) !== answers && Date.now() - loaded > 60000;
          if ((newRun || newAnswers) && !document.querySelector("svg.dragging")) {
            location.reload();
            return;
          }
          if (s.live || s.pending) setTimeout(poll, 5000);
        })
        .catch(function () { setTimeout(poll, 15000); });
    }
    setTimeout(poll, 5000);
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("svg.zoomable").forEach(zoomable);
    var main = document.querySelector("main.dashboard");
    if (main && main.dataset.live === "true") live(main);
  });
})();
