// The live view's page: asks the run for its next frame (/api/frame, JSON; app/live_json.c writes
// it; the server holds the request until the run has a newer frame, at most a second) and draws it: the discs, the averaged field maps, the lift and drag
// coefficients against time, the progress and the settings. Nothing here changes the run.
'use strict';

const POLL_MS = 250;          // at least this between the starts of two requests
const RETRY_MS = 2000;        // after a failed one
const view = { after: 0, frames: 0, frame: null, failures: 0, luts: null };
const $ = (id) => document.getElementById(id);

function bytes(b64) {
  const s = atob(b64), a = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) a[i] = s.charCodeAt(i);
  return a;
}

function fmt(x, digits = 4) {
  if (x === null || x === undefined || !isFinite(x)) return '-';
  const a = Math.abs(x);
  return a !== 0 && (a < 1e-3 || a >= 1e5) ? x.toExponential(digits - 1) : x.toPrecision(digits);
}

function clock(seconds) {
  if (seconds === null || !isFinite(seconds)) return '-:--:--';
  const s = Math.round(seconds), h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
  return `${h}:${String(m).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
}

function setStatus(text, bad) {
  const el = $('status');
  el.textContent = text;
  el.className = bad ? 'status bad' : 'status';
}

// The scale from domain metres to the canvas, with y upwards.
function domainScale(canvas, f) {
  const w = canvas.clientWidth || canvas.width;
  canvas.width = Math.max(200, Math.round(w));
  canvas.height = Math.max(100, Math.round(canvas.width * f.domain.height / f.domain.width));
  return canvas.width / f.domain.width;
}

function drawBody(ctx, f, s) {
  const b = f.body;
  if (!b.x.length) return;
  ctx.beginPath();
  for (let i = 0; i < b.x.length; i++) {
    const x = b.x[i] * s, y = (f.domain.height - b.y[i]) * s;
    if (i === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
  }
  if (b.closed) ctx.closePath();
  ctx.fillStyle = 'rgba(60, 60, 60, 0.85)';
  if (b.closed) ctx.fill();
  ctx.strokeStyle = '#222';
  ctx.lineWidth = 1.5;
  ctx.stroke();
}

function colourOf(lut, q) {
  if (q === 255) return [170, 170, 170];
  const i = Math.round((q / 254) * 255) * 3;
  return [lut[i], lut[i + 1], lut[i + 2]];
}

function drawScale(canvas, v, lut) {
  const ctx = canvas.getContext('2d');
  canvas.width = canvas.clientWidth || canvas.width;
  const w = canvas.width, h = canvas.height;
  ctx.clearRect(0, 0, w, h);
  for (let x = 0; x < w - 120; x++) {
    const c = colourOf(lut, Math.round((x / (w - 121)) * 254));
    ctx.fillStyle = `rgb(${c[0]},${c[1]},${c[2]})`;
    ctx.fillRect(x, 2, 1, 14);
  }
  ctx.fillStyle = '#1d2430';
  ctx.font = '12px system-ui, sans-serif';
  ctx.fillText(fmt(v.lo), 0, 30);
  const hi = fmt(v.hi);
  ctx.fillText(hi, w - 120 - ctx.measureText(hi).width, 30);
  ctx.fillText(v.units ? `${v.title} [${v.units}]` : v.title, w - 115, 14);
}

function drawDiscs(f) {
  const canvas = $('discs'), k = Number($('disc-value').value), v = f.discs.values[k];
  const s = domainScale(canvas, f), ctx = canvas.getContext('2d');
  ctx.fillStyle = '#fafbfc';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  const xy = bytes(f.discs.xy), q = bytes(v.bytes), lut = view.luts[0];
  const sx = canvas.width / 65535, sy = canvas.height / 65535, r = Math.max(0.8, f.domain.radius * s);
  for (let i = 0; i < f.discs.n; i++) {
    const x = (xy[4 * i] | (xy[4 * i + 1] << 8)) * sx;
    const y = canvas.height - (xy[4 * i + 2] | (xy[4 * i + 3] << 8)) * sy;
    const c = colourOf(lut, q[i]);
    ctx.fillStyle = `rgb(${c[0]},${c[1]},${c[2]})`;
    if (r < 1.5) ctx.fillRect(x - r, y - r, 2 * r, 2 * r);
    else {
      ctx.beginPath();
      ctx.arc(x, y, r, 0, 2 * Math.PI);
      ctx.fill();
    }
  }
  drawBody(ctx, f, s);
  drawScale($('disc-scale'), v, lut);
  $('disc-note').textContent = f.discs.n < f.progress.discs
    ? `${f.discs.n} of ${f.progress.discs} discs drawn (an even sample)` : `${f.progress.discs} discs`;
}

function drawMap(f) {
  const canvas = $('map'), k = Number($('map-value').value), v = f.fields.maps[k];
  const s = domainScale(canvas, f), ctx = canvas.getContext('2d');
  const nx = f.fields.nx, ny = f.fields.ny, q = bytes(v.bytes), lut = view.luts[0];
  const cells = document.createElement('canvas');
  cells.width = nx;
  cells.height = ny;
  const cctx = cells.getContext('2d'), img = cctx.createImageData(nx, ny);
  for (let j = 0; j < ny; j++)
    for (let i = 0; i < nx; i++) {
      const c = colourOf(lut, q[j * nx + i]), o = 4 * ((ny - 1 - j) * nx + i);
      img.data[o] = c[0], img.data[o + 1] = c[1], img.data[o + 2] = c[2], img.data[o + 3] = 255;
    }
  cctx.putImageData(img, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(cells, 0, 0, canvas.width, canvas.height);
  drawBody(ctx, f, s);
  drawScale($('map-scale'), v, lut);
  $('map-note').textContent = f.fields.samples > 0
    ? `${f.fields.samples} samples ${f.progress.settled ? 'since the settling' : 'so far (settling)'}` : 'no samples yet';
}

function drawHistory(f) {
  const canvas = $('history'), ctx = canvas.getContext('2d'), h = f.history;
  canvas.width = canvas.clientWidth || canvas.width;
  const W = canvas.width, H = canvas.height, L = 52, R = 12, T = 12, B = 30;
  ctx.clearRect(0, 0, W, H);
  const n = h.time.length;
  if (n === 0) {
    ctx.fillStyle = '#8a94a6';
    ctx.fillText('no force row yet', L, H / 2);
    return;
  }
  const ok = (x) => x !== null && isFinite(x);
  let lo = Infinity, hi = -Infinity;
  for (const key of ['cl', 'cd', 'cl_mean', 'cd_mean'])
    for (const x of h[key]) if (ok(x)) { lo = Math.min(lo, x); hi = Math.max(hi, x); }
  if (!(hi > lo)) { lo -= 1; hi += 1; }
  const t0 = h.time[0], t1 = h.time[n - 1] > t0 ? h.time[n - 1] : t0 + 1;
  const X = (t) => L + ((t - t0) / (t1 - t0)) * (W - L - R), Y = (y) => T + ((hi - y) / (hi - lo)) * (H - T - B);
  ctx.strokeStyle = '#d5d9e0';
  ctx.fillStyle = '#1d2430';
  ctx.font = '11px system-ui, sans-serif';
  for (let k = 0; k <= 4; k++) {
    const y = lo + (k / 4) * (hi - lo);
    ctx.beginPath(); ctx.moveTo(L, Y(y)); ctx.lineTo(W - R, Y(y)); ctx.stroke();
    ctx.fillText(fmt(y, 3), 4, Y(y) + 4);
  }
  ctx.fillText(`t = ${fmt(t0)} s`, L, H - 8);
  ctx.fillText(`${fmt(t1)} s`, W - R - 60, H - 8);
  const series = [['cl', 'cl_mean', 'cl_se', [40, 90, 200]], ['cd', 'cd_mean', 'cd_se', [210, 60, 40]]];
  for (const [raw, mean, se, c] of series) {
    ctx.strokeStyle = `rgba(${c}, 0.35)`;
    ctx.lineWidth = 1;
    ctx.beginPath();
    let on = false;
    for (let i = 0; i < n; i++) {
      if (!ok(h[raw][i])) { on = false; continue; }
      if (on) ctx.lineTo(X(h.time[i]), Y(h[raw][i])); else ctx.moveTo(X(h.time[i]), Y(h[raw][i]));
      on = true;
    }
    ctx.stroke();
    ctx.fillStyle = `rgba(${c}, 0.18)`; // the standard error band
    for (let i = 1; i < n; i++) {
      if (!ok(h[mean][i]) || !ok(h[se][i]) || !ok(h[mean][i - 1])) continue;
      const x0 = X(h.time[i - 1]), x1 = X(h.time[i]);
      ctx.fillRect(x0, Y(h[mean][i] + h[se][i]), Math.max(1, x1 - x0), Y(h[mean][i] - h[se][i]) - Y(h[mean][i] + h[se][i]));
    }
    ctx.strokeStyle = `rgb(${c})`;
    ctx.lineWidth = 2.5;
    ctx.beginPath();
    on = false;
    for (let i = 0; i < n; i++) {
      if (!ok(h[mean][i])) { on = false; continue; }
      if (on) ctx.lineTo(X(h.time[i]), Y(h[mean][i])); else ctx.moveTo(X(h.time[i]), Y(h[mean][i]));
      on = true;
    }
    ctx.stroke();
  }
  const last = n - 1, pm = (m, e) => ok(h[m][last]) ? `${fmt(h[m][last])} ± ${fmt(h[e][last], 2)}` : 'not averaged yet';
  $('coef').textContent = `CL = ${pm('cl_mean', 'cl_se')}  \u00b7  CD = ${pm('cd_mean', 'cd_se')}`;
}

function showProgress(f) {
  const p = f.progress, pct = p.total ? (100 * p.step) / p.total : 0;
  $('label').textContent = f.run.label;
  $('bar').style.width = `${pct.toFixed(1)}%`;
  const phase = p.settled ? `averaging since step ${p.settle_steps}` : `settling until step ${p.settle_steps}`;
  const rate = p.rate !== null && isFinite(p.rate) ? `${fmt(p.rate * p.discs, 3)} particle-steps/s` : 'rate -';
  $('progress').textContent = [`step ${p.step} / ${p.total} (${pct.toFixed(0)} %)`, `t = ${fmt(p.time)} s`,
    `dt = ${fmt(p.dt, 3)} s`, `${p.discs} discs`, rate, `ETA ${clock(p.eta)}`, phase,
    `a frame costs the run ${fmt(p.frame_ms, 2)} ms`].join('  \u00b7  ');
  $('run').textContent = `backend ${f.run.backend} (${f.run.threads} threads), output in ${f.run.dir}/`;
  $('scene').textContent = f.run.scene;
  document.body.dataset.step = String(p.step);
}

function draw() {
  const f = view.frame;
  if (!f) return;
  if (!view.luts) view.luts = [bytes(f.colormap), bytes(f.colormap_diverging)];
  showProgress(f);
  drawDiscs(f);
  drawMap(f);
  drawHistory(f);
}

async function poll() {
  const start = Date.now();
  let wait = POLL_MS;
  try {
    const r = await fetch(`/api/frame?after=${view.after}&wait=1`, { cache: 'no-store' });
    if (r.status === 200) {
      const f = await r.json();
      if (f.waiting) setStatus("waiting for the run's first frame");
      else {
        view.after = f.version;
        view.frame = f;
        view.frames++;
        draw();
        document.body.dataset.frames = String(view.frames);
        setStatus(`running: frame ${f.version}`);
      }
    } else if (r.status === 429) {
      wait = RETRY_MS;
      setStatus('the run asks for fewer requests (429): waiting', true);
    } else if (r.status !== 204) {
      wait = RETRY_MS;
      setStatus(`the run answered ${r.status}`, true);
    }
    view.failures = 0;
  } catch (e) {
    view.failures++;
    wait = RETRY_MS;
    setStatus('the run does not answer: it has ended, or was stopped', true);
  }
  setTimeout(poll, Math.max(0, wait - (Date.now() - start)));
}

$('disc-value').addEventListener('change', draw);
$('map-value').addEventListener('change', draw);
window.addEventListener('resize', draw);
poll();
