package config

import (
	"errors"
	"fmt"
	"strings"
)

// validateAccess checks the auth: section and the audit rotation keys.
func (c *Config) validateAccess() error {
	for i, cr := range c.Auth.Credentials {
		if err := CheckCredential(cr); err != nil {
			return errorf(fmt.Sprintf("auth.credentials[%d]", i), "%w", err)
		}
	}
	if c.Listen != "" && !IsLoopbackAddr(c.Listen) && !c.Auth.AllowOpen {
		// Beyond loopback both controls are required; each is turned off
		// only explicitly: the client networks by listing every address
		// (allow_cidrs: [0.0.0.0/0, "::/0"]), both by allow_open: true.
		var missing []string
		if len(c.Auth.Credentials) == 0 && c.Auth.CredentialsFile == "" {
			missing = append(missing, "credentials (auth.credentials or auth.credentials_file)")
		}
		if len(c.Auth.AllowCIDRs) == 0 {
			missing = append(missing, "client networks (auth.allow_cidrs; [0.0.0.0/0, \"::/0\"] for any)")
		}
		if len(missing) > 0 {
			return errorf("listen", "%q is not a loopback address, which requires both proxy credentials and client networks; missing: %s; "+
				"or set auth.allow_open: true to waive both on purpose (configured ones still apply)", c.Listen, strings.Join(missing, " and "))
		}
	}
	switch {
	case c.AuditMaxSizeMB < 0:
		return errorf("audit_max_size_mb", "%d is negative", c.AuditMaxSizeMB)
	case c.AuditMaxBackups < 0:
		return errorf("audit_max_backups", "%d is negative", c.AuditMaxBackups)
	case c.AuditMaxAgeDays < 0:
		return errorf("audit_max_age_days", "%d is negative", c.AuditMaxAgeDays)
	case c.AuditMaxSizeMB > 0 && (c.AuditLog == "" || c.AuditLog == "-"):
		return errorf("audit_max_size_mb", "rotation needs audit_log to be a file path")
	}
	return nil
}

// validateAdmin checks admin_listen and admin_token.
func (c *Config) validateAdmin() error {
	if c.AdminListen != "" {
		if err := checkHostPort("admin_listen", c.AdminListen); err != nil {
			return err
		}
	}
	admin, key := c.AdminListen, "admin_listen"
	if admin == "" {
		admin, key = c.Listen, "listen"
	}
	if admin != "" && !IsLoopbackAddr(admin) && c.AdminToken == "" {
		return errorf("admin_token", "the admin API is reachable beyond loopback (%s %q): set admin_token", key, admin)
	}
	if strings.ContainsAny(c.AdminToken, " \t\r\n") {
		return errorf("admin_token", "must not contain spaces or line breaks")
	}
	return nil
}

// CheckCredential reports whether c is a usable "user:password" pair.
// The error never contains the password.
func CheckCredential(c string) error {
	user, _, ok := strings.Cut(c, ":")
	switch {
	case !ok:
		return errors.New(`want "user:password" (no colon found)`)
	case user == "":
		return errors.New(`want "user:password" (empty user)`)
	case strings.ContainsAny(c, "\r\n"):
		return errors.New("credential contains a line break")
	}
	return nil
}
