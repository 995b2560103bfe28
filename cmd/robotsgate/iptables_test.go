package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestIPTablesPrint: by default the rules are printed for IPv4 and IPv6:
// the nat redirect in robotsgate's own chain with the uid excluded, and
// UDP 443 (QUIC) rejected.
func TestIPTablesPrint(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runIPTables([]string{"-uid", "1337", "-to-port", "15006"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	s := out.String()
	for _, want := range []string{
		"# IPv4: iptables-restore --noflush",
		"*nat\n:ROBOTSGATE - [0:0]\n-I OUTPUT -p tcp -j ROBOTSGATE\n",
		"-A ROBOTSGATE -m owner --uid-owner 1337 -j RETURN\n",
		"-A ROBOTSGATE -p tcp -m multiport --dports 80,443 -j REDIRECT --to-ports 15006\n",
		"*filter\n:ROBOTSGATE - [0:0]\n-I OUTPUT -p udp -j ROBOTSGATE\n-A ROBOTSGATE -p udp --dport 443 -j REJECT\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	var ranges bytes.Buffer
	if code := runIPTables([]string{"-ports", "18000:18015,443"}, &ranges, &errb); code != 0 ||
		!strings.Contains(ranges.String(), "--dports 18000:18015,443 -j REDIRECT") {
		t.Errorf("port range: exit %d\n%s", code, ranges.String())
	}
	if strings.Contains(s, "127.0.0.0/8") {
		t.Errorf("a port list skips loopback destinations:\n%s", s)
	}
}

// TestIPTablesAllPorts: -ports all never redirects loopback destinations
// nor the listener's own port; -skip-dst chooses the skipped
// destinations per family.
func TestIPTablesAllPorts(t *testing.T) {
	o := iptablesOpts{ports: "all", uid: 65532, toPort: 15001}
	skip, _ := o.skipped(families[0])
	r := o.rules(families[0], "", skip, nil)
	for _, want := range []string{"-A ROBOTSGATE -d 127.0.0.0/8 -j RETURN\n", "-A ROBOTSGATE -p tcp --dport 15001 -j RETURN\n",
		"-A ROBOTSGATE -p tcp -j REDIRECT --to-ports 15001\n"} {
		if !strings.Contains(r, want) {
			t.Errorf("rules lack %q:\n%s", want, r)
		}
	}
	o.skipDst = "10.0.0.0/8, fd00::/8,192.168.1.1"
	if v4, _ := o.skipped(families[0]); strings.Join(v4, " ") != "10.0.0.0/8 192.168.1.1/32" {
		t.Errorf("IPv4 skipped %v", v4)
	}
	if v6, _ := o.skipped(families[1]); strings.Join(v6, " ") != "fd00::/8" {
		t.Errorf("IPv6 skipped %v", v6)
	}
	o.skipDst = "-"
	if none, _ := o.skipped(families[0]); len(none) != 0 {
		t.Errorf("-skip-dst - skipped %v", none)
	}
}

// TestIPTablesIdempotent: a jump that iptables-save already shows is not
// added again; -remove deletes every copy, then the chain.
func TestIPTablesIdempotent(t *testing.T) {
	saved := []byte("*filter\n:OUTPUT ACCEPT [0:0]\n:ROBOTSGATE - [0:0]\n-A OUTPUT -p udp -j ROBOTSGATE\nCOMMIT\n" +
		"*nat\n:OUTPUT ACCEPT [0:0]\n:ROBOTSGATE - [0:0]\n-A OUTPUT -p tcp -j ROBOTSGATE\n-A OUTPUT -p tcp -j ROBOTSGATE\nCOMMIT\n")
	o := iptablesOpts{ports: "80,443", uid: 65532, toPort: 15001}
	if r := o.rules(families[0], "", nil, saved); strings.Contains(r, "-I OUTPUT") {
		t.Errorf("jumps added again:\n%s", r)
	}
	rm := removal(saved)
	if strings.Count(rm, "-D OUTPUT -p tcp -j ROBOTSGATE\n") != 2 || strings.Count(rm, "-X ROBOTSGATE") != 2 {
		t.Errorf("removal:\n%s", rm)
	}
	if removal([]byte("*nat\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n")) != "" {
		t.Error("removal without the chain is not empty")
	}
}

func TestIPTablesBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-ports", "80,http"}, {"-ports", "0"}, {"-ports", "90:80"}, {"-ports", "80:"},
		{"-ports", "1:2,3:4,5:6,7:8,9:10,11:12,13:14,15:16"}, {"-to-port", "70000"}, {"-skip-dst", "nonsense"}} {
		var out, errb bytes.Buffer
		if code := runIPTables(args, &out, &errb); code != 1 || !strings.Contains(errb.String(), "robotsgate iptables:") {
			t.Errorf("%v: exit %d, %q", args, code, errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := runIPTables([]string{"-apply", "-remove"}, &out, &errb); code != 2 {
		t.Errorf("-apply -remove: exit %d", code)
	}
}
