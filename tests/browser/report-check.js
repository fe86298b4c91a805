// SPDX-License-Identifier: GPL-2.0
// report-check.js: the report page and speedscope's view of our file, as a person sees them, in Debian's headless Chromium.
//
// Driven through the DevTools protocol by puppeteer-core (installed at test
// time under .output/node, never with a browser of its own). Prints TAP
// verdicts ("ok - ...", "not ok - ..."), which tests/report.sh counts.
// What a check expects comes from the JSON lines, read here on their own,
// never from the page's script.
//
//   node report-check.js page REPORT.html RECORDS.jsonl SHOTS NAME
//   node report-check.js alloc REPORT.html RECORDS.jsonl SHOTS NAME
//   node report-check.js hostile REPORT.html EXPECT.json SHOTS NAME
//   node report-check.js speedscope FILE.json NAMES.json SPEEDSCOPE_INDEX SHOTS
//   node report-check.js cut REPORT.html EXPECT.json SHOTS
//   node report-check.js firefox REPORT.html RECORDS.jsonl SHOTS
//   node report-check.js timing REPORT.html
//   node report-check.js shot REPORT.html TRACE OUT.png   (the README's picture)
'use strict';

const fs = require('fs');
const path = require('path');
const puppeteer = require('puppeteer-core');

let failures = 0;

function ok(cond, what) {
	console.log((cond ? 'ok - ' : 'not ok - ') + what.replace(/\n/g, ' '));
	if (!cond)
		failures++;
	return cond;
}

function within(got, want, tol) {
	return Math.abs(got - want) <= tol * Math.max(Math.abs(want), 1);
}

/* what the page shows as a duration: "585.9 ms", "4.000 s", "12.5 µs", "–" */
function parseDuration(text) {
	const m = /^([0-9.]+) (ns|µs|ms|s)$/.exec(text.trim());
	if (!m)
		return text.trim() === '–' ? 0 : NaN;
	return parseFloat(m[1]) * { ns: 1, 'µs': 1e3, ms: 1e6, s: 1e9 }[m[2]];
}

/* what the page shows as bytes: "93.1 MB", "512 B", "–" */
function parseBytes(text) {
	const m = /^([0-9.]+) (B|kB|MB|GB|TB)$/.exec(text.trim());
	if (!m)
		return text.trim() === '–' ? 0 : NaN;
	return parseFloat(m[1]) * { B: 1, kB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12 }[m[2]];
}

function pad(n, w) {
	return String(n).padStart(w, '0');
}

/* µs since the epoch as the page's tooltip prints it, "HH:MM:SS.uuuuuu" (UTC) */
function clock(us) {
	const d = new Date(Math.floor(us / 1000));
	return pad(d.getUTCHours(), 2) + ':' + pad(d.getUTCMinutes(), 2) + ':' + pad(d.getUTCSeconds(), 2) + '.' + pad(us % 1e6, 6);
}

function parseTime(s) {
	/* "2026-11-27T02:33:43.935592Z" -> µs; Date keeps milliseconds only */
	const ms = Date.parse(s.slice(0, 19) + 'Z');
	return ms * 1000 + parseInt(s.slice(20, 26), 10);
}

const INHERITED = 'inherited, request ended';

/* A trace row's name on the page, what a filter for it types, and its row's data-trace. */
function nameOf(t) {
	return t.kind === 'trace' ? t.id : t.kind === 'inherited' ? INHERITED : 'no trace ID';
}
function filterOf(t) {
	return t.kind === 'trace' ? t.id : t.kind === 'inherited' ? 'inherited' : 'no trace';
}
function dataOf(t) {
	return t.kind === 'trace' ? t.id : t.kind === 'inherited' ? 'inherited' : '';
}

/* The JSON lines, read independently of the page: per trace, its CPU and wall time and its samples. */
function readRecords(file) {
	const traces = new Map();
	for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
		if (!line.trim())
			continue;
		const r = JSON.parse(line);
		if (r.origin !== 'sampling' && r.origin !== 'wall')
			continue;
		if (r.origin === 'request') {
			/* a request's span: the trace's elapsed time, in the page's own test */
			continue;
		}
		/* the time of goroutines whose request had ended is a row of its own, no trace's */
		const key = r.trace_id !== null ? r.trace_id : r.inherited_trace_id ? INHERITED : null;
		if (!traces.has(key))
			traces.set(key, { id: key === INHERITED ? null : key, kind: key === INHERITED ? 'inherited' : key === null ? 'none' : 'trace',
				cpu: 0, wall: 0, cpuSamples: 0, records: [], waits: new Map(), services: new Set() });
		const t = traces.get(key);
		t.records.push(r);
		/* the page names a service as its records do, by service_name, else by comm */
		t.services.add(r.service_name || r.comm);
		r.start_us = parseTime(r.start);
		if (r.origin === 'sampling') {
			t.cpu += r.cpu_ns;
			t.cpuSamples += r.samples;
		} else {
			t.wall += r.wall_ns;
			const cat = r.state === 'waiting' ? r.wait_reason || 'waiting' : r.state;
			t.waits.set(cat, (t.waits.get(cat) || 0) + r.wall_ns);
		}
	}
	return traces;
}

async function launch() {
	return puppeteer.launch({
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		headless: true,
		/* as root, and on a machine whose network is closed: nothing in the background */
		args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
			'--disable-component-update', '--disable-sync', '--disable-default-apps', '--mute-audio'],
	});
}

/* A page that records what it says and asks for: console errors and warnings, script errors, requests. */
async function openPage(browser, width, height) {
	const page = await browser.newPage();
	await page.setViewport({ width, height });
	const seen = { console: [], errors: [], requests: [] };
	page.on('console', (m) => {
		if (m.type() === 'error' || m.type() === 'warn' || m.type() === 'warning')
			seen.console.push(m.type() + ': ' + m.text());
	});
	page.on('pageerror', (e) => seen.errors.push(e.message));
	page.on('request', (r) => seen.requests.push(r.url()));
	return { page, seen };
}

async function load(page, file) {
	const t0 = Date.now();
	await page.goto('file://' + path.resolve(file), { waitUntil: 'load', timeout: 60000 });
	await page.waitForSelector('body[data-ready="true"]', { timeout: 60000 });
	return Date.now() - t0;
}

function cleanLoad(seen, file, what) {
	const url = 'file://' + path.resolve(file);
	const others = seen.requests.filter((u) => u !== url);
	ok(seen.console.length === 0 && seen.errors.length === 0,
		what + ': no console error or warning, no script error' +
		(seen.console.length + seen.errors.length ? ': ' + seen.console.concat(seen.errors).slice(0, 3).join(' | ') : ''));
	ok(others.length === 0, what + ': no request but the page itself (' + seen.requests.length + ' in all' +
		(others.length ? ': ' + others.slice(0, 3).join(' ') : '') + ')');
}

async function setInput(page, sel, text) {
	await page.$eval(sel, (e) => {
		e.value = '';
	});
	await page.type(sel, text);
}

/* the row a filter for trace T leaves, as the table draws it */
async function rowFor(page, t) {
	await setInput(page, '#filter', filterOf(t));
	return page.evaluate((id) => {
		const rows = Array.from(document.querySelectorAll('#tbody .tr'));
		const r = rows.find((x) => x.dataset.trace === id);
		if (!r)
			return { rows: rows.length };
		const cell = (c) => r.querySelector('[data-col="' + c + '"]');
		const cut = Array.from(r.querySelectorAll('.num')).filter((e) => e.scrollWidth > e.clientWidth + 0.5);
		return {
			rows: rows.length,
			cpu: cell('cpu').textContent,
			wall: cell('wall').querySelector('.num').textContent,
			count: document.getElementById('filter-count').textContent,
			service: cell('service').textContent,
			barPx: Array.from(cell('wall').querySelectorAll('.bar span')).reduce((s, e) => s + e.getBoundingClientRect().width, 0),
			cut: cut.map((e) => '"' + e.textContent + '" in ' + (e.closest('[data-col]') || e).dataset.col),
		};
	}, dataOf(t));
}

/* shares of the graph's width: named frames (not the zoomed one's ancestors), and the root */
async function flameShares(page, box, names) {
	return page.evaluate((box, names) => {
		const frames = Array.from(document.querySelectorAll(box + ' .frame'));
		const root = frames.find((f) => f.style.top === '0px');
		const width = (f) => f.getBoundingClientRect().width;
		const out = { root: root ? width(root) + 1 : 0, names: {} };
		for (const n of names) {
			const boxes = frames.filter((f) => f.dataset.name === n && !f.classList.contains('ancestor'));
			out.names[n] = { px: boxes.reduce((s, f) => s + width(f) + 1, 0), boxes: boxes.length };
		}
		return out;
	}, box, names);
}

function sharesOf(records, names, value) {
	const total = records.reduce((s, r) => s + value(r), 0);
	const out = {};
	for (const n of names) {
		let v = 0;
		for (const r of records)
			for (const st of r.stacks)
				if (st.frames.some((f) => f.func === n))
					v += (value(r) * st.samples) / r.samples;
		out[n] = total ? v / total : 0;
	}
	return out;
}

/* a sample or look that no other of its lane and half overlaps */
function isolated(marks, m) {
	return marks.every((o) => o === m || o.lane !== m.lane || o.cpu !== m.cpu ||
		o.end <= m.end - m.dur + 1 || o.end - o.dur >= m.end - 1);
}

/* the timeline's scale and place, as the canvas says it drew them */
async function timelineView(page) {
	const v = await page.$eval('#timeline-canvas', (c) => {
		const b = c.getBoundingClientRect();
		return Object.assign({}, c.dataset, { x: b.left, y: b.top, width: b.width });
	});
	const left = +v.left, v0 = +v.v0, v1 = +v.v1;
	const pxPerUs = (v.width - left) / (v1 - v0);
	return {
		pxPerUs, y: v.y, axis: +v.axisHeight, laneH: +v.laneHeight, top: +v.top,
		lanes: v.lanes ? v.lanes.split(',') : [],
		xOf: (t) => v.x + left + (t - v0) * pxPerUs,
		left: v.x + left,
		right: v.x + v.width,
	};
}

async function checkTrace(page, t, shots, name, first) {
	const label = t.kind === 'trace' ? t.id.slice(0, 8) + '…' : nameOf(t);
	await setInput(page, '#filter', filterOf(t));
	await page.click('#tbody .tr');
	await page.waitForFunction((id) => document.getElementById('trace-title').textContent === id, {}, nameOf(t));
	const cpuRecs = t.records.filter((r) => r.origin === 'sampling');
	const wallRecs = t.records.filter((r) => r.origin === 'wall');
	/* CPU flame graph: each named function's share of the width, against its samples */
	const funcs = new Set();
	for (const r of cpuRecs)
		for (const st of r.stacks)
			if (st.frames.length)
				funcs.add(st.frames[0].func);
	const named = Array.from(funcs).filter((f) => f.startsWith('main.')).slice(0, 4);
	if (named.length) {
		const want = sharesOf(cpuRecs, named, (r) => r.cpu_ns);
		const got = await flameShares(page, '#flame-cpu', named);
		for (const n of named) {
			const share = got.names[n].px / got.root;
			ok(Math.abs(share - want[n]) <= 0.01 + (got.names[n].boxes + 1) / got.root,
				name + ' ' + label + ': CPU flame graph, ' + n + ' is ' + (100 * share).toFixed(2) + '% of the width, ' +
				(100 * want[n]).toFixed(2) + '% of the samples');
		}
	}
	/* wall flame graph: each wait, the leaf, against the records' wall_ns */
	if (wallRecs.length) {
		const cats = Array.from(t.waits.keys());
		const got = await flameShares(page, '#flame-wall', cats.map((c) => '[' + c + ']'));
		for (const c of cats) {
			const share = got.names['[' + c + ']'].px / got.root, want = t.waits.get(c) / t.wall;
			ok(Math.abs(share - want) <= 0.01 + (got.names['[' + c + ']'].boxes + 1) / got.root,
				name + ' ' + label + ': wall flame graph, [' + c + '] is ' + (100 * share).toFixed(2) + '% of the width, ' +
				(100 * want).toFixed(2) + '% of wall_ns');
		}
	}
	/* the timeline: every timed sample, at its time, in its goroutine's lane */
	const marks = [];
	let samples = 0, timed = 0;
	for (const r of t.records) {
		const per = (r.origin === 'sampling' ? r.cpu_ns : r.wall_ns) / r.samples / 1000;
		samples += r.samples;
		for (const st of r.stacks) {
			const times = st.times_us || [];
			for (let i = 0; i < times.length; i++) {
				const w = st.weights ? st.weights[i] : 1;
				timed += w;
				marks.push({ end: r.start_us + times[i], goid: st.goids[i], lane: r.pid + ':' + st.goids[i], cpu: r.origin === 'sampling', dur: w * per, stack: st });
			}
		}
	}
	const tl = await page.$eval('#timeline-canvas', (c) => Object.assign({}, c.dataset, { width: c.getBoundingClientRect().width }));
	ok(+tl.marks === marks.length && +tl.samples === timed && +tl.untimed === samples - timed,
		name + ' ' + label + ': the timeline holds ' + tl.marks + ' marks for ' + tl.samples + ' samples (' + tl.untimed +
		' untimed); the records: ' + marks.length + ' times for ' + timed + ' samples of ' + samples);
	/* every lane in the order drawn (a request's goroutine without samples too), and those with samples */
	const lanes = tl.lanes ? tl.lanes.split(',') : [];
	const marked = tl.marked ? tl.marked.split(',') : [];
	const goids = new Set(marks.map((m) => m.lane));
	ok(marked.length === goids.size && marked.every((g) => goids.has(g)),
		name + ' ' + label + ': one lane per goroutine of each process (' + marked.length + ': ' + marked.slice(0, 6).join(',') + ')');
	/* hover a few samples that stand alone: the tooltip names their time and leaf */
	const picks = [];
	for (const cpu of [true, false]) {
		const alone = marks.filter((m) => m.cpu === cpu && isolated(marks, m));
		for (let i = 0; i < Math.min(3, alone.length); i++)
			picks.push(alone[Math.floor((i * alone.length) / 3)]);
	}
	let hovered = 0;
	for (const m of picks) {
		await page.$eval('#timeline-canvas', (c) => c.scrollIntoView({ block: 'center' }));
		/* the lane in view: the timeline scrolls its lanes under its axis */
		const lane = lanes.indexOf(m.lane);
		await page.$eval('#timeline', (b, y) => {
			b.scrollTop = y;
		}, Math.max(0, lane * +tl.laneHeight - 60));
		await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
		let view = await timelineView(page);
		/* too narrow to point at: drag over the time around it, as a person zooms in */
		if (m.dur * view.pxPerUs < 8) {
			const a = m.end - m.dur / 2 - 20 * m.dur, b = m.end - m.dur / 2 + 20 * m.dur;
			await page.mouse.move(Math.max(view.xOf(a), view.left + 1), view.y + 30);
			await page.mouse.down();
			await page.mouse.move(Math.min(view.xOf(b), view.right - 1), view.y + 30, { steps: 4 });
			await page.mouse.up();
			view = await timelineView(page);
		}
		const x = view.xOf(m.end - m.dur / 2);
		const y = view.y + view.axis + lane * view.laneH - view.top + (m.cpu ? 6 : 15);
		await page.mouse.move(x, y);
		const text = await page.$eval('#tip', (e) => (e.hidden ? '' : e.textContent));
		const leaf = m.stack.frames.length ? m.stack.frames[0].func : '(no frames';
		if (ok(text.includes(clock(m.end)) && text.includes(leaf),
			name + ' ' + label + ': hovering the ' + (m.cpu ? 'CPU sample' : 'wall look') + ' at ' + clock(m.end) +
			' (goroutine ' + m.goid + ') shows its time and its leaf ' + leaf + (text ? '' : ': no tooltip')))
			hovered++;
		if (first && hovered === 1) {
			await page.screenshot({ path: path.join(shots, name + '-timeline-hover.png') });
			await page.mouse.down();
			await page.mouse.up();
			const pinned = await page.$eval('#pinned', (e) => (e.hidden ? '' : e.textContent));
			ok(pinned.includes(clock(m.end)) && pinned.includes(leaf), name + ' ' + label + ': a click pins that sample\'s stack below the timeline');
		}
		/* a double-click zooms out again */
		await page.mouse.click(x, y, { clickCount: 2 });
	}
	if (!picks.length)
		ok(marks.length === 0, name + ' ' + label + ': no sample stands alone on the timeline to hover (' + marks.length + ' marks)');
	await page.mouse.move(1, 1);
	if (first)
		await page.screenshot({ path: path.join(shots, name + '-trace.png'), fullPage: true });
	/* hovering a frame: its function, where, its time and its share */
	if (named.length) {
		await page.$eval('#flame-cpu', (e) => e.scrollIntoView({ block: 'center' }));
		const fr = await page.$('#flame-cpu .frame[data-name="' + named[0] + '"]');
		if (fr) {
			await fr.hover();
			const tip = await page.$eval('#tip', (e) => (e.hidden ? '' : e.textContent));
			ok(tip.startsWith(named[0]) && /\.go:\d+/.test(tip) && / (ms|s|µs), [0-9.]+% of this graph/.test(tip),
				name + ' ' + label + ': hovering ' + named[0] + ' shows its function, file:line, time and share: "' + tip.slice(0, 120) + '"');
		}
	}
	/* the search: the share it reports is the functions' */
	if (named.length) {
		await setInput(page, '#search', named[0]);
		const res = await page.$eval('#search-result', (e) => e.textContent);
		const want = sharesOf(cpuRecs, [named[0]], (r) => r.cpu_ns)[named[0]];
		const m = /matched: ([0-9.]+)% of CPU/.exec(res);
		ok(m && Math.abs(parseFloat(m[1]) - 100 * want) <= 0.06,
			name + ' ' + label + ': searching ' + named[0] + ' says "' + res + '" (' + (100 * want).toFixed(2) + '% of its samples)');
		const marked = await page.$$eval('#flame-cpu .frame.match', (f) => f.length);
		ok(marked > 0, name + ' ' + label + ': ... and highlights ' + marked + ' frames');
		if (first)
			await page.screenshot({ path: path.join(shots, name + '-search.png'), fullPage: true });
		await setInput(page, '#search', '');
		/* a click zooms: the frame then takes the whole width */
		await page.$eval('#flame-cpu', (e) => e.scrollIntoView());
		const fr = await page.$('#flame-cpu .frame[data-name="' + named[0] + '"]');
		if (fr) {
			await fr.click();
			const z = await page.evaluate((n) => {
				const f = Array.from(document.querySelectorAll('#flame-cpu .frame')).find((x) => x.dataset.name === n && !x.classList.contains('ancestor'));
				return f ? f.getBoundingClientRect().width / document.getElementById('flame-cpu').clientWidth : 0;
			}, named[0]);
			ok(z > 0.98, name + ' ' + label + ': a click on ' + named[0] + ' zooms it to ' + (100 * z).toFixed(1) + '% of the width');
		}
	}
}

async function pageMode(file, jsonl, shots, name) {
	const traces = readRecords(jsonl);
	const browser = await launch();
	const { page, seen } = await openPage(browser, 1400, 1000);
	const ms = await load(page, file);
	console.log('# ' + name + ': drawn in ' + ms + ' ms');
	await page.screenshot({ path: path.join(shots, name + '-table.png') });
	/* the table: every trace, with the records' CPU and wall time */
	const count = await page.$eval('#filter-count', (e) => e.textContent);
	ok(count === traces.size + ' trace' + (traces.size === 1 ? '' : 's'), name + ': the table counts ' + count + ' for ' + traces.size + ' trace IDs in the records');
	for (const t of traces.values()) {
		const label = nameOf(t);
		const row = await rowFor(page, t);
		if (!ok(row.cpu !== undefined, name + ': a row for ' + label + ' (' + row.rows + ' rows shown)'))
			continue;
		const cpu = parseDuration(row.cpu), wall = parseDuration(row.wall);
		ok(within(cpu, t.cpu, 0.01) && within(wall, t.wall, 0.01),
			name + ': ' + label + ': CPU "' + row.cpu + '", wall "' + row.wall + '" against ' + t.cpu + ' and ' + t.wall + ' ns in the records');
		/* issue 44: bars among the traced rows, every figure whole, services as the records name them */
		ok(!t.wall || row.barPx >= 1, name + ': ' + label + ': its wall bar is ' + row.barPx.toFixed(1) + ' px wide for ' + t.wall + ' ns');
		ok(row.cut.length === 0, name + ': ' + label + ': no figure cut in its row' + (row.cut.length ? ': ' + row.cut.join(', ') : ''));
		const services = Array.from(t.services).sort().join(', ');
		ok(row.service === services, name + ': ' + label + ': the service "' + row.service + '", as its records name it: "' + services + '"');
	}
	/* a prefix of a trace ID filters to the traces that start with it */
	const some = Array.from(traces.values()).find((t) => t.id !== null);
	if (some) {
		const prefix = some.id.slice(0, 3);
		await setInput(page, '#filter', prefix);
		const ids = await page.$$eval('#tbody .tr', (rs) => rs.map((r) => r.dataset.trace));
		const want = Array.from(traces.keys()).filter((k) => k !== null && k.startsWith(prefix));
		ok(ids.length === want.length && ids.every((i) => i.startsWith(prefix)),
			name + ': the prefix ' + prefix + ' keeps ' + ids.length + ' rows, the traces that start with it: ' + want.length);
	}
	/* each column sorts, one way and then the other */
	await setInput(page, '#filter', '');
	for (const [col, key] of [['cpu', 'cpu'], ['wall', 'wall'], ['id', 'id'], ['first', 'first']]) {
		for (const dir of ['descending', 'ascending']) {
			/* as a person does: click the header until its arrow points the way wanted */
			for (let i = 0; i < 3; i++) {
				const th = await page.$('.th[data-key="' + col + '"]');
				if ((await th.evaluate((e) => e.getAttribute('aria-sort'))) === dir)
					break;
				await th.click();
			}
			const shown = await page.$$eval('#tbody .tr', (rs, col) => rs.sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top)).map((r) => {
				const c = r.querySelector('[data-col="' + col + '"]');
				const n = c.querySelector('[data-ns]') || c;
				return col === 'id' ? r.dataset.trace || '~' : col === 'first' ? c.textContent : +n.dataset.ns;
			}), col);
			const sorted = shown.slice().sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
			if (dir === 'descending')
				sorted.reverse();
			ok(JSON.stringify(shown) === JSON.stringify(sorted), name + ': a click on the ' + key + ' column sorts it ' + dir + ' (' + shown.length + ' rows shown)');
		}
	}
	/* a label filter */
	const first = Array.from(traces.values()).find((t) => t.id !== null && Object.keys(t.records[0].labels).some((k) => !/trace/.test(k)));
	if (first) {
		const k = Object.keys(first.records[0].labels).find((k) => !/trace/.test(k));
		const v = first.records[0].labels[k];
		const want = Array.from(traces.values()).filter((t) => t.records.some((r) => r.labels[k] === v)).map(dataOf).sort();
		await setInput(page, '#filter', k + '=' + v);
		const got = (await page.$$eval('#tbody .tr', (rs) => rs.map((r) => r.dataset.trace))).sort();
		ok(JSON.stringify(got) === JSON.stringify(want), name + ': the filter ' + k + '=' + v + ' keeps ' + got.length + ' rows, the traces with that label: ' + want.length);
	}
	/* one trace after another: their flame graphs and timelines */
	const ordered = Array.from(traces.values()).sort((a, b) => (a.id === null) - (b.id === null) || b.cpu + b.wall - a.cpu - a.wall);
	let n = 0;
	for (const t of ordered)
		await checkTrace(page, t, shots, name, n++ === 0);
	/* the whole run, by trace */
	await page.click('#tab-run');
	await page.waitForSelector('#flame-run .frame');
	const ids = ordered.filter((t) => t.cpu > 0).map(nameOf);
	const got = await flameShares(page, '#flame-run', ids);
	const total = ordered.reduce((s, t) => s + t.cpu, 0);
	for (const t of ordered.filter((t) => t.cpu > 0)) {
		const id = nameOf(t);
		const share = got.names[id].px / got.root;
		ok(Math.abs(share - t.cpu / total) <= 0.01 + 2 / got.root,
			name + ': whole run, ' + id.slice(0, 8) + ' holds ' + (100 * share).toFixed(2) + '% of the width, ' + (100 * t.cpu / total).toFixed(2) + '% of the CPU');
	}
	await page.screenshot({ path: path.join(shots, name + '-run.png'), fullPage: true });
	await page.click('#run-wall');
	await page.screenshot({ path: path.join(shots, name + '-run-wall.png'), fullPage: true });
	cleanLoad(seen, file, name);
	await browser.close();
}

/*
 * The JSON lines' allocations, read independently of the page: per trace
 * (as the page keys rows), its alloc records' bytes, objects and samples,
 * and every record's first start, for the table's order among equals.
 */
function readAllocs(file) {
	const traces = new Map();
	for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
		if (!line.trim())
			continue;
		const r = JSON.parse(line);
		if (r.origin === 'request')
			continue;
		const key = r.trace_id !== null ? r.trace_id : r.inherited_trace_id ? INHERITED : null;
		if (!traces.has(key))
			traces.set(key, { id: key === INHERITED ? null : key, kind: key === INHERITED ? 'inherited' : key === null ? 'none' : 'trace',
				bytes: 0, objects: 0, samples: 0, records: [] });
		const t = traces.get(key);
		if (r.origin !== 'alloc')
			continue;
		t.records.push(r);
		t.bytes += r.alloc_bytes;
		t.objects += r.alloc_objects;
		t.samples += r.samples;
	}
	return traces;
}

/* each function's share of T's allocated bytes, by the stacks that hold it */
function allocShares(t, names) {
	const out = {};
	for (const n of names) {
		let v = 0;
		for (const r of t.records)
			for (const st of r.stacks)
				if (st.frames.some((f) => f.func === n))
					v += st.alloc_bytes;
		out[n] = t.bytes ? v / t.bytes : 0;
	}
	return out;
}

/*
 * A page of a recording with --alloc: the table's allocated bytes per
 * trace are the records' (and sort), each trace's allocation flame graph
 * gives its allocating functions their share of its bytes, with objects
 * on hover; the timeline draws no allocation; the whole run's allocated
 * bytes give each trace its share.
 */
async function allocMode(file, jsonl, shots, name) {
	const traces = readAllocs(jsonl);
	const browser = await launch();
	const { page, seen } = await openPage(browser, 1400, 1000);
	await load(page, file);
	const heads = await page.$$eval('.th', (e) => e.map((h) => h.dataset.key));
	ok(heads.join(',') === 'id,service,pid,cpu,alloc,elapsed,wall,first,last', name + ': the table has an allocated bytes column after CPU: ' + heads.join(','));
	await page.screenshot({ path: path.join(shots, name + '-table.png') });
	for (const t of traces.values()) {
		const label = nameOf(t);
		await setInput(page, '#filter', filterOf(t));
		const row = await page.evaluate((id) => {
			const r = Array.from(document.querySelectorAll('#tbody .tr')).find((x) => x.dataset.trace === id);
			const c = r && r.querySelector('[data-col="alloc"]');
			return c ? { text: c.textContent, bytes: +c.dataset.bytes, title: c.title } : null;
		}, dataOf(t));
		if (!ok(row !== null, name + ': a row for ' + label + ' with an allocated bytes cell'))
			continue;
		const shown = parseBytes(row.text);
		ok(Math.abs(row.bytes - t.bytes) <= 1 && within(shown, t.bytes, 0.005),
			name + ': ' + label + ': allocated "' + row.text + '" (' + row.bytes + ' bytes), the records\' alloc_bytes: ' + t.bytes);
	}
	/* the column sorts, most first and then least first */
	await setInput(page, '#filter', '');
	for (const dir of ['descending', 'ascending']) {
		for (let i = 0; i < 3; i++) {
			const th = await page.$('.th[data-key="alloc"]');
			if ((await th.evaluate((e) => e.getAttribute('aria-sort'))) === dir)
				break;
			await th.click();
		}
		const got = await page.$$eval('#tbody .tr', (rs) => rs.sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
			.map((r) => r.dataset.trace));
		const want = Array.from(traces.values()).sort((a, b) => (dir === 'descending' ? b.bytes - a.bytes : a.bytes - b.bytes)).map(dataOf);
		ok(JSON.stringify(got) === JSON.stringify(want), name + ': a click on the allocated column sorts it ' + dir + ': ' +
			got.map((x) => (x ? '…' + x.slice(-2) : 'none')).join(' '));
	}
	/* each traced trace: its allocation flame graph, its facts, and no allocation on its timeline */
	let first = true;
	for (const t of Array.from(traces.values()).filter((x) => x.kind === 'trace' && x.bytes > 0)) {
		const label = t.id.slice(0, 8) + '…' + t.id.slice(-2);
		await setInput(page, '#filter', t.id);
		await page.click('#tbody .tr');
		await page.waitForFunction((id) => document.getElementById('trace-title').textContent === id, {}, t.id);
		const leaves = new Set();
		for (const r of t.records)
			for (const st of r.stacks)
				if (st.frames.length)
					leaves.add(st.frames[0].func);
		const named = Array.from(leaves).filter((f) => f.startsWith('main.'));
		const want = allocShares(t, named);
		const got = await flameShares(page, '#flame-alloc', named);
		for (const n of named) {
			const share = got.names[n].px / got.root;
			ok(got.names[n].boxes > 0 && Math.abs(share - want[n]) <= 0.01 + (got.names[n].boxes + 1) / got.root,
				name + ' ' + label + ': its allocation flame graph names ' + n + ', ' + (100 * share).toFixed(2) + '% of the width, ' +
				(100 * want[n]).toFixed(2) + '% of its alloc_bytes');
		}
		const total = await page.$eval('#alloc-total', (e) => e.textContent);
		ok(within(parseBytes(total.split(' in ')[0]), t.bytes, 0.005), name + ' ' + label + ': the graph\'s total "' + total + '"');
		if (named.length) {
			await page.$eval('#flame-alloc', (e) => e.scrollIntoView({ block: 'center' }));
			const fr = await page.$('#flame-alloc .frame[data-name="' + named[0] + '"]');
			await fr.hover();
			const tip = await page.$eval('#tip', (e) => (e.hidden ? '' : e.textContent));
			const m = /allocated: ([0-9.]+ [kMGT]?B) in ([0-9,]+) objects?, ([0-9.]+)% of this graph/.exec(tip);
			const objects = t.records.reduce((s, r) => s + r.stacks.filter((st) => st.frames.some((f) => f.func === named[0]))
				.reduce((a, st) => a + st.alloc_objects, 0), 0);
			ok(m && Math.abs(+m[2].replace(/,/g, '') - objects) <= 1,
				name + ' ' + label + ': hovering ' + named[0] + ' shows its bytes and objects: "' + tip.slice(-90) + '" (the records: ' + objects + ' objects)');
			if (first)
				await page.screenshot({ path: path.join(shots, name + '-trace.png'), fullPage: true });
			await page.mouse.move(1, 1);
		}
		const facts = await page.$eval('#trace-facts', (dl) => {
			const dt = Array.from(dl.querySelectorAll('dt')).find((d) => d.textContent === 'Allocated');
			return dt ? dt.nextElementSibling.textContent : '';
		});
		ok(facts.includes(t.samples.toLocaleString('en-US') + ' sampled allocation'), name + ' ' + label + ': its facts say "' + facts + '"');
		/* the timeline holds the CPU samples and looks only: an allocation is bytes, not time */
		const timed = await page.$eval('#timeline-canvas', (c) => +c.dataset.marks);
		ok(timed === countTimes(jsonl, t.id), name + ' ' + label + ': its timeline draws ' + timed + ' marks, its CPU and wall samples\' times, none of its ' +
			t.samples + ' allocations');
		first = false;
	}
	/* the whole run, by allocated bytes: each trace its share */
	await page.click('#tab-run');
	await page.click('#run-alloc');
	await page.waitForSelector('#flame-run .frame');
	const all = Array.from(traces.values()).filter((t) => t.bytes > 0);
	const sum = all.reduce((s, t) => s + t.bytes, 0);
	const got = await flameShares(page, '#flame-run', all.map(nameOf));
	for (const t of all) {
		const share = got.names[nameOf(t)].px / got.root;
		ok(Math.abs(share - t.bytes / sum) <= 0.01 + 2 / got.root,
			name + ': whole run by allocated bytes, ' + (t.id ? t.id.slice(0, 8) + '…' + t.id.slice(-2) : nameOf(t)) + ' holds ' + (100 * share).toFixed(2) + '% of the width, ' +
			(100 * t.bytes / sum).toFixed(2) + '% of the bytes');
	}
	await page.screenshot({ path: path.join(shots, name + '-run.png'), fullPage: true });
	cleanLoad(seen, file, name);
	await browser.close();
}

/* the times of TRACE's CPU samples and wall looks in the JSON lines: what its timeline draws */
function countTimes(jsonl, trace) {
	let n = 0;
	for (const line of fs.readFileSync(jsonl, 'utf8').split('\n')) {
		if (!line.trim())
			continue;
		const r = JSON.parse(line);
		if (r.trace_id === trace && (r.origin === 'sampling' || r.origin === 'wall'))
			for (const st of r.stacks)
				n += (st.times_us || []).length;
	}
	return n;
}

/*
 * A page of hostile records: what they hold is shown as text, and nothing
 * in them runs. EXPECT lists, per trace to open, its labels and process
 * name as the records hold them.
 */
async function hostileMode(file, expectFile, shots, name) {
	const cases = JSON.parse(fs.readFileSync(expectFile, 'utf8'));
	const browser = await launch();
	const { page, seen } = await openPage(browser, 1400, 1000);
	await load(page, file);
	for (const c of cases) {
		const label = c.trace === null ? 'no trace ID' : c.trace.slice(0, 8) + '…';
		await setInput(page, '#filter', c.trace === null ? 'no trace' : c.trace);
		await page.click('#tbody .tr');
		await page.waitForFunction((id) => document.getElementById('trace-title').textContent === id, {}, c.trace === null ? 'no trace ID' : c.trace);
		const state = await page.evaluate(() => ({
			pwned: window.__pwned === undefined ? null : String(window.__pwned),
			scripts: document.scripts.length,
			imgs: document.images.length,
			chips: Array.from(document.querySelectorAll('#trace-labels .chip')).map((c) => c.textContent),
			comm: document.querySelector('#tbody .tr [data-col="service"]').textContent,
		}));
		ok(state.pwned === null && state.scripts === 2 && state.imgs === 0,
			name + ' ' + label + ': nothing in the labels ran or became markup (scripts ' + state.scripts + ', images ' + state.imgs +
			', window.__pwned ' + state.pwned + ')');
		const cut = (v, max) => (v.length <= max ? v : v.slice(0, max) + '… (' + v.length.toLocaleString('en-US') + ' characters)');
		for (const [k, v] of Object.entries(c.labels)) {
			/* past 200 characters the chip says how many there are (the JSON writer keeps strings under 1 MiB) */
			const shown = v.length <= 200 ? state.chips.includes(cut(k, 80) + '=' + v) :
				state.chips.some((x) => {
					const m = /… \(([0-9,]+) characters\)$/.exec(x);
					return x.startsWith(cut(k, 80) + '=' + v.slice(0, 200) + '… (') && m && Math.abs(+m[1].replace(/,/g, '') - v.length) <= 16;
				});
			ok(shown, name + ' ' + label + ': the label ' + JSON.stringify(cut(k, 40)) + ' is shown as its text (' + v.length + ' characters' +
				(v.length > 200 ? ', cut at 200 and said so' : '') + ')');
		}
		ok(state.comm === c.comm, name + ' ' + label + ': the service name ' + JSON.stringify(c.comm) + ' is shown as text');
		await page.screenshot({ path: path.join(shots, name + '-' + label.replace(/[^0-9a-z]/g, '') + '.png'), fullPage: true });
	}
	cleanLoad(seen, file, name);
	await browser.close();
}

/*
 * The same page in Firefox (Debian's firefox-esr, through WebDriver BiDi):
 * it loads clean, lists every trace, and draws a trace's graphs and
 * timeline.
 */
async function firefoxMode(file, jsonl, shots) {
	const traces = readRecords(jsonl);
	const browser = await puppeteer.launch({ browser: 'firefox', executablePath: process.env.FIREFOX || '/usr/bin/firefox-esr', headless: true });
	const { page, seen } = await openPage(browser, 1400, 1000);
	const ms = await load(page, file);
	const version = await browser.version();
	const count = await page.$eval('#filter-count', (e) => e.textContent);
	ok(count === traces.size + ' trace' + (traces.size === 1 ? '' : 's'), 'firefox (' + version + '): the page loads in ' + ms + ' ms and lists ' + count);
	const t = Array.from(traces.values()).find((x) => x.id !== null && x.cpu > 0);
	await setInput(page, '#filter', t.id);
	await page.click('#tbody .tr');
	await page.waitForFunction((id) => document.getElementById('trace-title').textContent === id, {}, t.id);
	const got = await page.evaluate(() => ({
		cpu: document.querySelectorAll('#flame-cpu .frame').length,
		wall: document.querySelectorAll('#flame-wall .frame').length,
		marks: +document.getElementById('timeline-canvas').dataset.marks,
	}));
	const marks = t.records.reduce((n, r) => n + r.stacks.reduce((m, st) => m + (st.times_us || []).length, 0), 0);
	ok(got.cpu > 1 && got.marks === marks, 'firefox: ' + t.id.slice(0, 8) + '… draws ' + got.cpu + ' CPU and ' + got.wall +
		' wall frames and ' + got.marks + ' timeline marks (the records: ' + marks + ')');
	await page.screenshot({ path: path.join(shots, 'firefox-trace.png'), fullPage: true });
	/* Firefox reports the favicon's data: URL as a request; nothing else may be one */
	seen.requests = seen.requests.filter((u) => !u.startsWith('data:'));
	cleanLoad(seen, file, 'firefox');
	await browser.close();
}

/*
 * A page past its bounds says so: every trace in the table, the rule in
 * the page, a trace left out says why, and the whole run keeps its samples
 * as "other traces".
 */
async function cutMode(file, expectFile, shots) {
	const want = JSON.parse(fs.readFileSync(expectFile, 'utf8'));
	const browser = await launch();
	const { page, seen } = await openPage(browser, 1400, 1000);
	await load(page, file);
	const count = await page.$eval('#filter-count', (e) => e.textContent);
	ok(count === want.total.toLocaleString('en-US') + ' traces', 'cut: the table lists every trace: ' + count);
	const note = await page.$eval('#cut', (e) => (e.hidden ? '' : e.textContent));
	ok(note.includes('the ' + want.full + ' costliest traces') && note.includes((want.total - want.full) + ' traces show their totals'),
		'cut: the page states its rule: "' + note.slice(0, 160) + '…"');
	await page.screenshot({ path: path.join(shots, 'cut-table.png') });
	await setInput(page, '#filter', want.cut_id);
	await page.click('#tbody .tr');
	await page.waitForSelector('#trace:not([hidden])');
	const why = await page.$eval('#trace-cut', (e) => (e.hidden ? '' : e.textContent));
	ok(why.includes('past the page\'s limit') && why.includes(want.cut_id), 'cut: a trace past the limit says so, and how to see it alone');
	const cpu = await page.$eval('#flame-cpu', (e) => e.textContent);
	ok(/stacks are not in this page/.test(cpu), 'cut: ... and draws no flame graph: "' + cpu.slice(0, 80) + '"');
	await setInput(page, '#filter', want.full_id);
	await page.click('#tbody .tr');
	await page.waitForFunction((id) => document.getElementById('trace-title').textContent === id, {}, want.full_id);
	const frames = await page.$$eval('#flame-cpu .frame', (f) => f.length);
	ok(frames > 1, 'cut: a trace within the limit has its flame graph (' + frames + ' frames)');
	await page.click('#tab-run');
	await page.waitForSelector('#flame-run .frame');
	const other = 'other traces (' + (want.total - want.full) + ')';
	const got = await flameShares(page, '#flame-run', [other]);
	const share = got.names[other].px / got.root;
	ok(Math.abs(share - (want.total - want.full) / want.total) <= 0.01 + 2 / got.root,
		'cut: the whole run keeps their samples as "' + other + '", ' + (100 * share).toFixed(1) + '% of the width');
	await page.screenshot({ path: path.join(shots, 'cut-run.png'), fullPage: true });
	cleanLoad(seen, file, 'cut');
	await browser.close();
}

/* Our file in speedscope itself: it opens, and every profile has the name we gave it. */
async function speedscopeMode(file, namesFile, index, shots) {
	const want = JSON.parse(fs.readFileSync(namesFile, 'utf8'));
	const browser = await launch();
	const { page, seen } = await openPage(browser, 1400, 900);
	await page.goto('file://' + path.resolve(index), { waitUntil: 'load' });
	const input = await page.waitForSelector('input[type=file]');
	await input.uploadFile(path.resolve(file));
	const title = () => page.evaluate(() => (/^(.*) \((\d+)\/(\d+)\)$/m.exec(document.body.innerText) || []).slice(1));
	await page.waitForFunction(() => /\(\d+\/\d+\)$/m.test(document.body.innerText), { timeout: 30000 });
	const names = [];
	let shotTrace = false;
	for (let i = 0; i < want.length + 1; i++) {
		const [n, k] = await title();
		if (names.length && names[names.length - 1][1] === k)
			break;
		names.push([n, k]);
		if (i === 0)
			await page.screenshot({ path: path.join(shots, 'speedscope-run.png') });
		if (!shotTrace && n && n.endsWith(' · CPU') && !n.startsWith('whole run')) {
			await page.screenshot({ path: path.join(shots, 'speedscope-trace.png') });
			shotTrace = true;
		}
		await page.keyboard.press('n');
		await page.waitForFunction((k) => !new RegExp('\\(' + k + '/').test(document.body.innerText), { timeout: 2000 }, k).catch(() => {});
	}
	const got = names.map((x) => x[0]);
	ok(JSON.stringify(got) === JSON.stringify(want), 'speedscope opens the file with its ' + want.length + ' profiles named as written (' +
		got.slice(0, 3).join('; ') + (got.length > 3 ? '; …' : '') + ')' + (JSON.stringify(got) === JSON.stringify(want) ? '' : ': got ' + JSON.stringify(got.slice(0, 6))));
	ok(seen.errors.length === 0 && !seen.console.some((c) => c.startsWith('error')),
		'speedscope: no script error' + (seen.errors.length ? ': ' + seen.errors[0] : ''));
	await browser.close();
}

/* make bench: how long the page takes to draw, and to answer a click on its costliest trace */
async function timingMode(file) {
	const browser = await launch();
	const { page } = await openPage(browser, 1400, 1000);
	const ms = await load(page, file);
	const nav = await page.evaluate(() => {
		const n = performance.getEntriesByType('navigation')[0];
		return {
			dom: n.domContentLoadedEventEnd, load: n.loadEventEnd, response: n.responseEnd, interactive: n.domInteractive,
			start: +document.body.dataset.scriptStart, script: +document.body.dataset.scriptMs,
		};
	});
	const click = await page.evaluate(async () => {
		const row = document.querySelector('#tbody .tr');
		const t0 = performance.now();
		row.click();
		await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
		return performance.now() - t0;
	});
	const run = await page.evaluate(async () => {
		const t0 = performance.now();
		document.getElementById('tab-run').click();
		await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
		return performance.now() - t0;
	});
	console.log(JSON.stringify({
		ready_ms: ms, response_ms: Math.round(nav.response), script_start_ms: nav.start, script_ms: nav.script,
		load_event_ms: Math.round(nav.load), click_ms: Math.round(click), whole_run_ms: Math.round(run),
	}));
	await browser.close();
}

/* One trace's view, as the README shows it: the window scrolled to the trace. */
/*
 * A page converted from the records of two services, each recorded into a
 * file of its own (FILES, comma-separated): every trace's CPU summed over
 * both, both services named, a trace's facts per service, its timeline's
 * lanes grouped by service under a lane that names each, and the time
 * goroutines kept after their request ended in a row of its own.
 */
async function servicesMode(file, files, shots, name) {
	const traces = new Map();
	for (const f of files.split(','))
		for (const [k, t] of readRecords(f)) {
			const all = traces.get(k);
			if (!all) {
				traces.set(k, t);
				continue;
			}
			all.cpu += t.cpu;
			all.wall += t.wall;
			all.records.push(...t.records);
			t.services.forEach((v) => all.services.add(v));
		}
	const browser = await launch();
	const { page, seen } = await openPage(browser, 1400, 1000);
	await load(page, file);
	const note = await page.$eval('#cut', (e) => (e.hidden ? '' : e.textContent));
	ok(files.split(',').every((f) => note.includes(path.basename(f))), name + ': the page names its files: "' + note + '"');
	for (const t of traces.values()) {
		const row = await rowFor(page, t);
		const label = nameOf(t);
		if (!ok(row.cpu !== undefined, name + ': a row for ' + label))
			continue;
		const cpu = parseDuration(row.cpu), wall = parseDuration(row.wall);
		ok(within(cpu, t.cpu, 0.01) && within(wall, t.wall, 0.01),
			name + ': ' + label + ': CPU "' + row.cpu + '", goroutine time "' + row.wall + '", the sums over both files: ' +
			(t.cpu / 1e6).toFixed(1) + ' ms and ' + (t.wall / 1e6).toFixed(1) + ' ms');
		const services = Array.from(t.services).sort().join(', ');
		ok(row.service === services, name + ': ' + label + ': the services "' + row.service + '", as the records name them: "' + services + '"');
		if (t.kind !== 'trace')
			continue;
		await setInput(page, '#filter', filterOf(t));
		await page.click('#tbody .tr');
		await page.waitForFunction((id) => document.getElementById('trace-title').textContent === id, {}, nameOf(t));
		const facts = await page.$eval('#trace-facts', (dl) => {
			const dd = Array.from(dl.querySelectorAll('dd')).find((d) => d.dataset.services);
			return dd ? JSON.parse(dd.dataset.services) : [];
		});
		for (const sv of Array.from(t.services).sort()) {
			const f = facts.find((x) => x.name === sv);
			const want = t.records.filter((r) => (r.service_name || r.comm) === sv && r.origin === 'sampling').reduce((a, r) => a + r.cpu_ns, 0);
			const pids = Array.from(new Set(t.records.filter((r) => (r.service_name || r.comm) === sv).map((r) => r.pid))).sort();
			ok(f && within(f.cpu, want, 0.001) && JSON.stringify(f.pids.sort()) === JSON.stringify(pids) && f.elapsed > 0,
				name + ' ' + label.slice(0, 8) + '…: ' + sv + ': CPU ' + (f ? (f.cpu / 1e6).toFixed(2) : '?') + ' ms (records ' + (want / 1e6).toFixed(2) +
				'), pids ' + (f ? f.pids.join(',') : '?') + ' (records ' + pids.join(',') + '), elapsed ' + (f && f.elapsed ? (f.elapsed / 1e6).toFixed(1) + ' ms' : 'none'));
		}
		const groups = JSON.parse(await page.$eval('#timeline-canvas', (c) => c.dataset.groups || '[]'));
		const heads = groups.filter((g) => g.startsWith('#')).map((g) => g.slice(1));
		/* each service's lanes in one block, right under the lane that names it */
		let block = true, cur = null;
		const done = new Set();
		for (const g of groups) {
			if (g.startsWith('#')) {
				if (done.has(g.slice(1)))
					block = false;
				cur = g.slice(1);
				done.add(cur);
			} else if (g !== cur) {
				block = false;
			}
		}
		ok(JSON.stringify(heads.slice().sort()) === JSON.stringify(Array.from(t.services).sort()) && block,
			name + ' ' + label.slice(0, 8) + '…: the timeline\'s lanes grouped by service, under ' + heads.join(', ') + ' (' + groups.length + ' lanes)');
	}
	await page.screenshot({ path: path.join(shots, name + '-services.png'), fullPage: true });
	cleanLoad(seen, file, name);
	await browser.close();
}

async function shotMode(file, trace, out) {
	const browser = await launch();
	const { page } = await openPage(browser, 1280, 900);
	await page.goto('file://' + path.resolve(file) + '#trace=' + trace, { waitUntil: 'load' });
	await page.waitForSelector('body[data-ready="true"]');
	await page.$eval('#trace', (e) => e.scrollIntoView({ block: 'start' }));
	await page.evaluate(() => window.scrollBy(0, -70));
	await page.screenshot({ path: out });
	await browser.close();
}

(async () => {
	const [mode, ...a] = process.argv.slice(2);
	try {
		if (mode === 'page')
			await pageMode(a[0], a[1], a[2], a[3]);
		else if (mode === 'alloc')
			await allocMode(a[0], a[1], a[2], a[3]);
		else if (mode === 'hostile')
			await hostileMode(a[0], a[1], a[2], a[3]);
		else if (mode === 'speedscope')
			await speedscopeMode(a[0], a[1], a[2], a[3]);
		else if (mode === 'firefox')
			await firefoxMode(a[0], a[1], a[2]);
		else if (mode === 'cut')
			await cutMode(a[0], a[1], a[2]);
		else if (mode === 'timing')
			await timingMode(a[0]);
		else if (mode === 'shot')
			await shotMode(a[0], a[1], a[2]);
		else if (mode === 'services')
			await servicesMode(a[0], a[1], a[2], a[3]);
		else
			throw new Error('unknown mode ' + mode);
	} catch (e) {
		ok(false, mode + ': ' + (e && e.stack ? e.stack.split('\n').slice(0, 3).join(' ') : e));
	}
	process.exit(failures ? 1 : 0);
})();
