package config

import (
	"reflect"
	"strings"
)

// restartKeys are the settings that only a restart changes: listeners,
// the audit log, the operator log, the robots.txt cache and fetcher, the
// outbound transport (upstream proxy and roots) and robotsgate's CA. A
// key ending in "." stands for its whole section. Every other setting
// may change at run time (SIGHUP, POST /v1/reload).
var restartKeys = []string{
	"listen", "admin_listen", "admin_token",
	"audit_log", "audit_max_size_mb", "audit_max_backups", "audit_max_age_days",
	"log_level", "log_format", "upstream_proxy", "shutdown_timeout", "cache",
	"client.", "robots.", "transparent.",
	"https.mode", "https.data_dir", "https.ca_cert", "https.ca_key", "https.upstream_roots",
}

// RestartOnly reports whether the setting key changes only at a restart.
func RestartOnly(key string) bool {
	for _, k := range restartKeys {
		if key == k || strings.HasSuffix(k, ".") && strings.HasPrefix(key, k) {
			return true
		}
	}
	return false
}

// Changes returns the keys whose values differ between old and new, split
// into those a reload applies and those that need a restart.
func Changes(old, new Config) (applied, restart []string) {
	applied = []string{}
	for _, o := range options() {
		if reflect.DeepEqual(reflect.ValueOf(o.field(&old)).Elem().Interface(), reflect.ValueOf(o.field(&new)).Elem().Interface()) {
			continue
		}
		if RestartOnly(o.key) {
			restart = append(restart, o.key)
		} else {
			applied = append(applied, o.key)
		}
	}
	return applied, restart
}

// WithRestartOnly returns cfg with every setting that only a restart
// changes taken from running: the configuration a reload puts in force.
// Validate it again: a setting kept may need another that changed (a
// listen address beyond loopback needs credentials).
func WithRestartOnly(cfg, running Config) Config {
	for _, o := range options() {
		if RestartOnly(o.key) {
			reflect.ValueOf(o.field(&cfg)).Elem().Set(reflect.ValueOf(o.field(&running)).Elem())
		}
	}
	return cfg
}
