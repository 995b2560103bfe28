# The client rows of run.sh (sourced by it; uses its variables and helpers).
# Each run_X runs client X with exactly the variables or flags that
# docs/clients.md gives, or skips it when it is not installed.

# python_with MODULE: a python3 that can import MODULE (Debian's packages
# live in /usr/bin/python3, which may not be the first python3 on PATH).
python_with() {
  local py
  for py in /usr/bin/python3 python3; do
    if command -v "$py" >/dev/null 2>&1 && "$py" -c "import $1" 2>/dev/null; then
      echo "$py"
      return 0
    fi
  done
  return 1
}

# connect_ua CLIENT [sends] COMMAND...: runs COMMAND, an https request
# through the CONNECT recorder ($CP), and records the User-Agent CLIENT sent
# on CONNECT. With "sends", a CONNECT without User-Agent is a failure (the
# docs say CLIENT sends one).
connect_ua() {
  local client=$1 must= ua
  shift
  if [ "$1" = sends ]; then must=1; shift; fi
  : >"$WORK/connect-ua.txt"
  timeout 300 "$@" >/dev/null 2>&1
  ua=$(head -n 1 "$WORK/connect-ua.txt")
  CONNECT_UAS+=("$client: ${ua:-(no CONNECT seen)}")
  if [ -n "$must" ]; then
    if [ -n "$ua" ] && [ "$ua" != - ]; then
      PASSED+=("$client sends User-Agent on CONNECT")
      echo "ok    $client sends a User-Agent on CONNECT: $ua"
    else
      fail "$client sent no User-Agent on CONNECT (${ua:-no CONNECT seen}); docs/clients.md says it does"
    fi
  fi
}

# tunnels_http CLIENT COMMAND...: COMMAND requests an http:// URL through
# the CONNECT recorder; the docs say CLIENT sends CONNECT for it (which is
# why https.allowed_ports includes 80 by default).
tunnels_http() {
  local client=$1
  shift
  : >"$WORK/connect-ua.txt"
  timeout 300 "$@" >/dev/null 2>&1
  if [ -s "$WORK/connect-ua.txt" ]; then
    PASSED+=("$client tunnels http://")
    echo "ok    pitfall: $client sends CONNECT for an http:// URL"
  else
    fail "$client sent no CONNECT for an http:// URL; docs/clients.md says it does"
  fi
}

# each_url COMMAND... URL...: runs COMMAND once per URL (the arguments
# from the first one starting with http on are URLs).
each_url() {
  local args=() u
  while [ $# -gt 0 ] && [[ $1 != http* ]]; do args+=("$1"); shift; done
  for u in "$@"; do "${args[@]}" "$u"; done
}
export -f each_url

run_curl() {
  command -v curl >/dev/null || { skip curl "not installed"; return; }
  pair curl "${PROXYENV[@]}" bash -c 'each_url "$@"' each curl -sS -o /dev/null -w '%{http_code}\n' --cacert "$CA"
  # curl ignores upper-case HTTP_PROXY (lower-case http_proxy only).
  connect_ua curl sends env https_proxy="$CP" curl -sS "$S/"
  fact "curl ignores HTTP_PROXY" 200 "${NOPROXYENV[@]}" HTTP_PROXY="$P" \
    curl -sS -o /dev/null -w '%{http_code}\n' "$H$PROBE"
}

# wget prints the status lines with -S; the last one is the answer's.
wget_status() { wget -S -O /dev/null "$@" 2>&1 | awk '/^  HTTP\//{c=$2} END{print c}'; }

run_wget() {
  command -v wget >/dev/null || { skip wget "not installed"; return; }
  pair wget "${PROXYENV[@]}" bash -c 'each_url "$@"' each wget_status --ca-certificate="$CA"
  connect_ua wget env https_proxy="$CP" wget -q -O /dev/null "$S/"
  fact "wget ignores HTTP_PROXY and HTTPS_PROXY" 200 "${NOPROXYENV[@]}" HTTP_PROXY="$P" HTTPS_PROXY="$P" \
    bash -c 'wget_status "$@"' wget "$H$PROBE"
}
export -f wget_status

run_python() {
  local py
  if py=$(python_with requests); then
    pair "python-requests" "${PROXYENV[@]}" REQUESTS_CA_BUNDLE="$CA" "$py" "$HERE/python/get.py" requests
    connect_ua python-requests env https_proxy="$CP" "$py" "$HERE/python/get.py" requests "$S/"
    # Upper case works too.
    expect "python-requests HTTPS_PROXY" 403 "${NOPROXYENV[@]}" HTTPS_PROXY="$P" REQUESTS_CA_BUNDLE="$CA" \
      "$py" "$HERE/python/get.py" requests "$S/private/x"
  else
    skip python-requests "no python3 with requests"
  fi
  if py=$(python_with urllib.request); then
    pair "python-urllib" "${PROXYENV[@]}" SSL_CERT_FILE="$CA" "$py" "$HERE/python/get.py" urllib
    connect_ua python-urllib env https_proxy="$CP" "$py" "$HERE/python/get.py" urllib "$S/"
  else
    skip python-urllib "no python3"
  fi
}

# scrapy_items FILE: "status url" lines of a Scrapy JSON-lines feed, sorted.
scrapy_items() {
  "$SCRAPY_PY" -c 'import json,sys
for line in open(sys.argv[1]):
    i = json.loads(line); print(i["status"], i["url"])' "$1" | sort
}

# scrapy_stats FILE: the robotsgate/ stats the spider wrote (-a stats=FILE),
# "name=value" sorted.
scrapy_stats() {
  "$SCRAPY_PY" -c 'import json,sys
for k, v in sorted(json.load(open(sys.argv[1])).items()): print(f"{k}={v}")' "$1"
}

# scrapy_connect_check URL: the audit records of URL (a CONNECT's) since
# the scrapy-connect mark, then the stats of that crawl.
scrapy_connect_check() {
  audits_since "$WORK/scrapy-connect.mark" "$1"
  scrapy_stats "$WORK/scrapy-connect.stats"
}

# run_scrapy: examples/scrapy through robotsgate over HTTP and HTTPS. Its
# RobotsgateRefusalMiddleware drops robotsgate's refusals (IgnoreRequest,
# counted in the robotsgate/ stats), while the origin's own 403 (/forbidden)
# reaches the spider.
run_scrapy() {
  SCRAPY_PY=$(python_with scrapy) || { skip scrapy "no python3 with scrapy"; return; }
  RAN+=(scrapy)
  local out=$WORK/scrapy-pairs.jl got want
  (cd "$ROOT/examples/scrapy" && timeout 300 "${PROXYENV[@]}" "$SCRAPY_PY" -m scrapy crawl pages -L WARNING \
    -a urls="$H/public,$H/private/x,$H/forbidden,$S/public,$S/private/x,$S/forbidden" \
    -a stats="$WORK/scrapy-pairs.stats" -O "$out") >"$WORK/scrapy-pairs.log" 2>&1
  got=$(scrapy_items "$out" 2>/dev/null)
  want=$(printf '%s\n' "200 $H/public" "200 $S/public" "403 $H/forbidden" "403 $S/forbidden" | sort)
  if [ "$got" = "$want" ]; then
    PASSED+=("scrapy http+https allowed/disallowed")
    echo "ok    scrapy http+https: 200 for /public, the origin's own 403 for /forbidden, /private/x dropped"
  else
    fail "scrapy http+https: got [$(echo "$got" | tr '\n' ';')] want [$(echo "$want" | tr '\n' ';')]; log: $(tail -n 5 "$WORK/scrapy-pairs.log")"
  fi
  expect "scrapy: robotsgate's refusals in the stats" "robotsgate/forbidden=2 robotsgate/reason/disallowed=2" \
    scrapy_stats "$WORK/scrapy-pairs.stats"
  # A CONNECT robotsgate refuses (port 1 is outside https.allowed_ports):
  # RobotsgateConnectRefusalMiddleware drops it at once (audited once,
  # counted); Scrapy's defaults retry it (3 CONNECTs audited).
  local connect=https://127.0.0.1:1
  wc -l <"$WORK/audit.jsonl" >"$WORK/scrapy-connect.mark"
  (cd "$ROOT/examples/scrapy" && timeout 300 "${PROXYENV[@]}" "$SCRAPY_PY" -m scrapy crawl pages -L WARNING \
    -a urls="$connect/scrapy-connect" -a stats="$WORK/scrapy-connect.stats" -O "$WORK/scrapy-connect.jl") \
    >"$WORK/scrapy-connect.log" 2>&1
  expect "scrapy: a refused CONNECT audited once, in the stats" \
    "1 robotsgate/connect/403=1 robotsgate/forbidden=1" scrapy_connect_check "$connect"
  wc -l <"$WORK/audit.jsonl" >"$WORK/scrapy-connect.mark"
  mkdir -p "$WORK/scrapy-defaults"
  (cd "$WORK/scrapy-defaults" && timeout 300 "${PROXYENV[@]}" "$SCRAPY_PY" -m scrapy runspider -L WARNING \
    "$ROOT/examples/scrapy/politecrawl/spiders/pages.py" -a urls="$connect/scrapy-connect-defaults" \
    -O "$WORK/scrapy-connect-defaults.jl") >>"$WORK/scrapy-connect.log" 2>&1
  fact "Scrapy's defaults retry a refused CONNECT: 3 audited" 3 audits_since "$WORK/scrapy-connect.mark" "$connect"
  # The middlewares' unit tests (report mode, 429, the origin's own 403, a refused CONNECT).
  expect "scrapy: the middlewares' unit tests" "OK" bash -c \
    'cd "$1" && "$2" -m unittest discover -s tests -t . 2>&1 | tail -n 1' unit "$ROOT/examples/scrapy" "$SCRAPY_PY"
}

# run_scrapy_politeness: examples/scrapy gets every allowed page of an origin
# whose Crawl-delay (2 s) is longer than robotsgate's max_queue_wait (1 s);
# the same spider with Scrapy's default settings gives up on some.
run_scrapy_politeness() {
  [ -n "${SCRAPY_PY:-}" ] || return
  local want got log=$WORK/scrapy-polite.log
  want=$( (printf '200 %s\n' "$POLITE/"; for i in 1 2 3 4 5; do printf '200 %s\n' "$POLITE/page/$i"; done) | sort)
  (cd "$ROOT/examples/scrapy" && timeout 300 "${PROXYENV[@]}" "$SCRAPY_PY" -m scrapy crawl pages -L INFO \
    -a urls="$POLITE/" -a follow=1 -a stats="$WORK/scrapy-polite.stats" -O "$WORK/scrapy-polite.jl") >"$log" 2>&1
  got=$(scrapy_items "$WORK/scrapy-polite.jl" 2>/dev/null)
  if [ "$got" = "$want" ] && ! grep -q "Gave up retrying" "$log" &&
    [ "$(scrapy_stats "$WORK/scrapy-polite.stats" 2>/dev/null | tr '\n' ' ')" = "robotsgate/forbidden=1 robotsgate/reason/disallowed=1 " ]; then
    PASSED+=("scrapy example: Crawl-delay origin")
    echo "ok    examples/scrapy fetched all 6 allowed pages of the Crawl-delay origin; robotsgate refused the disallowed one (robotsgate/forbidden=1)"
  else
    fail "examples/scrapy on the Crawl-delay origin: got [$(echo "$got" | tr '\n' ';')], stats [$(scrapy_stats "$WORK/scrapy-polite.stats" 2>&1 | tr '\n' ' ')]; $(grep -c 'Gave up retrying' "$log") gave up"
  fi
  # The same spider outside the project (Scrapy's defaults) drops pages.
  mkdir -p "$WORK/scrapy-defaults"
  (cd "$WORK/scrapy-defaults" && timeout 300 "${PROXYENV[@]}" "$SCRAPY_PY" -m scrapy runspider -L INFO \
    "$ROOT/examples/scrapy/politecrawl/spiders/pages.py" -a urls="$POLITE/" -a follow=1 \
    -O "$WORK/scrapy-defaults.jl") >"$WORK/scrapy-defaults.log" 2>&1
  if grep -q "Gave up retrying.*429" "$WORK/scrapy-defaults.log"; then
    PASSED+=("pitfall: scrapy defaults give up on 429")
    echo "ok    pitfall: Scrapy's defaults give up ($(grep -c 'Gave up retrying' "$WORK/scrapy-defaults.log") pages: \"Gave up retrying ... 429\")"
  else
    # Whether the defaults give up depends on how fast Scrapy retries on
    # this machine: a note, not a failure.
    echo "note  pitfall: Scrapy's defaults did not give up this time (their immediate retries happened to be slow enough)"
  fi
}

run_go() {
  pair go env SSL_CERT_FILE="$CA" "$WORK/goclient" -proxy "$P"
  connect_ua go sends "$WORK/goclient" -proxy "$CP" "$S/"
  # http.ProxyFromEnvironment never proxies loopback addresses.
  fact "Go ProxyFromEnvironment skips 127.0.0.1" 200 "${NOPROXYENV[@]}" HTTP_PROXY="$P" "$WORK/goclient" "$H$PROBE"
}

run_node() {
  command -v node >/dev/null || { skip node "not installed"; return; }
  if [ ! -d "$HERE/node/node_modules/undici" ] || [ ! -d "$HERE/node/node_modules/https-proxy-agent" ]; then
    skip node "run 'npm ci' in scripts/clients/node"
    return
  fi
  local js=$HERE/node/get.mjs m
  for m in undici-proxyagent undici-env fetch-dispatcher; do
    pair "node-$m" "${PROXYENV[@]}" PROXY_URL="$P" NODE_EXTRA_CA_CERTS="$CA" node "$js" "$m"
  done
  # https-proxy-agent 7 checks the certificate of an https://<IP address>/
  # URL against "localhost" (it drops the host and sets no servername for
  # IPs): name the HTTPS origin localhost for it. Real sites have names.
  S=https://localhost:$HTTPS_PORT pair node-https-proxy-agent "${PROXYENV[@]}" PROXY_URL="$P" \
    NODE_EXTRA_CA_CERTS="$CA" node "$js" https-proxy-agent
  connect_ua node-undici env PROXY_URL="$CP" node "$js" undici-proxyagent "$S/"
  tunnels_http node-undici env PROXY_URL="$CP" node "$js" undici-proxyagent "$H/"
  tunnels_http node-https-proxy-agent env PROXY_URL="$CP" node "$js" https-proxy-agent "$H/"
  connect_ua node-https-proxy-agent env PROXY_URL="$CP" node "$js" https-proxy-agent "https://localhost:$HTTPS_PORT/"
  fact "node's built-in fetch ignores proxy variables" 200 "${NOPROXYENV[@]}" http_proxy="$P" HTTP_PROXY="$P" \
    node "$js" fetch-builtin "$H$PROBE"
}

# audits_since MARK URL...: per URL, how many audit records robotsgate
# wrote for it since the audit log had the line count in file MARK.
audits_since() {
  local mark=$1 u
  shift
  for u in "$@"; do
    tail -n +"$(($(cat "$mark") + 1))" "$WORK/audit.jsonl" | grep -cF "\"url\":\"$u\""
  done
}

# crawlee_audits URL...: audits_since the crawlee mark.
crawlee_audits() { audits_since "$WORK/crawlee.mark" "$@"; }

# run_crawlee: examples/crawlee (Crawlee's HttpCrawler, robotsgate.mjs's
# options) crawls the HTTP and HTTPS origins from / (following links,
# /private/secret among them) plus a disallowed start URL each and the
# origin's own 403: every page 200, each refused URL refused and audited
# exactly once, counted in its stats, the agent it names (X-Robots-Agent)
# in every audit record, the origin's 403 still retried as a block. Then
# the pitfall: Crawlee's defaults ask for a refused URL 4 times.
run_crawlee() {
  command -v node >/dev/null || { skip crawlee "node not installed"; return; }
  local dir=$ROOT/examples/crawlee got want refused
  [ -d "$dir/node_modules/@crawlee/http" ] || { skip crawlee "run 'npm ci' in examples/crawlee"; return; }
  RAN+=(crawlee)
  refused=("$H/private/crawlee/1" "$H/private/secret" "$S/private/crawlee/1" "$S/private/secret")
  wc -l <"$WORK/audit.jsonl" >"$WORK/crawlee.mark"
  (cd "$dir" && timeout 300 "${NOPROXYENV[@]}" PROXY_URL="$P" NODE_EXTRA_CA_CERTS="$CA" node crawl.mjs --follow \
    --agent crawleebot --stats "$WORK/crawlee.stats" "$H/" "$S/" "$H/private/crawlee/1" "$S/private/crawlee/1" \
    "$H/forbidden") >"$WORK/crawlee.out" 2>"$WORK/crawlee.log"
  got=$(LC_ALL=C sort "$WORK/crawlee.out")
  want=$( (for o in "$H" "$S"; do printf '200 %s\n' "$o/" "$o/page/1" "$o/page/2" "$o/page/3" "$o/page/4" "$o/page/5"; done
    printf 'refused disallowed %s\n' "${refused[@]}"; printf 'failed %s\n' "$H/forbidden") | LC_ALL=C sort)
  if [ "$got" = "$want" ]; then
    PASSED+=("crawlee http+https crawl")
    echo "ok    crawlee: 12 pages 200, 4 URLs refused by robotsgate, the origin's own 403 failed as a block"
  else
    fail "crawlee crawl: got [$(echo "$got" | tr '\n' ';')] want [$(echo "$want" | tr '\n' ';')]; log: $(grep -v '^ ' "$WORK/crawlee.log" | tail -n 3)"
  fi
  expect "crawlee: each refused URL audited once (http, http, https, https)" "1 1 1 1" crawlee_audits "${refused[@]}"
  expect "crawlee: refusals in its stats" '{"robotsgate/forbidden":4,"robotsgate/reason/disallowed":4}' cat "$WORK/crawlee.stats"
  expect "crawlee: the agent of its audit records (X-Robots-Agent)" "crawleebot" \
    bash -c 'tail -n +"$(($(cat "$1") + 1))" "$2" | sed -n "s/.*\"agent\":\"\([^\"]*\)\".*/\1/p" | sort -u' agents \
    "$WORK/crawlee.mark" "$WORK/audit.jsonl"
  expect "crawlee: the origin's own 403 retried as a block (1 + 3 retries)" 4 crawlee_audits "$H/forbidden"
  expect "crawlee: robotsgate.mjs unit tests" "# fail 0" bash -c 'cd "$1" && node --test test/ 2>&1 | grep "^# fail"' unit "$dir"
  wc -l <"$WORK/audit.jsonl" >"$WORK/crawlee.mark"
  (cd "$dir" && timeout 300 "${NOPROXYENV[@]}" PROXY_URL="$P" node crawl.mjs --crawlee-defaults "$H/private/crawlee/defaults") \
    >/dev/null 2>>"$WORK/crawlee.log"
  fact "Crawlee's defaults retry a refusal as a block: one refused URL audited 4 times" 4 \
    crawlee_audits "$H/private/crawlee/defaults"
}

run_java() {
  if ! command -v java >/dev/null || ! command -v keytool >/dev/null || ! command -v javac >/dev/null; then
    skip java "no JDK (java, javac, keytool)"
    return
  fi
  local ts=$WORK/robotsgate-ca.p12 host=${LISTEN%:*} port=${LISTEN##*:}
  keytool -importcert -noprompt -alias robotsgate -file "$CA" -keystore "$ts" -storetype PKCS12 \
    -storepass changeit >/dev/null 2>&1 || { fail "java: keytool -importcert failed"; return; }
  local props=(-Dhttp.proxyHost="$host" -Dhttp.proxyPort="$port" -Dhttps.proxyHost="$host" -Dhttps.proxyPort="$port"
    -Djavax.net.ssl.trustStore="$ts" -Djavax.net.ssl.trustStorePassword=changeit)
  # The test origins are on loopback, which Java never proxies by default
  # (http.nonProxyHosts); "-Dhttp.nonProxyHosts=" clears that list.
  pair java "${NOPROXYENV[@]}" java "${props[@]}" -Dhttp.nonProxyHosts= "$HERE/java/Get.java"
  connect_ua java java -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort="$CONNECT_PORT" -Dhttp.nonProxyHosts= \
    "$HERE/java/Get.java" "$S/"
  fact "Java skips loopback by default" 200 "${NOPROXYENV[@]}" java "${props[@]}" "$HERE/java/Get.java" "$H$PROBE"
}

# audit_verdict URL...: per URL, robotsgate's verdict in its audit log
# (the last record whose url is exactly URL): "allowed", "blocked 403", or
# "none" when robotsgate saw no such request.
audit_verdict() {
  local u line d s
  for u in "$@"; do
    line=$(grep -F "\"url\":\"$u\"" "$WORK/audit.jsonl" | tail -n 1)
    [ -n "$line" ] || { echo none; continue; }
    d=$(sed -n 's/.*"decision":"\([a-z]*\)".*/\1/p' <<<"$line")
    s=$(sed -n 's/.*"status":\([0-9]*\).*/\1/p' <<<"$line")
    echo "$d${s:+ $s}"
  done
}

# audit_agents CLIENT: the agents robotsgate decided for in the audit
# records of CLIENT's browser visits (their URLs end in ?c=CLIENT).
audit_agents() {
  grep -F "?c=$1\"" "$WORK/audit.jsonl" | sed -n 's/.*"agent":"\([^"]*\)".*/\1/p' | sort -u
}

# origin_hits: how many /private pages the HTTP and HTTPS origins served.
origin_hits() {
  local o
  for o in "$H" "$S"; do "${NOPROXYENV[@]}" SSL_CERT_FILE="$WORK/origin.pem" "$WORK/goclient" -body "$o/__hits"; done
}

# browser_urls CLIENT: the browser rows' URLs, tagged with the client.
browser_urls() { printf '%s?c=%s\n' "$H/styled" "$1" "$H/private/x" "$1" "$S/styled" "$1" "$S/private/x" "$1"; }

# browser_checks CLIENT: after CLIENT loaded browser_urls: robotsgate
# refused the disallowed stylesheet over HTTP and HTTPS, the origins never
# saw it, and the audit shows the "*" agent (HeadlessChrome names no
# crawler).
browser_checks() {
  local c=$1
  expect "$c: robotsgate refused the stylesheet (audit, http and https)" "blocked 403 blocked 403" \
    audit_verdict "$H/private/style.css?c=$c" "$S/private/style.css?c=$c"
  expect "$c: the origins served no /private URL (http, https)" "0 0" origin_hits
  expect "$c: agent in the audit" "*" audit_agents "$c"
}

# chromium_get URL...: loads each URL in headless Chromium with the flags
# of docs/clients.md through robotsgate (PROXY_URL), and prints
# robotsgate's verdict on it (audit_verdict) and, for /styled, the page's
# title ("unstyled": the page rendered without its stylesheet). HOME holds
# the NSS database with robotsgate's CA. CHROMIUM_BYPASS replaces the
# proxy bypass list.
chromium_get() {
  local u profile title
  for u in "$@"; do
    profile=$(mktemp -d "$WORK/chromium-profile.XXXXXX")
    title=$(chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
      --disable-background-networking --disable-component-update --disable-sync --user-data-dir="$profile" \
      --proxy-server="$PROXY_URL" --proxy-bypass-list="${CHROMIUM_BYPASS-<-loopback>}" --dump-dom "$u" \
      2>>"$WORK/chromium.log" | sed -n 's:.*<title>\(.*\)</title>.*:\1:p' | head -n 1)
    case $title in styled | unstyled) ;; *) title= ;; esac
    echo "$(audit_verdict "$u")${title:+ $title}"
  done
}
export -f chromium_get audit_verdict

run_chromium() {
  command -v chromium >/dev/null || { skip chromium "not installed (apt-get install chromium)"; return; }
  command -v certutil >/dev/null || { skip chromium "no certutil (apt-get install libnss3-tools)"; return; }
  RAN+=(chromium)
  # Chromium on Linux trusts the NSS database in $HOME/.pki/nssdb.
  local home=$WORK/chromium-home
  mkdir -p "$home/.pki/nssdb"
  if ! certutil -d "sql:$home/.pki/nssdb" -N --empty-password ||
    ! certutil -d "sql:$home/.pki/nssdb" -A -t C,, -n robotsgate -i "$CA"; then
    fail "chromium: certutil could not import robotsgate's CA"
    return
  fi
  local env=("${NOPROXYENV[@]}" HOME="$home" PROXY_URL="$P" WORK="$WORK")
  # shellcheck disable=SC2046
  expect "chromium: http /styled, http /private/x, https /styled, https /private/x" \
    "allowed unstyled blocked 403 allowed unstyled blocked 403" \
    "${env[@]}" bash -c 'chromium_get "$@"' get $(browser_urls chromium)
  browser_checks chromium
  # Without '<-loopback>' Chromium sends loopback URLs straight to the
  # origin: robotsgate never sees the request.
  fact "Chromium bypasses the proxy for loopback by default" "none" \
    "${env[@]}" CHROMIUM_BYPASS= bash -c 'chromium_get "$@"' get "$H$PROBE?c=chromium-bypass"
  # Without the NSS database Chromium refuses robotsgate's certificates
  # (SSL_CERT_FILE is not read): no request reaches a decision.
  mkdir -p "$WORK/chromium-nohome"
  fact "Chromium ignores SSL_CERT_FILE" "none" "${env[@]}" HOME="$WORK/chromium-nohome" SSL_CERT_FILE="$CA" \
    bash -c 'chromium_get "$@"' get "$S/private/x?c=chromium-sslcertfile"
  connect_ua chromium sends "${env[@]}" PROXY_URL="$CP" bash -c 'chromium_get "$@"' get "$S/"
}

run_headless() {
  command -v chromium >/dev/null || { skip "playwright puppeteer" "no chromium"; return; }
  local m
  for m in playwright puppeteer; do
    if [ ! -d "$HERE/node/node_modules/$m-core" ]; then
      skip "$m" "run 'npm ci' in scripts/clients/node"
      continue
    fi
    RAN+=("$m")
    # shellcheck disable=SC2046
    expect "$m: http /styled, http /private/x, https /styled, https /private/x" "200 unstyled 403 200 unstyled 403" \
      "${NOPROXYENV[@]}" PROXY_URL="$P" SPKI="$SPKI" node "$HERE/node/browser.mjs" "$m" $(browser_urls "$m")
    browser_checks "$m"
  done
}

# The admin listener's status page (docs/production.md#status-page) in
# headless Chromium driven by Playwright, against a robotsgate of its own
# with an admin token: refused without the token, loads without console
# errors with it, shows the refusals made between its snapshot and its
# stream, has a time axis and a readable maximum on its chart, and shows a
# request refused through the proxy within 2 s.
run_statuspage() {
  command -v chromium >/dev/null || { skip "status page" "no chromium"; return; }
  [ -d "$HERE/node/node_modules/playwright-core" ] || { skip "status page" "run 'npm ci' in scripts/clients/node"; return; }
  RAN+=("status page")
  local dir=$WORK/statuspage token
  token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  mkdir -p "$dir"
  cat >"$dir/robotsgate.yaml" <<YAML
listen: 127.0.0.1:0
admin_listen: 127.0.0.1:0
audit_log: $dir/audit.jsonl
log_format: json
https:
  data_dir: $dir/data
YAML
  ROBOTSGATE_ADMIN_TOKEN=$token "$WORK/robotsgate" -config "$dir/robotsgate.yaml" 2>"$dir/robotsgate.log" &
  PIDS+=($!)
  local listen= admin= _
  for _ in $(seq 300); do
    listen=$(sed -n 's/.*"listen":"\([0-9.]*:[0-9]*\)".*/\1/p' "$dir/robotsgate.log" | head -n 1)
    admin=$(sed -n 's/.*"admin_listen":"\([0-9.]*:[0-9]*\)".*/\1/p' "$dir/robotsgate.log" | head -n 1)
    [ -n "$listen" ] && [ -n "$admin" ] && break
    sleep 0.1
  done
  [ -n "$listen" ] && [ -n "$admin" ] || { fail "status page: robotsgate did not start: $(tail -n 3 "$dir/robotsgate.log")"; return; }
  expect "status page: refused without the token, no console error, refusals before the stream opened shown, chart axes, a refusal shown within 2 s" \
    "no-token 401 no-token-page refused page 200 live early 5/5 chart axis max-label proxy 403 shown within-2s console-errors 0" \
    "${NOPROXYENV[@]}" ADMIN_URL="http://$admin" ADMIN_TOKEN="$token" PROXY_URL="http://$listen" \
    REFUSE_URL="$H/private/statuspage" node "$HERE/node/statuspage.mjs"
}
