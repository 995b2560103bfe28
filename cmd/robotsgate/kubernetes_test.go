package main

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
	"gopkg.in/yaml.v3"
)

// The fields of a Kubernetes pod template that the transparent sidecar
// example depends on.
type k8sDeployment struct {
	Kind string `yaml:"kind"`
	Spec struct {
		Template struct {
			Spec struct {
				InitContainers []k8sContainer `yaml:"initContainers"`
				Containers     []k8sContainer `yaml:"containers"`
				Volumes        []struct {
					Name string `yaml:"name"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type k8sContainer struct {
	Name          string   `yaml:"name"`
	Image         string   `yaml:"image"`
	Command       []string `yaml:"command"`
	Args          []string `yaml:"args"`
	RestartPolicy string   `yaml:"restartPolicy"`
	Env           []struct {
		Name  string `yaml:"name"`
		Value string `yaml:"value"`
	} `yaml:"env"`
	SecurityContext struct {
		RunAsUser                *int  `yaml:"runAsUser"`
		ReadOnlyRootFilesystem   bool  `yaml:"readOnlyRootFilesystem"`
		AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
		Capabilities             struct {
			Add  []string `yaml:"add"`
			Drop []string `yaml:"drop"`
		} `yaml:"capabilities"`
	} `yaml:"securityContext"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
		ReadOnly  bool   `yaml:"readOnly"`
	} `yaml:"volumeMounts"`
}

func (c k8sContainer) env() map[string]string {
	m := map[string]string{}
	for _, e := range c.Env {
		m[e.Name] = e.Value
	}
	return m
}

// TestKubernetesTransparentSidecar: the example pod applies the rules in
// an init container with NET_ADMIN, runs robotsgate as uid 65532 with a
// read-only root and no capability, and the crawler has no proxy
// settings, trusts the CA and runs as another uid.
func TestKubernetesTransparentSidecar(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "configs/kubernetes/crawler-with-robotsgate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var d k8sDeployment
	if err := yaml.Unmarshal(b, &d); err != nil {
		t.Fatalf("crawler-with-robotsgate.yaml: %v", err)
	}
	spec := d.Spec.Template.Spec
	if d.Kind != "Deployment" || len(spec.InitContainers) != 2 || len(spec.Containers) != 1 {
		t.Fatalf("kind %q with %d init containers and %d containers, want a Deployment with the rules, the sidecar and the crawler",
			d.Kind, len(spec.InitContainers), len(spec.Containers))
	}
	rules, rg, crawler := spec.InitContainers[0], spec.InitContainers[1], spec.Containers[0]

	// robotsgate: a native sidecar, uid 65532, read-only root, no capability.
	sc := rg.SecurityContext
	if rg.RestartPolicy != "Always" {
		t.Errorf("robotsgate restartPolicy %q: want a native sidecar (Always), started before the crawler", rg.RestartPolicy)
	}
	if sc.RunAsUser == nil || *sc.RunAsUser != 65532 || !sc.ReadOnlyRootFilesystem ||
		!slices.Equal(sc.Capabilities.Drop, []string{"ALL"}) || len(sc.Capabilities.Add) > 0 || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("robotsgate securityContext %+v: want uid 65532, read-only root, capabilities dropped, no escalation", sc)
	}
	env := rg.env()
	for k := range env {
		if strings.HasPrefix(k, "ROBOTSGATE_") && !knownEnv(k) {
			t.Errorf("robotsgate env %s is not a variable robotsgate reads", k)
		}
	}
	cfg, err := loadConfig(nil, testsupport.EnvMap(env))
	if err != nil {
		t.Fatalf("robotsgate's environment does not load: %v", err)
	}
	_, tport, err := net.SplitHostPort(cfg.Transparent.Listen)
	if err != nil {
		t.Fatalf("robotsgate has no transparent listener: %q", cfg.Transparent.Listen)
	}

	// The rules: root with NET_ADMIN, robotsgate's uid excluded, its port.
	rc := rules.SecurityContext
	cmd := strings.Join(rules.Command, " ")
	if !strings.Contains(cmd, "robotsgate iptables -apply") || !strings.Contains(cmd, "-uid 65532") || !strings.Contains(cmd, "-to-port "+tport) {
		t.Errorf("init command %q: want robotsgate iptables -apply -uid 65532 -to-port %s", cmd, tport)
	}
	if !slices.Contains(rc.Capabilities.Add, "NET_ADMIN") || rc.RunAsUser == nil || *rc.RunAsUser != 0 || rules.RestartPolicy != "" {
		t.Errorf("init container %+v: want root with NET_ADMIN, run once", rc)
	}

	// The crawler: no proxy settings, another uid, the CA trusted read-only.
	cenv := crawler.env()
	for k := range cenv {
		if strings.HasSuffix(strings.ToLower(k), "_proxy") {
			t.Errorf("crawler has proxy setting %s", k)
		}
	}
	if u := crawler.SecurityContext.RunAsUser; u == nil || *u == 0 || *u == 65532 {
		t.Errorf("crawler runAsUser %v: not root, not robotsgate's uid (its connections would not be redirected)", u)
	}
	var caDir string
	for _, m := range crawler.VolumeMounts {
		if m.Name == "robotsgate-data" && m.ReadOnly {
			caDir = m.MountPath
		}
	}
	if caDir == "" || cenv["SSL_CERT_FILE"] != caDir+"/robotsgate-ca-cert.pem" {
		t.Errorf("crawler does not trust robotsgate's CA read-only from the shared volume: %q, SSL_CERT_FILE %q", caDir, cenv["SSL_CERT_FILE"])
	}
}
