package main

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

func TestHealthCommand(t *testing.T) {
	r := startServe(t, nil, nil)
	addr := r.addr.String()
	var out, errOut strings.Builder
	if code := run(context.Background(), []string{"health", "-listen", addr}, testsupport.EnvMap(nil), nil, &out, &errOut); code != 0 || out.String() != "ok\n" {
		t.Fatalf("health of a running proxy: exit %d, %q %q", code, out.String(), errOut.String())
	}
	// The environment works as for serve (the container sets it).
	out.Reset()
	if code := run(context.Background(), []string{"health"}, testsupport.EnvMap(map[string]string{"ROBOTSGATE_LISTEN": addr}), nil, &out, &errOut); code != 0 {
		t.Fatalf("health via ROBOTSGATE_LISTEN: exit %d, %q", code, errOut.String())
	}

	// Nothing listening: exit 1 with one line.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	errOut.Reset()
	if code := run(context.Background(), []string{"health", "-listen", dead}, testsupport.EnvMap(nil), nil, &out, &errOut); code != 1 ||
		strings.Count(errOut.String(), "\n") != 1 || !strings.Contains(errOut.String(), "health") {
		t.Errorf("health of nothing: exit %d, %q", code, errOut.String())
	}
	// A bad configuration is exit 2, as for serve.
	if code := run(context.Background(), []string{"health", "-listen", "nope"}, testsupport.EnvMap(nil), nil, &out, &errOut); code != 2 {
		t.Errorf("health with a bad address: exit %d", code)
	}
}

func TestProbeAddr(t *testing.T) {
	for in, want := range map[string]string{
		"0.0.0.0:9309":   "127.0.0.1:9309",
		":9309":          "127.0.0.1:9309",
		"[::]:9309":      "[::1]:9309",
		"127.0.0.1:9310": "127.0.0.1:9310",
		"10.1.2.3:80":    "10.1.2.3:80",
	} {
		if got, err := probeAddr(in); err != nil || got != want {
			t.Errorf("probeAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
