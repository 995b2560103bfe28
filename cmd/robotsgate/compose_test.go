package main

import (
	"context"
	"net"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/proxy/mitm"
)

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
	cfg, err := loadConfig(nil, testsupport.EnvMap(env))
	if err != nil {
		t.Fatalf("robotsgate's environment does not load: %v", err)
	}
	host, _, _ := net.SplitHostPort(cfg.Listen)
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
	// Enforced without its cooperation: no proxy settings at all, the
	// rules of robotsgate-init redirect its connections (composeInit).
	for k := range senv {
		if strings.HasSuffix(strings.ToLower(k), "_proxy") {
			t.Errorf("scraper has proxy setting %s: the transparent sidecar needs none", k)
		}
	}
	composeInit(t, p, cfg)
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

// composeInit checks the init service of the transparent sidecar: in
// robotsgate's network namespace, root with NET_ADMIN, it applies the
// rules for robotsgate's uid and transparent port and exits before the
// scraper starts; robotsgate keeps no capability.
func composeInit(t *testing.T, p *types.Project, cfg config.Config) {
	t.Helper()
	in, err := p.GetService("robotsgate-init")
	if err != nil {
		t.Fatal(err)
	}
	if in.NetworkMode != "service:robotsgate" {
		t.Errorf("robotsgate-init network_mode %q, want robotsgate's namespace", in.NetworkMode)
	}
	if !slices.Contains(in.CapAdd, "NET_ADMIN") || !slices.Contains(in.CapDrop, "ALL") || in.User != "0:0" {
		t.Errorf("robotsgate-init: user %q, cap_add %v, cap_drop %v; want root with NET_ADMIN only", in.User, in.CapAdd, in.CapDrop)
	}
	if in.Restart != "no" && in.Restart != "" {
		t.Errorf("robotsgate-init restart %q: it runs once", in.Restart)
	}
	cmd := strings.Join(in.Command, " ")
	_, tport, err := net.SplitHostPort(cfg.Transparent.Listen)
	if err != nil {
		t.Fatalf("robotsgate has no transparent listener: %q", cfg.Transparent.Listen)
	}
	if !strings.HasPrefix(cmd, "iptables -apply") || !strings.Contains(cmd, "-uid "+dockerfileUID(t)) || !strings.Contains(cmd, "-to-port "+tport) {
		t.Errorf("robotsgate-init command %q: want iptables -apply -uid %s -to-port %s", cmd, dockerfileUID(t), tport)
	}
	if in.Build == nil || in.Build.Dockerfile != "Dockerfile.iptables" {
		t.Errorf("robotsgate-init build %+v, want Dockerfile.iptables (the distroless image has no iptables)", in.Build)
	}
	sc, _ := p.GetService("scraper")
	if dep, ok := sc.DependsOn["robotsgate-init"]; !ok || dep.Condition != types.ServiceConditionCompletedSuccessfully {
		t.Errorf("scraper depends_on %+v, want robotsgate-init completed successfully", sc.DependsOn)
	}
	rg, _ := p.GetService("robotsgate")
	if len(rg.CapAdd) > 0 || rg.User != "" && rg.User != dockerfileUID(t) {
		t.Errorf("robotsgate: cap_add %v, user %q; it keeps no capability and runs as the image's uid", rg.CapAdd, rg.User)
	}
}
