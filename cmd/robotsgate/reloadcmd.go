package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/robotsgate/robotsgate/internal/config"
)

// reloadTimeout bounds "robotsgate reload": a reload reads and validates
// the configuration and the credentials file.
const reloadTimeout = 30 * time.Second

const reloadUsage = `Usage: robotsgate reload [serve flags]

Asks the robotsgate configured by the same flags, environment and file
(its admin address: admin_listen, else listen) to read its configuration
again: POST /v1/reload with the admin token (admin_token, best given as
ROBOTSGATE_ADMIN_TOKEN). Only that instance reloads, unlike a SIGHUP to
every process of the name. A file that does not load is sent to the
instance all the same (found with the flags and environment alone).
Exit status: 0 when the new configuration is in force, 1 when it was
refused (the running one is kept) or the instance could not be asked, 2
for a usage error.`

// reloadAnswer is the part of POST /v1/reload's answer printed.
type reloadAnswer struct {
	Result       string   `json:"result"`
	Changed      []string `json:"changed"`
	NeedsRestart []string `json:"needs_restart"`
	Error        string   `json:"error"`
}

// runReload is "robotsgate reload".
func runReload(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	cfg, err := loadConfig(args, env)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stdout, reloadUsage)
		return 0
	}
	if err != nil {
		return reloadInvalid(ctx, args, env, err, stdout, stderr)
	}
	if cfg.AdminToken == "" {
		return fail(stderr, 2, errors.New("reload: no admin token: set ROBOTSGATE_ADMIN_TOKEN (or admin_token) to the token the instance runs with"))
	}
	addr := cfg.AdminListen
	if addr == "" {
		addr = cfg.Listen
	}
	target, err := probeAddr(addr) // health.go
	if err != nil {
		return fail(stderr, 2, err)
	}
	ans, err := postReload(ctx, "http://"+target+"/v1/reload", cfg.AdminToken)
	if err != nil {
		return fail(stderr, 1, err)
	}
	line := "reloaded: changed " + orNone(ans.Changed)
	if len(ans.NeedsRestart) > 0 {
		line += "; needs a restart: " + strings.Join(ans.NeedsRestart, ", ")
	}
	fmt.Fprintln(stdout, printable(line))
	return 0
}

// reloadInvalid is "robotsgate reload" when the configuration does not
// load (invalid): the instance, found with the flags and environment
// alone, is asked all the same, since it reads its own file and says
// what it makes of it; the reload is refused (exit 1) unless it takes
// it. Flags or an environment that are invalid without the file are a
// usage error (exit 2).
func reloadInvalid(ctx context.Context, args []string, env func(string) string, cerr error, stdout, stderr io.Writer) int {
	base, err := config.LoadWithoutFile(args, env)
	if err != nil {
		return fail(stderr, 2, cerr)
	}
	addr := base.AdminListen
	if addr == "" {
		addr = base.Listen
	}
	target, err := probeAddr(addr) // health.go
	if base.AdminToken == "" || err != nil {
		return fail(stderr, 1, fmt.Errorf("reload refused: %w (the running instance was not asked: no admin token or address outside the file)", cerr))
	}
	ans, err := postReload(ctx, "http://"+target+"/v1/reload", base.AdminToken)
	if err != nil {
		return fail(stderr, 1, err)
	}
	fmt.Fprintln(stdout, printable("reloaded: changed "+orNone(ans.Changed)))
	return 0
}

// orNone joins list, "nothing" when it is empty.
func orNone(list []string) string {
	if len(list) == 0 {
		return "nothing"
	}
	return strings.Join(list, ", ")
}

// postReload sends POST url with the bearer token, directly (never
// through HTTP_PROXY), and returns the answer of a reload that took
// effect; an error says why not.
func postReload(ctx context.Context, url, token string) (reloadAnswer, error) {
	var ans reloadAnswer
	ctx, cancel := context.WithTimeout(ctx, reloadTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return ans, fmt.Errorf("reload: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	client := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		return ans, fmt.Errorf("reload: %w (is robotsgate running with this admin address?)", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_ = json.Unmarshal(body, &ans)
	switch {
	case resp.StatusCode == http.StatusOK:
		return ans, nil
	case resp.StatusCode == http.StatusUnprocessableEntity:
		return ans, fmt.Errorf("reload refused, the running configuration is kept: %s", printable(ans.Error))
	case resp.StatusCode == http.StatusUnauthorized:
		return ans, errors.New("reload: the instance refused the admin token (401): give the token it runs with")
	}
	var e struct{ Error string }
	_ = json.Unmarshal(body, &e)
	return ans, fmt.Errorf("reload: POST %s: %s %s", url, resp.Status, printable(e.Error))
}
