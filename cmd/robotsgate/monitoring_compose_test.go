package main

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"
	"github.com/robotsgate/robotsgate/internal/testsupport"
	"gopkg.in/yaml.v3"
)

// promConfig is the part of configs/prometheus/prometheus.yml the tests read.
type promConfig struct {
	RuleFiles     []string `yaml:"rule_files"`
	ScrapeConfigs []struct {
		JobName       string `yaml:"job_name"`
		MetricsPath   string `yaml:"metrics_path"`
		Authorization struct {
			CredentialsFile string `yaml:"credentials_file"`
		}
		StaticConfigs []struct{ Targets []string } `yaml:"static_configs"`
	} `yaml:"scrape_configs"`
}

// TestComposeMonitoringProfile: the monitoring profile runs Prometheus
// with configs/prometheus (scraping robotsgate's admin API with the admin
// token) and Grafana with the dashboard where its provisioning looks.
func TestComposeMonitoringProfile(t *testing.T) {
	env := map[string]string{"ROBOTSGATE_ADMIN_TOKEN": "monitoring-test-token"}
	p, err := loadCompose(t, env, "monitoring")
	if err != nil {
		t.Fatalf("docker-compose.yml --profile monitoring: %v", err)
	}
	def, err := loadCompose(t, env)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"prometheus", "grafana"} {
		svc, err := p.GetService(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, port := range svc.Ports {
			if port.HostIP != "127.0.0.1" {
				t.Errorf("%s publishes %+v beyond the host's loopback", s, port)
			}
		}
		if _, err := def.GetService(s); err == nil {
			t.Errorf("%s runs without the monitoring profile", s)
		}
	}
	checkPrometheusWiring(t, p)
	graf, _ := p.GetService("grafana")
	checkGrafanaWiring(t, graf)
}

// checkPrometheusWiring checks the scrape job, its target (robotsgate's
// admin API), its token file (the admin token as a compose secret) and
// where the configuration is mounted.
func checkPrometheusWiring(t *testing.T, p *types.Project) {
	t.Helper()
	var cfg promConfig
	b, err := os.ReadFile(filepath.Join(repoRoot, "configs/prometheus/prometheus.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatalf("prometheus.yml: %v", err)
	}
	if len(cfg.ScrapeConfigs) != 1 || len(cfg.ScrapeConfigs[0].StaticConfigs) != 1 {
		t.Fatalf("prometheus.yml scrape_configs %+v", cfg.ScrapeConfigs)
	}
	sc := cfg.ScrapeConfigs[0]
	rg, err := p.GetService("robotsgate")
	if err != nil {
		t.Fatal(err)
	}
	rcfg, err := loadConfig(nil, testsupport.EnvMap(serviceEnv(rg)))
	if err != nil {
		t.Fatal(err)
	}
	_, adminPort, _ := strings.Cut(rcfg.AdminListen, ":")
	if !slices.Equal(sc.StaticConfigs[0].Targets, []string{"robotsgate:" + adminPort}) || sc.MetricsPath != "/metrics" {
		t.Errorf("scrape targets %v path %s, want robotsgate:%s/metrics (the admin API)", sc.StaticConfigs[0].Targets, sc.MetricsPath, adminPort)
	}
	if exprs := alertExprs(t); exprs["RobotsgateDown"] != `up{job="`+sc.JobName+`"} == 0` {
		t.Errorf("RobotsgateDown %q does not watch the scrape job %s", exprs["RobotsgateDown"], sc.JobName)
	}
	prom, err := p.GetService("prometheus")
	if err != nil {
		t.Fatal(err)
	}
	if len(prom.Secrets) != 1 || "/run/secrets/"+prom.Secrets[0].Source != sc.Authorization.CredentialsFile {
		t.Errorf("prometheus secrets %+v, credentials_file %s", prom.Secrets, sc.Authorization.CredentialsFile)
	} else if sec := p.Secrets[prom.Secrets[0].Source]; sec.Environment != "ROBOTSGATE_ADMIN_TOKEN" {
		t.Errorf("secret %s comes from %+v, want the environment's ROBOTSGATE_ADMIN_TOKEN", prom.Secrets[0].Source, sec)
	}
	if !slices.Contains(prom.Command, "--config.file=/etc/prometheus/prometheus.yml") ||
		!mounts(prom, "configs/prometheus", "/etc/prometheus") || !slices.Equal(cfg.RuleFiles, []string{"alerts.yml"}) {
		t.Errorf("prometheus command %q, volumes %+v, rule_files %v", prom.Command, prom.Volumes, cfg.RuleFiles)
	}
}

// checkGrafanaWiring checks that Grafana gets the provisioning files and
// the dashboard in the path its dashboard provider reads.
func checkGrafanaWiring(t *testing.T, graf types.ServiceConfig) {
	t.Helper()
	var prov struct {
		Providers []struct{ Options struct{ Path string } }
	}
	b, err := os.ReadFile(filepath.Join(repoRoot, "configs/grafana/provisioning/dashboards/robotsgate.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &prov); err != nil || len(prov.Providers) != 1 {
		t.Fatalf("dashboard provisioning: %v %+v", err, prov)
	}
	if !mounts(graf, "configs/grafana/provisioning", "/etc/grafana/provisioning") ||
		!mounts(graf, "configs/grafana/robotsgate.json", path.Join(prov.Providers[0].Options.Path, "robotsgate.json")) {
		t.Errorf("grafana volumes %+v, provider path %s", graf.Volumes, prov.Providers[0].Options.Path)
	}
}

// mounts reports whether s bind-mounts the repository path src read-only
// at target (paths as written in docker-compose.yml, which is at the
// repository root).
func mounts(s types.ServiceConfig, src, target string) bool {
	for _, v := range s.Volumes {
		if v.Type == types.VolumeTypeBind && filepath.Clean(v.Source) == filepath.Clean(src) &&
			v.Target == target && v.ReadOnly {
			return true
		}
	}
	return false
}

// TestProductionDocsMonitoringProfile: docs/production.md documents the
// monitoring profile: its command, each of its services with the host
// port it publishes, and every alert of alerts.yml.
func TestProductionDocsMonitoringProfile(t *testing.T) {
	doc := string(readRepoFile(t, "docs/production.md"))
	_, section, ok := strings.Cut(doc, "### Monitoring profile")
	if !ok {
		t.Fatal(`docs/production.md has no "### Monitoring profile" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	env := map[string]string{"ROBOTSGATE_ADMIN_TOKEN": "monitoring-test-token"}
	p, err := loadCompose(t, env, "monitoring")
	if err != nil {
		t.Fatal(err)
	}
	def, err := loadCompose(t, env)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"docker compose --profile monitoring up"}
	for name, svc := range p.Services {
		if _, err := def.GetService(name); err == nil {
			continue // not the profile's
		}
		want = append(want, svc.Image[:strings.LastIndex(svc.Image, ":")])
		for _, port := range svc.Ports {
			want = append(want, port.HostIP+":"+port.Published)
		}
	}
	for name := range alertExprs(t) {
		want = append(want, "`"+name+"`")
	}
	if len(want) < 6 {
		t.Fatalf("found only %v: the profile's services or alerts.yml not read", want)
	}
	for _, w := range want {
		if !strings.Contains(section, w) {
			t.Errorf("the monitoring profile section of docs/production.md does not mention %s", w)
		}
	}
}
