package redisfleet

import (
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/robotsgate/robotsgate/enforce"
)

// TestSentinelAndClusterURLs: the scheme alone names the topology (one
// address can be a cluster, three a Sentinel set), and the URL's parts
// reach go-redis's options.
func TestSentinelAndClusterURLs(t *testing.T) {
	tg, err := parseRedisURL("redis-sentinel://u:p%40ss@s1:26379,s2,[::1]:26380/mymaster?db=3&sentinel_password=sp")
	if err != nil {
		t.Fatal(err)
	}
	f := tg.failover
	if tg.topology != Sentinel || f.MasterName != "mymaster" || f.DB != 3 || f.Username != "u" || f.Password != "p@ss" ||
		f.SentinelPassword != "sp" || f.TLSConfig != nil ||
		!reflect.DeepEqual(f.SentinelAddrs, []string{"s1:26379", "s2:26379", "[::1]:26380"}) {
		t.Fatalf("sentinel options: %+v", f)
	}
	tg, err = parseRedisURL("rediss-cluster://:pw@c1:7000")
	if err != nil {
		t.Fatal(err)
	}
	if tg.topology != Cluster || tg.cluster.Password != "pw" || tg.cluster.TLSConfig == nil ||
		!reflect.DeepEqual(tg.cluster.Addrs, []string{"c1:7000"}) {
		t.Fatalf("cluster options: %+v", tg.cluster)
	}
	if tg, err := parseRedisURL("redis://a:6379,b:6379/0"); err == nil && tg.topology != Standalone {
		t.Fatalf("redis:// with a comma: topology %s", tg.topology)
	}
	if tg, err := parseRedisURL("rediss-sentinel://s1:1,s2:2/m"); err != nil || tg.failover.TLSConfig == nil {
		t.Fatalf("rediss-sentinel: %v", err)
	}
	var _ redis.UniversalClient = (*redis.ClusterClient)(nil)
}

// TestBadCacheURLs: each bad URL is refused with its reason, and no
// error shows a password, whatever part of the URL holds it.
func TestBadCacheURLs(t *testing.T) {
	for u, reason := range map[string]string{
		"redis-sentinel://s1:26379":                          "master's name",
		"redis-sentinel://s1:26379/":                         "master's name",
		"redis-sentinel://s1:26379/a/b":                      "master's name",
		"redis-sentinel://s1:26379/m?db=x":                   "database number",
		"redis-sentinel://s1:26379/m?db=-1":                  "database number",
		"redis-sentinel://s1:26379/m?master_name=x":          "unknown parameter",
		"redis-sentinel://s1:26379/m?db=1&db=2":              "given 2 times",
		"redis-sentinel:///m":                                "no host",
		"redis-sentinel://s1:99999/m":                        "port",
		"redis-sentinel://s1:x/m":                            "port",
		"redis-sentinel://s1:1,,s2:2/m":                      "no valid host",
		"redis-cluster://c1:7000/0":                          "no database",
		"redis-cluster://c1:7000?read_only=true":             "no parameters",
		"redis-cluster://c1:7000#x":                          "fragment",
		"redis+sentinel://s1/m":                              "scheme must be",
		"valkey://v1":                                        "scheme must be",
		"redis-sentinel://u:s3cret@s1:1/m?sentinel_password": "",
	} {
		err := ValidateRedisURL(u)
		var ue *urlError
		if reason == "" {
			if err != nil {
				t.Errorf("%s: %v", u, err)
			}
			continue
		}
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), reason) {
			t.Errorf("%s: error %v, want %q", u, err, reason)
		}
	}
	for _, u := range []string{
		"redis-sentinel://u:s3cret@s1:1/m?sentinel_password=s3cret&db=x",
		"redis-sentinel://u:s3cret@s1:1/m?Sentinel_Password=s3cret",
		"redis-cluster://u:s3cr/et@c1:7000/0",
		"redis-cluster://u:s3cret@c1:99999",
		"rediss-cluster://:s3cret@c1:7000?password=s3cret",
		"redis://:s3cr/et@h/x",
		"redis://:s3cret@h/x?password=s3cret",
		"redis-sentinel://:s3c%zzret@s1/m",
	} {
		err := ValidateRedisURL(u)
		if err == nil {
			t.Errorf("%s: accepted", u)
			continue
		}
		if strings.Contains(err.Error(), "s3c") || strings.Contains(RedactCacheURL(u), "s3c") {
			t.Errorf("%s: the password shows: %v / %s", u, err, RedactCacheURL(u))
		}
		if strings.Contains(err.Error(), "enforce") || strings.Contains(err.Error(), "redisfleet") {
			t.Errorf("%s: the error names a Go package: %v", u, err)
		}
	}
}

// TestKeysShareTheOriginsHashTag: every key of one origin (robots.txt,
// lock, pacing, pause, the TDMRep entry's, and those of the copies
// fetched from one of its addresses) has the origin as its hash tag, so
// a Cluster keeps them in one slot.
func TestKeysShareTheOriginsHashTag(t *testing.T) {
	k := redisKeys{prefix: defaultPrefix}
	origin := "https://example.com:8443"
	want := "robotsgate:{https://example.com:8443}:"
	a := netip.MustParseAddr("2001:db8::1")
	tdm, pinned, pinnedTDM := enforce.TDMKey(origin, netip.Addr{}).String(), enforce.RobotsKey(origin, a).String(), enforce.TDMKey(origin, a).String()
	for _, key := range []string{k.robots(origin), k.lock(origin), k.pace(origin), k.pause(origin),
		k.robots(tdm), k.lock(tdm),
		k.robots(pinned), k.lock(pinned), k.robots(pinnedTDM)} {
		if !strings.HasPrefix(key, want) {
			t.Errorf("key %q lacks the hash tag %q", key, want)
		}
	}
	seen := map[string]bool{}
	for _, key := range []string{k.robots(origin), k.robots(tdm), k.robots(pinned), k.robots(pinnedTDM)} {
		if seen[key] {
			t.Fatalf("two Store keys share the Redis key %q", key)
		}
		seen[key] = true
	}
	if got := k.robots("odd"); got != "robotsgate:{odd}:robots" {
		t.Errorf("key of a Store key without a scheme: %q", got)
	}
	if got := k.robots(""); !strings.HasPrefix(got, "robotsgate:{-}") {
		t.Errorf("key of an empty Store key: %q", got)
	}
}
