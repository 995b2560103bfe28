package config

import "reflect"

// RestartOnly reports whether the setting key changes only at a restart:
// listeners, the audit log, the operator log, the robots.txt cache and
// fetcher, the outbound transport (upstream proxy, roots, idle
// connections) and robotsgate's CA, as the options table marks them
// ([option.restart]). Every other setting may change at run time (SIGHUP,
// POST /v1/reload).
func RestartOnly(key string) bool {
	for _, o := range options() {
		if o.key == key {
			return o.restart
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
		if o.restart {
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
		if o.restart {
			reflect.ValueOf(o.field(&cfg)).Elem().Set(reflect.ValueOf(o.field(&running)).Elem())
		}
	}
	return cfg
}
