# SPDX-License-Identifier: GPL-2.0
# browser-lib.sh: pages seen as a person sees them: Debian's Chromium (and Firefox), headless, driven through the DevTools protocol.
# Sourced after lib.sh. puppeteer-core drives it and never downloads a
# browser of its own; it and speedscope (the viewer whose file format
# `convert --speedscope` writes) come from npm at test time, under .output/node.

NODE_TOOLS=$OUTPUT/node
# the newest puppeteer-core that runs on Debian 12's Node.js 18 as well as on newer ones
PUPPETEER_CORE=puppeteer-core@24.43.1
SPEEDSCOPE=speedscope@1.25.0
SPEEDSCOPE_DIR=$NODE_TOOLS/node_modules/speedscope/dist/release
export CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
export FIREFOX=${FIREFOX:-/usr/bin/firefox-esr}
export NODE_PATH=$NODE_TOOLS/node_modules

# browser_setup: the browser, Node.js and the npm tools, installing the
# latter when missing; false, saying what is missing, when they cannot be had
browser_setup() {
	local stamp=$NODE_TOOLS/.ready-$PUPPETEER_CORE-$SPEEDSCOPE
	if [ ! -x "$CHROMIUM" ] || [ ! -x "$FIREFOX" ]; then
		echo "no Chromium at $CHROMIUM or Firefox at $FIREFOX (make deps installs Debian's chromium and firefox-esr)"
		return 1
	fi
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		echo "no node or npm (make deps installs Debian's nodejs and npm)"
		return 1
	fi
	if [ ! -e "$stamp" ]; then
		mkdir -p "$NODE_TOOLS"
		if ! npm install --prefix "$NODE_TOOLS" --no-audit --no-fund --loglevel=error \
			--cache "$OUTPUT/npm-cache" "$PUPPETEER_CORE" "$SPEEDSCOPE" >"$NODE_TOOLS/install.log" 2>&1; then
			echo "npm install $PUPPETEER_CORE $SPEEDSCOPE failed: $(tail -n 3 "$NODE_TOOLS/install.log" | tr '\n' ' ')"
			return 1
		fi
		touch "$stamp"
	fi
}

# browser_verdicts WHAT CMD...: runs CMD, which prints TAP verdicts, and
# counts them as this script's; other lines pass through. CMD failing
# without a failed verdict (it died) is one, named WHAT.
browser_verdicts() {
	local what=$1 line failed=0
	shift
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		"not ok - "*) not_ok "${line#not ok - }"; failed=1 ;;
		"#exit "*) [ "${line#\#exit }" = 0 ] || [ "$failed" = 1 ] || not_ok "$what: exited with status ${line#\#exit }" ;;
		*) printf '%s\n' "$line" ;;
		esac
	done < <("$@" 2>&1; echo "#exit $?")
}
