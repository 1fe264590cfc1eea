"use strict";
// ragteam's page: ask one question with several strategies side by side, watch each team's
// steps stream in, open citations, send feedback; browse eval runs. No framework, no CDN.

const $ = (id) => document.getElementById(id);
let MAX_QUESTION = 4000; // the server's limit in characters (/healthz)
let QUESTION_TOKENS = 0; // how much of a question the model reads (/healthz; 0: unknown)
let STRATEGIES = {}; // name -> what /v1/strategies says of it
let CONCURRENCY = 1; // answers the server computes at once (/healthz)
let RUN_INDEX = ""; // the served index the shown run was made over ("" when none is)

function headers(json) {
  const h = json ? { "Content-Type": "application/json" } : {};
  const key = $("api-key").value.trim();
  if (key) h.Authorization = "Bearer " + key;
  return h;
}

async function getJSON(path) {
  const response = await fetch(path, { headers: headers(false) });
  const body = await response.json();
  if (!response.ok) throw new Error(body.detail || body.error || response.statusText);
  return body;
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const child of children) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

function show(value) {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (Array.isArray(value) && value.every((h) => h && h.id && "score" in h)) {
    return value.map((h) => h.id + " · " + h.title + " · " + Number(h.score).toFixed(3)).join("\n");
  }
  if (Array.isArray(value) && value.every((m) => m && m.role && "content" in m)) {
    return value.map((m) => m.role + ": " + m.content).join("\n\n");
  }
  return JSON.stringify(value, null, 1);
}

function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }

function searchHits(step, index) {
  if (!Array.isArray(step.output) || !step.output.length) {
    return el("div", { class: "empty-search" }, "0 passages: the search found nothing");
  }
  return el("div", { class: "hits" }, ...step.output.map((h) => el("div", {},
    el("button", { type: "button", class: "cite", title: "open " + h.id,
      onclick: () => openPassage(index, { passage_id: h.id }, "", {}) }, h.id),
    " " + (h.title || "") + " · " + Number(h.score || 0).toFixed(3))));
}

// what a step did, in words (the server says them: ragteam/server/words.py); the technical
// names stay beside it in small print
function plainLabel(step) {
  return step.words || step.kind;
}

function stepCard(step, index) {
  const failed = step.parse_failures > 0 || step.error;
  const parts = [];
  if (step.kind === "llm" && step.prompt_tokens !== undefined) parts.push(step.prompt_tokens + "+" + step.completion_tokens + " tokens");
  parts.push(Number(step.seconds || 0).toFixed(2) + " s");
  if (step.cached) parts.push("cached");
  const output = show(step.output);
  const searched = step.kind === "retrieve" || step.kind === "rerank";
  if (searched && Array.isArray(step.output)) parts.unshift(plural(step.output.length, "passage"));
  // one line a step; what went in and came out on demand
  return el("div", { class: "card " + step.kind + (failed ? " failed" : ""), "data-kind": step.kind },
    el("div", {}, el("strong", {}, step.number + ". " + plainLabel(step)), " ",
      el("span", { class: "meta" }, "(" + step.kind + " · " + step.role + ") " + parts.join(" · "))),
    failed ? el("div", { class: "failure" }, "failed: " + (step.error || "reply did not parse")) : null,
    el("details", { class: "step-details" }, el("summary", {}, "details"),
      step.input !== null ? el("div", { class: "meta" }, "input") : null,
      step.input !== null ? el("pre", {}, show(step.input)) : null,
      el("div", { class: "meta" }, "output"),
      searched ? searchHits(step, index) : el("pre", {}, output.length > 600 ? output.slice(0, 600) + " …" : output)));
}

function highlight(text, needle) {
  const p = $("passage-text");
  p.replaceChildren();
  const at = needle ? text.toLowerCase().indexOf(needle.toLowerCase()) : -1;
  if (at < 0) { p.append(text); return; }
  p.append(text.slice(0, at), el("mark", {}, text.slice(at, at + needle.length)), text.slice(at + needle.length));
}

// the reader's evidence in its passage: the sentence marked, the words found in it marked more
// strongly (offsets from the answer's evidence, not a search for the answer's words)
function highlightEvidence(text, ev) {
  const p = $("passage-text");
  const a = ev.sentence_start, b = ev.sentence_start + ev.sentence.length;
  if (text.slice(a, b) !== ev.sentence || ev.start < a || ev.end > b) { highlight(text, ev.sentence); return; }
  p.replaceChildren(text.slice(0, a), el("mark", { "data-testid": "evidence-sentence" },
    text.slice(a, ev.start), el("strong", { class: "span", "data-testid": "evidence-span" }, text.slice(ev.start, ev.end)),
    text.slice(ev.end, b)), text.slice(b));
}

// the passages before and after the cited one in its document, muted, so it reads in context
function showAround(passage) {
  const show = (id, list, take) => {
    const shown = (list || []).map((q) => q.text).join("\n\n");
    $(id).textContent = shown.length > 700 ? take(shown) : shown;
    $(id).hidden = !shown;
  };
  show("passage-before", passage.before, (t) => "…" + t.slice(-700));
  show("passage-after", passage.after, (t) => t.slice(0, 700) + "…");
}

// a PDF passage: its page as it looks, the passage's lines highlighted (the text stays below)
async function showPage(index, passage, needle) {
  const img = $("passage-page");
  img.hidden = true;
  if (img.src.startsWith("blob:")) URL.revokeObjectURL(img.src);  // the last page shown
  img.removeAttribute("src");
  const where = passage.locator;
  if (!where || where.page === null || !String(where.source).toLowerCase().endsWith(".pdf")) return;
  const url = "/v1/page/" + encodeURIComponent(index) + ".png?passage=" + encodeURIComponent(passage.id)
    + "&mark=" + encodeURIComponent((needle || "").slice(0, 400));
  try {
    const response = await fetch(url, { headers: headers(false) });
    if (!response.ok) {
      $("passage-id").textContent += " · the page cannot be shown: " + ((await response.json()).detail || response.status);
      return;
    }
    img.src = URL.createObjectURL(await response.blob());
    img.alt = "page " + where.page + " of " + where.source + ", the passage highlighted";
    img.hidden = false;
  } catch (error) {
    $("passage-id").textContent += " · the page cannot be shown: " + error.message;
  }
}

// the source dialog opens at its top (the title, the page, the passage), its Close button
// focused without scrolling down to it
function openDialog() {
  const dialog = $("passage-dialog");
  dialog.showModal();
  $("passage-close").focus({ preventScroll: true });
  dialog.scrollTop = 0;
}

async function openPassage(index, citation, answer, facts, evidence) {
  try {
    if (!index) throw new Error("no index");
    const passage = await getJSON("/v1/passages/" + encodeURIComponent(index) + "/" + encodeURIComponent(citation.passage_id) + "?around=1");
    $("passage-title").textContent = passage.title;
    const where = passage.locator;
    $("passage-id").textContent = where ? where.text + " · " + passage.id : passage.id;
    const ev = (evidence || []).find((e) => e.passage_id === citation.passage_id);
    const fact = (facts[citation.passage_id] || "").split("\n")[0].trim();
    const needle = ev ? ev.sentence : fact && passage.text.includes(fact) ? fact : answer;
    if (ev) highlightEvidence(passage.text, ev); else highlight(passage.text, needle);
    showAround(passage);
    showPage(index, passage, needle);
    openDialog();
  } catch (error) {  // said in the dialog, where the reader looks, whichever view is open
    $("passage-title").textContent = "could not open " + citation.passage_id;
    $("passage-id").textContent = "";
    $("passage-text").textContent = index ? error.message
      : "this run's index is not served here: start the server with the index it was made over (--index NAME=DIR)";
    showAround({});
    openDialog();
  }
}

async function sendFeedback(id, correct, box) {
  try {
    const response = await fetch("/v1/feedback", { method: "POST", headers: headers(true), body: JSON.stringify({ feedback_id: id, correct }) });
    const body = await response.json();
    box.textContent = response.ok ? "thanks: reward " + Number(body.reward).toFixed(3) : "feedback failed: " + body.detail;
  } catch (error) {
    box.textContent = "feedback failed: " + error.message;
  }
}

// The sentence the reader found the answer in, the span marked, and where it stands: the place
// opens the passage (an answer not cited, amber or unsure, still has its source a click away).
function evidenceLine(e, open) {
  if (!e) return null;
  const at = e.start - e.sentence_start;
  const holds = at >= 0 && e.sentence.slice(at, at + e.text.length) === e.text;
  const words = holds ? [e.sentence.slice(0, at), el("mark", {}, e.text), e.sentence.slice(at + e.text.length)] : [e.sentence];
  const place = el("button", { type: "button", class: "link", "data-testid": "evidence-open",
    title: "open " + e.passage_id, onclick: () => open(e) }, e.locator || e.passage_id);
  return el("div", { class: "evidence", "data-testid": "evidence" }, "found in: “", ...words, "” ",
    el("span", { class: "muted" }, "(", place, score(e) + ")"));
}

// the reader's confidence in a span; none for a yes or no (its verdict has no span score)
function score(e) {
  return isPolar(e) || !(Number(e.score) > 0) ? "" : ", reader " + Number(e.score).toFixed(2);
}

// A yes or no (the reader's verdict, `kind`), with the sentence that decides it.
function isPolar(e) {
  return !!e && (e.kind === "yes" || e.kind === "no");
}

// An answer the reader is not sure of: the sentence it stands in, with its place, in normal type;
// a yes or no it is not sure of says which, as what it is ("not sure: yes"), before its sentence.
function closestLine(e, open) {
  const line = evidenceLine(e, open);
  line.firstChild.textContent = isPolar(e) ? "deciding sentence: “" : "closest passage found: “";
  line.setAttribute("data-testid", "closest");
  if (!isPolar(e)) return line;
  return el("div", { "data-testid": "closest-polar" },
    el("div", { class: "text unsure", "data-testid": "unsure-verdict" }, "not sure: " + e.kind), line);
}

// What an answer says in one line (the answers bar, a copy): an unsure span is not the answer.
function answerSaid(result) {
  if (!result) return "";
  if (!result.closest) return result.answer || "";
  return isPolar(result.closest) ? "not sure: " + result.closest.kind : "not sure (closest passage found)";
}

// chip labels: a passage's locator, numbered where several passages share one ("p. 65", "p. 65 (2)")
// A yes or no the reader is sure of shows its deciding sentence as such; any other answer its
// sentence, the span marked.
function polarLine(e, answer, open) {
  const line = evidenceLine(e, open);
  if (line && isPolar(e) && e.kind === String(answer).toLowerCase()) line.firstChild.textContent = "deciding sentence: “";
  return line;
}

function chipLabels(citations) {
  const seen = {};
  return citations.map((c) => {
    const name = c.locator || c.passage_id;
    seen[name] = (seen[name] || 0) + 1;
    return seen[name] > 1 ? name + " (" + seen[name] + ")" : name;
  });
}

function answerBox(result, index, feedbackId, facts, record) {
  const g = result.grounding || { level: "no_evidence", message: "", parse_failures: 0 };
  const cited = new Set(result.citations.map((c) => c.passage_id));
  const others = (result.read || []).filter((c) => !cited.has(c.passage_id));
  const labels = chipLabels([...result.citations, ...others]);
  // a trace to download: the steps this browser saw (a shared link carries none)
  const traced = record && (record.steps.length || result.trace);
  const cites = result.citations.map((c, n) => el("button", { type: "button", class: "cite", title: c.title + " · " + c.passage_id,
    onclick: () => openPassage(index, c, result.answer, facts, result.evidence) }, "[" + (n + 1) + "] " + labels[n]));
  const unused = others.map((c, n) => el("button", {
    type: "button", class: "cite read", title: c.title + " · " + c.passage_id, onclick: () => openPassage(index, c, result.answer, facts, result.evidence) },
    labels[result.citations.length + n]));
  const unbacked = (g.unsupported || []).map((s) => el("li", {}, s));
  const open = (e) => openPassage(index, { passage_id: e.passage_id }, result.answer, facts, result.evidence);
  // model time, not the column's wall time (which also counts waiting, loading and checking)
  const notes = [plural(result.cost.llm_calls || 0, "model call") + " · " + Number(result.cost.seconds || 0).toFixed(1) + " s of model and search time"];
  if (g.parse_failures) notes.push(plural(g.parse_failures, "reply") + " did not parse");
  if (g.failed_steps) notes.push(plural(g.failed_steps, "step") + " failed");
  const box = el("div", { class: "answer level-" + g.level, "data-testid": "answer", "data-grounding": g.level },
    el("div", { class: "grounding", "data-testid": "grounding" }, (GROUNDING_ICON[g.level] || "") + " " + g.message),
    result.closest ? closestLine(result.closest, open)
      : el("div", { class: "text" }, result.marked || result.answer || "(no answer)"),
    result.why ? el("div", { class: "evidence", "data-testid": "why" }, "why: " + result.why) : null,
    result.closest ? null : polarLine((result.evidence || [])[0], result.answer, open),
    cites.length ? el("div", { "data-testid": "citations" }, "cited: ", ...cites) : null,
    unbacked.length ? el("div", { class: "unbacked" }, "not backed by the passages read:", el("ul", {}, ...unbacked)) : null,
    unused.length ? el("div", { class: "meta", "data-testid": "read" }, "read, not cited: ", ...unused) : null,
    el("div", { class: "meta" }, notes.join(" · "), " · ",
      el("button", { type: "button", class: "link copy", "data-testid": "copy", onclick: (e) => copyAnswer(result, e.target) }, "copy answer"),
      traced ? " · " : null,
      traced ? el("button", { type: "button", class: "link download", onclick: () => downloadTrace(result, record) }, "download trace (JSON)") : null));
  if (feedbackId) {
    const note = el("span", { class: "muted" });
    box.append(el("div", { class: "feedback" }, "was this right? ",
      el("button", { type: "button", "aria-label": "right", onclick: () => sendFeedback(feedbackId, true, note) }, "👍"),
      el("button", { type: "button", "aria-label": "wrong", onclick: () => sendFeedback(feedbackId, false, note) }, "👎"), note));
  }
  return box;
}

const GROUNDING_ICON = { supported: "✓", partly_supported: "◐", not_supported: "⚠", no_evidence: "⚠", unchecked: "?", failed: "✕" };

function parseEvents(buffer, onEvent) {
  let cut;
  while ((cut = buffer.indexOf("\n\n")) >= 0) {
    const block = buffer.slice(0, cut);
    buffer = buffer.slice(cut + 2);
    let event = "message", data = "";
    for (const line of block.split("\n")) {
      if (line.startsWith("event: ")) event = line.slice(7);
      else if (line.startsWith("data: ")) data += line.slice(6);
    }
    onEvent(event, data ? JSON.parse(data) : null);
  }
  return buffer;
}

function announce(text) {
  const box = $("announce");
  box.textContent = "";
  setTimeout(() => { box.textContent = text; }, 50);
}

// the column's state line: "queued" or "running" (as the server says) and the time since asked
function clock(column) {
  const started = performance.now();
  const label = column.querySelector(".elapsed");
  let state = "waiting for the server";
  const tick = () => { label.textContent = state + " · " + ((performance.now() - started) / 1000).toFixed(1) + " s"; };
  tick();
  const timer = setInterval(tick, 100);
  const stop = (outcome) => {
    clearInterval(timer);
    label.textContent = outcome + " · " + ((performance.now() - started) / 1000).toFixed(1) + " s";
  };
  stop.state = (next) => { state = next; tick(); };
  return stop;
}

// a reply being written: the answer grows in a live box; other calls show a token count
function showWriting(column, data) {
  if (data.answer !== undefined) {
    let live = column.querySelector(".answer.live");
    if (!live) {
      live = el("div", { class: "answer live", "data-testid": "live-answer", "aria-busy": "true" },
        el("div", { class: "grounding" }, "writing… (not checked yet)"), el("div", { class: "text" }));
      column.querySelector(".answer-slot").append(live);
    }
    live.querySelector(".text").textContent = data.answer;
  }
  let working = column.querySelector(".working");
  if (!working) {
    working = el("div", { class: "working meta", "data-testid": "working" });
    column.querySelector(".progress").after(working);
  }
  working.textContent = data.role + " is writing · " + plural(data.tokens, "token");
}

// what the team is doing now, in one plain line above the answer: what it last did, and for how
// long it has been at what comes next (a model's first call, which also reads its weights from
// disk, can take seconds after a search that took milliseconds)
function progress(column, text) {
  const line = column.querySelector(".progress");
  clearInterval(line.ticking);
  line.textContent = text;
  if (!text) return;
  const since = performance.now();
  line.ticking = setInterval(() => {
    const waited = (performance.now() - since) / 1000;
    if (waited >= 2) line.textContent = text + " then working on the next step (" + waited.toFixed(0) + " s)";
  }, 1000);
}

function countSteps(column) {
  const n = column.querySelectorAll(".steps .card").length;
  column.querySelector(".how summary").textContent = "how it was found · " + plural(n, "step");
}

const BUSY_TRIES = 5;  // a 503 (the server's queue is full) is asked again this many times

// POST `body`; while the server answers 503 with Retry-After, wait that long (said through
// `waiting`) and ask again, at most BUSY_TRIES times; Stop ends the wait
async function postRetrying(path, body, signal, waiting) {
  for (let tries = 1; ; tries++) {
    const response = await fetch(path, { method: "POST", headers: headers(true), signal, body });
    const after = Number(response.headers.get("Retry-After"));
    if (response.status !== 503 || !(after >= 0) || tries >= BUSY_TRIES) return response;
    const wait = Math.min(Math.max(1, Math.ceil(after)), 60);
    waiting(wait);
    await new Promise((resolve, reject) => {
      const timer = setTimeout(resolve, wait * 1000);
      signal.addEventListener("abort", () => { clearTimeout(timer); reject(new DOMException("stopped", "AbortError")); }, { once: true });
    });
  }
}

async function runColumn(strategy, question, index, column, signal, record, earlier) {
  const steps = column.querySelector(".steps");
  const slot = column.querySelector(".answer-slot");
  const stop = clock(column);
  let outcome = "failed";
  const facts = record.facts;
  try {
    const body = JSON.stringify({ question, index: index || null, strategy, abstain: $("abstain").checked,
      earlier: earlier.slice(-TURNS_SENT) });
    const response = await postRetrying("/v1/answer/stream", body, signal, (wait) =>
      stop.state("the server is busy: asking again in " + wait + " s"));
    if (!response.ok) {
      const body = await response.json();
      throw new Error(body.detail || body.error);
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer = parseEvents(buffer + decoder.decode(value, { stream: true }), (event, data) => {
        if (event === "queued") {
          stop.state("waiting in the queue: " + plural(data.ahead, "question") + " ahead");
        } else if (event === "started") {
          stop.state("running");
          progress(column, "the team is starting…");  // a model's first load is a step of its own
        } else if (event === "writing") {
          stop.state("running");
          showWriting(column, data);
        } else if (event === "step") {
          stop.state("running");
          const working = column.querySelector(".working");
          if (working) working.remove();
          steps.append(stepCard(data, index));
          countSteps(column);
          progress(column, plainLabel(data) + ";");
          record.steps.push(data);
        } else if (event === "answer") {
          const live = column.querySelector(".answer.live");
          if (live) live.remove();
          Object.assign(facts, data.facts || {});  // the answer's own fields, not its trace's
          slot.replaceChildren(answerBox(data, index, data.feedback_id || null, facts, record));
          if (data.question && data.question !== question) {  // a follow-up made to stand alone
            slot.prepend(el("div", { class: "meta", "data-testid": "answered-as" }, "answered as: " + data.question, " ",
              el("button", { type: "button", class: "link", "data-testid": "as-written",
                onclick: () => askAsWritten(question) }, "ask it as written")));
          }
          progress(column, "");
          record.answer = data;
          outcome = data.grounding && data.grounding.level === "failed" ? "failed" : "answered";
          announce(strategy + " answered: " + (data.answer || "no answer") + ". " + (data.grounding ? data.grounding.message : ""));
        } else if (event === "error") {
          slot.append(el("div", { class: "error" }, data.error + ": " + data.detail));
          record.error = data.error + ": " + data.detail;
          announce(strategy + " failed: " + data.detail);
        }
      });
    }
  } catch (error) {
    if (error.name === "AbortError") {
      outcome = "stopped";
      slot.append(el("div", { class: "muted stopped" }, "stopped: the server stops this team's work"));
    } else {
      slot.append(el("div", { class: "error" }, error.message));
      record.error = error.message;
      announce(strategy + " failed: " + error.message);
    }
  }
  stop(outcome);
  progress(column, "");
  const working = column.querySelector(".working");
  if (working) working.remove();
  record.outcome = outcome;
  return outcome;
}

const HISTORY_KEY = "ragteam-history";
const HISTORY_SIZE = 20;

// the stored history, keeping only entries of the expected shape (another version of the page,
// or a hand edit, must not stop the page from loading)
function storedHistory() {
  let found;
  try { found = JSON.parse(localStorage.getItem(HISTORY_KEY) || "[]"); } catch { return []; }
  if (!Array.isArray(found)) return [];
  return found.filter(validEntry);
}

function validEntry(e) {
  return e && typeof e === "object" && typeof e.id === "string" && typeof e.question === "string"
    && Array.isArray(e.columns) && e.columns.every((c) => c && typeof c.strategy === "string" && Array.isArray(c.steps));
}

// A link that shows a question's answers in any browser: the answers (not the steps) in the
// link itself, deflated and base64url-encoded after "#a=" (nothing is stored on the server)
async function shareLink(entry) {
  const slim = { ...entry, columns: entry.columns.map((c) => ({ strategy: c.strategy, outcome: c.outcome, error: c.error,
    facts: c.facts || {}, steps: [], answer: c.answer ? { ...c.answer, trace: null } : null })) };
  const stream = new Blob([JSON.stringify(slim)]).stream().pipeThrough(new CompressionStream("deflate-raw"));
  const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  const packed = btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  return window.location.origin + window.location.pathname + "#a=" + packed;
}

const SHARED_BYTES = 4 << 20;  // a shared link's answers, inflated, at most

async function sharedEntry(packed) {
  const binary = atob(packed.replace(/-/g, "+").replace(/_/g, "/"));
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  const reader = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw")).getReader();
  const parts = [];
  for (let size = 0; ;) {  // a link that inflates past SHARED_BYTES is refused as it inflates
    const { value, done } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > SHARED_BYTES) { reader.cancel(); throw new Error("it holds more than a link's answers"); }
    parts.push(value);
  }
  const entry = JSON.parse(await new Blob(parts).text());
  if (!validEntry(entry)) throw new Error("not a question's answers");
  return entry;
}

async function copyShareLink(entry, button) {
  try {
    await navigator.clipboard.writeText(await shareLink(entry));
    button.textContent = "link copied";
  } catch (error) {
    button.textContent = "could not copy: " + error.message;
  }
}

function remember(entry) {
  let kept = [entry, ...storedHistory().filter((e) => e.id !== entry.id)].slice(0, HISTORY_SIZE);
  while (kept.length) {  // the browser's storage is small: drop the oldest until it fits
    try { localStorage.setItem(HISTORY_KEY, JSON.stringify(kept)); break; } catch { kept = kept.slice(0, -1); }
  }
  window.history.replaceState(null, "", "#q=" + entry.id);
  showHistory();
}

function showHistory() {
  const items = storedHistory().map((e) => el("li", {}, el("a", { href: "#q=" + e.id }, e.question),
    el("span", { class: "meta" }, " · " + e.columns.map((c) => c.strategy).join(", ") + " · " + new Date(e.when).toLocaleString()),
    " ", el("button", { type: "button", class: "link", "data-testid": "share",
      title: "a link that shows these answers in any browser", onclick: (ev) => copyShareLink(e, ev.target) }, "copy link")));
  $("history-list").replaceChildren(...items);
  $("history").hidden = !items.length;
}

async function showStored() {
  const match = /^#([qa])=([\w-]+)$/.exec(window.location.hash);
  if (!match) return;
  if (running) { $("ask-status").textContent = "a question is running: stop it (Esc) to open the one you chose"; return; }
  let entry = null;
  if (match[1] === "a") {
    try { entry = await sharedEntry(match[2]); } catch (error) {
      $("ask-status").textContent = "this link's answers cannot be read (" + error.message + "): is it whole?";
      return;
    }
  } else {
    entry = storedHistory().find((e) => e.id === match[2]);
  }
  if (!entry) { $("ask-status").textContent = "that question is not in this browser's history"; return; }
  showEntry(entry, match[1] === "a" ? "from a link" : "from history");
}

function showEntry(entry, from) {
  $("question").value = entry.question;
  countQuestion();
  conversation = null;  // an entry from history starts no conversation: Ask asks it anew
  showConversation();
  // what the entry used, so that Ask asks the same again
  if ([...$("index").options].some((o) => o.value === (entry.index || ""))) $("index").value = entry.index || "";
  const used = new Set(entry.columns.map((c) => c.strategy));
  for (const box of document.querySelectorAll("#strategies input")) box.checked = used.has(box.value);
  $("columns").replaceChildren(...entry.columns.map((record) => {
    const column = el("div", { class: "column", "data-strategy": record.strategy },
      el("h2", {}, record.strategy, " ", el("span", { class: "elapsed meta" }, from + " · " + record.outcome)),
      ...columnParts());
    column.querySelector(".steps").append(...record.steps.map((step) => stepCard(step, entry.index)));
    countSteps(column);
    const slot = column.querySelector(".answer-slot");
    if (record.answer) slot.append(answerBox(record.answer, entry.index, null, record.facts || {}, record));
    if (record.error) slot.append(el("div", { class: "error" }, record.error));
    return column;
  }));
  $("ask-status").textContent = from + ": asked " + new Date(entry.when).toLocaleString();
}

// The answer as a person pastes it: the text with its [n] marks, why (a verdict), the sources.
function answerAsText(result) {
  const lines = [result.closest ? answerSaid(result) : result.marked || result.answer || ""];
  if (result.why) lines.push("", "Why: " + result.why);
  const e = result.closest || (result.evidence || [])[0];
  const said = isPolar(e) ? "Deciding sentence" : result.closest ? "Closest passage found" : "Found in";
  if (e) lines.push("", said + ": \u201c" + e.sentence + "\u201d (" + e.locator + ")");
  if (result.citations.length) {
    lines.push("", ...result.citations.map((c, n) => "[" + (n + 1) + "] " + (c.locator || c.title) + " (" + c.passage_id + ")"));
  }
  return lines.join("\n");
}

async function copyAnswer(result, button) {
  try {
    await navigator.clipboard.writeText(answerAsText(result));
    button.textContent = "copied";
  } catch (err) {
    button.textContent = "could not copy (" + err.name + ")";
  }
}

function downloadTrace(result, record) {
  const data = { question: result.question, strategy: record.strategy, answer: result.answer,
    citations: result.citations, grounding: result.grounding, cost: result.cost, steps: record.steps };
  const link = el("a", { href: URL.createObjectURL(new Blob([JSON.stringify(data, null, 1)], { type: "application/json" })),
    download: "ragteam-" + record.strategy + "-trace.json" });
  document.body.append(link);
  link.click();
  link.remove();
}

let running = null; // the AbortController of the question being answered
// the conversation the next question follows: its index, its strategies, and per strategy the
// turns so far ({question, answer}); null when the next question starts a new one
let conversation = null;
const TURNS_SENT = 10; // earlier turns sent with a follow-up (the rule reads the latest)

function sameTeams(chosen, index) {
  return conversation && conversation.index === index && conversation.strategies.join() === chosen.join();
}

function showConversation() {
  const turns = conversation ? Math.max(0, ...Object.values(conversation.turns).map((t) => t.length)) : 0;
  $("new-conversation").hidden = !turns;
  $("conversation-hint").textContent = turns
    ? "a follow-up continues this conversation (" + plural(turns, "earlier question") + "): a question that leans on the one before is searched with it"
    : "";
}

function newConversation() {
  conversation = null;
  $("columns").replaceChildren();
  $("answers-nav").hidden = true;
  showConversation();
  $("question").focus();
}

// the turns a column answered before, above its new question
function earlierTurns(turns) {
  if (!turns.length) return [];
  return [el("ol", { class: "earlier", "data-testid": "earlier", "aria-label": "earlier in this conversation" },
    ...turns.map((t) => el("li", {}, el("div", { class: "asked" }, t.question),
      el("div", { class: "said meta" }, t.answer.length > 240 ? t.answer.slice(0, 240) + "…" : t.answer))))];
}

function setRunning(controller) {
  running = controller;
  $("ask-button").disabled = !!controller;
  $("stop-button").hidden = !controller;
  $("question").setAttribute("aria-busy", String(!!controller));
}

function checkAsk(question, chosen, index) {
  if (!question) return "write a question first";
  if (!chosen.length) return "choose at least one strategy";
  if (question.length > MAX_QUESTION) return "the question is " + question.length.toLocaleString("en") + " characters; the limit is " + MAX_QUESTION.toLocaleString("en") + ": shorten it";
  const blind = chosen.filter((name) => (STRATEGIES[name] || {}).needs_index);
  if (!index && blind.length) return blind.join(", ") + " need" + (blind.length === 1 ? "s" : "") + " an index: choose one above";
  return "";
}

// the question's length against the server's limit, and how much of it the model reads
function countQuestion() {
  const length = $("question").value.length;
  const over = length > MAX_QUESTION;
  const reads = QUESTION_TOKENS ? " · the model reads about " + QUESTION_TOKENS.toLocaleString("en") +
    " tokens (~" + (QUESTION_TOKENS * 3).toLocaleString("en") + " characters) of a question; a longer one is cut in the middle" : "";
  $("question-count").textContent = length.toLocaleString("en") + " / " + MAX_QUESTION.toLocaleString("en") + " characters" + reads;
  $("question-count").classList.toggle("over", over);
  $("question").setAttribute("aria-invalid", String(over));
}

// the last line of a run: what each team did, e.g. "read answered from 5 passages of 2 files in 0.4 s"
function summary(outcomes, records, chosen, seconds) {
  const failed = outcomes.filter((o) => o === "failed").length;
  if (outcomes.includes("stopped")) return "stopped after " + seconds.toFixed(1) + " s";
  if (failed === outcomes.length) return "every strategy failed";
  const said = records.map((r, i) => {
    if (!r.answer) return chosen[i] + " failed";
    const read = r.answer.read || [];
    if (!read.length) return chosen[i] + " answered without reading any passage";
    const files = new Set(read.map((c) => c.doc_id || c.title || c.passage_id));  // not its pages
    return chosen[i] + " answered from " + plural(read.length, "passage") + " of " + plural(files.size, "document");
  });
  return said.join("; ") + " in " + seconds.toFixed(1) + " s";
}

// a column: the work in one line, the answer first, then how it was found (collapsed)
function columnParts() {
  return [el("div", { class: "progress meta", "data-testid": "progress", "aria-live": "polite" }),
    el("div", { class: "answer-slot" }),
    el("details", { class: "how" }, el("summary", {}, "how it was found"), el("div", { class: "steps" }))];
}

let asWritten = false;  // the next question is asked as it stands (one click: "ask it as written")

function askAsWritten(question) {
  if (running) return;
  $("question").value = question;
  asWritten = true;
  $("ask-form").requestSubmit();
}

async function ask(event) {
  event.preventDefault();
  const alone = asWritten;
  asWritten = false;
  if (running) {
    $("ask-status").textContent = "a question is already running: stop it or wait for its answers";
    return;
  }
  const question = $("question").value.trim();
  const chosen = [...document.querySelectorAll("#strategies input:checked")].map((i) => i.value);
  const index = $("index").value;
  const problem = checkAsk(question, chosen, index);
  if (problem) { $("ask-status").textContent = problem; return; }
  const controller = new AbortController();
  setRunning(controller);  // focus stays where it is: a second Enter never stops the question
  $("ask-status").textContent = "the teams are working… (Esc or the Stop button stops them)";
  if (!sameTeams(chosen, index)) {  // another index or other teams: a new conversation
    conversation = { index, strategies: chosen, turns: Object.fromEntries(chosen.map((n) => [n, []])) };
  }
  // "ask it as written": this question alone, not made to follow the turns before it
  const turns = chosen.map((name) => (alone ? [] : conversation.turns[name].slice()));
  const columns = chosen.map((name, i) => el("div", { class: "column", "data-strategy": name, id: "col-" + name },
    el("h2", {}, name, " ", el("span", { class: "elapsed meta" }, "queued: starts when a column before it is done")),
    ...earlierTurns(turns[i]),
    el("div", { class: "now-asked" }, question),
    ...columnParts()));
  $("columns").replaceChildren(...columns);
  // on a phone the columns stack: a summary at the top jumps to each one
  const jumps = chosen.map((name) => el("a", { href: "#col-" + name, "data-strategy": name }, name + ": waiting"));
  $("answers-nav").replaceChildren(el("span", { class: "meta" }, "answers: "), ...jumps);
  $("answers-nav").hidden = chosen.length < 2;
  // on a phone the form fills the screen: bring the answers up to it
  if (window.matchMedia("(max-width: 700px)").matches) $("ask-status").scrollIntoView({ block: "start" });
  // as many columns at once as the server answers at once (the in-process model: one); the
  // others say they are queued
  const outcomes = chosen.map(() => "stopped");
  const records = chosen.map((strategy) => ({ strategy, steps: [], facts: {}, answer: null, error: null, outcome: "stopped" }));
  let next = 0;
  const lane = async () => {
    while (next < chosen.length) {
      const i = next++;
      if (controller.signal.aborted) {
        columns[i].querySelector(".elapsed").textContent = "not run (stopped)";
        continue;
      }
      outcomes[i] = await runColumn(chosen[i], question, index, columns[i], controller.signal, records[i], turns[i]);
      if (records[i].answer && records[i].answer.answer) {
        conversation.turns[chosen[i]].push({ question, answer: records[i].answer.answer });
        showConversation();
      }
      const answered = records[i].answer ? answerSaid(records[i].answer) : outcomes[i];
      $("answers-nav").querySelector('[data-strategy="' + chosen[i] + '"]').textContent = chosen[i] + ": " + (answered || "no answer");
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: Math.max(1, Math.min(CONCURRENCY, chosen.length)) }, lane));
  setRunning(null);
  $("ask-status").textContent = summary(outcomes, records, chosen, (performance.now() - started) / 1000);
  // a question stopped before any team finished is not kept as if it had been answered
  if (outcomes.some((o) => o !== "stopped")) {
    remember({ id: Date.now().toString(36), question, index, when: new Date().toISOString(), columns: records });
  }
}

function stopAsking() {
  if (running) running.abort();
}

// readable names for the report's metrics; each mean comes with its 95% interval
const METRICS = { em: "exact match", f1: "F1 (word overlap)", match: "gold in answer", retrieval_all: "found every gold passage" };

function reportTable(strategies) {
  const head = el("tr", {}, el("th", {}, "strategy"), el("th", {}, "questions"),
    ...Object.values(METRICS).map((m) => el("th", {}, m)), el("th", {}, "seconds per question"), el("th", {}, "errors"));
  const cell = (mean) => mean ? el("td", {}, mean[0].toFixed(3), el("span", { class: "interval" },
    " (" + Number(mean[1]).toFixed(2) + "–" + Number(mean[2]).toFixed(2) + ")")) : el("td", {}, "-");
  const rows = strategies.map((s) => el("tr", {}, el("td", {}, s.label), el("td", {}, String(s.n)),
    ...Object.keys(METRICS).map((m) => cell(s.means[m])),
    el("td", {}, Number(s.per_question.seconds).toFixed(2)), el("td", {}, String(s.errors))));
  return el("table", {}, el("caption", {}, "means with 95% intervals in brackets"), el("thead", {}, head), el("tbody", {}, ...rows));
}

async function showRun() {
  const name = $("run-select").value;
  const box = $("run-report");
  if (!name) { box.replaceChildren(el("p", { class: "muted" }, "no eval runs are served (ragteam serve --runs DIR)")); return; }
  try {
    const report = await getJSON("/v1/runs/" + encodeURIComponent(name));
    RUN_INDEX = report.index || "";
    const plot = el("img", { alt: "F1 and seconds per question of " + name });
    const response = await fetch("/v1/runs/" + encodeURIComponent(name) + "/plot.png", { headers: headers(false) });
    if (response.ok) plot.src = URL.createObjectURL(await response.blob());
    box.replaceChildren(el("h2", {}, name), el("div", { class: "table-wrap" }, reportTable(report.strategies)), plot);
    const questions = await getJSON("/v1/runs/" + encodeURIComponent(name) + "/questions");
    box.append(questionView(name, questions));
  } catch (error) {
    box.replaceChildren(el("p", { class: "error" }, error.message));
  }
}

function f1Of(outcome) {
  const f1 = outcome && outcome.metrics ? outcome.metrics.f1 : undefined;
  return f1 === undefined ? null : Number(f1);
}

async function showTrace(run, label, id, cell) {
  try {
    const trace = await getJSON("/v1/runs/" + encodeURIComponent(run) + "/trace?label=" + encodeURIComponent(label) + "&id=" + encodeURIComponent(id));
    cell.replaceChildren(...trace.steps.map((step, i) => stepCard({ ...step, number: i + 1 }, RUN_INDEX)));
    if (!trace.steps.length) cell.textContent = "(no steps recorded)";
  } catch (error) {
    cell.replaceChildren(el("p", { class: "error" }, error.message));
  }
}

function questionTable(run, data, a, b, onlyDiffering) {
  const shown = data.questions.filter((q) => !onlyDiffering || f1Of(q.by[a]) !== f1Of(q.by[b]));
  const head = el("tr", {}, el("th", {}, "question"), el("th", {}, "gold"),
    ...data.labels.map((l) => el("th", {}, l)));
  const rows = shown.map((q) => {
    const cells = data.labels.map((label) => {
      const o = q.by[label];
      if (!o) return el("td", { class: "muted" }, "-");
      const f1 = f1Of(o);
      const detail = el("div", { class: "trace" });
      return el("td", { class: "outcome" + (f1 === null ? "" : f1 >= 0.5 ? " good" : " bad"), "data-label": label },
        el("div", {}, o.error ? "error: " + o.error : o.prediction || "(no answer)"),
        el("div", { class: "meta" }, (f1 === null ? "" : "F1 " + f1.toFixed(2)) + (o.grounding ? " · " + o.grounding.replace("_", " ") : "")),
        el("button", { type: "button", class: "link", onclick: () => showTrace(run, label, q.id, detail) }, "trace"), detail);
    });
    return el("tr", { "data-id": q.id }, el("td", {}, q.question), el("td", {}, (q.answers || []).join(" | ")), ...cells);
  });
  const caption = el("caption", {}, shown.length + " of " + data.questions.length + " questions");
  return el("table", { class: "questions" }, caption, el("thead", {}, head), el("tbody", {}, ...rows));
}

function questionView(run, data) {
  const pick = (id, selected) => el("select", { id }, ...data.labels.map((l) => {
    const option = el("option", { value: l }, l);
    if (l === selected) option.selected = true;
    return option;
  }));
  const a = pick("compare-a", data.labels[0]);
  const b = pick("compare-b", data.labels[1] || data.labels[0]);
  const differ = el("input", { type: "checkbox", id: "compare-differ" });
  const wrap = el("div", { class: "table-wrap" });
  const redraw = () => wrap.replaceChildren(questionTable(run, data, a.value, b.value, differ.checked));
  for (const control of [a, b, differ]) control.addEventListener("change", redraw);
  redraw();
  return el("section", { "aria-label": "questions" }, el("h3", {}, "Question by question"),
    el("div", { class: "row" }, el("label", {}, "compare ", a), el("label", {}, " with ", b),
      el("label", {}, differ, " only where their F1 differs")), wrap);
}

function switchView(runs) {
  $("view-ask").hidden = runs;
  $("view-runs").hidden = !runs;
  $("tab-ask").setAttribute("aria-pressed", String(!runs));
  $("tab-runs").setAttribute("aria-pressed", String(runs));
  if (runs) loadRuns();
}

async function loadRuns() {
  try {
    const names = await getJSON("/v1/runs");
    $("run-select").replaceChildren(...names.map((n) => el("option", { value: n }, n)));
  } catch (error) {
    $("run-report").replaceChildren(el("p", { class: "error" }, error.message));
    return;
  }
  await showRun();
}

function wire() {
  $("doc-upload").addEventListener("change", (e) => { if (e.target.files.length) addDocuments([...e.target.files]); });
  $("api-key").value = sessionStorage.getItem("ragteam-key") || "";
  $("api-key").addEventListener("change", () => { sessionStorage.setItem("ragteam-key", $("api-key").value); load(); });
  $("ask-form").addEventListener("submit", ask);
  $("new-conversation").addEventListener("click", newConversation);
  $("stop-button").addEventListener("click", stopAsking);
  window.addEventListener("hashchange", showStored);
  showHistory();
  $("question").addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); $("ask-form").requestSubmit(); } });
  $("question").addEventListener("input", countQuestion);
  document.addEventListener("keydown", (e) => { if (e.key === "Escape" && running && !$("passage-dialog").open) stopAsking(); });
  $("tab-ask").onclick = () => switchView(false);
  $("tab-runs").onclick = () => switchView(true);
  $("run-select").onchange = showRun;
  load();
}

// the chosen index's files and what the last sync made of each
const STATE_ICON = { read: "✓", skipped: "–", failed: "✕" };
let LISTED = new Set(); // the chosen index's files, as last listed

async function showDocuments() {
  const panel = $("documents");
  const name = $("index").value;
  if (!name) { panel.hidden = true; return; }
  try {
    const listed = await getJSON("/v1/indexes/" + encodeURIComponent(name) + "/documents");
    if (!listed.folder) { panel.hidden = true; return; }
    const counts = Object.entries(listed.counts).map(([k, n]) => n + " " + k).join(", ");
    const rows = listed.documents.map((d) => {
      const where = [d.pages ? plural(d.pages, "page") : null, d.slides ? plural(d.slides, "slide") : null,
        d.status === "read" ? plural(d.passages, "passage") : null].filter(Boolean).join(", ");
      const said = d.status === "read" ? where : d.reason;
      const notes = [d.warning, ...(d.notes || [])].filter(Boolean);
      // files at the folder's top can be removed from the page (the API takes plain names)
      const remove = d.path.includes("/") ? null : el("button", { type: "button", class: "doc-remove",
        "aria-label": "Remove " + d.path, onclick: () => removeDocument(d.path) }, "remove");
      return el("li", { class: "doc " + d.status + (d.warning ? " thin" : ""), "data-path": d.path },
        el("span", { class: "state", "aria-hidden": "true" }, STATE_ICON[d.status] || "?"), " ",
        el("strong", {}, d.path), " ", el("span", { class: "meta" }, d.status + (said ? ": " + said : "")),
        remove ? " " : null, remove,
        notes.length ? el("ul", { class: "notes" }, ...notes.map((n) => el("li", {}, n))) : null);
    });
    LISTED = new Set(listed.documents.map((d) => d.path));
    refreshIndexLabels();  // an upload or a removal changed the passage count the picker shows
    panel.querySelector("summary").textContent = "Documents in " + name + ": " + counts;
    $("documents-list").replaceChildren(...rows);
    panel.hidden = false;
  } catch (error) {
    panel.hidden = false;
    panel.querySelector("summary").textContent = "Documents: could not be listed (" + error.message + ")";
    $("documents-list").replaceChildren();
  }
}

function indexLabel(i) {
  return i.name + " (" + i.passages + " passages)";
}

async function refreshIndexLabels() {
  try {
    const indexes = await getJSON("/v1/indexes");
    for (const i of indexes.filter((x) => x.ok)) {
      const option = [...$("index").options].find((o) => o.value === i.name);
      if (option) option.textContent = indexLabel(i);
    }
  } catch (error) {  // the labels keep their last counts; the documents panel says what failed
  }
}

function documentURL(name, replace) {
  return "/v1/indexes/" + encodeURIComponent($("index").value) + "/documents/" +
    encodeURIComponent(name) + (replace ? "?replace=true" : "");
}

async function sendDocument(method, name, file, replace) {
  const response = await fetch(documentURL(name, replace), { method, headers: headers(false), body: file });
  const body = await response.json().catch(() => ({}));
  return { response, body };
}

function documentOutcome(name, response, body) {
  if (!response.ok) return name + ": " + (body.detail || response.statusText);
  if (!body.synced) return name + ": saved; a sync is running, the list follows in a moment";
  if (!body.file) return name + ": removed";
  const f = body.file;
  return name + ": " + f.status + (f.status === "read" ? " (" + plural(f.passages, "passage") + ")" : ": " + f.reason);
}

// add files to the chosen folder index (each synced at once), asking before replacing one
async function addDocuments(files) {
  const said = [];
  for (const file of files) {
    const there = LISTED.has(file.name);
    if (there && !confirm(file.name + " is already in the folder. Replace it?")) {
      said.push(file.name + ": kept as it was");
      continue;
    }
    $("doc-status").textContent = "adding " + file.name + " and syncing…";
    const { response, body } = await sendDocument("PUT", file.name, file, there);
    said.push(documentOutcome(file.name, response, body));
  }
  $("doc-upload").value = "";
  await showDocuments();
  $("doc-status").textContent = said.join("; ");
}

async function removeDocument(path) {
  if (!confirm("Remove " + path + " from the indexed folder? The file is deleted from the server's disk.")) return;
  $("doc-status").textContent = "removing " + path + " and syncing…";
  const { response, body } = await sendDocument("DELETE", path, undefined, false);
  await showDocuments();
  $("doc-status").textContent = documentOutcome(path, response, body);
}

async function load() {
  try {
    const [indexes, strategies, health] = await Promise.all([getJSON("/v1/indexes"), getJSON("/v1/strategies"), getJSON("/healthz")]);
    CONCURRENCY = Number(health.concurrency) || 1;
    MAX_QUESTION = Number(health.max_question_chars) || MAX_QUESTION;
    QUESTION_TOKENS = Number(health.question_tokens) || 0;
    countQuestion();
    $("index").replaceChildren(el("option", { value: "" }, "(none: for strategies that need no index)"),
      ...indexes.filter((i) => i.ok).map((i) => el("option", { value: i.name }, indexLabel(i))));
    if (indexes.some((i) => i.ok)) $("index").selectedIndex = 1;
    const placeholder = () => { $("question").placeholder = $("index").value ? "Ask about the documents in " + $("index").value : "Ask a question (no index: the model answers from what it knows)"; };
    $("index").onchange = () => { placeholder(); showDocuments(); };
    placeholder();
    showDocuments();
    STRATEGIES = Object.fromEntries(strategies.map((s) => [s.name, s]));
    const boxes = strategies.map((s) => {
      const input = el("input", { type: "checkbox", value: s.name });
      if (s.unavailable) input.disabled = true;
      if (s.default && !s.unavailable) input.checked = true;
      const help = el("p", { class: "about meta", hidden: "" }, s.unavailable || s.description || "no description",
        s.detail ? el("span", { class: "detail" }, " (" + s.detail + ")") : null);
      const toggle = el("button", { type: "button", class: "about-toggle", "aria-expanded": "false",
        "aria-label": "what " + s.name + " does" }, "?");
      toggle.onclick = () => { help.hidden = !help.hidden; toggle.setAttribute("aria-expanded", String(!help.hidden)); };
      return el("div", { class: "strategy" + (s.unavailable ? " unavailable" : "") },
        el("label", {}, input, " " + s.name + (s.default ? " (default)" : ""),
          s.unavailable ? el("span", { class: "meta" }, " (not ready)") : null), toggle, help);
    });
    $("strategies").replaceChildren(el("legend", {}, "Strategies (side by side)"), ...boxes);
    if (!$("strategies").querySelector("input:checked")) {
      const first = $("strategies").querySelector("input:not([disabled])");
      if (first) first.checked = true;
    }
    $("ask-status").textContent = "";
    showStored();
  } catch (error) {
    $("ask-status").textContent = "cannot reach the API: " + error.message;
  }
}

document.addEventListener("DOMContentLoaded", wire);
