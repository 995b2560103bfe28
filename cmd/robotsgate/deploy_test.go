package main

// Tests of the container files at the repository root. There is no Docker
// engine on the development machines: docker-compose.yml is loaded with
// the real compose parser (compose-go, a test-only dependency: it is not
// linked into the binary) and the Dockerfile is parsed here, and both are
// checked against the real binary's subcommands, flags and environment
// variables.

import (
	"context"
	"encoding/json"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/mitm"
)

const repoRoot = "../.."

// loadCompose loads docker-compose.yml with env as the only environment
// (no .env file, no OS environment) and the given profiles.
func loadCompose(t *testing.T, env map[string]string, profiles ...string) (*types.Project, error) {
	t.Helper()
	var kv []string
	for k, v := range env {
		kv = append(kv, k+"="+v)
	}
	opts, err := cli.NewProjectOptions([]string{filepath.Join(repoRoot, "docker-compose.yml")},
		cli.WithWorkingDirectory(repoRoot),
		cli.WithEnv(kv),
		cli.WithProfiles(profiles),
		cli.WithInterpolation(true),
		cli.WithResolvedPaths(false),
	)
	if err != nil {
		t.Fatal(err)
	}
	return opts.LoadProject(context.Background())
}

// serviceEnv returns a service's environment as an env lookup func.
func serviceEnv(s types.ServiceConfig) map[string]string {
	m := map[string]string{}
	for k, v := range s.Environment {
		if v != nil {
			m[k] = *v
		}
	}
	return m
}

// volumeTarget returns where service s mounts the named volume, and
// whether read-only.
func volumeTarget(t *testing.T, s types.ServiceConfig, volume string) (string, bool) {
	t.Helper()
	for _, v := range s.Volumes {
		if v.Type == types.VolumeTypeVolume && v.Source == volume {
			return v.Target, v.ReadOnly
		}
	}
	t.Fatalf("service %s does not mount volume %s", s.Name, volume)
	return "", false
}

// knownEnv reports whether name is an environment variable robotsgate
// reads.
func knownEnv(name string) bool {
	return slices.Contains(config.EnvNames(), name)
}

func TestComposeWiring(t *testing.T) {
	const token = "compose-test-token"
	p, err := loadCompose(t, map[string]string{"ROBOTSGATE_ADMIN_TOKEN": token})
	if err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	rg, err := p.GetService("robotsgate")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := p.GetService("scraper")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.GetService("redis"); err == nil {
		t.Error("redis is enabled without the redis profile")
	}

	// robotsgate's environment is a valid configuration of the real binary.
	env := serviceEnv(rg)
	for k := range env {
		if strings.HasPrefix(k, "ROBOTSGATE_") && !knownEnv(k) {
			t.Errorf("robotsgate environment: %s is not a variable robotsgate reads", k)
		}
	}
	cfg, err := loadConfig(nil, envMap(env))
	if err != nil {
		t.Fatalf("robotsgate's environment does not load: %v", err)
	}
	host, port, _ := net.SplitHostPort(cfg.Listen)
	if host != "127.0.0.1" {
		t.Errorf("listen %s: the sidecar proxy must listen on loopback only", cfg.Listen)
	}
	if cfg.AdminToken != token {
		t.Errorf("admin token %q, want the one from the environment", cfg.AdminToken)
	}
	if cfg.Cache != "memory" {
		t.Errorf("cache %q without the redis profile", cfg.Cache)
	}
	if cfg.AuditMaxSizeMB <= 0 {
		t.Error("audit log not rotated")
	}

	// Volumes: the CA in the data volume, the audit log in the audit volume.
	if tgt, _ := volumeTarget(t, rg, "robotsgate-data"); tgt != cfg.HTTPS.DataDir {
		t.Errorf("robotsgate-data mounted at %s, data dir is %s", tgt, cfg.HTTPS.DataDir)
	}
	if tgt, _ := volumeTarget(t, rg, "robotsgate-audit"); tgt != path.Dir(cfg.AuditLog) {
		t.Errorf("robotsgate-audit mounted at %s, audit log is %s", tgt, cfg.AuditLog)
	}
	for _, v := range []string{"robotsgate-data", "robotsgate-audit"} {
		if _, ok := p.Volumes[v]; !ok {
			t.Errorf("volume %s not declared", v)
		}
	}

	// Ports: only the admin API, on the host's loopback, at admin_listen's port.
	_, adminPort, _ := net.SplitHostPort(cfg.AdminListen)
	if len(rg.Ports) != 1 || rg.Ports[0].HostIP != "127.0.0.1" || rg.Ports[0].Published != adminPort ||
		rg.Ports[0].Target != mustAtoi(t, adminPort) {
		t.Errorf("ports %+v, want 127.0.0.1:%s:%s only", rg.Ports, adminPort, adminPort)
	}
	if rg.HealthCheck == nil || !slices.Equal([]string(rg.HealthCheck.Test), []string{"CMD", "/robotsgate", "health"}) {
		t.Errorf("healthcheck %+v", rg.HealthCheck)
	}
	if !rg.ReadOnly || !slices.Contains(rg.CapDrop, "ALL") {
		t.Error("robotsgate should run with a read-only root and no capabilities")
	}

	// The scraper shares robotsgate's network namespace and uses it as proxy.
	if sc.NetworkMode != "service:robotsgate" {
		t.Errorf("scraper network_mode %q", sc.NetworkMode)
	}
	if dep, ok := sc.DependsOn["robotsgate"]; !ok || dep.Condition != types.ServiceConditionHealthy {
		t.Errorf("scraper depends_on %+v, want robotsgate healthy", sc.DependsOn)
	}
	senv := serviceEnv(sc)
	proxyURL := "http://127.0.0.1:" + port
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"} {
		if senv[k] != proxyURL {
			t.Errorf("scraper %s = %q, want %q", k, senv[k], proxyURL)
		}
	}
	// ... and trusts robotsgate's CA from the shared volume, read-only.
	caDir, ro := volumeTarget(t, sc, "robotsgate-data")
	if !ro {
		t.Error("the scraper mounts robotsgate's data volume writable")
	}
	caFile := path.Join(caDir, mitm.CACertFileName)
	for _, k := range []string{"SSL_CERT_FILE", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS"} {
		if senv[k] != caFile {
			t.Errorf("scraper %s = %q, want %q", k, senv[k], caFile)
		}
	}
	// The CA key is mode 0600 for robotsgate's uid: the scraper must run as
	// another, non-root uid.
	uid, _, _ := strings.Cut(sc.User, ":")
	if uid == "" || uid == "0" || uid == "root" || uid == dockerfileUID(t) {
		t.Errorf("scraper user %q can read the CA key", sc.User)
	}
	if len(sc.Command) == 0 || !strings.Contains(strings.Join(sc.Command, " "), "curl") {
		t.Errorf("scraper command %q", sc.Command)
	}

	// Without the admin token the project refuses to load, with a hint.
	if _, err := loadCompose(t, nil); err == nil || !strings.Contains(err.Error(), "ROBOTSGATE_ADMIN_TOKEN") {
		t.Errorf("compose without ROBOTSGATE_ADMIN_TOKEN: %v, want an error naming it", err)
	}
}

func TestComposeRedisProfile(t *testing.T) {
	p, err := loadCompose(t, map[string]string{"ROBOTSGATE_ADMIN_TOKEN": "t", "ROBOTSGATE_CACHE": "redis://redis:6379/0"}, "redis")
	if err != nil {
		t.Fatalf("docker-compose.yml --profile redis: %v", err)
	}
	redis, err := p.GetService("redis")
	if err != nil {
		t.Fatalf("redis service not enabled by its profile: %v", err)
	}
	if !slices.Equal(redis.Profiles, []string{"redis"}) {
		t.Errorf("redis profiles %v", redis.Profiles)
	}
	rg, err := p.GetService("robotsgate")
	if err != nil {
		t.Fatal(err)
	}
	if dep, ok := rg.DependsOn["redis"]; !ok || dep.Required {
		t.Errorf("robotsgate depends_on redis %+v, want an optional dependency", rg.DependsOn)
	}
	cache := serviceEnv(rg)["ROBOTSGATE_CACHE"]
	u, err := url.Parse(cache)
	if err != nil || u.Scheme != "redis" || u.Hostname() != redis.Name || u.Port() != "6379" {
		t.Errorf("ROBOTSGATE_CACHE = %q, want redis://%s:6379/...", cache, redis.Name)
	}
	if !strings.Contains(strings.Join(redis.Command, " "), "redis-server") {
		t.Errorf("redis command %q", redis.Command)
	}
}

func mustAtoi(t *testing.T, s string) uint32 {
	t.Helper()
	var n uint32
	for _, c := range s {
		if c < '0' || c > '9' {
			t.Fatalf("%q is not a port", s)
		}
		n = n*10 + uint32(c-'0')
	}
	return n
}

// digestPinned reports whether image is pinned by digest, with a tag for
// readers: name:tag@sha256:<64 hex digits>.
func digestPinned(image string) bool {
	return regexp.MustCompile(`^[a-z0-9./_-]+:[A-Za-z0-9._-]+@sha256:[0-9a-f]{64}$`).MatchString(image)
}

// instruction is one Dockerfile instruction.
type instruction struct {
	Cmd  string // upper-cased, e.g. "RUN"
	Args string // the rest, continuation lines joined
}

// parseDockerfile splits a Dockerfile into instructions: comments and
// blank lines dropped, backslash continuations joined.
func parseDockerfile(t *testing.T, name string) []instruction {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var out []instruction
	var cur strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") || (trimmed == "" && cur.Len() == 0) {
			continue
		}
		if strings.HasSuffix(trimmed, "\\") {
			cur.WriteString(strings.TrimSuffix(trimmed, "\\") + " ")
			continue
		}
		cur.WriteString(trimmed)
		full := strings.TrimSpace(cur.String())
		cur.Reset()
		if full == "" {
			continue
		}
		cmd, args, _ := strings.Cut(full, " ")
		out = append(out, instruction{Cmd: strings.ToUpper(cmd), Args: strings.TrimSpace(args)})
	}
	return out
}

// find returns the instructions named cmd.
func find(ins []instruction, cmd string) []instruction {
	var out []instruction
	for _, i := range ins {
		if i.Cmd == cmd {
			out = append(out, i)
		}
	}
	return out
}

// execForm parses an exec-form (JSON array) argument.
func execForm(t *testing.T, s string) []string {
	t.Helper()
	var v []string
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%q is not an exec-form JSON array: %v", s, err)
	}
	return v
}

// shellWords splits a command line on spaces, honouring double quotes
// (enough for the Dockerfile's build line).
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	inQuote, have := false, false
	for _, c := range s {
		switch {
		case c == '"':
			inQuote, have = !inQuote, true
		case c == ' ' && !inQuote:
			if have {
				words = append(words, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteRune(c)
			have = true
		}
	}
	if have {
		words = append(words, cur.String())
	}
	return words
}

// dockerfileEnv returns the ENV variables of the Dockerfile.
func dockerfileEnv(t *testing.T, ins []instruction) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, e := range find(ins, "ENV") {
		for _, kv := range shellWords(e.Args) {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				t.Fatalf("ENV %q: use the KEY=VALUE form", e.Args)
			}
			env[k] = v
		}
	}
	return env
}

// dockerfileUID returns the uid of the Dockerfile's USER.
func dockerfileUID(t *testing.T) string {
	t.Helper()
	users := find(parseDockerfile(t, filepath.Join(repoRoot, "Dockerfile")), "USER")
	if len(users) == 0 {
		t.Fatal("Dockerfile has no USER")
	}
	uid, _, _ := strings.Cut(users[len(users)-1].Args, ":")
	return uid
}

func TestDockerfile(t *testing.T) {
	ins := parseDockerfile(t, filepath.Join(repoRoot, "Dockerfile"))

	// Stages: a Go builder matching go.mod's Go version, a distroless final stage.
	froms := find(ins, "FROM")
	if len(froms) != 2 {
		t.Fatalf("want a two-stage build, got FROM %v", froms)
	}
	gomod, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	// The official Go image sets GOTOOLCHAIN=local: its Go must be at
	// least go.mod's, patch level included.
	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+(?:\.\d+)?)\s*$`).FindStringSubmatch(string(gomod))
	if goVersion == nil || !strings.HasPrefix(froms[0].Args, "golang:"+goVersion[1]+"@") ||
		!strings.HasSuffix(froms[0].Args, " AS build") {
		t.Errorf("builder %q does not match go.mod's go %v", froms[0].Args, goVersion)
	}
	// Every base image is pinned by digest.
	for _, f := range froms {
		image, _, _ := strings.Cut(f.Args, " ")
		if !digestPinned(image) {
			t.Errorf("FROM %s is not pinned by digest (name:tag@sha256:<64 hex>)", image)
		}
	}
	if !strings.HasPrefix(froms[1].Args, "gcr.io/distroless/static") || !strings.Contains(froms[1].Args, "nonroot") {
		t.Errorf("final stage %q, want distroless static nonroot", froms[1].Args)
	}
	if uid := dockerfileUID(t); uid == "0" || uid == "root" || uid == "" {
		t.Errorf("USER %q: the image must not run as root", uid)
	}

	// The build command: static, trimmed, stripped, of ./cmd/robotsgate.
	var build []string
	for _, r := range find(ins, "RUN") {
		if strings.Contains(r.Args, "go build") {
			build = shellWords(r.Args)
		}
	}
	if build == nil {
		t.Fatal("no RUN go build")
	}
	var buildEnv []string
	for len(build) > 0 && strings.Contains(build[0], "=") {
		buildEnv, build = append(buildEnv, build[0]), build[1:]
	}
	if !slices.Contains(buildEnv, "CGO_ENABLED=0") {
		t.Errorf("build env %v lacks CGO_ENABLED=0 (static binary for distroless/static)", buildEnv)
	}
	if len(build) < 3 || build[0] != "go" || build[1] != "build" {
		t.Fatalf("build command %q", build)
	}
	args := build[2:]
	if !slices.Contains(args, "-trimpath") || !slices.Contains(args, "-s -w") {
		t.Errorf("build args %q lack -trimpath or -ldflags \"-s -w\"", args)
	}
	oi := slices.Index(args, "-o")
	if oi < 0 || oi+1 >= len(args) {
		t.Fatalf("build args %q lack -o", args)
	}
	built := args[oi+1]
	if pkg := args[len(args)-1]; pkg != "./cmd/robotsgate" {
		t.Errorf("builds %s, want ./cmd/robotsgate", pkg)
	}
	// The exact command is valid for the go tool (flags, package): go
	// build -n plans the build without compiling.
	dry := append([]string{"build", "-n"}, args...)
	dry[slices.Index(dry, "-o")+1] = filepath.Join(t.TempDir(), "robotsgate")
	cmd := exec.Command("go", dry...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), buildEnv...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("go %s: %v\n%s", strings.Join(dry, " "), err, out)
	}

	// The built binary is copied to the ENTRYPOINT.
	entry := execForm(t, find(ins, "ENTRYPOINT")[0].Args)
	copied := false
	for _, c := range find(ins, "COPY") {
		f := strings.Fields(c.Args)
		if slices.Contains(f, "--from=build") && f[len(f)-2] == built && f[len(f)-1] == entry[0] {
			copied = true
		}
	}
	if len(entry) != 1 || !copied {
		t.Errorf("ENTRYPOINT %q is not the binary built at %s", entry, built)
	}

	// ENV: only variables robotsgate reads.
	env := dockerfileEnv(t, ins)
	for k := range env {
		if !knownEnv(k) {
			t.Errorf("ENV %s is not a variable robotsgate reads", k)
		}
	}

	// CMD through the real dispatcher and flag parser. Without credentials
	// the image refuses to be an open proxy ...
	cmdArgs := execForm(t, find(ins, "CMD")[0].Args)
	if len(cmdArgs) == 0 || cmdArgs[0] != "serve" {
		t.Fatalf("CMD %q, want serve", cmdArgs)
	}
	if _, err := loadConfig(cmdArgs[1:], envMap(env)); err == nil || !strings.Contains(err.Error(), "allow_open") {
		t.Errorf("image defaults without credentials: %v, want the open-proxy refusal", err)
	}
	// ... and with them (what the README's docker run passes) it is valid.
	withAuth := map[string]string{"ROBOTSGATE_CREDENTIALS_FILE": "/run/secrets/robotsgate-credentials",
		"ROBOTSGATE_ALLOW_CIDRS": "0.0.0.0/0,::/0", "ROBOTSGATE_ADMIN_TOKEN": "t"}
	for k, v := range env {
		withAuth[k] = v
	}
	cfg, err := loadConfig(cmdArgs[1:], envMap(withAuth))
	if err != nil {
		t.Fatalf("CMD %q with the image's ENV: %v", cmdArgs, err)
	}

	// EXPOSE is the listen port; the data dir and audit log are volumes.
	_, port, _ := net.SplitHostPort(cfg.Listen)
	if ex := find(ins, "EXPOSE"); len(ex) != 1 || ex[0].Args != port {
		t.Errorf("EXPOSE %v, listen %s", ex, cfg.Listen)
	}
	vols := execForm(t, find(ins, "VOLUME")[0].Args)
	if !slices.Contains(vols, cfg.HTTPS.DataDir) || !slices.Contains(vols, path.Dir(cfg.AuditLog)) {
		t.Errorf("VOLUME %q, want the data dir %s and the audit log's dir %s", vols, cfg.HTTPS.DataDir, path.Dir(cfg.AuditLog))
	}

	// HEALTHCHECK runs a real subcommand of the binary.
	hc := find(ins, "HEALTHCHECK")
	if len(hc) != 1 {
		t.Fatal("no HEALTHCHECK")
	}
	_, hcCmd, ok := strings.Cut(hc[0].Args, "CMD ")
	if !ok {
		t.Fatalf("HEALTHCHECK %q", hc[0].Args)
	}
	probe := execForm(t, hcCmd)
	if probe[0] != entry[0] || len(probe) < 2 {
		t.Fatalf("HEALTHCHECK runs %q, not the binary %s", probe, entry[0])
	}
	var out, errOut strings.Builder
	if code := run(context.Background(), append(probe[1:], "-h"), envMap(withAuth), nil, &out, &errOut); code != 0 {
		t.Errorf("robotsgate %s -h: exit %d: %s", strings.Join(probe[1:], " "), code, errOut.String())
	}
}
