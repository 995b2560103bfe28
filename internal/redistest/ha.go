package redistest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// haWait bounds every wait for a Sentinel set or a Cluster to settle.
const haWait = 30 * time.Second

// SentinelSet is a primary, its replica and three sentinels watching them
// (quorum 2, down-after-milliseconds 1000), all on loopback.
type SentinelSet struct {
	t         testing.TB
	Master    string // the name the sentinels know the primary by
	Primary   *Server
	Replica   *Server
	Sentinels []*Server
}

// StartSentinel starts a [SentinelSet] and waits until the replica is in
// sync and every sentinel knows the replica and the other sentinels, so
// that a failover can happen. It skips like Start.
func StartSentinel(t testing.TB) *SentinelSet {
	t.Helper()
	s := &SentinelSet{t: t, Master: "rgmaster"}
	s.Primary = Start(t)
	primaryPort := s.Primary.port
	s.Replica = startServer(t, func(port int, _ string) []string {
		return []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
			"--replicaof", "127.0.0.1", strconv.Itoa(primaryPort), "--repl-diskless-sync", "yes",
			"--repl-diskless-sync-delay", "0"}
	})
	for range 3 {
		s.Sentinels = append(s.Sentinels, startServer(t, func(port int, dir string) []string {
			conf := filepath.Join(dir, "sentinel.conf")
			text := fmt.Sprintf("port %d\nbind 127.0.0.1\nsentinel monitor %s 127.0.0.1 %d 2\n"+
				"sentinel down-after-milliseconds %s 1000\nsentinel failover-timeout %s 10000\n"+
				"sentinel parallel-syncs %s 1\n", port, s.Master, primaryPort, s.Master, s.Master, s.Master)
			if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
				t.Fatalf("redistest: %v", err)
			}
			return []string{conf, "--sentinel"}
		}))
	}
	s.waitReady()
	return s
}

// waitReady waits until the replica is in sync and each sentinel sees one
// replica and two other sentinels.
func (s *SentinelSet) waitReady() {
	s.t.Helper()
	WaitFor(s.t, "the replica to sync", func() bool {
		return strings.Contains(info(s.Replica.Addr(), "replication"), "master_link_status:up")
	})
	for _, sn := range s.Sentinels {
		c := redis.NewSentinelClient(&redis.Options{Addr: sn.Addr(), DisableIdentity: true})
		WaitFor(s.t, "sentinel "+sn.Addr()+" to know the replica and the other sentinels", func() bool {
			m, err := c.Master(context.Background(), s.Master).Result()
			return err == nil && m["num-slaves"] == "1" && m["num-other-sentinels"] == "2"
		})
		_ = c.Close()
	}
}

// URL returns the redis-sentinel:// URL of the set (database db).
func (s *SentinelSet) URL(db int) string {
	addrs := make([]string, len(s.Sentinels))
	for i, sn := range s.Sentinels {
		addrs[i] = sn.Addr()
	}
	return fmt.Sprintf("redis-sentinel://%s/%s?db=%d", strings.Join(addrs, ","), s.Master, db)
}

// PrimaryAddr returns the address the sentinels currently give for the
// primary ("" when they cannot say).
func (s *SentinelSet) PrimaryAddr() string {
	for _, sn := range s.Sentinels {
		c := redis.NewSentinelClient(&redis.Options{Addr: sn.Addr(), DisableIdentity: true})
		a, err := c.GetMasterAddrByName(context.Background(), s.Master).Result()
		_ = c.Close()
		if err == nil && len(a) == 2 {
			return a[0] + ":" + a[1]
		}
	}
	return ""
}

// ClusterSet is a Redis Cluster of three primaries with one replica each
// (cluster-node-timeout 2000 ms), all on loopback.
type ClusterSet struct {
	t     testing.TB
	Nodes []*Server
}

// StartCluster starts six cluster nodes, joins them with
// redis-cli --cluster create (one replica per primary) and waits until
// every node reports cluster_state:ok. It skips like Start.
func StartCluster(t testing.TB) *ClusterSet {
	t.Helper()
	cli, err := exec.LookPath(cliBin())
	if err != nil {
		lookBin(t) // skips or fails as for redis-server
		t.Fatal("redistest: redis-cli not found in PATH (Debian: it comes with redis-server)")
	}
	c := &ClusterSet{t: t}
	for range 6 {
		c.Nodes = append(c.Nodes, startServer(t, func(port int, dir string) []string {
			bus, err := freePort() // the bus port, else port+10000, might be taken
			if err != nil {
				t.Fatalf("redistest: %v", err)
			}
			return []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
				"--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(bus),
				"--cluster-config-file", filepath.Join(dir, "nodes.conf"),
				"--cluster-node-timeout", "2000", "--cluster-replica-validity-factor", "0"}
		}))
	}
	args := []string{"--cluster", "create"}
	for _, n := range c.Nodes {
		args = append(args, n.Addr())
	}
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), haWait)
	defer cancel()
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redistest: redis-cli --cluster create: %v\n%s", err, out)
	}
	c.WaitOK()
	return c
}

// WaitOK waits until every running node reports cluster_state:ok and
// knows three primaries that answer.
func (c *ClusterSet) WaitOK() {
	c.t.Helper()
	for _, n := range c.Nodes {
		if !n.Running() {
			continue
		}
		WaitFor(c.t, "node "+n.Addr()+" to report cluster_state:ok", func() bool {
			return strings.Contains(clusterInfo(n.Addr()), "cluster_state:ok")
		})
	}
}

// URL returns the redis-cluster:// URL of the cluster, listing every node.
func (c *ClusterSet) URL() string {
	addrs := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		addrs[i] = n.Addr()
	}
	return "redis-cluster://" + strings.Join(addrs, ",")
}

// Primaries returns the running nodes that are primaries now.
func (c *ClusterSet) Primaries() []*Server {
	var ps []*Server
	for _, n := range c.Nodes {
		if n.Running() && strings.Contains(info(n.Addr(), "replication"), "role:master") {
			ps = append(ps, n)
		}
	}
	return ps
}

// Running reports whether the server runs (it was not stopped).
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil
}

// info returns the INFO section of the server at addr ("" on error).
func info(addr, section string) string {
	c := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true, MaxRetries: -1})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	v, _ := c.Info(ctx, section).Result()
	return v
}

// clusterInfo returns CLUSTER INFO of the node at addr ("" on error).
func clusterInfo(addr string) string {
	c := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true, MaxRetries: -1})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	v, _ := c.ClusterInfo(ctx).Result()
	return v
}

// WaitFor polls cond every 20 ms until it holds, failing the test after
// [haWait].
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(haWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("redistest: timed out after %v waiting for %s", haWait, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
