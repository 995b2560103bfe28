package redisfleet

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Topology is how robotsgate reaches Redis, as the cache URL's scheme says.
type Topology string

// Topologies.
const (
	Standalone Topology = "standalone" // redis://, rediss://: one server
	Sentinel   Topology = "sentinel"   // redis-sentinel://, rediss-sentinel://
	Cluster    Topology = "cluster"    // redis-cluster://, rediss-cluster://
)

// urlForms lists the accepted cache URLs, for error messages.
const urlForms = "redis://[user:password@]host[:port][/db], " +
	"redis-sentinel://[user:password@]host:port[,host:port…]/master-name[?db=N&sentinel_password=…], " +
	"redis-cluster://[user:password@]host:port[,host:port…] (rediss… for TLS)"

// redisTarget is a parsed cache URL: exactly one of the option sets is
// set, as topology says.
type redisTarget struct {
	topology Topology
	shown    string // the URL with its passwords redacted
	single   *redis.Options
	failover *redis.FailoverOptions
	cluster  *redis.ClusterOptions
}

// urlError is a cache URL that cannot be used. Its message names the
// URL with every password replaced by "xxxxx", and the reason.
type urlError struct {
	Shown  string // the redacted URL
	Reason string
}

func (e *urlError) Error() string { return fmt.Sprintf("redis URL %q: %s", e.Shown, e.Reason) }

// parseRedisURL parses a cache URL. The topology comes from the scheme
// alone, never from the number of addresses.
func parseRedisURL(rawURL string) (*redisTarget, error) {
	shown := RedactCacheURL(rawURL)
	bad := func(format string, a ...any) error {
		return &urlError{Shown: shown, Reason: fmt.Sprintf(format, a...)}
	}
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return nil, bad("not a URL (%s)", urlForms)
	}
	tlsOn := strings.HasPrefix(scheme, "rediss")
	switch scheme {
	case "redis", "rediss":
		u, err := url.Parse(rawURL)
		if err != nil || u.Hostname() == "" {
			return nil, bad("no host (%s)", urlForms)
		}
		o, err := redis.ParseURL(rawURL)
		if err != nil {
			return nil, bad("invalid (redis://[user:password@]host[:port][/db])")
		}
		return &redisTarget{topology: Standalone, shown: shown, single: o}, nil
	case "redis-sentinel", "rediss-sentinel":
		p, err := splitMultiHost(rest, 26379)
		if err != nil {
			return nil, bad("%v", err)
		}
		o, err := failoverOptions(p, tlsOn)
		if err != nil {
			return nil, bad("%v", err)
		}
		return &redisTarget{topology: Sentinel, shown: shown, failover: o}, nil
	case "redis-cluster", "rediss-cluster":
		p, err := splitMultiHost(rest, 6379)
		if err != nil {
			return nil, bad("%v", err)
		}
		if strings.Trim(p.path, "/") != "" {
			return nil, bad("a cluster has no database number or name (redis-cluster://host:port[,host:port…])")
		}
		if len(p.query) != 0 {
			return nil, bad("a cluster URL takes no parameters")
		}
		o := &redis.ClusterOptions{Addrs: p.addrs, Username: p.user, Password: p.password}
		if tlsOn {
			o.TLSConfig = &tls.Config{ServerName: p.hosts[0], MinVersion: tls.VersionTLS12}
		}
		return &redisTarget{topology: Cluster, shown: shown, cluster: o}, nil
	}
	return nil, bad("scheme must be redis, rediss, redis-sentinel, rediss-sentinel, redis-cluster or rediss-cluster (%s)", urlForms)
}

// failoverOptions returns the Sentinel client options of p: the path is
// the master's name; db and sentinel_username/sentinel_password are the
// only parameters.
func failoverOptions(p multiHost, tlsOn bool) (*redis.FailoverOptions, error) {
	master := strings.Trim(p.path, "/")
	if master == "" || strings.Contains(master, "/") {
		return nil, errors.New("the path must be the master's name (redis-sentinel://host:port[,host:port…]/master-name)")
	}
	o := &redis.FailoverOptions{
		MasterName: master, SentinelAddrs: p.addrs, Username: p.user, Password: p.password,
	}
	for k, v := range p.query {
		if len(v) != 1 {
			return nil, fmt.Errorf("parameter %q given %d times", k, len(v))
		}
		switch k {
		case "db":
			n, err := strconv.Atoi(v[0])
			if err != nil || n < 0 {
				return nil, fmt.Errorf("db %q is not a database number", v[0])
			}
			o.DB = n
		case "sentinel_username":
			o.SentinelUsername = v[0]
		case "sentinel_password":
			o.SentinelPassword = v[0]
		default:
			return nil, fmt.Errorf("unknown parameter %q (db, sentinel_username, sentinel_password)", k)
		}
	}
	if tlsOn {
		o.TLSConfig = &tls.Config{ServerName: p.hosts[0], MinVersion: tls.VersionTLS12}
	}
	return o, nil
}

// multiHost is the authority, path and query of a URL whose authority
// may list several comma-separated host:port pairs.
type multiHost struct {
	user, password string
	addrs, hosts   []string
	path           string
	query          url.Values
}

// splitMultiHost parses "[user:password@]host[:port][,host[:port]…][/path][?query]"
// (rest: a URL after its "scheme://"); a missing port is defPort.
func splitMultiHost(rest string, defPort int) (multiHost, error) {
	var p multiHost
	userinfo, auth, tail := splitAuthority(rest)
	if strings.HasPrefix(tail, "#") {
		return p, errors.New("a fragment (#) is not allowed")
	}
	if userinfo != "" {
		user, pw, _ := strings.Cut(userinfo, ":")
		var e1, e2 error
		p.user, e1 = url.PathUnescape(user)
		p.password, e2 = url.PathUnescape(pw)
		if e1 != nil || e2 != nil {
			return p, errors.New("the user information is not valid (percent-encoding)")
		}
	}
	if auth == "" {
		return p, errors.New("no host")
	}
	for a := range strings.SplitSeq(auth, ",") {
		host, port, err := net.SplitHostPort(a)
		if err != nil {
			if strings.Contains(a, ":") && !strings.HasPrefix(a, "[") {
				return p, fmt.Errorf("address %q is not host:port", a)
			}
			host, port = strings.Trim(a, "[]"), strconv.Itoa(defPort)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return p, fmt.Errorf("address %q: port is not a number between 1 and 65535", a)
		}
		if host == "" || strings.ContainsAny(host, " /\\@") {
			return p, fmt.Errorf("address %q has no valid host", a)
		}
		p.hosts = append(p.hosts, host)
		p.addrs = append(p.addrs, net.JoinHostPort(host, port))
	}
	u, err := url.Parse("x://h" + tail)
	if err != nil {
		return p, errors.New("the path or the parameters are not valid")
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return p, errors.New("the parameters are not valid (name=value&…)")
	}
	p.path, p.query = u.Path, q
	return p, nil
}

// ValidateRedisURL reports whether rawURL is a usable cache URL:
// redis:// or rediss:// (one server), redis-sentinel:// or
// rediss-sentinel:// (a Sentinel-managed primary), redis-cluster:// or
// rediss-cluster:// (a Redis Cluster). Its error (a *[urlError]) says why and
// never contains a password of the URL.
func ValidateRedisURL(rawURL string) error {
	_, err := parseRedisURL(rawURL)
	return err
}

// splitAuthority splits rest (a URL after "scheme://") into its user
// information (without the "@"; "" when none), its host list and the
// rest (path, query, fragment). The user information ends at the last
// "@" before any "?" or "#", so that a password holding a "/" is never
// taken for a host or a path.
func splitAuthority(rest string) (userinfo, hosts, tail string) {
	head := rest
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		head = rest[:i]
	}
	if i := strings.LastIndex(head, "@"); i >= 0 {
		userinfo, rest = rest[:i], rest[i+1:]
		if userinfo == "" {
			userinfo = ":" // an empty user information still had an "@"
		}
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	return userinfo, rest[:end], rest[end:]
}

// shownParams are the query parameters whose values may appear in logs;
// every other value (passwords among them) is redacted.
var shownParams = map[string]bool{"db": true}

// RedactCacheURL returns rawURL with its password and the values of its
// parameters (but db) replaced by "xxxxx", for logs and errors; a value
// that is not a URL (such as "memory") is returned as is, and one that
// looks like a broken URL as "(invalid URL)".
func RedactCacheURL(rawURL string) string {
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		if strings.ContainsAny(rawURL, "@:/?") {
			return "(invalid URL)"
		}
		return rawURL
	}
	userinfo, hosts, tail := splitAuthority(rest)
	auth := hosts
	if userinfo != "" {
		user, _, hasPW := strings.Cut(userinfo, ":")
		if hasPW {
			user += ":xxxxx"
		}
		auth = user + "@" + hosts
	}
	if i := strings.IndexAny(tail, "?#"); i >= 0 {
		path, query := tail[:i], tail[i+1:]
		var kept []string
		for kv := range strings.SplitSeq(query, "&") {
			k, _, _ := strings.Cut(kv, "=")
			if !shownParams[k] {
				kv = k + "=xxxxx"
			}
			kept = append(kept, kv)
		}
		tail = path + tail[i:i+1] + strings.Join(kept, "&")
	}
	return scheme + "://" + auth + tail
}
