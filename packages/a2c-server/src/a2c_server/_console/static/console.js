// a2c console: renders the Server-Sent Events of /console/events. No dependencies, no
// build step; text goes in with textContent only (never innerHTML).
"use strict";
(function () {
  var root = document.getElementById("console");
  if (!root) { return; }  // the login page
  var office = root.getAttribute("data-office") || "";
  var filterBox = document.getElementById("filter");
  var statusEl = document.getElementById("status");
  var last = null;

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    if (cls) { e.className = cls; }
    return e;
  }
  function dash(v) { return v === null || v === undefined || v === "" ? "—" : v; }
  function secs(v) {
    if (v === null || v === undefined) { return "—"; }
    if (v < 60) { return v.toFixed(1) + " s"; }
    if (v < 3600) { return Math.floor(v / 60) + " min"; }
    return (v / 3600).toFixed(1) + " h";
  }
  function officeLink(id) {
    if (!id) { return el("span", "(lobby)", "muted"); }
    var a = el("a", id);
    a.href = "/console/office/" + encodeURIComponent(id);
    return a;
  }
  function fill(id, rows, cells) {
    var body = document.querySelector("#" + id + " tbody");
    var fresh = document.createElement("tbody");
    rows.forEach(function (row) {
      var tr = document.createElement("tr");
      cells(row).forEach(function (c) {
        var td = document.createElement("td");
        if (c instanceof Node) { td.appendChild(c); } else { td.textContent = String(dash(c)); }
        tr.appendChild(td);
      });
      fresh.appendChild(tr);
    });
    if (!rows.length) {
      var tr = document.createElement("tr");
      var td = el("td", "none", "muted");
      td.colSpan = document.querySelectorAll("#" + id + " thead th").length;
      tr.appendChild(td);
      fresh.appendChild(tr);
    }
    body.parentNode.replaceChild(fresh, body);
  }
  function text(id, value) {
    var e = document.getElementById(id);
    if (e) { e.textContent = String(value); }
  }
  function matches(row) {
    var f = filterBox && !filterBox.hidden ? filterBox.value.trim().toLowerCase() : "";
    return !f || (row.office || "").toLowerCase().indexOf(f) !== -1;
  }

  var SVG = "http://www.w3.org/2000/svg";
  function chart(title, points, unit) {
    var w = 160, h = 40;
    var box = el("figure", null, "chart");
    var max = Math.max.apply(null, points.concat([1]));
    var svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("viewBox", "0 0 " + w + " " + h);
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", title);
    var line = document.createElementNS(SVG, "polyline");
    var step = points.length > 1 ? w / (points.length - 1) : w;
    line.setAttribute("points", points.map(function (p, i) {
      return (i * step).toFixed(1) + "," + (h - 2 - (p / max) * (h - 4)).toFixed(1);
    }).join(" "));
    line.setAttribute("fill", "none");
    line.setAttribute("stroke", "currentColor");
    line.setAttribute("stroke-width", "1.5");
    svg.appendChild(line);
    box.appendChild(svg);
    var now = points.length ? points[points.length - 1] : 0;
    box.appendChild(el("figcaption", title + ": " + now + unit + " (max " + max + unit + ")"));
    return box;
  }
  function charts(series) {
    var holder = document.getElementById("charts");
    var fresh = el("div", null, "charts");
    fresh.id = "charts";
    [["calls", "calls/s", ""], ["refusals", "refusals/s", ""], ["errors", "errors/s", ""],
     ["process_cpu_seconds", "CPU", " %"], ["memory_mb", "memory", " MB"]].forEach(function (c) {
      fresh.appendChild(chart(c[1], series[c[0]] || [], c[2]));
    });
    holder.parentNode.replaceChild(fresh, holder);
  }

  function ofRole(members, role) {
    return members.filter(function (m) { return m.role === role; }).length;
  }

  function render(s) {
    last = s;
    var c = s.counters || {};
    text("node", s.node);
    // An office page counts its own members (the document holds only them); the
    // overview counts the sessions connected to this node (its metrics).
    text("c-agents", office ? ofRole(s.members, "agent") : (c.connected_agent || 0));
    text("c-computers", office ? ofRole(s.members, "computer") : (c.connected_computer || 0));
    text("c-inflight", s.inflight.length);
    text("c-calls", c.calls || 0);
    text("c-refusals", c.refusals || 0);
    text("c-errors", c.errors || 0);
    charts(s.series || {});
    fill("nodes", s.nodes, function (n) {
      var alive = n.alive === null ? "registry unreachable" : (n.alive ? "yes" : "NO (awaiting reap)");
      return [n.id + (n.self ? " (this node)" : ""), alive, secs(n.heartbeat_age), n.sessions];
    });
    var members = s.members.filter(matches).sort(function (a, b) {
      return (a.office || "").localeCompare(b.office || "") ||
        a.role.localeCompare(b.role) || (a.name || "").localeCompare(b.name || "");
    });
    fill("sessions", members, function (m) {
      return [officeLink(m.office), m.role, m.version, m.name, m.subject, m.node,
        m.since === null ? null : secs(m.since) + " ago", m.transport];
    });
    fill("inflight", s.inflight.filter(matches), function (r) {
      return [officeLink(r.office), r.event, r.tool, r.computer, r.agent, secs(r.age)];
    });
    fill("finished", s.finished.filter(matches), function (r) {
      return [officeLink(r.office), r.event, r.tool, r.computer, el("span", r.outcome,
        r.outcome === "ok" ? "ok" : "bad"), r.code, secs(r.duration)];
    });
    if (s.truncated) { statusEl.textContent = "live (large deployment: first sessions only)"; }
  }

  function addEvent(e) {
    var list = document.getElementById("events");
    var who = e.computer ? "Computer " + e.computer : (e.agent ? "Agent " + e.agent : "");
    var li = el("li");
    li.appendChild(el("time", new Date(e.at * 1000).toLocaleTimeString()));
    if (!office) { li.appendChild(officeLink(e.office)); }
    li.appendChild(el("code", e.event));
    li.appendChild(el("span", who + (e.req_id ? " req " + e.req_id : "")));
    list.insertBefore(li, list.firstChild);
    while (list.childNodes.length > 100) { list.removeChild(list.lastChild); }
  }

  if (filterBox) {
    filterBox.addEventListener("input", function () { if (last) { render(last); } });
  }
  var url = "/console/events" + (office ? "?office=" + encodeURIComponent(office) : "");
  var source = new EventSource(url);
  source.addEventListener("open", function () {
    statusEl.textContent = "live";
    statusEl.className = "status live";
  });
  source.addEventListener("error", function () {
    statusEl.textContent = "reconnecting…";
    statusEl.className = "status down";
  });
  source.addEventListener("state", function (m) { render(JSON.parse(m.data)); });
  source.addEventListener("office", function (m) { addEvent(JSON.parse(m.data)); });
})();
