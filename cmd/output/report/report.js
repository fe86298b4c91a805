// SPDX-License-Identifier: GPL-2.0
// report.js: draws the report page from the records ctxprof-go put in it: the traces, one trace's flame graphs and timeline, the whole run.
//
// Everything the page shows comes from the JSON in #ctxprof-data; nothing
// is fetched, and every string from the records reaches the page as text
// (textContent, never markup). The format of that JSON is written by
// cmd/output/report.c; its fields are the records' (ctxprof-go(8)), with
// names, frames and label sets listed once and referred to by index.
'use strict';

(function () {
	const started = performance.now();
	const D = JSON.parse(document.getElementById('ctxprof-data').textContent);
	/* records and stacks come as rows: objects of their fields' names from here on */
	const RF = D.record_fields, SF = D.stack_fields;
	D.records = D.records.map((row) => {
		const r = {};
		for (let i = 0; i < RF.length; i++)
			r[RF[i]] = row[i];
		r.origin = D.origins[r.origin];
		r.full = !!r.full;
		r.start_us += D.time_base_us;
		r.end_us += D.time_base_us;
		r.stacks = r.stacks.map((srow) => {
			const st = {};
			for (let i = 0; i < srow.length; i++)
				st[SF[i]] = srow[i];
			/* times and goids come each after the one before; weights, when all are 1, empty */
			const t = st.times_us, g = st.goids;
			for (let i = 1; i < t.length; i++) {
				t[i] += t[i - 1];
				g[i] += g[i - 1];
			}
			if (st.weights && !st.weights.length && t.length)
				st.weights = null;
			return st;
		});
		return r;
	});
	const S = D.strings;
	const LABELS = D.labelsets;
	const FRAMES = D.frames;
	const NO_TRACE = 'no trace ID';
	/* the time goroutines spent after the request they inherited a trace from had ended */
	const INHERITED = 'inherited, request ended';
	/* the files the records came from: more than one, a request seen from several hosts */
	const INPUTS = D.inputs && D.inputs.length ? D.inputs : [D.source];
	/* allocations (--alloc): a column, a flame graph per trace and one of the whole run; else none of them */
	const HAS_ALLOC = D.records.some((r) => r.origin === 'alloc') || D.others.some((o) => o.origin === 'alloc');

	/* ---- small helpers ---- */

	function $(id) {
		return document.getElementById(id);
	}

	function str(i) {
		return i === undefined || i === null || i < 0 ? null : S[i];
	}

	/* the time some of REQUESTS was in flight, in ns: a request counted once where they overlap */
	function inFlight(requests) {
		const iv = requests.map((q) => [q.start_us, q.start_us + q.dur_us]).sort((a, b) => a[0] - b[0]);
		let us = 0, lo = -Infinity, hi = -Infinity;
		for (const [a, b] of iv) {
			if (a > hi) {
				if (hi > lo)
					us += hi - lo;
				lo = a;
			}
			hi = Math.max(hi, b);
		}
		if (hi > lo)
			us += hi - lo;
		return us * 1000;
	}

	/* elapsed, as the table and the facts say it: "~" when no request's span is known */
	function fmtElapsed(t) {
		if (!t.elapsed)
			return '–';
		return (t.spanned ? '' : '~') + fmtNs(t.elapsed);
	}

	/* a record's service: as its SDK names it (service_name), else the process's comm */
	function serviceOf(r) {
		return r.service_name >= 0 ? str(r.service_name) : str(r.comm);
	}

	function el(tag, cls, text) {
		const e = document.createElement(tag);
		if (cls)
			e.className = cls;
		if (text !== undefined && text !== null)
			e.textContent = text;
		return e;
	}

	/* a duration in ns, to 3 or 4 significant digits: what the table shows */
	/* at most 4 digits before the point, so that a figure fits its column: 999.96 ms is 1.00 s */
	function fmtNs(ns) {
		if (Math.round(ns) < 1e3)
			return Math.round(ns) + ' ns';
		for (const [unit, name] of [[1e3, ' µs'], [1e6, ' ms']]) {
			const s = (ns / unit).toFixed(ns / unit < 10 ? 2 : 1);
			if (+s < 1000)
				return s + name;
		}
		return (ns / 1e9).toFixed(ns < 1e11 ? 3 : ns < 1e13 ? 1 : 0) + ' s';
	}

	/* bytes in powers of 1000, as the exit summary's MB: at most 4 digits before the point */
	function fmtBytes(b) {
		if (Math.round(b) < 1e3)
			return Math.round(b) + ' B';
		for (const [unit, name] of [[1e3, ' kB'], [1e6, ' MB'], [1e9, ' GB']]) {
			const s = (b / unit).toFixed(b / unit < 10 ? 2 : 1);
			if (+s < 1000)
				return s + name;
		}
		return (b / 1e12).toFixed(b < 1e13 ? 2 : 1) + ' TB';
	}

	function pad(n, w) {
		return String(n).padStart(w, '0');
	}

	/* microseconds since the epoch as a UTC clock time, to the millisecond (or microsecond) */
	function fmtClock(us, micro) {
		const d = new Date(Math.floor(us / 1000));
		const frac = micro ? pad(Math.floor(us % 1e6), 6) : pad(d.getUTCMilliseconds(), 3);
		return pad(d.getUTCHours(), 2) + ':' + pad(d.getUTCMinutes(), 2) + ':' + pad(d.getUTCSeconds(), 2) + '.' + frac;
	}

	function fmtDate(us) {
		const d = new Date(Math.floor(us / 1000));
		return d.getUTCFullYear() + '-' + pad(d.getUTCMonth() + 1, 2) + '-' + pad(d.getUTCDate(), 2);
	}

	function pct(x) {
		return (100 * x).toFixed(x < 0.1 ? 2 : 1) + '%';
	}

	/* 1234567 as "1,234,567" (toLocaleString costs tens of ms on its first call) */
	function grouped(n) {
		return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
	}

	function plural(n, one, many) {
		return grouped(n) + ' ' + (n === 1 ? one : many || one + 's');
	}

	/* a long label value is shown cut, saying how long it was */
	function shortValue(v, max) {
		return v.length <= max ? v : v.slice(0, max) + '… (' + plural(v.length, 'character') + ')';
	}

	function hash(s) {
		let h = 2166136261;
		for (let i = 0; i < s.length; i++)
			h = Math.imul(h ^ s.charCodeAt(i), 16777619);
		return h >>> 0;
	}

	/* ---- colours: CPU, each state and wait reason; frames by package ---- */

	const CPU_COLOR = '#e8590c';
	/* a request in flight, on the timeline */
	const SPAN_COLOR = '#1f2933';
	/* a Map: a wait reason is whatever the binary names it, "constructor" too */
	const WAIT_COLORS = new Map([
		['running', '#f59f00'],
		['runnable', '#fcc419'],
		['syscall', '#9c36b5'],
		['waiting', '#495057'],
		['chan receive', '#1971c2'],
		['chan send', '#4dabf7'],
		['select', '#0b7285'],
		['sleep', '#74c0fc'],
		['IO wait', '#2f9e44'],
		['sync.Mutex.Lock', '#c2255c'],
		['sync.RWMutex.Lock', '#e64980'],
		['sync.RWMutex.RLock', '#f783ac'],
		['sync.WaitGroup.Wait', '#5f3dc4'],
		['sync.Cond.Wait', '#364fc7'],
		['semacquire', '#ae3ec9'],
	]);
	const OTHER_WAITS = ['#1864ab', '#087f5b', '#5c940d', '#862e9c', '#0c8599', '#3b5bdb', '#a61e4d', '#2b8a3e'];

	function waitColor(cat) {
		return WAIT_COLORS.get(cat) || OTHER_WAITS[hash(cat) % OTHER_WAITS.length];
	}

	/* what a wall record was doing: its wait reason when waiting, else its state */
	function category(r) {
		const state = str(r.state);
		if (state === 'waiting')
			return str(r.wait_reason) || 'waiting';
		return state || 'running';
	}

	function packageOf(name) {
		const paren = name.indexOf('(');
		const head = paren > 0 ? name.slice(0, paren) : name;
		const slash = head.lastIndexOf('/');
		const dot = head.indexOf('.', slash + 1);
		return dot > 0 ? head.slice(0, dot) : head;
	}

	function frameColor(node) {
		if (node.kind === 'wait')
			return waitColor(node.name.slice(1, -1));
		if (node.kind === 'trace')
			return '#a5d8ff';
		if (node.kind === 'comm')
			return '#d0bfff';
		if (node.kind === 'role')
			return node.name === ROLES[1] ? '#ffd8a8' : '#e9ecef';
		if (node.kind === 'root')
			return '#dee2e6';
		const pkg = packageOf(node.name);
		if (pkg === 'runtime' || pkg.startsWith('runtime/') || pkg.startsWith('internal/'))
			return 'hsl(210, 12%, ' + (72 + (hash(node.name) % 10)) + '%)';
		if (node.name.startsWith('0x') || node.name.startsWith('['))
			return '#e9ecef';
		const h = hash(pkg);
		return 'hsl(' + (8 + (h % 42)) + ', ' + (62 + (h >> 8) % 20) + '%, ' + (62 + (hash(node.name) % 12)) + '%)';
	}

	/* ---- the model: one row per trace ID ---- */

	const traces = new Map(); /* trace_id string index (-1: none, -2: inherited) -> trace */
	let allFirst = Infinity, allLast = -Infinity, allCpu = 0, allWall = 0, allAlloc = 0;
	const allPids = new Set();

	/* a process, as the lanes and the counts know it: its pid on its input's host */
	function procKey(r) {
		return INPUTS.length > 1 ? r.input + ':' + r.pid : String(r.pid);
	}

	for (let i = 0; i < D.records.length; i++) {
		const r = D.records[i];
		const key = r.trace_id >= 0 ? r.trace_id : r.inherited_trace_id >= 0 ? -2 : -1;
		let t = traces.get(key);
		if (!t) {
			t = {
				key,
				id: str(r.trace_id),
				kind: key >= 0 ? 'trace' : key === -2 ? 'inherited' : 'none',
				name: key >= 0 ? str(r.trace_id) : key === -2 ? INHERITED : NO_TRACE,
				comms: new Set(),
				services: new Map(),
				pids: new Set(),
				cpu: 0,
				wall: 0,
				cpuSamples: 0,
				wallSamples: 0,
				allocBytes: 0,
				allocObjects: 0,
				allocSamples: 0,
				waits: new Map(),
				first: Infinity,
				last: -Infinity,
				records: [],
				full: r.full,
				labelsets: new Set(),
			};
			traces.set(key, t);
		}
		t.records.push(r);
		t.comms.add(serviceOf(r));
		t.pids.add(r.pid);
		t.labelsets.add(r.labels);
		allPids.add(procKey(r));
		/* per service: what the trace cost there, and in which processes */
		let sv = t.services.get(serviceOf(r));
		if (!sv) {
			sv = { name: serviceOf(r), pids: new Set(), cpu: 0, wall: 0, alloc: 0 };
			t.services.set(sv.name, sv);
		}
		sv.pids.add(r.pid);
		if (r.origin === 'sampling') {
			t.cpu += r.cpu_ns;
			t.cpuSamples += r.samples;
			sv.cpu += r.cpu_ns;
			allCpu += r.cpu_ns;
		} else if (r.origin === 'alloc') {
			/* an allocation is a moment of the trace: in its first and last, as a sample is */
			t.allocBytes += r.alloc_bytes;
			t.allocObjects += r.alloc_objects;
			t.allocSamples += r.samples;
			sv.alloc += r.alloc_bytes;
			allAlloc += r.alloc_bytes;
		} else {
			const cat = category(r);
			t.wall += r.wall_ns;
			t.wallSamples += r.samples;
			t.waits.set(cat, (t.waits.get(cat) || 0) + r.wall_ns);
			sv.wall += r.wall_ns;
			allWall += r.wall_ns;
		}
		t.first = Math.min(t.first, r.start_us);
		t.last = Math.max(t.last, r.end_us);
		allFirst = Math.min(allFirst, r.start_us);
		allLast = Math.max(allLast, r.end_us);
	}
	/* the requests: when each was in flight, on which goroutine, in which service */
	const RQ = D.request_fields || [];
	for (const row of D.requests || []) {
		const q = {};
		for (let i = 0; i < RQ.length; i++)
			q[RQ[i]] = row[i];
		q.start_us += D.time_base_us;
		const t = traces.get(q.trace_id);
		if (!t)
			continue;
		(t.requests || (t.requests = [])).push(q);
		const sv = t.services.get(str(q.service));
		if (sv)
			(sv.requests || (sv.requests = [])).push(q);
	}
	for (const [key, ns, n] of D.elapsed || []) {
		const t = traces.get(key);
		if (t) {
			t.elapsed = ns;
			t.nrequests = n;
		}
	}
	const rows = Array.from(traces.values());
	for (const t of rows) {
		/* no request's span known: from the trace's first sample to its last */
		t.spanned = t.elapsed !== undefined;
		if (!t.spanned)
			t.elapsed = t.kind === 'trace' ? Math.max(0, t.last - t.first) * 1000 : 0;
	}
	let maxWall = 0;
	/* the traced rows are the ones compared: the untraced one, most often far longer, is drawn apart */
	for (const t of rows) {
		t.service = Array.from(t.comms).sort().join(', ');
		t.pidList = Array.from(t.pids).sort((a, b) => a - b);
		if (t.kind === 'trace')
			maxWall = Math.max(maxWall, t.wall);
	}

	/* ---- the tooltip ---- */

	const tip = $('tip');

	function showTip(ev, parts) {
		tip.replaceChildren();
		for (const [cls, text] of parts) {
			const line = el('div', cls, text);
			tip.appendChild(line);
		}
		tip.hidden = false;
		const w = tip.offsetWidth, h = tip.offsetHeight;
		let x = ev.clientX + 14, y = ev.clientY + 14;
		if (x + w > window.innerWidth - 4)
			x = Math.max(4, ev.clientX - w - 14);
		if (y + h > window.innerHeight - 4)
			y = Math.max(4, ev.clientY - h - 14);
		tip.style.left = x + 'px';
		tip.style.top = y + 'px';
	}

	function hideTip() {
		tip.hidden = true;
	}

	/* a function's name and where: "main.burn  /src/main.go:12" */
	function frameText(id) {
		const f = FRAMES[id];
		const file = str(f[1]);
		return file ? S[f[0]] + '  ' + file + ':' + f[2] : S[f[0]];
	}

	/* ---- flame graphs: a tree of frames, the root on top ---- */

	function newNode(name, kind, parent) {
		return { name, kind, parent, value: 0, objects: 0, kids: null, lines: null };
	}

	function child(node, name, kind) {
		if (!node.kids)
			node.kids = new Map();
		let c = node.kids.get(name);
		if (!c) {
			c = newNode(name, kind, node);
			node.kids.set(name, c);
		}
		return c;
	}

	/*
	 * adds one stack (frame IDs, leaf first) under NODE, with VALUE, and a
	 * leaf such as [chan receive]; an allocation's stack also its OBJECTS
	 */
	function addStack(node, frames, value, leaf, objects) {
		objects = objects || 0;
		node.value += value;
		node.objects += objects;
		for (let i = frames.length - 1; i >= 0; i--) {
			const f = FRAMES[frames[i]];
			node = child(node, S[f[0]], 'frame');
			node.value += value;
			node.objects += objects;
			if (f[1] >= 0) {
				const where = S[f[1]] + ':' + f[2];
				if (!node.lines)
					node.lines = new Map();
				node.lines.set(where, (node.lines.get(where) || 0) + value);
			}
		}
		if (leaf) {
			node = child(node, leaf, 'wait');
			node.value += value;
		}
	}

	function searchPattern(text) {
		text = text.trim();
		if (!text)
			return null;
		const m = /^\/(.*)\/([a-z]*)$/.exec(text);
		if (m) {
			try {
				return new RegExp(m[1], m[2]);
			} catch (e) {
				return null;
			}
		}
		const lower = text.toLowerCase();
		return { test: (s) => s.toLowerCase().includes(lower) };
	}

	class Flame {
		constructor(box, what) {
			this.box = box;
			this.what = what; /* "CPU", "wall", "allocated" */
			this.bytes = false; /* values are bytes allocated (and objects), not ns */
			this.root = null;
			this.zoomed = null;
			this.pattern = null;
			this.onOpen = null;
			box.addEventListener('mousemove', (ev) => this.hover(ev));
			box.addEventListener('mouseleave', hideTip);
			box.addEventListener('click', (ev) => {
				const n = ev.target.closest('.frame');
				if (n && n._node)
					this.zoom(n._node === this.zoomed ? n._node.parent || n._node : n._node);
			});
			box.addEventListener('dblclick', (ev) => {
				const n = ev.target.closest('.frame');
				if (n && n._node && n._node.kind === 'trace' && this.onOpen)
					this.onOpen(n._node);
			});
			window.addEventListener('resize', () => this.render());
		}

		/* a new tree, drawn once, with what the search box holds highlighted */
		set(root, empty, pattern) {
			this.root = root;
			this.zoomed = root;
			this.empty = empty;
			this.pattern = pattern;
			this.render();
		}

		zoom(node) {
			this.zoomed = node;
			this.render();
		}

		highlight(pattern) {
			this.pattern = pattern;
			this.render();
			return this.matched();
		}

		/* the share of the whole that matching frames hold, each counted once (not inside another match) */
		matched() {
			if (!this.pattern || !this.root || !this.root.value)
				return null;
			let sum = 0;
			const walk = (n) => {
				if (n !== this.root && this.pattern.test(n.name)) {
					sum += n.value;
					return;
				}
				if (n.kids)
					for (const c of n.kids.values())
						walk(c);
			};
			walk(this.root);
			return sum / this.root.value;
		}

		render() {
			const box = this.box;
			box.replaceChildren();
			box.classList.toggle('searching', !!this.pattern);
			if (!this.root || !this.root.value) {
				box.appendChild(el('div', 'empty', this.empty || 'No samples.'));
				box.style.height = '';
				return;
			}
			const W = box.clientWidth;
			const ROW = 18;
			const z = this.zoomed;
			const frag = document.createDocumentFragment();
			let depth = 0, drawn = 0;
			/* the zoomed frame's ancestors, full width */
			const chain = [];
			for (let n = z; n; n = n.parent)
				chain.unshift(n);
			for (let d = 0; d < chain.length - 1; d++)
				frag.appendChild(this.box_(chain[d], 0, W, d, true));
			const scale = W / z.value;
			const place = (n, x, d) => {
				const w = n.value * scale;
				if (w < 0.5 || drawn > 20000)
					return;
				frag.appendChild(this.box_(n, x, w, d, false));
				drawn++;
				depth = Math.max(depth, d);
				if (!n.kids)
					return;
				const kids = Array.from(n.kids.values()).sort((a, b) => b.value - a.value || (a.name < b.name ? -1 : 1));
				for (const c of kids) {
					place(c, x, d + 1);
					x += c.value * scale;
				}
			};
			place(z, 0, chain.length - 1);
			box.style.height = (depth + 1) * ROW + 2 + 'px';
			box.appendChild(frag);
		}

		box_(n, x, w, d, ancestor) {
			const e = el('div', 'frame');
			e._node = n;
			e.dataset.name = n.name;
			e.style.left = x + 'px';
			e.style.top = d * 18 + 'px';
			e.style.width = Math.max(w - 1, 0.5) + 'px';
			e.style.background = frameColor(n);
			if (ancestor)
				e.classList.add('ancestor');
			if (w < 24)
				e.classList.add('narrow');
			else
				e.textContent = n.name;
			if (this.pattern && n.kind !== 'root' && this.pattern.test(n.name))
				e.classList.add('match');
			return e;
		}

		hover(ev) {
			const t = ev.target.closest('.frame');
			if (!t || !t._node) {
				hideTip();
				return;
			}
			const n = t._node;
			const parts = [['t', n.name]];
			if (n.lines) {
				const lines = Array.from(n.lines.entries()).sort((a, b) => b[1] - a[1]);
				for (const [where, v] of lines.slice(0, 3))
					parts.push(['s', where + (lines.length > 1 ? '  (' + pct(v / n.value) + ')' : '')]);
				if (lines.length > 3)
					parts.push(['s', '… ' + plural(lines.length - 3, 'more line')]);
			}
			const amount = this.bytes ? fmtBytes(n.value) + ' in ' + plural(Math.round(n.objects), 'object') : fmtNs(n.value);
			parts.push(['', this.what + ': ' + amount + ', ' + pct(n.value / this.root.value) + ' of this graph']);
			if (this.zoomed !== this.root && this.zoomed.value)
				parts.push(['', pct(n.value / this.zoomed.value) + ' of ' + this.zoomed.name]);
			if (n.kind === 'trace' && this.onOpen)
				parts.push(['', 'double-click to open this trace']);
			showTip(ev, parts);
		}
	}

	/* ---- the timeline of one trace: a lane per goroutine, each sample at its time ---- */

	const LANE_H = 22, AXIS_H = 22, LABEL_W = 76;

	/*
	 * The canvas is as tall as the box shows (the axis stays on top), and
	 * draws the lanes scrolled into view: thousands of goroutines cost what
	 * a dozen do. The box scrolls over a spacer as tall as every lane.
	 */
	class Timeline {
		constructor(box, canvas, space) {
			this.box = box;
			this.canvas = canvas;
			this.space = space;
			this.marks = [];
			this.lanes = [];
			this.drag = null;
			this.onRange = null;
			this.onPick = null;
			canvas.addEventListener('mousemove', (ev) => this.move(ev));
			canvas.addEventListener('mouseleave', () => {
				hideTip();
				if (this.drag) {
					this.drag = null;
					this.draw();
				}
			});
			canvas.addEventListener('mousedown', (ev) => {
				const x = Math.max(LABEL_W, this.x(ev));
				this.drag = { x0: x, x1: x };
			});
			canvas.addEventListener('mouseup', (ev) => this.up(ev));
			canvas.addEventListener('dblclick', () => this.setView(this.t0, this.t1, true));
			box.addEventListener('scroll', () => this.draw());
			window.addEventListener('resize', () => this.draw());
		}

		/* the trace's samples as marks: [start, end] in µs since the epoch, lane, kind, colour, stack */
		set(trace) {
			const marks = [];
			const laneOf = new Map();
			let untimed = 0, samples = 0;
			for (const r of trace.records) {
				/*
				 * a mark is as wide as the time it stands for, and an
				 * allocation stands for bytes: drawn as time it would make a
				 * goroutine that allocates look busy. Allocations have their
				 * own flame graph, which a span dragged here selects too.
				 */
				if (r.origin === 'alloc')
					continue;
				const cpu = r.origin === 'sampling';
				const per = (cpu ? r.cpu_ns : r.wall_ns) / r.samples / 1000; /* µs a sample stands for */
				const cat = cpu ? 'CPU' : category(r);
				const color = cpu ? CPU_COLOR : waitColor(cat);
				for (const st of r.stacks) {
					const times = st.times_us || [];
					let timed = 0;
					for (let i = 0; i < times.length; i++) {
						const end = r.start_us + times[i];
						const w = st.weights ? st.weights[i] : 1;
						/* goids are per process: a lane is a process's goroutine (a pid per host) */
						const goid = st.goids[i], key = procKey(r) + ':' + goid;
						let lane = laneOf.get(key);
						if (!lane) {
							lane = { key, pid: r.pid, goid, first: end, marks: [], service: serviceOf(r) };
							laneOf.set(key, lane);
						}
						lane.first = Math.min(lane.first, end);
						const m = { t0: end - w * per, t1: end, goid, cpu, cat, color, w, rec: r, stack: st };
						marks.push(m);
						lane.marks.push(m);
						timed += w;
					}
					samples += timed;
					untimed += st.samples - timed;
				}
			}
			/* each request in flight, on the lane of the goroutine it ran on */
			let spans = 0;
			for (const q of trace.requests || []) {
				const key = (INPUTS.length > 1 ? q.input + ':' + q.pid : String(q.pid)) + ':' + q.goid;
				let lane = laneOf.get(key);
				if (!lane) {
					lane = { key, pid: q.pid, goid: q.goid, first: q.start_us, marks: [], service: str(q.service) };
					laneOf.set(key, lane);
				}
				(lane.spans || (lane.spans = [])).push(q);
				lane.first = Math.min(lane.first, q.start_us);
				spans++;
			}
			this.spans = spans;
			const lanes = Array.from(laneOf.values());
			this.pids = new Set(lanes.map((l) => l.pid)).size;
			/*
			 * a request seen in several services: their lanes grouped by
			 * service, each group under a lane that names it (its samples
			 * on its own host's clock)
			 */
			const services = new Set(lanes.map((l) => l.service));
			const firstOf = new Map();
			for (const l of lanes)
				firstOf.set(l.service, Math.min(firstOf.get(l.service) ?? Infinity, l.first));
			lanes.sort((a, b) => (services.size > 1 ? firstOf.get(a.service) - firstOf.get(b.service) || a.service.localeCompare(b.service) : 0) ||
				a.first - b.first || a.pid - b.pid || a.goid - b.goid);
			this.lanes = [];
			for (const l of lanes) {
				if (services.size > 1 && (!this.lanes.length || this.lanes[this.lanes.length - 1].service !== l.service)) {
					const sv = trace.services.get(l.service);
					this.lanes.push({ header: true, key: 'service:' + l.service, service: l.service, marks: [],
						text: l.service + ' · CPU ' + fmtNs(sv ? sv.cpu : 0) +
							(sv && sv.requests ? ' · elapsed ' + fmtNs(inFlight(sv.requests)) : '') +
							(D.wall_period_ns ? ' · goroutine time ' + fmtNs(sv ? sv.wall : 0) : '') +
							' · pid ' + (sv ? Array.from(sv.pids).sort((a, b) => a - b).join(', ') : '') });
				}
				this.lanes.push(l);
			}
			this.lanes.forEach((l, i) => {
				l.index = i;
				l.marks.sort((a, b) => a.t1 - b.t1);
				for (const m of l.marks)
					m.lane = i;
			});
			this.marks = marks;
			this.samples = samples;
			this.untimed = untimed;
			let t0 = Infinity, t1 = -Infinity;
			for (const m of marks) {
				t0 = Math.min(t0, m.t0);
				t1 = Math.max(t1, m.t1);
			}
			for (const q of trace.requests || []) {
				t0 = Math.min(t0, q.start_us);
				t1 = Math.max(t1, q.start_us + q.dur_us);
			}
			if (!marks.length && !spans) {
				t0 = trace.first;
				t1 = trace.last;
			}
			if (t1 <= t0)
				t1 = t0 + 1000;
			const padUs = (t1 - t0) * 0.01;
			this.t0 = t0 - padUs;
			this.t1 = t1 + padUs;
			/* a scroll draws too: only when there is one to undo */
			if (this.box.scrollTop)
				this.box.scrollTop = 0;
			this.setView(this.t0, this.t1, false);
		}

		setView(v0, v1, tell) {
			this.v0 = v0;
			this.v1 = v1;
			this.draw();
			if (tell && this.onRange)
				this.onRange(v0 === this.t0 && v1 === this.t1 ? null : [v0, v1]);
		}

		x(ev) {
			return ev.clientX - this.canvas.getBoundingClientRect().left;
		}

		xOf(t, W) {
			return LABEL_W + ((t - this.v0) / (this.v1 - this.v0)) * (W - LABEL_W);
		}

		draw() {
			const c = this.canvas;
			const W = this.box.clientWidth;
			if (!W)
				return;
			const total = AXIS_H + Math.max(1, this.lanes.length) * LANE_H;
			const H = Math.min(total, 420);
			const top = Math.min(this.box.scrollTop, total - H);
			const dpr = window.devicePixelRatio || 1;
			this.space.style.height = total - H + 'px';
			if (c.width !== Math.round(W * dpr) || c.height !== Math.round(H * dpr)) {
				c.width = Math.round(W * dpr);
				c.height = Math.round(H * dpr);
				c.style.height = H + 'px';
			}
			const g = c.getContext('2d');
			g.setTransform(dpr, 0, 0, dpr, 0, 0);
			g.clearRect(0, 0, W, H);
			/* the page's own font: a family the canvas must look up delays its first draw */
			g.font = '11px "DejaVu Sans", "Liberation Sans", Arial, sans-serif';
			const first = Math.max(0, Math.floor(top / LANE_H)), last = Math.min(this.lanes.length, Math.ceil((top + H - AXIS_H) / LANE_H));
			const yOf = (i) => AXIS_H + i * LANE_H - top;
			g.save();
			g.beginPath();
			g.rect(0, AXIS_H, W, H - AXIS_H);
			g.clip();
			for (let i = first; i < last; i++) {
				const l = this.lanes[i], y = yOf(i);
				if (l.header) {
					g.fillStyle = '#e9ecef';
					g.fillRect(0, y, W, LANE_H);
					g.fillStyle = '#1f2933';
					g.font = 'bold 11px "DejaVu Sans", "Liberation Sans", Arial, sans-serif';
					g.fillText(l.text, 6, y + 15);
					g.font = '11px "DejaVu Sans", "Liberation Sans", Arial, sans-serif';
					continue;
				}
				g.fillStyle = i % 2 ? '#f8f9fa' : '#ffffff';
				g.fillRect(0, y, W, LANE_H);
				g.fillStyle = '#5f6b7a';
				/* the process too when the trace spans several */
				g.fillText((this.pids > 1 ? l.pid + ' ' : '') + (l.goid ? 'g' + l.goid : 'no g'), 6, y + 15);
			}
			/*
			 * marks: CPU in the upper half of a lane, the wall clock's in
			 * the lower; neighbours of one colour that touch on screen are
			 * one rectangle (a goroutine parked for a minute is one, not
			 * a thousand looks)
			 */
			let drawn = 0, fill = '';
			const flush = (run, y) => {
				if (!run.color)
					return;
				if (fill !== run.color)
					g.fillStyle = fill = run.color;
				g.fillRect(run.x0, y, Math.max(1, run.x1 - run.x0), 9);
				run.color = '';
			};
			for (let i = first; i < last; i++) {
				const y = yOf(i), runs = [{ color: '' }, { color: '' }];
				for (const m of this.lanes[i].marks) {
					if (m.t1 < this.v0 || m.t0 > this.v1)
						continue;
					const x0 = Math.max(LABEL_W, Math.round(this.xOf(m.t0, W))), x1 = Math.round(this.xOf(m.t1, W));
					const run = runs[m.cpu ? 0 : 1];
					drawn++;
					if (run.color === m.color && x0 <= run.x1 + 1) {
						run.x1 = Math.max(run.x1, x1);
						continue;
					}
					flush(run, y + (m.cpu ? 2 : 11));
					run.color = m.color;
					run.x0 = x0;
					run.x1 = Math.max(x1, x0 + 1);
				}
				flush(runs[0], y + 2);
				flush(runs[1], y + 11);
				/* a request in flight on this goroutine: a line along the lane's middle */
				for (const q of this.lanes[i].spans || []) {
					if (q.start_us + q.dur_us < this.v0 || q.start_us > this.v1)
						continue;
					const x0 = Math.max(LABEL_W, this.xOf(q.start_us, W)), x1 = this.xOf(q.start_us + q.dur_us, W);
					g.fillStyle = SPAN_COLOR;
					g.fillRect(x0, y + 9, Math.max(1, x1 - x0), 2);
				}
			}
			g.restore();
			if (!this.lanes.length) {
				g.fillStyle = '#5f6b7a';
				g.fillText('No sample of this trace has its time.', LABEL_W, AXIS_H + 15);
			}
			/* axis: ticks at 1, 2 or 5 times a power of ten */
			g.fillStyle = '#ffffff';
			g.fillRect(0, 0, W, AXIS_H);
			const span = this.v1 - this.v0;
			const raw = span / Math.max(2, Math.floor((W - LABEL_W) / 110));
			const p10 = Math.pow(10, Math.floor(Math.log10(raw)));
			const step = [1, 2, 5, 10].map((k) => k * p10).find((s) => s >= raw);
			g.strokeStyle = '#e9ecef';
			g.fillStyle = '#5f6b7a';
			for (let t = Math.ceil((this.v0 - this.t0) / step) * step; this.t0 + t <= this.v1; t += step) {
				const x = this.xOf(this.t0 + t, W);
				g.beginPath();
				g.moveTo(x + 0.5, AXIS_H - 4);
				g.lineTo(x + 0.5, H);
				g.stroke();
				g.fillText(t ? '+' + fmtNs(t * 1000) : '0', x + 3, 13);
			}
			if (this.drag) {
				g.fillStyle = 'rgba(28, 109, 208, 0.15)';
				g.fillRect(Math.min(this.drag.x0, this.drag.x1), AXIS_H, Math.abs(this.drag.x1 - this.drag.x0), H - AXIS_H);
			}
			/* what a test, or a curious reader, can check against the records */
			const ds = c.dataset;
			ds.marks = this.marks.length;
			ds.samples = this.samples;
			ds.untimed = this.untimed;
			ds.drawn = drawn;
			ds.v0 = this.v0;
			ds.v1 = this.v1;
			ds.left = LABEL_W;
			ds.laneHeight = LANE_H;
			ds.axisHeight = AXIS_H;
			ds.top = top;
			/* every lane in order (headers as #service), and those with samples */
			ds.lanes = this.lanes.map((l) => (l.header ? '#' + l.service : l.key)).join(',');
			ds.marked = this.lanes.filter((l) => !l.header && l.marks.length).map((l) => l.key).join(',');
			ds.spans = this.spans;
			/* each lane's service, headers too: a test can see the groups */
			ds.groups = JSON.stringify(this.lanes.map((l) => (l.header ? '#' : '') + l.service));
		}

		/* the mark under the pointer: its lane and half, then the one it is on, else the nearest within 3 px */
		at(ev) {
			const rect = this.canvas.getBoundingClientRect();
			const x = ev.clientX - rect.left, y = ev.clientY - rect.top;
			const top = +this.canvas.dataset.top || 0;
			if (x < LABEL_W || y < AXIS_H)
				return null;
			const lane = Math.floor((y - AXIS_H + top) / LANE_H);
			if (lane < 0 || lane >= this.lanes.length || this.lanes[lane].header)
				return null;
			const cpu = (y - AXIS_H + top) % LANE_H < 11;
			const W = rect.width;
			const t = this.v0 + ((x - LABEL_W) / (W - LABEL_W)) * (this.v1 - this.v0);
			const tol = (3 / (W - LABEL_W)) * (this.v1 - this.v0);
			let best = null, bestD = Infinity;
			for (const m of this.lanes[lane].marks) {
				if (m.cpu !== cpu || m.t0 - tol > t || m.t1 + tol < t)
					continue;
				const out = t < m.t0 ? m.t0 - t : t > m.t1 ? t - m.t1 : 0;
				const d = out ? tol + out : Math.abs(t - (m.t0 + m.t1) / 2) / (m.t1 - m.t0 + 1);
				if (d < bestD) {
					best = m;
					bestD = d;
				}
			}
			return best;
		}

		describe(m) {
			const parts = [
				['t', (m.cpu ? 'CPU sample' : 'wall: ' + m.cat) + (m.w > 1 ? ' (' + m.w + ' snapshots)' : '')],
				['', fmtClock(m.t1, true) + ' UTC, +' + fmtNs((m.t1 - this.t0) * 1000) + ' into the trace'],
				['', (m.goid ? 'goroutine ' + m.goid : 'no goroutine') + ', ' + str(m.rec.comm) + ' (pid ' + m.rec.pid + ')'],
			];
			const f = m.stack.frames;
			for (let i = 0; i < Math.min(f.length, 16); i++)
				parts.push(['s', frameText(f[i])]);
			if (f.length > 16)
				parts.push(['s', '… ' + plural(f.length - 16, 'more frame')]);
			if (!f.length)
				parts.push(['s', '(no frames: a running goroutine\'s CPU samples say where it runs)']);
			return parts;
		}

		move(ev) {
			if (this.drag) {
				this.drag.x1 = Math.max(LABEL_W, this.x(ev));
				this.draw();
				return;
			}
			const m = this.at(ev);
			const lane = m ? null : this.laneAt(ev);
			if (m)
				showTip(ev, this.describe(m));
			else if (lane)
				showTip(ev, this.describeLane(lane));
			else
				hideTip();
		}

		/* the lane whose label is under the pointer */
		laneAt(ev) {
			const rect = this.canvas.getBoundingClientRect();
			const x = ev.clientX - rect.left, y = ev.clientY - rect.top;
			const i = Math.floor((y - AXIS_H + (+this.canvas.dataset.top || 0)) / LANE_H);
			return x < LABEL_W && y >= AXIS_H && i >= 0 && i < this.lanes.length ? this.lanes[i] : null;
		}

		/* a goroutine: what it runs (its outermost function of its own), and what it was seen doing */
		describeLane(l) {
			if (l.header)
				return [['t', l.text], ['', INPUTS.length > 1 ? 'its samples on its own host\'s clock' : '']].filter((p) => p[1]);
			let cpu = 0, looks = 0, deepest = null;
			for (const m of l.marks) {
				if (m.cpu)
					cpu++;
				else
					looks++;
				if (!deepest || m.stack.frames.length > deepest.length)
					deepest = m.stack.frames;
			}
			const own = (deepest || []).slice().reverse().map((id) => S[FRAMES[id][0]]).find((f) => !f.startsWith('runtime.'));
			return [
				['t', (l.goid ? 'goroutine ' + l.goid : 'no goroutine (the runtime\'s own work)') + ' of pid ' + l.pid],
				['', own ? 'runs ' + own : ''],
				['', plural(cpu, 'CPU sample') + ', ' + plural(looks, 'look') + ' of --wall'],
			].filter((p) => p[1]);
		}

		up(ev) {
			const d = this.drag;
			this.drag = null;
			if (d && Math.abs(d.x1 - d.x0) > 4) {
				const W = this.canvas.getBoundingClientRect().width;
				const tOf = (x) => this.v0 + ((Math.max(LABEL_W, x) - LABEL_W) / (W - LABEL_W)) * (this.v1 - this.v0);
				this.setView(tOf(Math.min(d.x0, d.x1)), tOf(Math.max(d.x0, d.x1)), true);
				return;
			}
			this.draw();
			const m = this.at(ev);
			if (m && this.onPick)
				this.onPick(this.describe(m));
		}
	}

	/* ---- the traces table ---- */

	const COLUMNS = [
		{ key: 'id', title: 'Trace ID', cls: 'id', sort: (a, b) => (a.id === null) - (b.id === null) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) },
		{ key: 'service', title: 'Service', sort: (a, b) => a.service.localeCompare(b.service) },
		{ key: 'pid', title: 'PID', cls: 'num', sort: (a, b) => a.pidList[0] - b.pidList[0] },
		{ key: 'cpu', title: 'CPU', cls: 'num', sort: (a, b) => a.cpu - b.cpu },
		...(HAS_ALLOC ? [{ key: 'alloc', title: 'Allocated', cls: 'num', sort: (a, b) => a.allocBytes - b.allocBytes }] : []),
		{ key: 'elapsed', title: 'Elapsed', cls: 'num', sort: (a, b) => a.elapsed - b.elapsed },
		{ key: 'wall', title: 'Goroutine time', sort: (a, b) => a.wall - b.wall },
		{ key: 'first', title: 'First (UTC)', cls: 'num', sort: (a, b) => a.first - b.first },
		{ key: 'last', title: 'Last (UTC)', cls: 'num', sort: (a, b) => a.last - b.last },
	];
	/* the table's grid has a column more with --alloc */
	$('table').classList.toggle('allocs', HAS_ALLOC);
	const ROW_H = 26;
	let sortCol = allWall > 0 ? 'wall' : 'cpu', sortDesc = true;
	let shown = rows.slice();
	let selected = null;

	function headers() {
		const tr = $('thead-row');
		tr.replaceChildren();
		for (const c of COLUMNS) {
			const th = el('div', 'th' + (c.cls === 'num' ? ' num' : ''), c.title);
			th.setAttribute('role', 'columnheader');
			th.dataset.key = c.key;
			th.setAttribute('aria-sort', c.key === sortCol ? (sortDesc ? 'descending' : 'ascending') : 'none');
			th.addEventListener('click', () => {
				if (sortCol === c.key)
					sortDesc = !sortDesc;
				else {
					sortCol = c.key;
					sortDesc = c.key === 'cpu' || c.key === 'wall' || c.key === 'elapsed' || c.key === 'alloc';
				}
				headers();
				refilter();
			});
			tr.appendChild(th);
		}
	}

	function matches(t, q) {
		if (!q)
			return true;
		const eq = q.indexOf('=');
		if (eq > 0) {
			const k = q.slice(0, eq), v = q.slice(eq + 1);
			for (const i of t.labelsets)
				if (Object.prototype.hasOwnProperty.call(LABELS[i], k) && LABELS[i][k] === v)
					return true;
			return false;
		}
		const p = q.toLowerCase();
		return t.name.toLowerCase().startsWith(p);
	}

	function refilter() {
		const q = $('filter').value.trim();
		const col = COLUMNS.find((c) => c.key === sortCol);
		shown = rows.filter((t) => matches(t, q));
		shown.sort((a, b) => {
			const d = col.sort(a, b);
			return (sortDesc ? -d : d) || a.first - b.first;
		});
		$('filter-count').textContent = shown.length === rows.length ? plural(rows.length, 'trace') : grouped(shown.length) + ' of ' + plural(rows.length, 'trace');
		$('tbody-space').style.height = shown.length * ROW_H + 'px';
		/* as tall as its rows, up to a third of the window or so */
		$('tbody').style.height = Math.max(3 * ROW_H, Math.min(shown.length * ROW_H + 2, Math.max(160, 0.38 * window.innerHeight))) + 'px';
		drawRows(true);
	}

	function wallBar(t) {
		const cell = el('div', 'wallcell');
		const num = el('span', 'num', t.wall ? fmtNs(t.wall) : '–');
		num.dataset.ns = t.wall;
		cell.appendChild(num);
		const apart = t.kind !== 'trace';
		const bar = el('span', 'bar' + (apart ? ' apart' : ''));
		const waits = Array.from(t.waits.entries()).sort((a, b) => b[1] - a[1]);
		const scale = apart ? t.wall : maxWall;
		const lines = !apart ? [] : t.kind === 'none' ? ['Goroutines without a trace ID: on a scale of their own, not the traces\'.'] :
			['Goroutines that outlived the request they inherited a trace from: on a scale of their own, not the traces\'.'];
		for (const [cat, ns] of waits) {
			const s = el('span');
			s.style.width = (scale ? (100 * ns) / scale : 0) + '%';
			s.style.background = waitColor(cat);
			s.dataset.cat = cat;
			bar.appendChild(s);
			lines.push(cat + ': ' + fmtNs(ns) + ' (' + pct(ns / t.wall) + ')');
		}
		/* a trace that waited at all shows it, however short beside the longest */
		if (bar.firstChild)
			bar.firstChild.style.minWidth = '2px';
		bar.title = lines.join('\n');
		cell.appendChild(bar);
		return cell;
	}

	let drawnRange = null;

	function drawRows(force) {
		const body = $('tbody');
		const first = Math.max(0, Math.floor(body.scrollTop / ROW_H) - 8);
		const last = Math.min(shown.length, Math.ceil((body.scrollTop + body.clientHeight) / ROW_H) + 8);
		if (!force && drawnRange && drawnRange[0] === first && drawnRange[1] === last)
			return;
		drawnRange = [first, last];
		for (const old of body.querySelectorAll('.tr'))
			old.remove();
		const frag = document.createDocumentFragment();
		for (let i = first; i < last; i++) {
			const t = shown[i];
			const tr = el('div', 'tr' + (t === selected ? ' selected' : ''));
			tr.setAttribute('role', 'row');
			tr.style.top = i * ROW_H + 'px';
			tr.dataset.trace = t.kind === 'trace' ? t.id : t.kind === 'inherited' ? 'inherited' : '';
			tr._trace = t;
			/* by column key: the allocation column is there only with --alloc */
			const cells = {
				id: el('div', 'td id' + (t.kind !== 'trace' ? ' none' : ''), t.name),
				service: el('div', 'td', t.service),
				pid: el('div', 'td num', t.pidList.length > 1 ? t.pidList[0] + ' +' + (t.pidList.length - 1) : String(t.pidList[0])),
				cpu: el('div', 'td num', t.cpu ? fmtNs(t.cpu) : '–'),
				alloc: el('div', 'td num', t.allocBytes ? fmtBytes(t.allocBytes) : '–'),
				elapsed: el('div', 'td num', fmtElapsed(t)),
				wall: el('div', 'td'),
				first: el('div', 'td num', fmtClock(t.first)),
				last: el('div', 'td num', fmtClock(t.last)),
			};
			if (!t.full) {
				const tag = el('span', 'tag', 'totals only');
				tag.title = 'Past the page\'s limit: ' + D.cut_rule + '.';
				cells.id.appendChild(tag);
			}
			cells.service.title = t.service;
			cells.pid.title = t.pidList.join(', ');
			cells.cpu.dataset.ns = t.cpu;
			cells.alloc.dataset.bytes = t.allocBytes;
			cells.alloc.title = t.allocBytes ? fmtBytes(t.allocBytes) + ' in ' + plural(Math.round(t.allocObjects), 'object') +
				', from ' + plural(t.allocSamples, 'sampled allocation') : 'no allocation sampled';
			cells.elapsed.dataset.ns = t.elapsed;
			cells.elapsed.title = t.spanned ? 'in flight ' + fmtNs(t.elapsed) + ', ' + plural(t.nrequests, 'request') :
				'no request\'s span known: from the trace\'s first sample to its last';
			cells.wall.appendChild(wallBar(t));
			for (const c of COLUMNS) {
				const cell = cells[c.key];
				cell.setAttribute('role', 'cell');
				cell.dataset.col = c.key;
				tr.appendChild(cell);
			}
			frag.appendChild(tr);
		}
		body.appendChild(frag);
	}

	/* ---- one trace ---- */

	const flameCpu = new Flame($('flame-cpu'), 'CPU');
	const flameWall = new Flame($('flame-wall'), 'wall');
	const flameAlloc = new Flame($('flame-alloc'), 'allocated');
	flameAlloc.bytes = true;
	$('alloc-head').hidden = $('flame-alloc').hidden = !HAS_ALLOC;
	const timeline = new Timeline($('timeline'), $('timeline-canvas'), $('timeline-space'));

	function fact(dl, name, value) {
		dl.appendChild(el('dt', '', name));
		dl.appendChild(el('dd', '', value));
	}

	/*
	 * Where a wall stack goes: the waits that describe a request are its
	 * own goroutine's (the one that set the labels, or serves it); those
	 * of the goroutines it started are apart, each under a node of its own
	 */
	const ROLES = ['', 'the request\'s goroutine', 'goroutines it started'];

	function wallRoot(wall, r, byRole) {
		return byRole && r.request_goroutine ? child(wall, ROLES[r.request_goroutine], 'role') : wall;
	}

	/*
	 * The allocations of T's records, all, or those sampled between two
	 * times: a stack's bytes and objects are unbiased as a whole, so each of
	 * its samples counts an equal share of them
	 */
	function allocTree(t, range) {
		const alloc = newNode(t.name, 'root', null);
		for (const r of t.records) {
			if (r.origin !== 'alloc')
				continue;
			for (const st of r.stacks) {
				if (!range) {
					addStack(alloc, st.frames, st.alloc_bytes, null, st.alloc_objects);
					continue;
				}
				const n = (st.times_us || []).filter((us) => r.start_us + us >= range[0] && r.start_us + us <= range[1]).length;
				if (n)
					addStack(alloc, st.frames, (st.alloc_bytes * n) / st.samples, null, (st.alloc_objects * n) / st.samples);
			}
		}
		return alloc;
	}

	/* the trace's flame graphs, from its stacks, or from the samples between two times */
	function traceTrees(t, range) {
		const cpu = newNode(t.name, 'root', null);
		const wall = newNode(t.name, 'root', null);
		const byRole = t.records.some((r) => r.origin === 'wall' && r.request_goroutine);
		if (range) {
			for (const m of timeline.marks) {
				if (m.t1 < range[0] || m.t1 > range[1])
					continue;
				const value = (m.t1 - m.t0) * 1000;
				if (!m.cpu && byRole && m.rec.request_goroutine)
					wall.value += value;
				addStack(m.cpu ? cpu : wallRoot(wall, m.rec, byRole), m.stack.frames, value, m.cpu ? null : '[' + m.cat + ']');
			}
			return [cpu, wall, allocTree(t, range)];
		}
		for (const r of t.records) {
			if (r.origin === 'alloc')
				continue;
			const sampling = r.origin === 'sampling';
			const per = (sampling ? r.cpu_ns : r.wall_ns) / r.samples;
			for (const st of r.stacks) {
				const into = sampling ? cpu : wallRoot(wall, r, byRole);
				if (into !== wall && into !== cpu)
					wall.value += st.samples * per;
				addStack(into, st.frames, st.samples * per, sampling ? null : '[' + category(r) + ']');
			}
		}
		return [cpu, wall, allocTree(t, null)];
	}

	function drawTrees(t, range) {
		const [cpu, wall, alloc] = traceTrees(t, range);
		const within = range ? ' between +' + fmtNs((range[0] - timeline.t0) * 1000) + ' and +' + fmtNs((range[1] - timeline.t0) * 1000) : '';
		const p = searchPattern($('search').value);
		const cut = 'This trace\'s stacks are not in this page: it is past the page\'s limit.';
		flameCpu.set(cpu, t.full ? 'No CPU samples' + within + '.' : cut, p);
		flameWall.set(wall, !t.full ? cut : D.wall_period_ns ? 'No wall-clock samples' + within + '.' : 'No wall-clock samples: the recording ran without --wall.', p);
		$('cpu-total').textContent = fmtNs(cpu.value) + within;
		$('wall-total').textContent = fmtNs(wall.value) + within + (wall.value ? ', each goroutine\'s state or wait as the leaf' : '');
		if (HAS_ALLOC) {
			flameAlloc.set(alloc, t.full ? 'No allocation samples' + within + '.' : cut, p);
			$('alloc-total').textContent = fmtBytes(alloc.value) + ' in ' + plural(Math.round(alloc.objects), 'object') + within +
				(alloc.value ? ', the allocating function as the leaf' : '');
		}
		searchResult(p, flameCpu.matched(), flameWall.matched(), HAS_ALLOC ? flameAlloc.matched() : null);
	}

	function select(t, scroll) {
		selected = t;
		for (const tr of $('tbody').querySelectorAll('.tr'))
			tr.classList.toggle('selected', tr._trace === t);
		const panel = $('trace');
		if (!t) {
			panel.hidden = true;
			return;
		}
		panel.hidden = false;
		$('trace-title').textContent = t.name;
		const dl = $('trace-facts');
		dl.replaceChildren();
		const services = new Map();
		const sources = new Set(), spans = new Set();
		for (const r of t.records) {
			const name = serviceOf(r);
			if (!services.has(name))
				services.set(name, new Set());
			services.get(name).add(r.pid);
			if (r.trace_source >= 0)
				sources.add(str(r.trace_source));
			if (r.span_id >= 0)
				spans.add(str(r.span_id));
		}
		if (t.services.size > 1) {
			/* a request seen in several services: what it cost in each */
			const list = Array.from(t.services.values()).sort((a, b) => a.name.localeCompare(b.name));
			fact(dl, 'Services', list.map((v) =>
				v.name + ' (pid ' + Array.from(v.pids).sort((a, b) => a - b).join(', ') + '): CPU ' + fmtNs(v.cpu) +
				(v.requests ? ', elapsed ' + fmtNs(inFlight(v.requests)) : '') +
				(D.wall_period_ns ? ', goroutine time ' + fmtNs(v.wall) : '') +
				(HAS_ALLOC ? ', allocated ' + fmtBytes(v.alloc) : '')).join('; '));
			$('trace-facts').lastChild.dataset.services = JSON.stringify(list.map((v) =>
				({ name: v.name, cpu: v.cpu, wall: v.wall, alloc: v.alloc, elapsed: v.requests ? inFlight(v.requests) : null, pids: Array.from(v.pids) })));
		} else {
			fact(dl, 'Service', Array.from(services.entries()).map(([c, p]) => c + ' (pid ' + Array.from(p).join(', ') + ')').join(', '));
		}
		if (sources.size)
			fact(dl, 'Trace source', Array.from(sources).join(', '));
		if (spans.size)
			fact(dl, 'Spans', Array.from(spans).slice(0, 8).join(', ') + (spans.size > 8 ? ', … (' + spans.size + ')' : ''));
		fact(dl, 'Time', fmtDate(t.first) + ' ' + fmtClock(t.first) + ' – ' + fmtClock(t.last) + ' UTC (' + fmtNs((t.last - t.first) * 1000) + ')');
		fact(dl, 'CPU', t.cpu ? fmtNs(t.cpu) + ' (' + plural(t.cpuSamples, 'sample') + ')' : 'none sampled');
		if (t.kind === 'trace')
			fact(dl, 'Elapsed', !t.elapsed ? 'not known' : t.spanned ?
				fmtNs(t.elapsed) + ' in flight: ' + plural(t.nrequests, 'request span') + (t.services.size > 1 ? ' in ' + t.services.size + ' services' : '') + ', where they overlap counted once' :
				'~' + fmtNs(t.elapsed) + ': no request\'s span known, from its first sample to its last');
		const waits = Array.from(t.waits.entries()).sort((a, b) => b[1] - a[1]);
		fact(dl, 'Goroutine time', t.wall ? fmtNs(t.wall) + ' (every goroutine\'s, added): ' +
			waits.map(([c, ns]) => c + ' ' + fmtNs(ns)).join(', ') : 'none sampled');
		if (HAS_ALLOC)
			fact(dl, 'Allocated', t.allocBytes ? fmtBytes(t.allocBytes) + ' in ' + plural(Math.round(t.allocObjects), 'object') + ' (' +
				plural(t.allocSamples, 'sampled allocation') + ', unbiased as Go\'s heap profile is)' : 'none sampled');
		/* every label the trace's goroutines carried, each key=value once */
		const box = $('trace-labels');
		box.replaceChildren();
		const seen = new Set();
		for (const i of t.labelsets) {
			for (const [k, v] of Object.entries(LABELS[i])) {
				const kv = k + '=' + v;
				if (seen.has(kv))
					continue;
				seen.add(kv);
				const chip = el('span', 'chip', shortValue(k, 80) + '=' + shortValue(v, 200));
				chip.title = shortValue(kv, 2000);
				box.appendChild(chip);
			}
		}
		const cut = $('trace-cut');
		cut.hidden = t.full;
		cut.textContent = t.full ? '' : 'This trace is past the page\'s limit (' + D.cut_rule + '): its totals are here, its stacks and times are not. Convert it alone to see them: jq -c \'select(.trace_id==' + (t.id === null ? 'null' : '"' + t.id + '"') + ')\' | ctxprof-go convert --html FILE.';
		timeline.set(t);
		$('pinned').hidden = true;
		drawTrees(t, null);
		const h = '#trace=' + (t.kind === 'trace' ? t.id : t.kind);
		if (location.hash !== h)
			history.replaceState(null, '', h);
		if (scroll)
			panel.scrollIntoView({ block: 'start' });
	}

	/* the share of each graph the search matched: CPU, goroutine time, and allocated bytes with --alloc */
	function searchResult(p, a, b, c) {
		const share = (x) => (x === null ? '–' : pct(x));
		$('search-result').textContent = p ? 'matched: ' + share(a) + ' of CPU, ' + share(b) + ' of the goroutine time' +
			(HAS_ALLOC ? ', ' + share(c) + ' of the allocated bytes' : '') : '';
	}

	function search() {
		const p = searchPattern($('search').value);
		searchResult(p, flameCpu.highlight(p), flameWall.highlight(p), HAS_ALLOC ? flameAlloc.highlight(p) : null);
	}

	timeline.onRange = (range) => selected && drawTrees(selected, range);
	timeline.onPick = (parts) => {
		const p = $('pinned');
		p.hidden = false;
		p.textContent = parts.map((x) => x[1]).join('\n');
	};

	/* ---- the whole run, grouped by trace ---- */

	const flameRun = new Flame($('flame-run'), 'CPU');
	/* what the whole run's graph weighs: its records' origin, and what the hover calls it */
	const RUN_KINDS = {
		cpu: { origin: 'sampling', what: 'CPU', empty: 'No CPU samples.' },
		wall: { origin: 'wall', what: 'wall', empty: 'No wall-clock samples: the recording ran without --wall.' },
		alloc: { origin: 'alloc', what: 'allocated', empty: 'No allocation samples: the recording ran without --alloc.' },
	};
	let runKind = 'cpu', runDrawn = null;

	/* one stack of the whole run under NODE (and ROOT and the trace's node), by its record R's kind */
	function addRunStack(root, tn, node, r, st, value, objects) {
		root.value += value;
		root.objects += objects;
		tn.value += value;
		tn.objects += objects;
		addStack(node, st.frames, value, r.origin === 'wall' ? '[' + category(r) + ']' : null, objects);
	}

	function runTree(kind) {
		const root = newNode('all', 'root', null);
		const origin = RUN_KINDS[kind].origin;
		for (const t of rows) {
			if (!t.full)
				continue;
			const tn = child(root, t.name, 'trace');
			tn.trace = t;
			for (const r of t.records) {
				if (r.origin !== origin)
					continue;
				const per = origin === 'alloc' ? 0 : (origin === 'wall' ? r.wall_ns : r.cpu_ns) / r.samples;
				const cn = child(tn, serviceOf(r), 'comm');
				for (const st of r.stacks) {
					if (origin === 'alloc')
						addRunStack(root, tn, cn, r, st, st.alloc_bytes, st.alloc_objects);
					else
						addRunStack(root, tn, cn, r, st, st.samples * per, 0);
				}
			}
			if (!tn.value)
				root.kids.delete(tn.name);
		}
		for (const o of D.others) {
			if (o.origin !== origin)
				continue;
			const on = child(root, 'other traces (' + grouped(D.traces_total - D.traces_full) + ')', 'trace');
			const cn = child(on, str(o.comm), 'comm');
			for (const st of o.stacks)
				addRunStack(root, on, cn, o, st, origin === 'alloc' ? st.bytes : st.ns, st.objects || 0);
		}
		return root;
	}

	function drawRun() {
		if (runDrawn === runKind)
			return;
		runDrawn = runKind;
		flameRun.what = RUN_KINDS[runKind].what;
		flameRun.bytes = runKind === 'alloc';
		const p = searchPattern($('run-search').value);
		flameRun.set(runTree(runKind), RUN_KINDS[runKind].empty, p);
		const a = flameRun.matched();
		$('run-result').textContent = p && a !== null ? 'matched: ' + pct(a) : '';
	}

	function runSearch() {
		const p = searchPattern($('run-search').value);
		const a = flameRun.highlight(p);
		$('run-result').textContent = p && a !== null ? 'matched: ' + pct(a) : '';
	}

	flameRun.onOpen = (node) => {
		if (node.trace) {
			showTab('traces');
			select(node.trace, true);
		}
	};

	/* ---- tabs, the summary, and where the page starts ---- */

	function showTab(which) {
		const run = which === 'run';
		$('view-traces').hidden = run;
		$('view-run').hidden = !run;
		$('tab-traces').setAttribute('aria-selected', String(!run));
		$('tab-run').setAttribute('aria-selected', String(run));
		hideTip();
		if (run)
			drawRun();
		else
			drawRows(true);
	}

	function summary() {
		document.title = 'ctxprof-go · ' + D.source;
		$('source').textContent = D.source + ' · ' + D.generator;
		const s = $('summary');
		const parts = [
			[plural(rows.length, 'trace'), ''],
			[plural(allPids.size, 'process', 'processes'), ''],
			['CPU ' + fmtNs(allCpu), ''],
		];
		if (allWall)
			parts.push(['goroutine time ' + fmtNs(allWall), ' (--wall: every goroutine\'s, added)']);
		if (HAS_ALLOC)
			parts.push(['allocated ' + fmtBytes(allAlloc), ' (--alloc: the runtime\'s samples, unbiased)']);
		if (rows.length)
			parts.push([fmtDate(allFirst) + ' ' + fmtClock(allFirst) + ' – ' + fmtClock(allLast) + ' UTC', '']);
		parts.forEach(([b, rest], i) => {
			if (i)
				s.appendChild(document.createTextNode(' · '));
			s.appendChild(el('b', '', b));
			if (rest)
				s.appendChild(document.createTextNode(rest));
		});
		const notes = [];
		if (D.traces_full < D.traces_total)
			notes.push('Every trace is in the table; ' + D.cut_rule + '. The other ' + plural(D.traces_total - D.traces_full, 'trace') + ' show their totals, and their samples are in the whole run as "other traces".');
		if (D.events)
			notes.push(plural(D.events, 'event record') + ' (custom traces, uprobes) are moments, not time: they are not drawn.');
		if (INPUTS.length > 1)
			notes.push('The records of ' + INPUTS.length + ' files (' + INPUTS.join(', ') + '), each service\'s times on its own host\'s clock.');
		if (D.duplicates)
			notes.push(plural(D.duplicates, 'record') + ' came in two files (one read twice?): each is counted once.');
		if (notes.length) {
			$('cut').hidden = false;
			$('cut').textContent = notes.join(' ');
		}
	}

	function fromHash() {
		const m = /^#trace=(.*)$/.exec(location.hash);
		if (!m)
			return false;
		const id = decodeURIComponent(m[1]);
		const t = rows.find((r) => (r.kind === 'trace' ? r.id === id : r.kind === id));
		if (t)
			select(t, false);
		return !!t;
	}

	$('tab-traces').addEventListener('click', () => showTab('traces'));
	$('tab-run').addEventListener('click', () => showTab('run'));
	if (!HAS_ALLOC)
		$('run-alloc').remove();
	for (const kind of Object.keys(RUN_KINDS)) {
		const button = $('run-' + kind);
		if (!button)
			continue;
		button.addEventListener('click', () => {
			runKind = kind;
			for (const k of Object.keys(RUN_KINDS))
				if ($('run-' + k))
					$('run-' + k).setAttribute('aria-pressed', String(k === kind));
			drawRun();
		});
	}
	$('filter').addEventListener('input', refilter);
	$('search').addEventListener('input', search);
	$('run-search').addEventListener('input', runSearch);
	$('tbody').addEventListener('scroll', () => drawRows(false));
	$('tbody').addEventListener('click', (ev) => {
		const tr = ev.target.closest('.tr');
		if (tr && tr._trace)
			select(tr._trace, false);
	});
	$('tbody').addEventListener('keydown', (ev) => {
		if (ev.key !== 'ArrowDown' && ev.key !== 'ArrowUp')
			return;
		ev.preventDefault();
		const i = shown.indexOf(selected) + (ev.key === 'ArrowDown' ? 1 : -1);
		if (i >= 0 && i < shown.length) {
			select(shown[i], false);
			const body = $('tbody');
			if (i * ROW_H < body.scrollTop || (i + 1) * ROW_H > body.scrollTop + body.clientHeight)
				body.scrollTop = i * ROW_H - body.clientHeight / 2;
		}
	});
	window.addEventListener('hashchange', fromHash);
	window.addEventListener('resize', () => drawRows(true));

	summary();
	headers();
	refilter();
	if (!fromHash() && rows.length === 1)
		select(rows[0], false);
	/* how long the script took, from the records' JSON to the table drawn */
	document.body.dataset.scriptStart = Math.round(started);
	document.body.dataset.scriptMs = Math.round(performance.now() - started);
	document.body.dataset.ready = 'true';
})();
