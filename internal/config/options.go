package config

import "strings"

// envPrefix prefixes the environment variable of every option with a
// flag: ROBOTSGATE_<FLAG>, the flag name upper-cased with '-' → '_'.
const envPrefix = "ROBOTSGATE_"

// option is one setting: its YAML key, its flag (and so its environment
// variable), its help text and the field of Config it sets. The field's
// type is the option's kind: string, int, bool, [time.Duration], []string,
// []int, [][netip.Prefix] or *url.URL; it decides how a value is parsed.
// The default is the field's value in Default().
type option struct {
	key   string // dotted YAML key, e.g. "robots.ttl"
	flag  string // flag name, e.g. "robots-ttl"; "" = YAML only
	help  string // one line; a `word` in it names the flag's value in -h
	field func(c *Config) any
	// restart says that only a restart changes the setting: a reload
	// keeps the running value and names the key in needs_restart
	// ([WithRestartOnly], [Changes]). Every other setting a reload puts
	// in force at once.
	restart bool
}

// When a changed setting takes effect ([option.restart]).
const (
	atReload  = false // at the next reload (SIGHUP, POST /v1/reload)
	atRestart = true  // at the next restart only
)

// env returns the option's environment variable, "" when it has no flag.
func (o option) env() string {
	if o.flag == "" {
		return ""
	}
	return envPrefix + strings.ToUpper(strings.ReplaceAll(o.flag, "-", "_"))
}

// configFlag is the -config flag: the YAML file read before the
// environment and flags are applied. It is not a setting of Config.
var configFlag = option{flag: "config", help: "YAML configuration `file` (see configs/robotsgate.yaml)"}

// options returns every setting, in the order -h and the docs list them.
// To add one, add a field to Config, its default to Default and a line
// to [topOptions] or [sectionOptions].
func options() []option {
	return append(append(append(append(append(topOptions(), sectionOptions()...), licenseOptions()...), egressOptions()...), paymentOptions()...), crawlerOptions()...)
}

// topOptions are the options outside any section.
func topOptions() []option {
	return []option{
		{"listen", "listen", "proxy address `host:port`; beyond loopback it needs auth credentials and auth.allow_cidrs, or auth.allow_open, and admin_token unless admin_listen is on loopback", func(c *Config) any { return &c.Listen }, atRestart},
		{"admin_listen", "admin-listen", "separate admin API address `host:port`; empty = on the proxy port", func(c *Config) any { return &c.AdminListen }, atRestart},
		{"admin_token", "admin-token", "bearer `token` of the admin API, required when it is reachable beyond loopback (prefer the environment variable)", func(c *Config) any { return &c.AdminToken }, atRestart},
		{"agent", "agent", "robots agent (product `token`, e.g. MJ12bot) for every request; empty = from each request's User-Agent; at most 128 bytes, and a request naming a longer one is refused 431", func(c *Config) any { return &c.Agent }, atReload},
		{"admin_hosts", "admin-hosts", "comma-separated host `names` (or addresses, without port) the admin API answers as Host besides its listener's own address and localhost: a request naming another host gets 421 (DNS rebinding); list the names clients reach it by, e.g. a Prometheus target's", func(c *Config) any { return &c.AdminHosts }, atRestart},
		{"agent_header", "agent-header", "request `header` that overrides the agent per request (stripped before forwarding); - disables", func(c *Config) any { return &c.AgentHeader }, atReload},
		{"allow_agent_override", "allow-agent-override", "let the agent override header replace a configured agent (otherwise it is stripped, ignored and audited)", func(c *Config) any { return &c.AllowAgentOverride }, atReload},
		{"purposes", "purpose", "what the crawlers use content for: comma-separated `purposes` among train-ai, search, ai-input, ai-use; a URL whose usage preferences disallow one is refused; empty = preferences reported, never enforced", func(c *Config) any { return &c.Purposes }, atReload},
		{"content_use", "content-use", "what the crawlers keep and re-share (Content Signals use=): `level` immediate, reference or full; a URL whose site states a lower level is refused; empty = levels reported, never enforced", func(c *Config) any { return &c.ContentUse }, atReload},
		{"mode", "mode", "`mode`: enforce (refuse disallowed URLs) or report (decide and audit, forward everything)", func(c *Config) any { return (*string)(&c.Mode) }, atReload},
		{"audit", "audit", "which decisions are audited (`level`): blocked or all", func(c *Config) any { return (*string)(&c.Audit) }, atReload},
		{"audit_log", "audit-log", "audit log `path` (JSON lines, appended, created 0640; its directory must exist), - for stdout", func(c *Config) any { return &c.AuditLog }, atRestart},
		{"audit_max_size_mb", "audit-max-size-mb", "rotate the audit file at this size in `MB`; 0 = never", func(c *Config) any { return &c.AuditMaxSizeMB }, atRestart},
		{"audit_max_backups", "audit-max-backups", "rotated audit files kept; 0 = all", func(c *Config) any { return &c.AuditMaxBackups }, atRestart},
		{"audit_max_age_days", "audit-max-age-days", "rotated audit files older than this many days are removed; 0 = never", func(c *Config) any { return &c.AuditMaxAgeDays }, atRestart},
		{"audit_digest_interval", "audit-digest-interval", "interval (`duration`) between the signed digest records of the audit log's hash chain; 0 = only at rotation and shutdown (see docs/audit.md)", func(c *Config) any { return &c.AuditDigestInterval }, atRestart},
		{"audit_key", "audit-key", "Ed25519 private key `file` (PEM PKCS#8 or JWK, mode 0600) that signs the audit digests; empty = signing.key's; digests are unsigned when both are empty", func(c *Config) any { return &c.AuditKey }, atRestart},
		{"audit_volume_interval", "audit-volume-interval", "the crawl report's volume records (per origin and identity: requests and bytes by status class, refusals by reason, opt-outs seen) are written every `duration`, and at shutdown; at least 10s; 0 = none", func(c *Config) any { return &c.Volume.Interval }, atRestart},
		{"audit_volume_max_origins", "", "origins (with their identity) counted separately per interval; the rest fold into one volume record without an origin", func(c *Config) any { return &c.Volume.MaxOrigins }, atRestart},
		{"log_level", "log-level", "operator log `level`: debug, info, warn or error", func(c *Config) any { return &c.LogLevel }, atRestart},
		{"log_format", "log-format", "operator log `format` on stderr: auto (console on a terminal, else JSON), json or console", func(c *Config) any { return &c.LogFormat }, atRestart},
		{"upstream_proxy", "upstream-proxy", "forward through this proxy `URL` (http:// or https://); empty = direct (HTTP(S)_PROXY is ignored)", func(c *Config) any { return &c.UpstreamProxy }, atRestart},
		{"max_url_bytes", "max-url-bytes", "request URLs (scheme, userinfo, host, path and query, percent-encoded) longer than this many `bytes` are answered 414 URI Too Long, audited, never decided; 1024 to 1048576", func(c *Config) any { return &c.MaxURLBytes }, atReload},
		{"reload_allow_empty", "reload-allow-empty", "let a reload (SIGHUP, POST /v1/reload) apply a configuration file that holds no setting (empty, or only comments); otherwise it is refused as a file caught mid-write. Set by flag or environment: an empty file cannot set it", func(c *Config) any { return &c.ReloadAllowEmpty }, atReload},
		{"shutdown_timeout", "shutdown-timeout", "bound (`duration`) for in-flight requests at SIGINT/SIGTERM", func(c *Config) any { return &c.ShutdownTimeout }, atRestart},
		{"client.max_header_bytes", "", "a request head (request line and headers) longer than this many bytes is answered 431, in plain HTTP and inside CONNECT sessions alike; 4096 to 16777216", func(c *Config) any { return &c.Client.MaxHeaderBytes }, atRestart},
		{"client.header_timeout", "", "bound of reading one request head, in plain HTTP and inside CONNECT sessions (where it also bounds the TLS handshake); the connection is closed", func(c *Config) any { return &c.Client.HeaderTimeout }, atRestart},
		{"client.idle_timeout", "", "silence allowed on a client connection between requests, and inside a CONNECT session while a request body or response goes through", func(c *Config) any { return &c.Client.IdleTimeout }, atRestart},
		{"cache", "cache", "robots.txt `cache`: memory (per process), or shared by a fleet: redis://host:port/db, redis-sentinel://host:port,…/master, redis-cluster://host:port,… (rediss… for TLS)", func(c *Config) any { return &c.Cache }, atRestart},
		{"sites", "", "per-site exceptions, YAML only: a list of {match, policy, note, crawl_delay, purposes}; match is an origin (https://partner.example), a host (slow.example) or *.domain; policy deny never fetches (403 site-denied), policy allow (note required) forwards what robots.txt refuses (audited, reason site-exception); crawl_delay is a floor on robots.txt's; purposes replace the declared ones; the most specific match wins, deny at equal specificity (see docs/configuration-reload.md)", func(c *Config) any { return &c.Sites }, atReload},
	}
}

// sectionOptions are the options of the sections (robots., https., ...).
func sectionOptions() []option {
	return []option{
		{"robots.user_agent", "robots-user-agent", "`User-Agent` of robots.txt fetches", func(c *Config) any { return &c.Robots.UserAgent }, atRestart},
		{"robots.fetch_timeout", "robots-fetch-timeout", "bound of one robots.txt fetch (`duration`), redirects and body included", func(c *Config) any { return &c.Robots.FetchTimeout }, atRestart},
		{"robots.max_bytes", "", "bytes of robots.txt parsed, the rest ignored (RFC 9309: at least 512000)", func(c *Config) any { return &c.Robots.MaxBytes }, atRestart},
		{"robots.max_redirects", "", "redirects followed (also across hosts); 0 = none; more = no robots.txt (all allowed)", func(c *Config) any { return &c.Robots.MaxRedirects }, atRestart},
		{"robots.ttl", "robots-ttl", "robots.txt cache lifetime (`duration`); Cache-Control: max-age is clamped to [robots.min_ttl, ttl]; never more than 24h (RFC 9309)", func(c *Config) any { return &c.Robots.TTL }, atRestart},
		{"robots.min_ttl", "", "lower clamp of Cache-Control: max-age; the lifetime of an answer marked no-store or no-cache", func(c *Config) any { return &c.Robots.MinTTL }, atRestart},
		{"robots.unreachable_window", "", "an origin unreachable for longer than this is treated as having no robots.txt", func(c *Config) any { return &c.Robots.UnreachableWindow }, atRestart},
		{"robots.retry_min", "", "first re-fetch after a failed fetch; doubles per failure", func(c *Config) any { return &c.Robots.RetryMin }, atRestart},
		{"robots.retry_max", "", "cap of the re-fetch backoff", func(c *Config) any { return &c.Robots.RetryMax }, atRestart},
		{"robots.max_entries", "", "origins kept in the in-process robots.txt cache (least recently used evicted)", func(c *Config) any { return &c.Robots.MaxEntries }, atRestart},
		{"robots.max_cache_mb", "", "memory bound of that cache in MiB, as the heap holds it (about 2.1 × the robots.txt body per origin on a typical mix); also sets the Go memory limit (see docs/production.md)", func(c *Config) any { return &c.Robots.MaxCacheMB }, atRestart},
		{"robots.documents_mb", "", "disk bound in MiB of the policy documents decisions used, kept under <https.data_dir>/documents (those used within 24h are kept beyond it; see docs/evidence.md); 0 keeps none", func(c *Config) any { return &c.Robots.DocumentsMB }, atRestart},
		{"upstream.max_idle_conns", "", "idle keep-alive connections to origins kept open in all (each costs two goroutines and two buffers); a focused crawl of few origins may raise it to 4096", func(c *Config) any { return &c.Upstream.MaxIdleConns }, atRestart},
		{"upstream.max_idle_conns_per_host", "", "idle keep-alive connections kept open to one origin; a focused crawl with many parallel connections to one origin should set its connection count (e.g. 256)", func(c *Config) any { return &c.Upstream.MaxIdleConnsPerHost }, atRestart},
		{"upstream.idle_timeout", "", "an idle keep-alive connection to an origin is closed after this `duration`", func(c *Config) any { return &c.Upstream.IdleTimeout }, atRestart},
		{"upstream.first_idle_timeout", "", "a connection that has carried one forwarded request is closed after this long idle (`duration`); 0 = idle_timeout. A focused crawl may set it to idle_timeout", func(c *Config) any { return &c.Upstream.FirstIdleTimeout }, atRestart},

		{"https.mode", "https", "CONNECT handling `mode`: mitm (decrypt with robotsgate's CA, enforce paths) or tunnel (host only)", func(c *Config) any { return (*string)(&c.HTTPS.Mode) }, atRestart},
		{"https.allowed_ports", "allowed-ports", "comma-separated `ports` CONNECT may reach, e.g. 443,8443", func(c *Config) any { return &c.HTTPS.AllowedPorts }, atReload},
		{"https.data_dir", "data-dir", "`dir`ectory of the generated CA (only its last directory is created: a missing parent is an error); empty = robotsgate/ under the user's config dir", func(c *Config) any { return &c.HTTPS.DataDir }, atRestart},
		{"https.ca_cert", "ca-cert", "custom MITM CA certificate `file` (PEM) instead of the generated CA; needs ca_key", func(c *Config) any { return &c.HTTPS.CACert }, atRestart},
		{"https.ca_key", "ca-key", "private key `file` (PEM, mode 0600) of ca_cert", func(c *Config) any { return &c.HTTPS.CAKey }, atRestart},
		{"https.upstream_roots", "upstream-roots", "comma-separated PEM `files` of extra roots trusted for upstream TLS, besides the system roots", func(c *Config) any { return &c.HTTPS.UpstreamRoots }, atRestart},

		{"politeness.crawl_delay", "", "honor: space requests to an origin by its Crawl-delay; ignore: don't", func(c *Config) any { return (*string)(&c.Politeness.CrawlDelay) }, atReload},
		{"politeness.default_crawl_delay", "", "delay for origins that state none; 0 = none", func(c *Config) any { return &c.Politeness.DefaultCrawlDelay }, atReload},
		{"politeness.max_crawl_delay", "", "larger Crawl-delay values are clamped to this", func(c *Config) any { return &c.Politeness.MaxCrawlDelay }, atReload},
		{"politeness.max_queue_wait", "", "a request that would wait longer gets 429 + Retry-After", func(c *Config) any { return &c.Politeness.MaxQueueWait }, atReload},
		{"politeness.backoff_start", "", "pause after a 503/429 without Retry-After; doubles per repeat", func(c *Config) any { return &c.Politeness.BackoffStart }, atReload},
		{"politeness.backoff_max", "", "cap of pauses, Retry-After included", func(c *Config) any { return &c.Politeness.BackoffMax }, atReload},
		{"politeness.max_concurrency", "", "per-origin limit of requests in flight; 0 = no limit", func(c *Config) any { return &c.Politeness.MaxConcurrency }, atReload},

		{"robot_tags.mode", "", "X-Robots-Tag / meta robots: off, annotate (audit and add a header) or enforce (refuse)", func(c *Config) any { return (*string)(&c.RobotTags.Mode) }, atReload},
		{"robot_tags.deny", "", "directives meaning \"do not keep\"", func(c *Config) any { return &c.RobotTags.Deny }, atReload},
		{"robot_tags.max_scan_bytes", "", "how much of an HTML body is scanned for meta tags; 0 = X-Robots-Tag headers only", func(c *Config) any { return &c.RobotTags.MaxScanBytes }, atReload},

		{"usage.unknown", "", "a declared purpose for which neither robots.txt nor the response states a preference: allow or deny", func(c *Config) any { return (*string)(&c.Usage.Unknown) }, atReload},
		{"usage.response", "", "a Content-Usage or Content-Signal response header, or a noai/noimageai tag, that disallows a declared purpose (or a Content-Signal use= below content_use): annotate (audit and add X-Robotsgate-Usage) or enforce (refuse)", func(c *Config) any { return (*string)(&c.Usage.Response) }, atReload},
		{"usage.purpose_header", "", "request header declaring the purposes per request (stripped before forwarding); replaces configured purposes only with allow_agent_override; - disables", func(c *Config) any { return &c.Usage.PurposeHeader }, atReload},

		{"tdmrep.mode", "tdmrep", "W3C TDMRep (/.well-known/tdmrep.json, tdm-reservation header and meta) for crawlers with a tdmrep.purposes purpose: off, report (audit and add X-Robotsgate-TDM) or enforce (refuse reserved URLs with tdm-reserved)", func(c *Config) any { return (*string)(&c.TDMRep.Mode) }, atReload},
		{"tdmrep.purposes", "tdmrep-purposes", "declared `purposes` that make TDMRep bind a crawler (text and data mining)", func(c *Config) any { return &c.TDMRep.Purposes }, atReload},

		{"signing.key", "signing-key", "Ed25519 private key `file` (PEM PKCS#8 as openssl genpkey -algorithm ed25519 writes it, or a JWK; mode 0600) that signs every forwarded request and robotsgate's own robots.txt and tdmrep.json fetches (Web Bot Auth, see docs/signing.md); empty = no signatures", func(c *Config) any { return &c.Signing.Key }, atReload},
		{"signing.agent", "signature-agent", "https `URL` of the key directory sent in Signature-Agent, e.g. https://crawler.example/.well-known/http-message-signatures-directory", func(c *Config) any { return &c.Signing.Agent }, atReload},
		{"signing.agent_form", "", "dictionary: Signature-Agent: sig1=\"https://…\" (draft -01); string: the legacy Signature-Agent: \"https://…\" that verifiers of earlier drafts expect", func(c *Config) any { return (*string)(&c.Signing.AgentForm) }, atReload},
		{"signing.components", "signing-components", "comma-separated `components` signed besides @authority and Signature-Agent: @method, @path, @query, @target-uri", func(c *Config) any { return &c.Signing.Components }, atReload},
		{"signing.expires", "", "lifetime of a signature after its creation; at most 24h", func(c *Config) any { return &c.Signing.Expires }, atReload},
		{"signing.publish", "", "further key files (private or public, PEM or JWK) listed in the key directory besides signing.key's: the next or the previous key of a rotation", func(c *Config) any { return &c.Signing.Publish }, atReload},

		{"transparent.listen", "transparent-listen", "transparent listener `host:port` for connections redirected by the robotsgate iptables rules (clients without proxy settings); [::]:15001 takes IPv4 and IPv6; empty = off", func(c *Config) any { return &c.Transparent.Listen }, atRestart},

		{"auth.credentials", "", "\"user:password\" pairs accepted in Proxy-Authorization: Basic", func(c *Config) any { return &c.Auth.Credentials }, atReload},
		{"auth.credentials_file", "credentials-file", "`file` of user:password lines (blank lines and # comments skipped; refused when group or others can read it: chmod 600): clients must send Proxy-Authorization: Basic", func(c *Config) any { return &c.Auth.CredentialsFile }, atReload},
		{"auth.allow_cidrs", "allow-cidrs", "comma-separated client networks (CIDRs or addresses) allowed to use the proxy; empty = any", func(c *Config) any { return &c.Auth.AllowCIDRs }, atReload},
		{"auth.allow_open", "allow-open", "waive the requirement that a non-loopback listen address has both credentials and allow_cidrs (configured ones still apply)", func(c *Config) any { return &c.Auth.AllowOpen }, atReload},
	}
}

// optionByKey returns the option of the YAML key, and whether there is one.
func optionByKey(key string) (option, bool) {
	for _, o := range options() {
		if o.key == key {
			return o, true
		}
	}
	return option{}, false
}

// EnvNames returns every environment variable Load reads.
func EnvNames() []string {
	names := []string{configFlag.env()}
	for _, o := range options() {
		if o.flag != "" {
			names = append(names, o.env())
		}
	}
	return names
}
