package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// validateAccess checks the auth: section and the audit rotation and
// digest keys.
func (c *Config) validateAccess() error {
	for i, cr := range c.Auth.Credentials {
		if err := CheckCredential(cr); err != nil {
			return errorf(fmt.Sprintf("auth.credentials[%d]", i), "%w", err)
		}
	}
	switch {
	case c.AuditMaxSizeMB < 0:
		return errorf("audit_max_size_mb", "%d is negative", c.AuditMaxSizeMB)
	case c.AuditMaxBackups < 0:
		return errorf("audit_max_backups", "%d is negative", c.AuditMaxBackups)
	case c.AuditMaxAgeDays < 0:
		return errorf("audit_max_age_days", "%d is negative", c.AuditMaxAgeDays)
	case c.AuditDigestInterval < 0:
		return errorf("audit_digest_interval", "%v is negative", c.AuditDigestInterval)
	case c.AuditDigestInterval > 0 && c.AuditDigestInterval < time.Second:
		return errorf("audit_digest_interval", "%v is shorter than 1s", c.AuditDigestInterval)
	case c.AuditMaxSizeMB > 0 && (c.AuditLog == "" || c.AuditLog == "-"):
		return errorf("audit_max_size_mb", "rotation needs audit_log to be a file path")
	}
	return nil
}

// validateAdmin checks the form of admin_listen and admin_token
// (validateExposure whether a token is needed).
func (c *Config) validateAdmin() error {
	if c.AdminListen != "" {
		if err := checkHostPort("admin_listen", c.AdminListen); err != nil {
			return err
		}
	}
	if strings.ContainsAny(c.AdminToken, " \t\r\n") {
		return errorf("admin_token", "must not contain spaces or line breaks")
	}
	return c.validateAdminHosts()
}

// validateExposure checks what a listener beyond loopback requires and
// reports everything missing at once, each with its YAML key, flag and
// environment variable: on the proxy, credentials and client networks
// (each turned off only explicitly: the client networks by listing every
// address, both by auth.allow_open); on the admin API, wherever it
// listens, admin_token, which allow_open does not waive.
func (c *Config) validateExposure() error {
	var missing []string
	openProxy := !IsLoopbackAddr(c.Listen)
	if openProxy && !c.Auth.AllowOpen {
		if len(c.Auth.Credentials) == 0 && c.Auth.CredentialsFile == "" {
			missing = append(missing, "credentials: "+where("auth.credentials")+" or "+where("auth.credentials_file"))
		}
		if len(c.Auth.AllowCIDRs) == 0 {
			missing = append(missing, "client networks (0.0.0.0/0 and ::/0 for any): "+where("auth.allow_cidrs"))
		}
	}
	adminKey, admin := "admin_listen", c.AdminListen
	if admin == "" {
		adminKey, admin = "listen", c.Listen
	}
	if !IsLoopbackAddr(admin) && c.AdminToken == "" {
		missing = append(missing, fmt.Sprintf("admin API token, as the admin API on %s %q is reachable beyond loopback: %s",
			adminKey, admin, where("admin_token")))
	}
	if len(missing) == 0 {
		return nil
	}
	key, addr := "listen", c.Listen
	if !openProxy {
		key, addr = "admin_listen", c.AdminListen
	}
	msg := fmt.Sprintf("%q is not a loopback address; missing: %s", addr, strings.Join(missing, "; "))
	if openProxy && !c.Auth.AllowOpen {
		msg += "; or waive credentials and client networks on purpose with auth.allow_open: true" + flagOf("auth.allow_open") +
			" (configured ones still apply; admin_token is never waived)"
	}
	return errorf(key, "%s", msg)
}

// where names the setting key for an error message: the YAML key, and
// its flag and environment variable when it has them.
func where(key string) string { return key + flagOf(key) }

// flagOf returns " (flag -…, env …)" of the setting key, or "" when it
// has no flag.
func flagOf(key string) string {
	if o, ok := optionByKey(key); ok && o.flag != "" {
		return fmt.Sprintf(" (flag -%s, env %s)", o.flag, o.env())
	}
	return ""
}

// CheckAuditDir reports, as one line naming audit_log, when the audit log
// is a file whose directory does not exist or is not a directory.
// robotsgate never creates that directory: a mistyped path would create
// directories (as root, perhaps) and audit where nobody looks.
func (c *Config) CheckAuditDir() error {
	if c.AuditLog == "-" || c.AuditLog == "" {
		return nil
	}
	dir := filepath.Dir(c.AuditLog)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errorf("audit_log", "directory %q does not exist; create it first (robotsgate does not create directories)", dir)
	case err != nil:
		return errorf("audit_log", "directory %q: %w", dir, err)
	case !fi.IsDir():
		return errorf("audit_log", "%q is not a directory", dir)
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
