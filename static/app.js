// closer: progressive enhancement of the question page (and of the study
// form, at the end). Without this file
// the page is a plain form (POST, then 303 to the next question). With it:
// keys (left/right arrow, 1/2; down arrow or 3 for "can't decide" where the
// study offers it; in an odd-one-out question 1 to 3, and down arrow or 0)
// answer; in a question of sounds or videos A plays the anchor and S, D,
// F... the options in order; the answer is sent in the background
// and its reply is the next question's page (one round trip: the header
// X-Closer-Next asks for it), whose images are fetched and decoded before it
// replaces the current one, so a question never appears half loaded. A
// second click while an answer is in flight is ignored (and the server would
// answer a resubmission idempotently anyway).
//
// The next question is issued ahead of time: its images, named by the
// page's link rel=prefetch elements (which fetch them without this file
// too), are fetched and decoded as soon as the current question is shown,
// so that the answer's reply shows the next question at once.
//
// The option buttons take a click only once the question's three images are
// decoded and on screen and the study's minimum viewing time
// (data-min-view-ms on the form) has passed since; until then they are
// marked aria-disabled (not disabled, which would swallow the click
// without a sign) and a click or key says to look a moment longer. A click
// disables them until the next question is shown. response_ms counts from
// the moment the images were shown.
(function () {
  "use strict";
  var shownAt = performance.now();
  var busy = false;
  var ready = false;
  var ahead = []; // the next question's images, kept decoded until it is shown
  // listened is how long the question's sounds played, in ms, up to the
  // last pause or end; a sound playing now counts from its data-since
  // (issue 29: sent as listen_ms with the answer).
  var listened = 0;

  function currentForm() { return document.querySelector("form.question"); }

  function setButtons(form, enabled) {
    var bs = form.querySelectorAll("button[name=closer], .reference, .rank-undo");
    for (var i = 0; i < bs.length; i++) bs[i].disabled = !enabled;
  }

  // setWaiting marks the buttons as not taking an answer yet (the images
  // are loading or the minimum viewing time runs), or no longer.
  function setWaiting(form, waiting) {
    var bs = form.querySelectorAll("button[name=closer], .reference");
    for (var i = 0; i < bs.length; i++) {
      if (waiting) bs[i].setAttribute("aria-disabled", "true");
      else bs[i].removeAttribute("aria-disabled");
    }
    form.classList.toggle("waiting", waiting);
    var note = form.querySelector(".too-soon");
    if (note && !waiting) note.hidden = true;
  }

  // tooSoon answers a click or key while the buttons wait: a line under
  // the options, read out by screen readers (role=status).
  function tooSoon(form) {
    var note = form.querySelector(".too-soon");
    if (!note) {
      note = document.createElement("p");
      note.className = "too-soon";
      note.setAttribute("role", "status");
      // The page gives the text in the study's language (data-too-soon).
      note.textContent = form.getAttribute("data-too-soon") || "Please look at the images a moment longer; the answer buttons work in a moment.";
      form.appendChild(note);
    }
    note.hidden = false;
  }

  // arm holds the question's buttons until its images are shown and the
  // minimum viewing time has passed.
  function arm() {
    var form = currentForm();
    if (!form) return;
    ready = false;
    listened = 0;
    setButtons(form, true);
    setWaiting(form, true);
    if (form.getAttribute("data-format") === "rank") rankShow(form);
    players(document.querySelector("main"));
    var ended = soundsEnded(form);
    var minView = parseInt(form.getAttribute("data-min-view-ms") || "0", 10) || 0;
    var main = document.querySelector("main");
    preload(main).then(function () {
      ahead = loadAhead(main);
      // Two frames: the decoded images are painted before the clock starts.
      requestAnimationFrame(function () {
        requestAnimationFrame(function () {
          shownAt = performance.now();
          setTimeout(function () {
            ended.then(function () {
              if (currentForm() !== form) return;
              ready = true;
              setWaiting(form, false);
            });
          }, minView);
        });
      });
    });
  }

  // players turns a question's sound and video items (issue 29) into
  // play buttons: a sound's browser controls give way to the button, which
  // plays its sound or video from the start (stopping any other) on a
  // click or its key.
  function players(root) {
    var bs = root.querySelectorAll(".player");
    for (var i = 0; i < bs.length; i++) {
      var a = bs[i].querySelector("audio");
      if (a) a.controls = false;
      bs[i].querySelector(".play").hidden = false;
    }
  }

  // mediaOf is the audio or video element a play button plays: a sound's
  // beside it, or the video of the same URL shown as the item.
  function mediaOf(button) {
    var a = button.parentNode.querySelector("audio");
    if (a) return a;
    var vs = document.querySelectorAll("main video");
    for (var i = 0; i < vs.length; i++) {
      if (vs[i].getAttribute("src") === button.getAttribute("data-src")) return vs[i];
    }
    return null;
  }

  // soundsEnded resolves once every sound of the question fired "ended",
  // where the study asks for that (data-play-to-end; issue 29), at once
  // otherwise. A rule the page keeps, not one the server checks.
  function soundsEnded(form) {
    if (!form.hasAttribute("data-play-to-end")) return Promise.resolve();
    var as = document.querySelectorAll("main .player audio, main video");
    var waits = [];
    for (var i = 0; i < as.length; i++) {
      waits.push(new Promise(function (done) { as[i].addEventListener("ended", done, { once: true }); }));
    }
    return Promise.all(waits);
  }

  function play(button) {
    var all = document.querySelectorAll(".player audio, main video");
    var mine = mediaOf(button);
    if (!mine) return;
    for (var i = 0; i < all.length; i++) if (all[i] !== mine) all[i].pause();
    mine.currentTime = 0;
    var p = mine.play();
    if (p && p.catch) p.catch(function () {});
  }

  document.addEventListener("click", function (e) {
    var b = e.target.closest && e.target.closest("button.play");
    if (b) play(b);
  });

  // Media events do not bubble: caught on the way down. A sound's time
  // counts from "play" to "pause" or "ended" (a sound played from the
  // start again pauses first, so no stretch counts twice).
  document.addEventListener("play", function (e) {
    if (e.target.tagName === "AUDIO") e.target.setAttribute("data-since", String(performance.now()));
  }, true);
  function stopped(e) {
    var since = e.target.tagName === "AUDIO" && e.target.getAttribute("data-since");
    if (!since) return;
    e.target.removeAttribute("data-since");
    listened += performance.now() - parseFloat(since);
  }
  document.addEventListener("pause", stopped, true);
  document.addEventListener("ended", stopped, true);

  // listenMS is the question's listening time so far, a sound playing now
  // included, within the server's bound (an hour).
  function listenMS() {
    var ms = listened;
    var as = document.querySelectorAll("main .player audio[data-since]");
    for (var i = 0; i < as.length; i++) ms += performance.now() - parseFloat(as[i].getAttribute("data-since"));
    return String(Math.min(Math.round(ms), 3600000));
  }

  function preload(root) {
    var imgs = root.querySelectorAll("img");
    var waits = [];
    for (var i = 0; i < imgs.length; i++) {
      var im = new Image();
      im.src = imgs[i].getAttribute("src");
      waits.push(im.decode ? im.decode().catch(function () {}) : Promise.resolve());
    }
    return Promise.all(waits);
  }

  function loadAhead(root) {
    var links = root.querySelectorAll("link[rel=prefetch][as=image]");
    var imgs = [];
    for (var i = 0; i < links.length; i++) {
      var im = new Image();
      im.src = links[i].getAttribute("href");
      if (im.decode) im.decode().catch(function () {});
      imgs.push(im);
    }
    return imgs;
  }

  function fallback(form, value) {
    var input = document.createElement("input");
    input.type = "hidden";
    input.name = "closer";
    input.value = value;
    form.appendChild(input);
    form.submit();
  }

  function answer(form, button) {
    if (busy || !button) return;
    if (!ready) {
      tooSoon(form);
      return;
    }
    if (button.value === "choices" && form.checkValidity && !form.checkValidity()) {
      if (form.reportValidity) form.reportValidity(); // a rank answer needs every choice
      return;
    }
    busy = true;
    ready = false;
    form.classList.add("sending");
    button.classList.add("chosen");
    // The hidden field, so that the plain form's fallback sends it too.
    var listen = form.querySelector("input[name=listen_ms]");
    if (listen) listen.value = listenMS();
    var data = new URLSearchParams(new FormData(form));
    data.set("closer", button.value);
    data.set("response_ms", String(Math.round(performance.now() - shownAt)));
    setButtons(form, false);
    fetch(form.action, { method: "POST", body: data, credentials: "same-origin", headers: { "X-Closer-Next": "1" } })
      .then(function (res) {
        return res.text().then(function (html) {
          var doc = new DOMParser().parseFromString(html, "text/html");
          var next = doc.querySelector("main");
          if (!res.ok || !doc.querySelector("form.question") || !next) {
            // Done page, a notice or an error: show it as a normal page.
            window.location.assign(res.ok ? res.url : window.location.href);
            return;
          }
          return preload(next).then(function () {
            document.querySelector("main").replaceWith(document.adoptNode(next));
            document.title = doc.title;
            var at = res.headers.get("Content-Location") || res.url;
            if (window.history && at) window.history.replaceState(null, "", at);
            busy = false;
            arm();
          });
        });
      })
      .catch(function () { fallback(form, button.value); });
  }

  // A rank question's choices are its selects, in order (the plain
  // form); the references, buttons here, fill the next empty one.
  function rankSelects(form) { return form.querySelectorAll(".rank-choices select"); }

  // rankShow marks the references chosen so far with their place in the
  // order (data-rank, aria-pressed) and shows Undo while there is one.
  function rankShow(form) {
    var sels = rankSelects(form);
    var place = {};
    var any = false;
    for (var i = 0; i < sels.length; i++) {
      if (sels[i].value !== "") {
        place[sels[i].value] = i + 1;
        any = true;
      }
    }
    var refs = form.querySelectorAll(".reference");
    for (var j = 0; j < refs.length; j++) {
      var p = place[refs[j].value];
      refs[j].classList.toggle("picked", !!p);
      refs[j].setAttribute("aria-pressed", p ? "true" : "false");
      if (p) refs[j].setAttribute("data-rank", String(p));
      else refs[j].removeAttribute("data-rank");
    }
    var undo = form.querySelector(".rank-undo");
    if (undo) undo.hidden = !any;
  }

  // rankPick puts item into the first empty select, unless it is chosen
  // already (then nothing: a choice is made once).
  function rankPick(form, item) {
    if (busy) return;
    if (!ready) {
      tooSoon(form);
      return;
    }
    var sels = rankSelects(form);
    for (var i = 0; i < sels.length; i++) if (sels[i].value === item) return;
    for (var j = 0; j < sels.length; j++) {
      if (sels[j].value === "") {
        sels[j].value = item;
        break;
      }
    }
    rankShow(form);
  }

  // rankUndo empties the last select chosen.
  function rankUndo(form) {
    if (busy) return;
    var sels = rankSelects(form);
    for (var i = sels.length - 1; i >= 0; i--) {
      if (sels[i].value !== "") {
        sels[i].value = "";
        break;
      }
    }
    rankShow(form);
  }

  document.addEventListener("click", function (e) {
    var t = e.target.closest ? e.target.closest(".reference, .rank-undo") : null;
    var form = t && t.closest("form.question[data-format=rank]");
    if (!form) return;
    if (t.classList.contains("rank-undo")) rankUndo(form);
    else rankPick(form, t.value);
  });
  document.addEventListener("change", function (e) {
    var form = e.target.closest && e.target.closest("form.question[data-format=rank]");
    if (form) rankShow(form);
  });

  // The study form shows only the settings and help of the chosen design
  // and platform: an element lists in data-designs (data-platforms) the
  // choices it belongs to, "none" standing for the empty choice (no
  // platform). Without this script every setting and all the help show.
  function showChosen(selectName, attr) {
    var sel = document.querySelector("select[name=" + selectName + "]");
    if (!sel) return;
    function apply() {
      var chosen = sel.value || "none";
      var els = document.querySelectorAll("[" + attr + "]");
      for (var i = 0; i < els.length; i++) {
        els[i].hidden = (" " + els[i].getAttribute(attr) + " ").indexOf(" " + chosen + " ") < 0;
      }
    }
    sel.addEventListener("change", apply);
    apply();
  }

  // The study form's arms table: "Add an arm" copies the row template
  // into the table, each row's "Remove" takes it out (both buttons are
  // hidden without this script, which leaves empty rows to fill and a
  // row emptied is no arm). While the table or the pasted text holds an
  // arm the single design's block is hidden, as the server hides it when
  // it shows the form with arms; its fields are posted all the same.
  function armsTable() {
    var table = document.getElementById("arms-table");
    if (!table) return;
    var body = table.tBodies[0];
    var tmpl = document.getElementById("arm-row-template");
    var add = document.getElementById("add-arm");
    var text = document.querySelector("textarea[name=arms]");
    var single = document.getElementById("single-design");
    var note = document.getElementById("single-design-note");
    function hasArms() {
      var fields = body.querySelectorAll("input[type=text], select");
      for (var i = 0; i < fields.length; i++) if (fields[i].value.trim() !== "") return true;
      var lines = text ? text.value.split("\n") : [];
      for (var j = 0; j < lines.length; j++) {
        var l = lines[j].trim();
        if (l !== "" && l.charAt(0) !== "#") return true;
      }
      return false;
    }
    function apply() {
      var arms = hasArms();
      if (single) single.hidden = arms;
      if (note) note.hidden = !arms;
    }
    function wire(row) {
      var rm = row.querySelector(".remove-arm");
      if (!rm) return;
      rm.hidden = false;
      rm.addEventListener("click", function () { row.remove(); apply(); });
    }
    var rows = body.querySelectorAll("tr.arm-row");
    for (var i = 0; i < rows.length; i++) wire(rows[i]);
    if (add && tmpl) {
      add.hidden = false;
      add.addEventListener("click", function () {
        var row = tmpl.content.querySelector("tr").cloneNode(true);
        body.appendChild(row);
        wire(row);
        row.querySelector("input").focus();
      });
    }
    table.addEventListener("input", apply);
    table.addEventListener("change", apply);
    if (text) text.addEventListener("input", apply);
    apply();
  }

  // An MTurk participant's last page submits the HIT by itself after a
  // few seconds (data-auto-submit-ms), as a Prolific participant's goes
  // back to Prolific; without this script the button does it.
  function autoSubmit() {
    var form = document.querySelector("form[data-auto-submit-ms]");
    if (!form) return;
    var ms = parseInt(form.getAttribute("data-auto-submit-ms"), 10) || 0;
    var timer = setTimeout(function () {
      form.querySelector("button[type=submit]").disabled = true;
      form.submit();
    }, ms);
    // A click on the button submits it once, not again when the time is up.
    form.addEventListener("submit", function () { clearTimeout(timer); });
  }

  // Copy buttons (the study page's recruitment links): data-copy names the
  // field whose text goes to the clipboard; the button says it worked.
  function copyButtons() {
    var bs = document.querySelectorAll("button[data-copy]");
    for (var i = 0; i < bs.length; i++) {
      bs[i].addEventListener("click", function (e) {
        var b = e.currentTarget;
        var field = document.getElementById(b.getAttribute("data-copy"));
        if (!field) return;
        field.select();
        var done = function () {
          b.textContent = "Copied";
          setTimeout(function () { b.textContent = "Copy"; }, 2000);
        };
        if (navigator.clipboard && navigator.clipboard.writeText) {
          navigator.clipboard.writeText(field.value).then(done, function () { b.textContent = "Press Ctrl+C"; });
        } else {
          b.textContent = "Press Ctrl+C";
        }
      });
    }
  }

  function start() {
    copyButtons();
    arm();
    showChosen("design", "data-designs");
    showChosen("platform", "data-platforms");
    armsTable();
    autoSubmit();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();

  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (!form.matches || !form.matches("form.question")) return;
    e.preventDefault();
    var button = e.submitter || form.querySelector("button[name=closer]");
    answer(form, button);
  });

  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey || e.repeat) return;
    var form = currentForm();
    if (!form) return;
    // A, then S to L, play the sounds (issue 29): letters, which no
    // answer key is, outside a field being typed in.
    if (/^[a-z]$/i.test(e.key) && !(e.target.matches && e.target.matches("input, select, textarea"))) {
      var pb = document.querySelector("button.play[data-play-key='" + e.key.toLowerCase() + "']");
      if (pb) {
        e.preventDefault();
        play(pb);
      }
      return;
    }
    if (form.getAttribute("data-format") === "rank") {
      // Rank (issue 27): 1 to 9 choose the reference, Backspace undoes
      // the last choice, Enter submits.
      if (e.key === "Backspace") {
        e.preventDefault();
        rankUndo(form);
      } else if (e.key === "Enter") {
        e.preventDefault();
        var submit = form.querySelector(".rank-submit");
        if (form.requestSubmit) form.requestSubmit(submit);
      } else if (/^[1-9]$/.test(e.key)) {
        var ref = form.querySelector(".reference[data-key='" + e.key + "']");
        if (!ref) return;
        e.preventDefault();
        rankPick(form, ref.value);
      }
      return;
    }
    if (form.getAttribute("data-format") === "odd-one-out") {
      // Odd-one-out (issue 27): 1 to 3 choose the item, ↓ or 0 "can't decide".
      var k = e.key === "ArrowDown" ? "0" : e.key;
      if (!/^[0-3]$/.test(k)) return;
      var b = form.querySelector("button[name=closer][data-key='" + k + "']");
      if (!b) return;
      e.preventDefault();
      answer(form, b);
      return;
    }
    var i;
    if (e.key === "ArrowLeft" || e.key === "1") i = 0;
    else if (e.key === "ArrowRight" || e.key === "2") i = 1;
    else if (e.key === "ArrowDown" || e.key === "3") i = 2; // "can't decide", where offered
    else return;
    if (!form.querySelectorAll("button[name=closer]")[i]) return;
    e.preventDefault();
    answer(form, form.querySelectorAll("button[name=closer]")[i]);
  });
})();
