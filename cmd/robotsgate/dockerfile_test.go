package main

import (
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

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
	li := slices.Index(args, "-ldflags")
	if !slices.Contains(args, "-trimpath") || li < 0 || li+1 >= len(args) || !strings.HasPrefix(args[li+1]+" ", "-s -w ") {
		t.Fatalf("build args %q lack -trimpath or -ldflags \"-s -w ...\"", args)
	}
	args[li+1] = checkVersionStamp(t, ins, args[li+1])
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
	if _, err := loadConfig(cmdArgs[1:], testsupport.EnvMap(env)); err == nil || !strings.Contains(err.Error(), "allow_open") {
		t.Errorf("image defaults without credentials: %v, want the open-proxy refusal", err)
	}
	// ... and with them (what the README's docker run passes) it is valid.
	withAuth := map[string]string{"ROBOTSGATE_CREDENTIALS_FILE": "/run/secrets/robotsgate-credentials",
		"ROBOTSGATE_ALLOW_CIDRS": "0.0.0.0/0,::/0", "ROBOTSGATE_ADMIN_TOKEN": "t"}
	for k, v := range env {
		withAuth[k] = v
	}
	cfg, err := loadConfig(cmdArgs[1:], testsupport.EnvMap(withAuth))
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
	if code := run(context.Background(), append(probe[1:], "-h"), testsupport.EnvMap(withAuth), nil, &out, &errOut); code != 0 {
		t.Errorf("robotsgate %s -h: exit %d: %s", strings.Join(probe[1:], " "), code, errOut.String())
	}
}

// stampVars returns the package-level string variables of version.go that
// have no value: those only the linker sets (-X main.NAME=VALUE).
func stampVars(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "version.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "string" && len(vs.Values) == 0 {
				for _, n := range vs.Names {
					names = append(names, n.Name)
				}
			}
		}
	}
	return names
}

// checkVersionStamp checks that ldflags stamps every linker-set variable
// of version.go, each from a build argument the Dockerfile declares, and
// returns ldflags with test values for the arguments (for go build -n).
func checkVersionStamp(t *testing.T, ins []instruction, ldflags string) string {
	t.Helper()
	declared := map[string]bool{}
	for _, a := range find(ins, "ARG") {
		name, _, _ := strings.Cut(a.Args, "=")
		declared[name] = true
	}
	vars := stampVars(t)
	if len(vars) == 0 {
		t.Fatal("version.go declares no variable for the linker to set")
	}
	stamped := map[string]bool{}
	fields := strings.Fields(ldflags)
	for i, f := range fields {
		if f != "-X" || i+1 >= len(fields) {
			continue
		}
		name, value, _ := strings.Cut(strings.TrimPrefix(fields[i+1], "main."), "=")
		arg := strings.TrimSuffix(strings.TrimPrefix(value, "${"), "}")
		switch {
		case !slices.Contains(vars, name):
			t.Errorf("-ldflags sets %s, which version.go does not declare (its linker variables: %v)", fields[i+1], vars)
		case value != "${"+arg+"}" || !declared[arg]:
			t.Errorf("-ldflags %s: the value is not a declared build argument ${ARG}", fields[i+1])
		}
		stamped[name] = true
		fields[i+1] = "main." + name + "=test-" + arg
	}
	for _, v := range vars {
		if !stamped[v] {
			t.Errorf("-ldflags %q does not stamp main.%s: `robotsgate version` in the image says unknown", ldflags, v)
		}
	}
	return strings.Join(fields, " ")
}
